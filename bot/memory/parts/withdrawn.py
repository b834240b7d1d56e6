"""Messages withdrawn from learning in this process: deleted on Discord, or edited (their old text).

A delete or an edit can arrive while the message is on its way to memory: its reply still being written (the turn
not queued yet), its turn waiting in this process's debouncer, or its batch at the extractor. The queue itself
drops the message's turns (in any process); this short-lived record in RAM catches the rest here: a turn of a
withdrawn message, or the bot's reply to one, is not queued, not extracted, and an extraction that read it is not
saved. Message events of one channel reach one process (the shard that owns it), so RAM is enough; entries leave
after `WITHDRAWN_SECONDS` (longer than any reply and extraction takes) or past `WITHDRAWN_KEPT`. Ids only, no text.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

from bot.memory.models import Turn
from bot.memory.rules.sources import message_of

WITHDRAWN_SECONDS = 3600.0
WITHDRAWN_KEPT = 100_000


class Withdrawn:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # message id -> (when, the one turn id of it that may still be learned: an edit's new text; None if none)
        self._ids: OrderedDict[str, tuple[float, str | None]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._ids)

    def deleted(self, message_ids: Iterable[str]) -> None:
        for message in message_ids:
            self._put(message, None)

    def edited(self, message_id: str, new_turn_id: str) -> None:
        """Every earlier text of the message is withdrawn; `new_turn_id` (its text now) may be learned."""
        self._put(message_id, new_turn_id)

    def _put(self, message: str, allowed: str | None) -> None:
        self._ids[message] = (self._clock(), allowed)
        self._ids.move_to_end(message)
        self._expire()

    def _expire(self) -> None:
        horizon = self._clock() - WITHDRAWN_SECONDS
        while self._ids and (len(self._ids) > WITHDRAWN_KEPT or next(iter(self._ids.values()))[0] < horizon):
            self._ids.popitem(last=False)

    def covers(self, turn: Turn) -> bool:
        """True when `turn` is (a text of) a withdrawn message, or the bot's reply to one."""
        if not self._ids:
            return False
        self._expire()
        if turn.reply_to and turn.reply_to in self._ids:
            return True
        message = message_of(turn.turn_id)
        entry = self._ids.get(message) if message is not None else None
        return entry is not None and entry[1] != turn.turn_id

    def keep(self, turns: Sequence[Turn]) -> list[Turn]:
        """The turns not withdrawn."""
        return [turn for turn in turns if not self.covers(turn)]
