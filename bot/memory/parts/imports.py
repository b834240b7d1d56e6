"""`/memory import`: a file's memories previewed, kept pending, then stored as the user's own words on confirmation.

The preview (`Importer.preview`) reads and sorts the file (`bot.memory.pipeline.importing`) and keeps what could be
stored inside the user's memory document (`pendingImport`): sealed at rest like the memory, wiped by every forget
of everything and by retention, and never holding a refused item, so a credential is not kept anywhere, not even
while the user decides. The buttons carry only its token, so a press after a restart finds it.
Confirming (`confirm`) stores the new memories through the writer and its gate as the user's own facts
(`origin: imported`: never changed or evicted by the model, never ageing), learned in the DM place, with the dates
an export gave them; sensitive ones only when asked. Learned facts make way for them under the fact cap (evicted as
the cap evicts, history first); more than the cap leaves room for beside the user's own facts is refused whole.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from bot.memory.errors import InvalidRequest, Phrase
from bot.memory.models import DM_PLACE, ORIGIN_IMPORTED, Fact, MemoryFile, iso, new_fact_id
from bot.memory.parts.writer import MemoryWriter
from bot.memory.pipeline.apply import evict_overflow, near_duplicate
from bot.memory.pipeline.importing import MAX_IMPORT_BYTES, ImportItem, read_items, sort_items, too_large
from bot.memory.requests import Imported, ImportPreview
from bot.memory.rules.lifetimes import current
from bot.memory.rules.write_gate import UserAuthor

log = logging.getLogger(__name__)

PENDING_FIELD = "pendingImport"
IMPORT_CONFIRM_MINUTES = 15
EXPIRED = Phrase("This import expired or was already answered: use /memory import again.")


def _pending(memory: MemoryFile) -> dict[str, Any] | None:
    value = (memory.model_extra or {}).get(PENDING_FIELD)
    return value if isinstance(value, dict) else None


def drop_pending(memory: MemoryFile) -> bool:
    """Remove a pending import from `memory`; True if there was one."""
    extra = memory.model_extra
    return extra is not None and extra.pop(PENDING_FIELD, None) is not None


def _no_room(count: int, room: int, cap: int) -> InvalidRequest:
    return InvalidRequest(
        "That is {count} new memories, but only {room} more fit (I keep at most {cap} facts). Import a shorter file, "
        "or forget some facts first. Nothing was imported.",
        count=count, room=max(room, 0), cap=cap,
    )


class Importer:
    """The import steps of one user's memory (`UserMemory` hands them out behind `UserDoor`)."""

    def __init__(
        self, writer: MemoryWriter, clock: Callable[[], datetime], user_id: int, *, similarity: float
    ) -> None:
        self._writer, self._clock, self.user_id, self._similarity = writer, clock, user_id, similarity

    def _duplicate(self, facts: list[Fact], content: str) -> Fact | None:
        return near_duplicate(facts, content, self._similarity)

    def _room(self, memory: MemoryFile, now: datetime) -> int:
        """How many more of the user's own facts fit under the cap: learned facts give way (evicted as the cap
        evicts them, history and the least valuable first), what the user wrote or imported does not."""
        return self._writer.max_facts - sum(1 for fact in current(memory.live_facts(), now) if fact.user_owned)

    async def preview(self, data: bytes | None, *, size: int) -> ImportPreview:
        """Read and sort a file (`data` None: not downloaded, being over the limit) and keep what it would store
        pending; `InvalidRequest` with one line, and nothing kept, for a file that cannot be imported."""
        if data is None or size > MAX_IMPORT_BYTES:
            raise too_large(size)
        items = read_items(data, user_id=self.user_id)
        now = self._clock()
        async with self._writer.change(self.user_id, UserAuthor()) as draft:
            found = sort_items(items, current(draft.live_facts(), now), duplicate=self._duplicate)
            room = self._room(draft, now)
            if len(found.adding) > room:
                raise _no_room(len(found.adding), room, self._writer.max_facts)
            token = secrets.token_hex(8)
            expires = iso(now + timedelta(minutes=IMPORT_CONFIRM_MINUTES))
            kept = [(item, "") for item in found.adding] + found.sensitive
            if kept:
                records = [_record(item, kind) for item, kind in kept]
                setattr(draft, PENDING_FIELD, {"token": token, "expiresAt": expires, "items": records})
            else:
                drop_pending(draft)
        log.info(
            "import preview for user %s: %d to add, %d known, %d refused, %d sensitive", self.user_id,
            len(found.adding), len(found.known), len(found.refused), len(found.sensitive),
        )
        return ImportPreview(
            token=token,
            adding=tuple(item.content for item in found.adding),
            known=tuple(item.content for item in found.known),
            refused=tuple(found.refused),
            sensitive=tuple((item.content, kind) for item, kind in found.sensitive),
            expires_at=expires,
        )

    async def confirm(self, token: str, *, sensitive: bool) -> Imported:
        """Store the pending import named `token` (its sensitive memories too when `sensitive`); `InvalidRequest`
        when there is none by that token, or it expired (it is then dropped)."""
        now = self._clock()
        stamp = iso(now)
        expired = False
        added: list[Fact] = []
        left_out = 0
        async with self._writer.change(self.user_id, UserAuthor()) as draft:
            pending = _pending(draft)
            if pending is None or pending.get("token") != token:
                raise InvalidRequest(EXPIRED)
            drop_pending(draft)
            if str(pending.get("expiresAt", "")) < stamp:
                expired = True
            else:
                records = [item for item in pending.get("items", []) if isinstance(item, dict)]
                chosen = [item for item in records if sensitive or not item.get("sensitive")]
                left_out = len(records) - len(chosen)
                added = self._store(draft, chosen, now)
        if expired:
            raise InvalidRequest(EXPIRED)
        log.info("import for user %s: %d facts stored, %d sensitive left out", self.user_id, len(added), left_out)
        return Imported(tuple(fact.id for fact in added), sensitive_left_out=left_out)

    def _store(self, draft: MemoryFile, records: list[dict[str, Any]], now: datetime) -> list[Fact]:
        holding = current(draft.live_facts(), now)
        taken = {fact.id for fact in draft.facts}
        added: list[Fact] = []
        for record in records:
            fact = _fact(record, iso(now), taken)
            if self._duplicate(holding + added, fact.content) is not None:
                continue  # learned or imported since the preview
            added.append(fact)
            taken.add(fact.id)
        room = self._room(draft, now)
        if len(added) > room:
            raise _no_room(len(added), room, self._writer.max_facts)
        draft.facts.extend(added)
        evict_overflow(draft, self._writer.max_facts)
        return added

    async def cancel(self, token: str) -> bool:
        """Drop the pending import named `token`; True if there was one."""
        async with self._writer.change(self.user_id, UserAuthor()) as draft:
            pending = _pending(draft)
            return pending is not None and pending.get("token") == token and drop_pending(draft)


def _record(item: ImportItem, kind: str) -> dict[str, Any]:
    record: dict[str, Any] = {"content": item.content, "category": item.category, "fields": item.fields}
    if kind:
        record["sensitive"] = kind
    return record


def _fact(record: dict[str, Any], stamp: str, taken: set[str]) -> Fact:
    while (fact_id := new_fact_id()) in taken:
        pass
    given = record.get("fields")
    fields: dict[str, Any] = given if isinstance(given, dict) else {}
    return Fact(
        id=fact_id,
        content=str(record.get("content", "")),
        category=str(record.get("category") or "context"),
        confidence=1.0,
        createdAt=stamp,
        lastConfirmedAt=stamp,
        source="import",
        origin=ORIGIN_IMPORTED,
        place=DM_PLACE,
        shared=bool(fields.get("shared", False)),
        observedAt=str(fields.get("observedAt") or stamp),
        eventDate=str(fields.get("eventDate") or ""),
        validUntil=str(fields.get("validUntil") or ""),
    )
