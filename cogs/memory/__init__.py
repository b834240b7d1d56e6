"""The `/memory` commands: each user sees and controls their own memory (`commands.py`), shown within Discord's
limits (`rendering.py`), with buttons that keep working across restarts (`views.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cogs.memory.commands import MemoryCog

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

__all__ = ["MemoryCog", "setup"]


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(MemoryCog(bot))
