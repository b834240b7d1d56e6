"""Forget generations for one process that owns its files: counted in RAM from 0 at every start.

That is exact, not a shortcut: a restart ends all work in flight, and the journal's replay stamps the turns it
resumes with the current generation (their user's forgets before the crash already removed theirs from the file),
so no work from before a start can meet a generation from after it.
"""

from __future__ import annotations


class FileGenerations:
    def __init__(self) -> None:
        self._generations: dict[int, int] = {}

    async def open(self) -> None:
        """Nothing to read (see the module)."""

    async def close(self) -> None:
        """Nothing to write."""

    def current(self, user_id: int) -> int:
        return self._generations.get(user_id, 0)

    async def bump(self, user_id: int) -> int:
        generation = self._generations.get(user_id, 0) + 1
        self._generations[user_id] = generation
        return generation

    async def forget_user(self, user_id: int) -> None:
        """Kept: forgetting it would make work from before the forget valid again."""
