"""The engine's knobs, built from the settings by the application (`bot.app.policy_from`)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.memory.rules.places import Scope


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    debounce_seconds: float = 30.0
    max_wait_seconds: float = 300.0
    max_concurrent_extractions: int = 4
    top_k: int = 15
    max_facts: int = 100
    max_places: int = 50  # places besides DMs whose summaries a user keeps (the least recently updated go first)
    min_confidence: float = 0.7
    duplicate_similarity: float = 0.85
    token_budget: int = 1000
    retention_days: int = 365
    scope: Scope = "place"  # "user": one memory everywhere
    max_turn_chars: int = 2000  # longer messages are cut to head and tail before they are learned
    user_daily_tokens: int = 0  # tokens a user may spend per UTC day (0: no limit)
    guild_daily_tokens: int = 0  # tokens a server may spend per UTC day (0: no limit)
