"""Splitting long replies into Discord messages of at most 2,000 characters.

Cuts at the most natural place that fits: a paragraph break, then a line break, then a sentence end, then a space,
and only as a last resort mid-word. A cut outside a code block is preferred; when a code block itself is longer
than a message, the fence is closed at the end of one message and reopened (with its language) at the start of
the next, so every message renders as valid Markdown. Inside a code block the indentation of the line after a cut
is kept.

A "fence line" is a line made of optional spaces, three or more backticks and an info string without backticks;
each one opens or closes a block. A cut never changes which lines are fence lines: it never falls inside one, and
never splits a line so that either half would start to look like one (as "see ```python here" cut before the
backticks would).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

DISCORD_LIMIT = 2000
_FENCE_LINE = re.compile(r"^[ \t]*(```+)([^\n`]*)$", re.MULTILINE)
_FENCE_ONLY = re.compile(r"[ \t]*```+[^\n`]*")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+\-.#]{1,20}")
_CLOSE = "\n```"
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|[。！？]")  # CJK full stops need no space after them
_BLANK_THROUGH_NEWLINE = re.compile(r"[^\S\n]*(?:\n[^\S\n]*)*\n")
_BLANK = re.compile(r"\s*")
_SPACES = re.compile(r"[^\S\n]*")
_FENCE_AT_START = re.compile(r"[ \t]*```+[^\n`]*(?:\n|$)")


def _opener_for(info: str) -> str:
    """The fence that reopens a block: its language tag when it has one, else a bare fence."""
    tag = info.strip()
    return "```" + tag if _LANGUAGE.fullmatch(tag) else "```"


def _open_fence(text: str) -> str | None:
    """The opening fence line still open at the end of `text` (e.g. "```python"), or None when all are closed."""
    opener: str | None = None
    for match in _FENCE_LINE.finditer(text):
        opener = _opener_for(match.group(2)) if opener is None else None
    return opener


def ends_in_code_block(text: str) -> bool:
    """Whether `text` ends inside an open code block (as the splitter reads fences)."""
    return _open_fence(text) is not None


def _shorten_fence_lines(text: str, longest: int) -> str:
    """Fence lines longer than `longest` (half a message: only junk is that long) are cut down, so any fence
    line fits in a message. Only the info string shrinks; the line stays a fence line, so the blocks and their
    contents are unchanged."""

    def shorten(match: re.Match[str]) -> str:
        line = match.group(0)
        return line if len(line) <= longest else (match.group(1) + match.group(2).strip())[:longest]

    return _FENCE_LINE.sub(shorten, text)


def _is_fence(line: str) -> bool:
    return _FENCE_ONLY.fullmatch(line) is not None


def _safe(text: str, position: int) -> bool:
    """Whether cutting `text` at `position` keeps every fence line a fence line and creates none.

    Matches in place (`pos`/`endpos`), without copying the line: a reply can be one 100,000-character line.
    """
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    if line_end == -1:
        line_end = len(text)
    if position <= line_start or position >= line_end:
        return True  # at a line boundary
    spaces = _SPACES.match(text, position, line_end)
    tail_start = spaces.end() if spaces else position
    return not (
        _FENCE_ONLY.fullmatch(text, line_start, position)  # what would end this message
        or _FENCE_ONLY.fullmatch(text, tail_start, line_end)  # what would start the next one
        or _FENCE_ONLY.fullmatch(text, line_start, line_end)  # the line itself
    )


def _content_start(window: str) -> int:
    """Where the window's first line that is neither blank nor a fence line begins."""
    position = 0
    for line in window.split("\n"):
        if line.strip() and not _is_fence(line):
            return position
        position += len(line) + 1
    return len(window)


def _candidates(window: str) -> list[list[int]]:
    """Cut positions by preference: paragraph ends, line ends, sentence ends, spaces (each rightmost first)."""
    paragraphs = [m.start() for m in re.finditer(r"\n\s*\n", window)]
    lines = [m.start() for m in re.finditer(r"\n", window)]
    sentences = [m.start() + 1 for m in _SENTENCE_END.finditer(window)]
    spaces = [m.start() for m in re.finditer(r"[ \t]", window)]
    return [sorted(set(group), reverse=True) for group in (paragraphs, lines, sentences, spaces)]


class _Cuts:
    """Which positions of `window` (a head of `text`) a cut may use, and whether a code block is open there.
    `prefix` is the reopened fence, if any."""

    __slots__ = ("fence_ends", "reopened", "start", "text", "window")

    def __init__(self, text: str, window: str, prefix: str) -> None:
        self.text = text
        self.window = window
        self.reopened = bool(prefix)
        self.start = _content_start(window)  # a cut before it would send a message of nothing but fences
        self.fence_ends = [m.end() for m in _FENCE_LINE.finditer(window)]

    def open_at(self, position: int) -> bool:
        return (self.reopened + bisect.bisect_right(self.fence_ends, position)) % 2 == 1

    def ends_with_opener(self, position: int) -> bool:
        """A message cut here would end with the fence that opens a block (an empty block)."""
        last = bisect.bisect_right(self.fence_ends, position) - 1
        return (
            last >= 0
            and self.open_at(position)
            and _BLANK.fullmatch(self.window, self.fence_ends[last], position) is not None
        )

    def usable(self, position: int) -> bool:
        return position > self.start and _safe(self.text, position) and not self.ends_with_opener(position)


def _preferred_cut(groups: list[list[int]], cuts: _Cuts, minimum: int) -> int | None:
    """The first position, by preference, at or after `minimum`: one outside a code block if any, else any."""
    for require_closed in (True, False):
        for group in groups:
            for position in group:
                if position < minimum:
                    break
                if not require_closed or not cuts.open_at(position):
                    return position
    return None


def _rightmost(accept: Callable[[int], bool], high: int, low: int) -> int | None:
    """The highest position from `high` down to just above `low` that `accept` takes, or None."""
    return next((position for position in range(high, low, -1) if accept(position)), None)


def _choose_cut(text: str, window: str, prefix: str) -> int:
    """Best cut in `window` (a head of `text`): outside a code block if possible, not absurdly early, else the
    best that exists, else the rightmost safe position (mid-word). `prefix` is the reopened fence, if any."""
    cuts = _Cuts(text, window, prefix)
    groups = [[p for p in group if cuts.usable(p)] for group in _candidates(window)]
    cut = _preferred_cut(groups, cuts, len(window) // 3)
    if cut is None:
        cut = next((group[0] for group in groups if group), None)
    if cut is None:
        cut = _rightmost(cuts.usable, len(window), cuts.start)
    if cut is None:
        cut = _rightmost(lambda position: _safe(text, position), len(window), 0)
    return len(window) if cut is None else cut  # None is unreachable: a cut inside the first backtick run is safe


def _rest_after_cut(rest: str, in_code: bool) -> str:
    """Drop the whitespace at the cut; inside a code block keep the indentation of the next line."""
    if not in_code:
        return rest.lstrip()
    blank = _BLANK_THROUGH_NEWLINE.match(rest)
    return rest[blank.end() :] if blank else rest.lstrip(" \t")


def split_message(text: str, limit: int = DISCORD_LIMIT) -> list[str]:
    """Split `text` into chunks no longer than `limit`, each with balanced code fences."""
    if limit < 64:
        raise ValueError("limit too small to split sensibly")
    text = text.strip()
    if len(text) > limit:
        text = _shorten_fence_lines(text, limit // 2)
    chunks: list[str] = []
    prefix = ""
    while text:
        if len(prefix) + len(text) <= limit:
            chunks.append(prefix + text)
            break
        room = limit - len(prefix) - len(_CLOSE)
        cut = _choose_cut(text, text[:room], prefix)
        body = text[:cut].rstrip()
        piece = prefix + body
        opener = _open_fence(piece)
        rest = _rest_after_cut(text[cut:], opener is not None)
        if opener is not None:
            closer = _FENCE_AT_START.match(rest)
            if closer is None:
                piece += _CLOSE
            else:
                # The block ends right here: end it with its own closing fence instead of reopening it empty (a
                # closing fence's info string means nothing; it is kept when it fits).
                own = "\n" + closer.group(0).strip()
                piece += own if len(piece) + len(own) <= limit else _CLOSE
                rest = rest[closer.end() :].lstrip()
                opener = None
        if _content_start(piece) < len(piece):  # a message of nothing but fences would be an empty block
            chunks.append(piece)
        prefix = opener + "\n" if opener is not None else ""
        text = rest
    return chunks
