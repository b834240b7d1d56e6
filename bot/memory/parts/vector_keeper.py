"""The vector keeper: every open fact gets the vector of its words, computed off the reply path.

A user is asked for (`wanted`) when a save leaves open facts without a current vector (the writer tells it after
every change) or a reply finds some (the model changed, or the process that wrote them ended first). The keeper
loads their memory, embeds the facts that lack one in batches and attaches the vectors through the writer as the
`VectorAuthor`, which may set vectors and nothing else, and only on facts whose words are still the ones embedded.
It works under the user's forget generation as it was when it loaded, after any forget of theirs under way here:
a forget meanwhile wins, and nothing it took can come back with a vector.

One user at a time, in the order asked (each at most once in the queue). When the endpoint fails, the keeper waits
(1 s, doubling to 5 minutes) and tries the same user again, for as long as the process runs; their facts are
selected by their words meanwhile. Nothing is persisted: after a restart the replies ask again (`check`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot.memory.drivers.bundle import StorageBundle
from bot.memory.errors import Stale
from bot.memory.models import MemoryFile
from bot.memory.parts.forget_barrier import ForgetBarrier
from bot.memory.parts.writer import MemoryWriter
from bot.memory.pipeline.embeddings import Embedder, EmbeddingFailed
from bot.memory.rules import vectors
from bot.memory.rules.write_gate import VectorAuthor

log = logging.getLogger(__name__)

FIRST_PAUSE_SECONDS = 1.0
LONGEST_PAUSE_SECONDS = 300.0


class VectorKeeper:
    def __init__(
        self,
        *,
        storage: StorageBundle,
        writer: MemoryWriter,
        embedder: Embedder,
        forgets: ForgetBarrier,
    ) -> None:
        self.storage = storage
        self.writer = writer
        self.embedder = embedder
        self.forgets = forgets
        self._queue: dict[int, None] = {}  # insertion-ordered set of user ids
        self._worker: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.vectors_attached = 0  # since start, for the metrics

    def check(self, user_id: int, memory: MemoryFile) -> None:
        """Ask for the user when `memory` has open facts without a current vector."""
        if vectors.needing(memory, self.embedder.model, self.embedder.dimensions):
            self.wanted(user_id)

    def wanted(self, user_id: int) -> None:
        """Embed the user's facts that lack a vector, soon (once, however often asked before it runs)."""
        self._queue[user_id] = None
        self._idle.clear()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._work(), name="vector keeper")

    def forget_user(self, user_id: int) -> None:
        """Nothing to do for a user who is gone (their facts went with their memory)."""
        self._queue.pop(user_id, None)

    @property
    def waiting(self) -> int:
        """Users whose facts wait for their vectors."""
        return len(self._queue)

    async def idle(self) -> None:
        """Return once no user is waiting or being worked on."""
        await self._idle.wait()

    async def close(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        self._queue.clear()
        self._idle.set()

    async def _work(self) -> None:
        pause = FIRST_PAUSE_SECONDS
        while self._queue:
            user_id = next(iter(self._queue))
            del self._queue[user_id]  # asked for again while it works: it comes round again
            try:
                await self.embed_user(user_id)
            except (EmbeddingFailed, OSError) as error:
                self._queue = {user_id: None, **self._queue}  # first again, after the pause
                log.debug("vector keeper, user %s: %s; trying again in %.0f s", user_id, error, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE_SECONDS)
                continue
            except Exception:  # one user's bad memory must not stop everyone else's vectors
                log.exception("vector keeper, user %s failed", user_id)
            pause = FIRST_PAUSE_SECONDS
        self._idle.set()

    async def embed_user(self, user_id: int) -> int:
        """Embed and attach the user's missing vectors now; returns how many were attached."""
        await self.forgets.passed(user_id)
        generation = self.storage.generations.current(user_id)
        memory = await self.storage.memories.load(user_id)
        missing = vectors.needing(memory, self.embedder.model, self.embedder.dimensions)
        if not missing:
            return 0
        texts = {fact.id: fact.content for fact in missing}
        computed = dict(zip(texts, await self.embedder.facts(list(texts.values())), strict=True))
        model = self.embedder.model
        attached = 0
        try:
            async with self.writer.change(user_id, VectorAuthor(), generation=generation) as draft:
                for fact in draft.facts:
                    vector = computed.get(fact.id)
                    if vector is not None and texts[fact.id] == fact.content:
                        vectors.attach(fact, model, vector)
                        attached += 1
        except Stale:
            log.debug("vector keeper, user %s: they forgot meanwhile; nothing attached", user_id)
            return 0
        self.vectors_attached += attached
        return attached
