"""Forget generations for one process that owns its files: counted in RAM from 0 at every start.

That is exact, not a shortcut: a restart ends all work in flight, and the journal's replay stamps the turns it
resumes with the current generation (their user's forgets before the crash already removed theirs from the file),
so no work from before a start can meet a generation from after it.
"""

from __future__ import annotations

from bot.memory.errors import Stale


class FileGenerations:
    def __init__(self) -> None:
        self._generations: dict[int, int] = {}

    async def open(self) -> None:
        """Nothing to read (see the module)."""

    async def close(self) -> None:
        """Nothing to write."""

    def current(self, user_id: int) -> int:
        return self._generations.get(user_id, 0)

    def ensure_current(self, what: str, user_id: int, *generations: int) -> None:
        """`Stale` naming `what` when any of `generations` is not the user's current one. A forget bumps the
        generation before it deletes anything, so callers check right before the write they guard, in the lock or
        critical section that write shares with the forget: work begun before a forget never writes after it."""
        current = self.current(user_id)
        if any(generation != current for generation in generations):
            raise Stale(what, user_id)

    async def bump(self, user_id: int) -> int:
        generation = self._generations.get(user_id, 0) + 1
        self._generations[user_id] = generation
        return generation

    async def forget_user(self, user_id: int) -> None:
        """Kept: forgetting it would make work from before the forget valid again."""
