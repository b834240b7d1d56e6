"""A summary's earlier values are kept for a day (what `/memory forget minutes:` puts back), and not a moment longer.

Every save drops the earlier values, in every place, replaced more than `SUMMARY_HISTORY_SECONDS` ago (`expire`),
so a summary that never changes again does not keep them either; `due` says when the oldest value left expires,
which the upkeep schedule records so the daily sweep visits exactly the memories holding one. Pure functions.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.memory.models import SUMMARY_HISTORY_SECONDS, MemoryFile

KEPT_FOR = timedelta(seconds=SUMMARY_HISTORY_SECONDS)


def expire(memory: MemoryFile, now: datetime) -> int:
    """Drop the earlier values replaced before `now - KEPT_FOR`, in every place; returns how many went."""
    horizon = now - KEPT_FOR
    dropped = 0
    for place in memory.summary_places():
        summaries = memory.place_memory(place)
        if not summaries.has_history():
            continue
        for _, section in summaries.sections():
            kept = [old for old in section.previous if not _expired(old.replacedAt, horizon)]
            dropped += len(section.previous) - len(kept)
            section.previous = kept
        memory.set_place_memory(place, summaries)
    return dropped


def _expired(replaced_at: str, horizon: datetime) -> bool:
    try:
        moment = datetime.fromisoformat(replaced_at)
    except ValueError:
        return True  # a value that cannot be dated cannot be kept for "a day"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment < horizon


def due(memory: MemoryFile) -> datetime | None:
    """When the oldest earlier value in `memory` expires (None when there is none)."""
    oldest = min(
        (
            old.replacedAt
            for place in memory.summary_places()
            for _, section in memory.place_memory(place).sections()
            for old in section.previous
        ),
        default=None,
    )
    if oldest is None:
        return None
    try:
        moment = datetime.fromisoformat(oldest)
    except ValueError:  # written by hand: visit at once (`expire` drops what it cannot date)
        return datetime(1970, 1, 1, tzinfo=UTC)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)) + KEPT_FOR
