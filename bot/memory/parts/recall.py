"""Recall: the memory a reply's prompt carries, and the record of what each reply used ("What did you remember?").

The only place "may this reply use memory?" is decided: never while the user is in fresh mode (or the privacy
records are held), never where memory recall is switched off, and only the speaking user's memory, of which only
what the reply's place may use (its own summaries and facts, its server's public ones, shared facts). A reply's
record is written only when no forget of its user began since the message arrived (the ticket's generation), so a
reply written during a wipe never names what was wiped. Ids only, never text.

With an embedding model, a reply's query vector is asked for as soon as the message arrives (`query`), under the
same rules (none in fresh mode or where recall is off), and `prompt` ranks by meaning too when it has come back in
time; facts whose vector is missing or of another model are selected by their words and handed to the embedding
keeper (`bot.memory.parts.vector_keeper`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.drivers.interfaces import ReplyRecord, Stale
from bot.memory.models import Fact, Location, Place
from bot.memory.parts.learning import LearningTicket
from bot.memory.parts.outage import StorageOutage
from bot.memory.parts.vector_keeper import VectorKeeper
from bot.memory.pipeline.embeddings import NO_QUERY, Embedder, QueryVector
from bot.memory.pipeline.render import MemoryPrompt, PlacedSummary, render_block
from bot.memory.pipeline.selector import FactSelector, RankedIndex, embedding_query
from bot.memory.policy import MemoryPolicy
from bot.memory.rules import lifetimes, vectors
from bot.memory.rules.places import Scope, may_use, reader, usable_facts, usable_summaries
from bot.memory.rules.vectors import VectorLike

log = logging.getLogger(__name__)

OffLoop = Callable[..., Awaitable[Any]]
INLINE_FIT_FACTS = 16  # an index of this many facts fits in about a millisecond: on the loop, not on a thread


class Recall:
    def __init__(
        self,
        *,
        storage: StorageBundle,
        selector: FactSelector,
        policy: MemoryPolicy,
        clock: Callable[[], datetime],
        off_loop: OffLoop,
        outage: StorageOutage | None = None,
        keeper: VectorKeeper | None = None,
    ) -> None:
        self.storage = storage
        self.selector = selector
        self.policy = policy
        self.clock = clock
        self._off_loop = off_loop
        self.outage = outage  # shared with learning: a storage failure on the reply path is logged once per outage
        self.keeper = keeper  # with EMBEDDING_MODEL: the facts' vectors, and the model a query is embedded by
        self.embedder: Embedder | None = keeper.embedder if keeper is not None else None

    def _storage_failed(self, what: str, error: OSError) -> None:
        reason = f"{what}: {error.strerror or type(error).__name__}"
        if self.outage is None:
            log.warning("%s", reason)
        elif self.outage.down:
            log.debug("%s", reason)
        else:
            self.outage.begin(reason)

    @property
    def scope(self) -> Scope:
        return self.policy.scope

    def _may_recall(self, user_id: int, where: Location) -> bool:
        return not self.storage.privacy.of(user_id, self.clock()).fresh and self.storage.switches.at(where).recall

    def query(self, user_id: int, recent_texts: Sequence[str], *, where: Location) -> QueryVector:
        """Start computing the query vector of a reply to `user_id` said `where` (the conversation as it is known
        when the message arrives); nothing when embeddings are off, the reply may use no memory, or the endpoint
        is down (but for a probe now and then)."""
        if self.embedder is None or not self._may_recall(user_id, where):
            return NO_QUERY
        text = embedding_query(recent_texts)
        if not text.strip() or not self.embedder.may_query():
            return NO_QUERY
        return QueryVector.start(self.embedder, text)

    async def prompt(
        self,
        user_id: int,
        recent_texts: Sequence[str],
        *,
        user_label: str,
        where: Location,
        query: QueryVector = NO_QUERY,
    ) -> MemoryPrompt:
        """The rendered memory block for a reply to `user_id` said `where` (see the module for what it may hold);
        `query` (from `query`) ranks by meaning too when its vector is there."""
        try:
            return await self._prompt(user_id, recent_texts, user_label=user_label, where=where, query=query)
        finally:
            query.cancel()  # no memory to rank, or an early answer: its vector is not waited for

    async def _prompt(
        self, user_id: int, recent_texts: Sequence[str], *, user_label: str, where: Location, query: QueryVector
    ) -> MemoryPrompt:
        if not self._may_recall(user_id, where):
            return MemoryPrompt()
        place = where.place
        try:
            memory, revision = await self.storage.memories.load_with_revision(user_id)
        except OSError as error:  # the storage is down: answer without memory rather than not at all
            self._storage_failed(f"memory of user {user_id} unavailable for a reply", error)
            return MemoryPrompt()
        if memory.is_empty():
            return MemoryPrompt()
        reading = reader(place, self.scope)
        facts = usable_facts(memory, reading)
        summaries = [
            PlacedSummary(name, section.summary, item_place, elsewhere=item_place != reading.key)
            for item_place, name, section in usable_summaries(memory, reading)
        ]
        if not facts and not summaries:
            return MemoryPrompt()
        key = self._selection_key(user_id, reading)
        if not self.selector.is_cached(key, revision):
            # Fitting the index of a new revision is CPU work a full memory makes noticeable: not on the loop. A
            # few facts fit in less time than a hop to the worker thread takes on a busy machine: on the loop.
            previous = self.selector.cached_index(key)  # an earlier revision's: the words of unchanged facts
            if len(facts) <= INLINE_FIT_FACTS:
                self.selector.put(key, revision, self._index_of(facts, previous))
            else:
                self.selector.put(key, revision, await self._off_loop(self._index_of, facts, previous))
            if self.keeper is not None:
                self.keeper.check(user_id, memory)
        # The cached index may hold facts whose last day passed since it was built: ask for as many more, drop them.
        now = self.clock()
        day = lifetimes.today(now)
        top_k = self.policy.top_k + sum(1 for fact in facts if lifetimes.lapsed(fact, day))
        query_vector = await query.result()
        selected = self.selector.select(key, revision, facts, recent_texts, top_k, now=now, query_vector=query_vector)
        selected = [fact for fact in selected if not lifetimes.lapsed(fact, day)][: self.policy.top_k]
        block = render_block(
            memory, selected, user_label=user_label, token_budget=self.policy.token_budget, summaries=summaries
        )
        return block

    def _index_of(self, facts: Sequence[Fact], previous: RankedIndex | None = None) -> RankedIndex:
        """The selection index of `facts`, with their current vectors when embeddings are on (a fact without one,
        or with another model's, is ranked by its words); `previous` lends the words of unchanged facts."""
        if self.embedder is None:
            return self.selector.build(facts, previous=previous)
        model, dimensions = self.embedder.model, self.embedder.dimensions
        found: list[VectorLike | None] = [
            vectors.decode(fact.vector) if vectors.is_current(fact, model, dimensions) else None for fact in facts
        ]
        return self.selector.build(facts, found, previous=previous)

    @staticmethod
    def _selection_key(user_id: int, reading: Place) -> str:
        """The selector caches one index per key: the user's whole memory for DMs (`<id>`), a subset per other
        place (`<id>@<place>`). Nothing else is kept per user: the selector's cache is the only, bounded, state."""
        return str(user_id) if reading.kind == "dm" else f"{user_id}@{reading.key}"

    def forget_user(self, user_id: int) -> None:
        """Drop the user's cached selection indexes, in every place (they hold the words of their facts)."""
        self.selector.forget_prefixed(str(user_id), f"{user_id}@")
        if self.keeper is not None:
            self.keeper.forget_user(user_id)

    def can_use(self, place: Place, fact: Fact) -> bool:
        """Whether a reply in `place` may use `fact` (under the configured scope)."""
        return may_use(reader(place, self.scope), fact.place, shared=fact.shared)

    def can_use_summaries_of(self, place: Place, item_place: str) -> bool:
        """Whether a reply in `place` may use the summaries learned in `item_place`."""
        return may_use(reader(place, self.scope), item_place)

    # --- what each reply used ------------------------------------------------------------------------------

    async def record_reply(
        self, message_ids: Sequence[int], user_id: int, prompt: MemoryPrompt, ticket: LearningTicket
    ) -> None:
        """Remember which memory a sent reply (all its messages) used. A failure to save is logged, never raised:
        the reply is already out. Nothing is kept when the user forgot since the message arrived."""
        record = ReplyRecord(tuple(message_ids), user_id, tuple(prompt.sections), tuple(prompt.fact_ids))
        try:
            await self.storage.replies.record(record, generation=ticket.generation)
        except Stale:
            log.info("reply record for user %s not kept: they forgot while the reply was written", user_id)
        except OSError as error:
            self._storage_failed("could not save the reply record", error)

    async def reply_record(self, message_id: int) -> ReplyRecord | None:
        return await self.storage.replies.get(message_id)
