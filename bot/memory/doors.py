"""The doors of the memory engine's lobby (`MemoryService`): one Protocol per part, holding the verbs its callers
use, so strict type checking keeps every caller on its side of the door.

- `learning`: a message arrived, take it for later extraction (or note the user spoke); a reply is withdrawn;
- `recall`: the memory a reply's prompt carries, and the record of what each reply used;
- `events`: Discord deletes and edits, honoured;
- `switches` and `community`: what server admins chose (memory switches; persona, model, who may talk);
- `budgets`: the tokens a user and a server spend per day;
- `ops`: open, flush, shut down, count, sweep;
- `user(id)`: one person's memory, as they see and control it.
The values that pass through the doors are re-exported here, so a caller imports its door and what it carries from
one module.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol

from bot.memory.drivers.interfaces import ReplyRecord
from bot.memory.drivers.tally import Kind, estimate_tokens
from bot.memory.models import Fact, IncomingMessage, Location, MemoryFile, Place
from bot.memory.parts.budgets import Exceeded, UsageReport
from bot.memory.parts.deletes import DeleteReport, EditOutcome
from bot.memory.parts.learning import LearningTicket, WithdrawnReply
from bot.memory.parts.operations import FlushReport
from bot.memory.parts.user_memory import MAX_USER_FACT_CHARS, RecalledItem
from bot.memory.pipeline.embeddings import NO_QUERY, QueryVector
from bot.memory.pipeline.importing import MAX_IMPORT_BYTES
from bot.memory.pipeline.render import MemoryPrompt
from bot.memory.records.community_settings import MAX_PROMPT_CHARS, Chosen, CommunityChoice
from bot.memory.records.privacy_modes import MAX_MODE_MINUTES, PrivacyRecord
from bot.memory.records.switches import MemorySwitch
from bot.memory.requests import (
    MAX_FORGET_MINUTES,
    PAUSE,
    ForgetEverything,
    ForgetFact,
    ForgetMinutes,
    ForgetRequest,
    ForgetSection,
    Forgotten,
    Fresh,
    Imported,
    ImportPreview,
    Incognito,
    ModeChange,
    PrivacyMode,
    Resume,
)
from bot.memory.stats import EmbeddingSnapshot, EngineSnapshot

__all__ = [
    "MAX_FORGET_MINUTES",
    "MAX_IMPORT_BYTES",
    "MAX_MODE_MINUTES",
    "MAX_PROMPT_CHARS",
    "MAX_USER_FACT_CHARS",
    "NO_QUERY",
    "PAUSE",
    "BudgetsDoor",
    "Chosen",
    "CommunityChoice",
    "CommunityDoor",
    "DeleteReport",
    "EditOutcome",
    "EmbeddingSnapshot",
    "EngineSnapshot",
    "EventsDoor",
    "Exceeded",
    "FlushReport",
    "ForgetEverything",
    "ForgetFact",
    "ForgetMinutes",
    "ForgetRequest",
    "ForgetSection",
    "Forgotten",
    "Fresh",
    "ImportPreview",
    "Imported",
    "Incognito",
    "Kind",
    "LearningDoor",
    "LearningTicket",
    "MemoryPrompt",
    "MemorySwitch",
    "ModeChange",
    "OperationsDoor",
    "PrivacyMode",
    "PrivacyRecord",
    "QueryVector",
    "RecallDoor",
    "RecalledItem",
    "ReplyRecord",
    "Resume",
    "SwitchesDoor",
    "UsageReport",
    "UserDoor",
    "WithdrawnReply",
    "estimate_tokens",
]


class LearningDoor(Protocol):
    """Messages in: the only place "may we learn this?" is decided (`bot.memory.parts.learning`)."""

    def ticket(self, user_id: int) -> LearningTicket:
        """Take this when a message arrives and pass it to `remember` and `RecallDoor.record_reply`: a forget or
        pause that begins meanwhile wins."""
        ...

    async def remember(
        self, where: Location, messages: Sequence[IncomingMessage], *, ticket: LearningTicket, bot_id: int | None,
        shown: Sequence[str] = (),
    ) -> bool:
        """Take the ticket's user's message and the bot's reply to it, said `where`, for later extraction (filtered
        here); False when nothing is kept. The user counts as active either way. `shown`: the earlier messages the
        reply was written from (a credential found there is cut from the reply that quotes it; nothing of them is
        kept)."""
        ...

    def note_activity(self, user_id: int) -> None:
        """A message from the user reached the bot but is not handed to `remember` (rate-limited, say)."""
        ...

    async def withdraw_reply(self, user_id: int, message_ids: Sequence[int]) -> WithdrawnReply:
        """The bot's reply (these message ids) to the user is gone or replaced: it is never learned."""
        ...


class RecallDoor(Protocol):
    """The memory a reply may carry, and what each reply used (`bot.memory.parts.recall`)."""

    def query(self, user_id: int, recent_texts: Sequence[str], *, where: Location) -> QueryVector:
        """Start computing the query vector of a reply to `user_id` said `where`, as soon as the message arrives
        (`NO_QUERY` when embeddings are off or the reply may use no memory); hand it to `prompt`."""
        ...

    async def prompt(
        self,
        user_id: int,
        recent_texts: Sequence[str],
        *,
        user_label: str,
        where: Location,
        query: QueryVector = NO_QUERY,
    ) -> MemoryPrompt:
        """The rendered memory of `user_id` that a reply said `where` may use (none in fresh mode or where recall
        is switched off), ranked by meaning too when `query`'s vector came back in time."""
        ...

    async def record_reply(
        self, message_ids: Sequence[int], user_id: int, prompt: MemoryPrompt, ticket: LearningTicket
    ) -> None:
        """Keep which memory a sent reply used (ids only); nothing when the user forgot since it arrived."""
        ...

    async def reply_record(self, message_id: int) -> ReplyRecord | None:
        """What the reply with this message id used, if it is among the recorded replies (of any process)."""
        ...

    def can_use(self, place: Place, fact: Fact) -> bool:
        """Whether a reply in `place` may use `fact`."""
        ...

    def can_use_summaries_of(self, place: Place, item_place: str) -> bool:
        """Whether a reply in `place` may use the summaries learned in `item_place`."""
        ...


class EventsDoor(Protocol):
    """Discord deletes and edits, honoured (`bot.memory.parts.deletes`)."""

    async def deleted(self, message_ids: Collection[int]) -> DeleteReport:
        """Messages deleted on Discord (any user's, cached or not): never learned if they were on their way, and
        what they taught retracted."""
        ...

    async def edited(self, where: Location, message: IncomingMessage, *, bot_id: int | None) -> EditOutcome:
        """`message` (its text as it reads now), said `where`, was edited: learned as edited if it was pending or
        learned."""
        ...


class SwitchesDoor(Protocol):
    """Where memory is switched off, by server admins and by the operator (`bot.memory.records.switches`)."""

    def at(self, where: Location) -> MemorySwitch:
        """The effective memory switch where a message was said."""
        ...

    def guild_switch(self, guild_id: int) -> MemorySwitch:
        """What the server's admins chose."""
        ...

    def channel_learning(self, channel_id: int) -> bool:
        """Whether the server's admins left learning on in this channel."""
        ...

    def operator_disabled(self, where: Location) -> bool:
        """The operator's lists switch memory off here."""
        ...

    async def set_guild(self, guild_id: int, *, learning: bool, recall: bool) -> None:
        """Saved (for every process) before it takes effect and before returning."""
        ...

    async def set_channel(self, channel_id: int, *, learning: bool) -> None:
        """Saved (for every process) before it takes effect and before returning."""
        ...


class CommunityDoor(Protocol):
    """What each server's admins chose: persona, model, who may talk, DMs
    (`bot.memory.records.community_settings`)."""

    def at(self, where: Location) -> CommunityChoice:
        """Every prompt and model set from where a message was written up to its server, most specific first."""
        ...

    async def set_prompt(self, guild_id: int, place_id: int | None, text: str) -> None: ...

    async def set_model(self, guild_id: int, place_id: int | None, name: str) -> None: ...

    async def reset(self, guild_id: int, place_id: int | None) -> bool:
        """Clear the prompt and model set at this place; True if any was."""
        ...

    def allowed_roles(self, guild_id: int) -> frozenset[int]:
        """The roles whose members may talk to the bot in this server; empty: everyone may."""
        ...

    async def set_allowed_roles(self, guild_id: int, roles: frozenset[int]) -> None: ...

    def dms_allowed(self, guild_id: int) -> bool:
        """Whether this server's members count as members for DM_POLICY=members."""
        ...

    async def set_dms_allowed(self, guild_id: int, allowed: bool) -> None: ...

    async def forget_guild(self, guild_id: int) -> int:
        """The bot left the server: everything its admins set is deleted; returns how many records."""
        ...


class BudgetsDoor(Protocol):
    """Daily token budgets per user and per server (`bot.memory.parts.budgets`)."""

    def count(
        self, kind: Kind, *, user_id: int, guild_id: int | None, tokens: int, estimated: bool = False
    ) -> None:
        """Count tokens a model call spent for the user (and their server outside DMs)."""
        ...

    def exceeded(self, user_id: int, guild_id: int | None) -> Exceeded | None:
        """The daily budget that stops a reply to this user here now, or None."""
        ...

    def report(self, user_id: int, guild_id: int | None) -> UsageReport:
        """Today's spending of the user (and of the server, when asked in one), with the limits."""
        ...

    async def save(self) -> None:
        """Persist the counts (every few seconds and at shutdown); a failure is logged and retried later."""
        ...


class OperationsDoor(Protocol):
    """The engine's life cycle and upkeep (`bot.memory.parts.operations`)."""

    @property
    def where(self) -> str:
        """Where memory is kept, in words for the start-up line (never a password)."""
        ...

    async def open(self) -> int:
        """Open the storage and resume the turns a crash left pending; returns how many."""
        ...

    async def shutdown(self, timeout: float) -> bool:
        """Flush everything pending within `timeout`, then close; True when all finished."""
        ...

    async def flush(self, timeout: float | None = None) -> FlushReport:
        """Extract and save everything pending now; report what happened."""
        ...

    def snapshot(self) -> EngineSnapshot:
        """The engine's counters and gauges, as plain values, for the metrics endpoint."""
        ...

    async def save_activity(self) -> None:
        """Persist last-activity days (hourly and at shutdown)."""
        ...

    async def sweep(self, now: datetime | None = None) -> int:
        """The daily sweep (retention, then summary history); returns how many users were deleted."""
        ...

    def longest_pending_seconds(self, attempt_timeout: float) -> float:
        """How long a turn can wait before it is distilled while the endpoint answers at all."""
        ...


class UserDoor(Protocol):
    """One person's memory, as they see and control it (`bot.memory.parts.user_memory`)."""

    @property
    def user_id(self) -> int: ...

    async def show(self) -> MemoryFile:
        """The whole memory (read-only: it is shared with the cache)."""
        ...

    async def export(self) -> bytes:
        """The whole memory as pretty JSON."""
        ...

    def take_unreadable_notice(self) -> bool:
        """True once after this user's stored memory was found unreadable and kept aside for the operator (they
        start with an empty memory and are to be told, privately, once); False until it happens again."""
        ...

    async def recalled(self, record: ReplyRecord) -> list[RecalledItem]:
        """What a recorded reply to this user used, as it reads now; `InvalidRequest` for someone else's."""
        ...

    async def add(self, text: str, *, place: Place, everywhere: bool = False) -> Fact:
        """A fact in the user's own words, learned in `place` (or shared everywhere)."""
        ...

    async def edit(self, fact_id: str, text: str) -> Fact:
        """Correct a fact in place (same id, marked as corrected by the user)."""
        ...

    async def share(self, fact_id: str, shared: bool) -> bool | None:
        """Use a fact everywhere, or only where it was learned; None for no such fact, else whether it changed."""
        ...

    async def forget(self, what: ForgetRequest) -> Forgotten:
        """Forget a fact, a summary everywhere, the last minutes, or everything; final against work in flight."""
        ...

    @property
    def privacy(self) -> PrivacyRecord:
        """The privacy modes as they read now."""
        ...

    async def set_mode(self, mode: PrivacyMode) -> ModeChange:
        """Incognito (0 minutes: paused until resumed), fresh, or resume."""
        ...

    async def import_preview(self, data: bytes | None, *, size: int) -> ImportPreview:
        """Read a memory file (`data` None when not downloaded, being over `MAX_IMPORT_BYTES`) and keep what it
        would add pending; `InvalidRequest` with one line, nothing kept, for a file that cannot be imported."""
        ...

    async def import_confirm(self, token: str, *, sensitive: bool) -> Imported:
        """Store the pending import `token` as the user's own facts (its sensitive ones too when `sensitive`)."""
        ...

    async def import_cancel(self, token: str) -> bool:
        """Drop the pending import `token`; True if there was one."""
        ...
