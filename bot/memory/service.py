"""The memory engine's lobby: it builds the parts once and opens a typed door to each (`bot.memory.doors`).

Each operation is written once, on the part that owns its state and its promise; the lobby only assembles them and
hands each out as the Protocol of the verbs callers use, so nothing outside the engine can reach a part's
internals without the type checker saying so:
- `learning` (`parts/learning.py`): messages in, memory out; the only place "may we learn this?" is decided;
- `recall` (`parts/recall.py`): the memory a reply may carry, and the record of what each reply used;
- `events` (`parts/deletes.py`): Discord deletes and edits, honoured;
- `switches`, `community` (`records/`): what server admins chose;
- `budgets` (`parts/budgets.py`): tokens spent per user and server per day;
- `ops` (`parts/operations.py`): open, flush, shut down, count, sweep;
- `user(id)` (`parts/user_memory.py`): one person's memory as they control it.
Every part writes through the storage bundle (`drivers/bundle.py`), memory only through the `MemoryWriter` and its
gate, every forget through one generation per user.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from bot.memory.doors import (
    BudgetsDoor,
    CommunityDoor,
    EventsDoor,
    LearningDoor,
    OperationsDoor,
    RecallDoor,
    SwitchesDoor,
    UserDoor,
)
from bot.memory.drivers.bundle import StorageBundle
from bot.memory.models import utc_now
from bot.memory.parts.budgets import Budgets
from bot.memory.parts.deletes import Deletes
from bot.memory.parts.learning import Learning
from bot.memory.parts.operations import Operations
from bot.memory.parts.recall import OffLoop, Recall
from bot.memory.parts.user_memory import Shared, UserMemory
from bot.memory.parts.vector_keeper import VectorKeeper
from bot.memory.parts.writer import MemoryWriter
from bot.memory.pipeline.embeddings import Embedder
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.pipeline.selector import FactSelector
from bot.memory.policy import MemoryPolicy

__all__ = ["EngineParts", "MemoryPolicy", "MemoryService"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class EngineParts:
    """The parts behind the doors, for the lobby itself and for white-box tests (`tests/support/engine.py`)."""

    storage: StorageBundle
    writer: MemoryWriter
    learning: Learning
    recall: Recall
    deletes: Deletes
    budgets: Budgets
    operations: Operations
    shared: Shared
    keeper: VectorKeeper | None


class MemoryService:
    def __init__(
        self,
        *,
        storage: StorageBundle,
        extractor: MemoryExtractor,
        selector: FactSelector,
        policy: MemoryPolicy,
        clock: Callable[[], datetime] = utc_now,
        embedder: Embedder | None = None,
    ) -> None:
        """`embedder` (EMBEDDING_MODEL) adds recall by meaning: fact vectors kept by a `VectorKeeper`, a query
        vector per reply."""
        self._clock = clock
        # One thread for learning's CPU work: each extra thread running Python competes with the event loop for the
        # interpreter lock, so a burst of extractions would slow every reply even with the work off the loop. The
        # reply path has a thread of its own, so a reply never queues behind an extraction being applied.
        cpu = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-cpu")
        reply_cpu = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-cpu")

        def on(executor: ThreadPoolExecutor) -> OffLoop:
            async def off_loop(fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
                """Run CPU-heavy `fn` on the executor's thread."""
                call = functools.partial(fn, *args, **kwargs)
                return await asyncio.get_running_loop().run_in_executor(executor, call)

            return off_loop

        off_loop = on(cpu)

        now = self._now  # every part reads the time through here, so one clock (a test's fake one) serves all
        writer = MemoryWriter(
            storage.memories, max_facts=policy.max_facts, max_places=policy.max_places, ledger=storage.ledger,
            upkeep=storage.upkeep, clock=now, installation=storage.installation,
        )
        learning = Learning(
            storage=storage, writer=writer, extractor=extractor, policy=policy, clock=now, off_loop=off_loop
        )
        keeper = None
        if embedder is not None:
            keeper = VectorKeeper(storage=storage, writer=writer, embedder=embedder, forgets=learning.forgets)
            writer.on_saved = keeper.check
        recall = Recall(
            storage=storage, selector=selector, policy=policy, clock=now, off_loop=on(reply_cpu),
            outage=learning.outage, keeper=keeper,
        )
        shared = Shared(storage=storage, writer=writer, learning=learning, recall=recall, clock=now)
        budgets = Budgets(
            storage.usage, user_daily=policy.user_daily_tokens, guild_daily=policy.guild_daily_tokens, clock=now
        )
        operations = Operations(
            storage=storage, writer=writer, learning=learning, budgets=budgets, policy=policy,
            cpus=(cpu, reply_cpu), clock=now,
            wipe=lambda user_id: UserMemory(shared, user_id).wipe(quiet=True, settings=True),
            keeper=keeper,
        )
        self._parts = EngineParts(
            storage=storage, writer=writer, learning=learning, recall=recall,
            deletes=Deletes(storage=storage, writer=writer, learning=learning, scope=policy.scope, clock=now),
            budgets=budgets, operations=operations, shared=shared, keeper=keeper,
        )

    def _now(self) -> datetime:
        return self._clock()

    @property
    def clock(self) -> Callable[[], datetime]:
        """The time every part reads (a test's fake clock, or UTC now)."""
        return self._clock

    @clock.setter
    def clock(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock

    # --- the doors -----------------------------------------------------------------------------------------

    @property
    def learning(self) -> LearningDoor:
        return self._parts.learning

    @property
    def recall(self) -> RecallDoor:
        return self._parts.recall

    @property
    def events(self) -> EventsDoor:
        return self._parts.deletes

    @property
    def switches(self) -> SwitchesDoor:
        return self._parts.storage.switches

    @property
    def community(self) -> CommunityDoor:
        return self._parts.storage.community

    @property
    def budgets(self) -> BudgetsDoor:
        return self._parts.budgets

    @property
    def ops(self) -> OperationsDoor:
        return self._parts.operations

    def user(self, user_id: int) -> UserDoor:
        """One person's memory, bound to their id: everything they may see and change of it."""
        return UserMemory(self._parts.shared, user_id)
