"""The cap on places with summaries: a user keeps the summaries of at most `max_places` places besides DMs.

Every server and restricted channel a user talks in gets its own six summaries (and their previous values for a
day). Ticket bots make a restricted channel per ticket, so without a cap a user's document grows by one set per
ticket forever, and every save copies and compares all of them. When a model's change leaves more than
`max_places` places with summaries, the places whose summaries were updated longest ago lose them (never the DM
place, whose summaries are the document's top-level fields, and never the place being written). Facts are not
touched: they have their own cap. Applied by the writer (`writer.py`) as part of the model's change, like the
fact cap, so it is one more rule every save obeys.
"""

from __future__ import annotations

from bot.memory.models import MemoryFile, PlaceMemory


def last_updated(summaries: PlaceMemory) -> str:
    """When any of the place's summaries last changed (ISO 8601 in UTC, so the text orders like the time; "" for
    never)."""
    stamps = [section.updatedAt for _, section in summaries.sections()]
    stamps += [old.replacedAt for _, section in summaries.sections() for old in section.previous]
    return max(stamps, default="")


def evict_old_places(memory: MemoryFile, max_places: int, *, keep: str) -> list[str]:
    """Drop the summaries of the least recently updated places past `max_places` (never `keep`, the place being
    written); returns the places evicted, oldest first."""
    overflow = len(memory.places) - max(max_places, 0)
    if overflow <= 0:
        return []
    candidates = sorted((place for place in memory.places if place != keep),
                        key=lambda place: (last_updated(memory.places[place]), place))
    evicted = candidates[:overflow]
    for place in evicted:
        del memory.places[place]
    return evicted
