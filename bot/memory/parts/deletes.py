"""Discord deletes and edits, honoured: what a deleted message taught goes, an edited one is learned as it reads now.

A message can be deleted or edited at any point on its way to memory, and the event can reach another process
than the one holding its turn. Each step is covered:
- the reply is still being written (the turn not queued yet): the message is withdrawn in this process
  (`Learning.withdrawn`), so the turn, and the bot's reply to it, are never queued (message events of one channel
  reach one process);
- its turn is pending, in any process: the queue deletes it, and the bot's reply to it, from the disk or the
  table (`TurnQueue.drop_messages`), so it never reaches the extraction model;
- its batch is at the extractor: the save is refused (the claim is void, or the withdrawal is seen under the
  user's lock) and the rest of the batch is extracted again without it;
- it was learned: the message ledger says whose memory it taught; it leaves every fact's sources, a fact left
  without any is retracted (never one the user wrote or corrected), and when it was learned in the last day, the
  summaries of its place go back to their value from before it (as `/memory forget minutes:` would). All through
  the writer, as the bot's own change (`SystemAuthor`).
An edit of a message that is pending or was learned withdraws its earlier text the same way, retracts the facts
that came only from it, and learns the text it has now (`<message id>.<n>` names that text's turn). A message
that was never on its way to memory (not addressed to the bot, or still being answered) is left to the chat.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.drivers.interfaces import LEDGER_RECENT, LedgerEntry
from bot.memory.models import IncomingMessage, Location, MemoryFile
from bot.memory.parts.learning import Learning
from bot.memory.parts.writer import MemoryWriter
from bot.memory.rules.forgotten import scrub, taken_back
from bot.memory.rules.places import Scope
from bot.memory.rules.sources import message_of, retract, retract_only_from
from bot.memory.rules.write_gate import SystemAuthor

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DeleteReport:
    turns: int = 0  # pending turns dropped (the messages and the bot's replies to them)
    facts: int = 0  # facts retracted
    summaries: int = 0  # summaries put back to their value from before a deleted message
    users: int = 0  # whose memory or pending turns the messages were in


EditOutcome = str  # "not learned", "pending" (replaced before learning) or "learned" (learned again)


class Deletes:
    def __init__(
        self,
        *,
        storage: StorageBundle,
        writer: MemoryWriter,
        learning: Learning,
        scope: Scope,
        clock: Callable[[], datetime],
    ) -> None:
        self.storage = storage
        self.writer = writer
        self.learning = learning
        self.scope = scope
        self.clock = clock

    async def deleted(self, message_ids: Collection[int]) -> DeleteReport:
        """Messages deleted on Discord (one, a bulk delete, cached or not): see the module."""
        ids = [str(message) for message in message_ids]
        if not ids:
            return DeleteReport()
        self.learning.withdrawn.deleted(ids)
        dropped = await self.learning.drop_messages(ids)
        learned = await self.storage.ledger.lookup(ids)
        by_user: dict[int, dict[str, LedgerEntry]] = {}
        for message, entry in learned.items():
            by_user.setdefault(entry.user_id, {})[message] = entry
        facts = summaries = 0
        for user_id, entries in by_user.items():
            removed, rewound = await self._retract(user_id, entries)
            facts, summaries = facts + removed, summaries + rewound
        await self.storage.ledger.drop(list(learned))
        report = DeleteReport(
            turns=sum(map(len, dropped.values())), facts=facts, summaries=summaries,
            users=len(set(dropped) | set(by_user)),
        )
        if report.users:
            log.info(
                "%d deleted messages: %d pending turns dropped, %d facts retracted, %d summaries put back, %d users",
                len(ids), report.turns, report.facts, report.summaries, report.users,
            )
        return report

    def _since(self, entries: Collection[LedgerEntry]) -> dict[str, datetime]:
        """Summary place -> the earliest of these messages learned there in the last day (what a rewind undoes)."""
        horizon = self.clock() - LEDGER_RECENT
        since: dict[str, datetime] = {}
        for entry in entries:
            if entry.learned_at >= horizon:
                for key in self._summary_keys(entry.place):
                    since[key] = min(since.get(key, entry.learned_at), entry.learned_at)
        return since

    async def _retract(self, user_id: int, entries: dict[str, LedgerEntry]) -> tuple[int, int]:
        since = self._since(entries.values())
        async with self.writer.change(user_id, SystemAuthor()) as draft:
            removed = retract(draft, set(entries)).facts
            rewound = _rewind(draft, since)
            draft.appliedTurnIds = [t for t in draft.appliedTurnIds if message_of(t) not in entries]
        return len(removed), rewound

    def _summary_keys(self, place: str) -> list[str]:
        """The summaries a message learned in `place` may have changed ("" when not known: every place's)."""
        if not place:
            return ["*"]
        if self.scope == "user":
            return ["dm"]
        return [place]

    async def edited(self, where: Location, message: IncomingMessage, *, bot_id: int | None) -> EditOutcome:
        """`message` (as it reads now), said `where`, was edited: see the module. Learned again under a ticket taken
        now, when the edit arrived."""
        user_id = message.author_id
        ticket = self.learning.ticket(user_id)
        message_id = str(message.message_id)
        waiting = await self.learning.pending_of(user_id)
        pending = [item for item in waiting if message_of(item.turn.turn_id) == message_id]
        entry = (await self.storage.ledger.lookup([message_id])).get(message_id)
        learned = entry is not None and entry.user_id == user_id
        if not pending and not learned:
            return "not learned"
        revision = str(int(self.clock().timestamp() * 1000))
        self.learning.withdrawn.edited(message_id, f"{message_id}.{revision}")
        await self.learning.drop_messages([message_id])
        if learned:
            assert entry is not None
            await self._take_back_edit(user_id, message, entry)
        await self.learning.remember(where, [message], ticket=ticket, bot_id=bot_id, revision=revision)
        return "learned" if learned else "pending"


    async def _take_back_edit(self, user_id: int, message: IncomingMessage, entry: LedgerEntry) -> None:
        """The old text of a learned message leaves memory before the new one is learned: the facts that came from
        it alone, the summaries it changed (put back to their value from before it, as a delete does), and the
        words of those facts the new text no longer says, from every summary value that is older still."""
        message_id = str(message.message_id)
        since = self._since([entry])
        async with self.writer.change(user_id, SystemAuthor()) as draft:
            wording = {fact.id: fact.content for fact in draft.facts}
            retracted = retract_only_from(draft, message_id).facts
            old = [wording[fact_id] for fact_id in retracted]
            rewound = _rewind(draft, since)
            scrubbed = scrub(draft, taken_back(old, message.content, others=(f.content for f in draft.live_facts())))
        log.info("message %s of user %s edited: %d facts retracted, %d summaries put back, %d summary values "
                 "scrubbed; learned again", message_id, user_id, len(retracted), rewound, scrubbed)


def _rewind(memory: MemoryFile, since: dict[str, datetime]) -> int:
    """Put each summary of these places back to its value from before the given time; returns how many changed."""
    rewound = 0
    everywhere = since.get("*")
    for key in memory.summary_places():
        moment = since.get(key) if everywhere is None else min(everywhere, since.get(key, everywhere))
        if moment is None:
            continue
        summaries = memory.place_memory(key)
        rewound += sum(1 for _, section in summaries.sections() if section.rewind(moment))
        memory.set_place_memory(key, summaries)
    return rewound
