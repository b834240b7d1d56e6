"""Message filter: chat messages in, the turns worth remembering out.

Keeps the user's own words and the bot's final replies. Drops other bots, system messages, empty or
attachment-only messages, and trivial acknowledgements together with the reply they got: "ok" / "thanks" and the
bot's "you're welcome" teach nothing and would only cost extraction tokens. Strips the bot's mention and cuts very
long messages to head + tail, so one pasted log cannot blow the extractor's prompt.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from bot.memory.models import IncomingMessage, Turn

TRUNCATION_MARKER = "\n[… {omitted} characters omitted …]\n"

_TRIVIAL = {
    "ok", "okay", "k", "kk", "okk", "ok thanks", "ok thank you", "okay thanks", "thanks", "thank you", "thx", "ty",
    "tysm", "thanks!", "cool", "nice", "great", "got it", "lol", "lmao",
    "haha", "hah", "hm", "hmm", "alright", "np", "no problem", "cheers", "gg", "wow", "ah", "oh",
    "i see", "makes sense", "perfect", "awesome", "sounds good", "bye", "good night", "gn", "brb",
    "好的", "好滴", "好吧", "嗯", "嗯嗯", "谢谢", "谢谢你", "谢谢啦", "多谢", "谢了", "收到", "哈哈", "哈哈哈", "了解",
    "明白", "明白了", "ok了", "好的谢谢", "謝謝", "好的謝謝",
    "ありがとう", "ありがとうございます", "どうも", "了解です", "なるほど", "了解しました", "わかりました",
}
_PUNCT_OR_SPACE = re.compile(r"[\s\W_]+", re.UNICODE)
# The same phrases with spaces and punctuation removed: "好的, 谢谢！" and "ok, thanks" match too.
_TRIVIAL_COMPACT = frozenset(_PUNCT_OR_SPACE.sub("", phrase) for phrase in _TRIVIAL)


def normalise(text: str) -> str:
    """Case-, width- and whitespace-insensitive form used for comparisons (NFKC folds full-width characters)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def is_trivial(text: str) -> bool:
    """True for acknowledgements and reactions that carry nothing to remember ("ok", "thanks!!", "👍")."""
    folded = normalise(text)
    stripped = _PUNCT_OR_SPACE.sub(" ", folded).strip()
    if not stripped:
        return True  # emoji, punctuation only
    return stripped in _TRIVIAL or stripped.replace(" ", "") in _TRIVIAL_COMPACT


def strip_mentions(text: str, bot_id: int | None) -> str:
    """Remove the bot's own mention (`<@id>` and the legacy `<@!id>`), which is addressing, not content."""
    if bot_id is None:
        return text.strip()
    return re.sub(rf"<@!?{bot_id}>", " ", text).strip()


def clip(text: str, max_chars: int) -> str:
    """Cut text longer than `max_chars` to its head and tail around a marker saying how much was omitted."""
    if len(text) <= max_chars:
        return text
    keep = max_chars - len(TRUNCATION_MARKER.format(omitted=len(text)))
    if keep < 2:  # no room for a marker: a plain cut is the only way to respect the limit
        return text[: max(max_chars, 0)]
    head = (keep * 2) // 3
    tail = keep - head
    omitted = len(text) - head - tail
    return text[:head] + TRUNCATION_MARKER.format(omitted=omitted) + text[-tail:]


def filter_messages(
    messages: Iterable[IncomingMessage],
    *,
    bot_id: int | None,
    max_chars: int = 2000,
) -> list[Turn]:
    """Turn a conversation's messages, oldest first, into the turns the extractor should read."""
    turns: list[Turn] = []
    trivial_ids: set[int] = set()
    last_user_was_trivial = False
    for message in messages:
        if message.is_system:
            continue
        if message.author_is_bot and not message.is_self:
            continue
        text = strip_mentions(message.content, bot_id)
        if message.is_self:
            answers_trivial = (
                message.reply_to_id in trivial_ids
                if message.reply_to_id is not None
                else last_user_was_trivial
            )
            last_user_was_trivial = False
            if answers_trivial or not text:
                continue
            turns.append(_turn(message, "assistant", text, max_chars))
            continue
        if not text:
            last_user_was_trivial = False
            continue  # empty or attachment-only
        if is_trivial(text):
            trivial_ids.add(message.message_id)
            last_user_was_trivial = True
            continue
        last_user_was_trivial = False
        turns.append(_turn(message, "user", text, max_chars))
    return turns


def _turn(message: IncomingMessage, role: str, text: str, max_chars: int) -> Turn:
    return Turn(
        role="assistant" if role == "assistant" else "user",
        author_id=message.author_id,
        author_name=message.author_name,
        text=clip(text, max_chars),
        at=message.created_at,
        turn_id=str(message.message_id),
        reply_to=str(message.reply_to_id) if role == "assistant" and message.reply_to_id is not None else "",
    )
