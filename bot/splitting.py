"""Splitting long replies into Discord messages of at most 2,000 characters.

Cuts at the most natural place that fits: a paragraph break, then a line break, then a sentence end, then a space,
and only as a last resort mid-word. A cut outside a code block is preferred; when a code block itself is longer
than a message, the fence is closed at the end of one message and reopened (with its language) at the start of
the next, so every message renders as valid Markdown.
"""

from __future__ import annotations

import re

DISCORD_LIMIT = 2000
_FENCE_LINE = re.compile(r"^[ \t]*(```+)([^\n`]*)$", re.MULTILINE)
_CLOSE = "\n```"
_MAX_OPENER = 24
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)")


def _open_fence(text: str) -> str | None:
    """The opening fence line still open at the end of `text` (e.g. "```python"), or None when all are closed."""
    opener: str | None = None
    for match in _FENCE_LINE.finditer(text):
        opener = ("```" + match.group(2).strip())[:_MAX_OPENER] if opener is None else None
    return opener


def _candidates(window: str) -> list[list[int]]:
    """Cut positions by preference: paragraph ends, line ends, sentence ends, spaces (each rightmost first)."""
    paragraphs = [m.start() for m in re.finditer(r"\n\s*\n", window)]
    lines = [m.start() for m in re.finditer(r"\n", window)]
    sentences = [m.start() + 1 for m in _SENTENCE_END.finditer(window)]
    spaces = [m.start() for m in re.finditer(r"[ \t]", window)]
    return [sorted(set(group), reverse=True) for group in (paragraphs, lines, sentences, spaces)]


def _choose_cut(window: str, prefix: str) -> int:
    """Best cut in `window`: outside a code block if possible, not absurdly early, else the best that exists."""
    groups = _candidates(window)
    minimum = len(window) // 3
    for require_closed in (True, False):
        for group in groups:
            for position in group:
                if position < minimum:
                    break
                if position == 0:
                    continue
                if not require_closed or _open_fence(prefix + window[:position]) is None:
                    return position
    for group in groups:
        if group and group[0] > 0:
            return group[0]
    return len(window)


def split_message(text: str, limit: int = DISCORD_LIMIT) -> list[str]:
    """Split `text` into chunks no longer than `limit`, each with balanced code fences."""
    if limit < 64:
        raise ValueError("limit too small to split sensibly")
    text = text.strip()
    chunks: list[str] = []
    prefix = ""
    while text:
        if len(prefix) + len(text) <= limit:
            chunks.append(prefix + text)
            break
        room = limit - len(prefix) - len(_CLOSE)
        window = text[:room]
        cut = _choose_cut(window, prefix)
        piece = prefix + text[:cut].rstrip()
        text = text[cut:].lstrip("\n").lstrip(" ") if cut < len(text) else ""
        opener = _open_fence(piece)
        if opener is not None:
            piece += _CLOSE
            prefix = opener + "\n"
        else:
            prefix = ""
        if piece.strip():
            chunks.append(piece)
    return chunks
