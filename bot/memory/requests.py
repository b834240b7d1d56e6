"""What a user can ask of their own memory, as plain values: what to forget, and which privacy mode to turn on.

One door takes each family (`UserDoor.forget`, `UserDoor.set_mode`), so a new kind of forget or a new mode is a new
value here and one branch where it is carried out (`bot.memory.parts.user_memory`), not a new method on every
layer. The answers are plain values too: what a forget removed, and the privacy record before and after a change.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.memory.phrases import Phrase
from bot.memory.records.privacy_modes import PrivacyRecord

MAX_FORGET_MINUTES = 1440  # `/memory forget minutes:` reaches back a day (a summary's history is kept that long)


@dataclass(frozen=True, slots=True)
class ForgetFact:
    """One fact by id (and the rewordings of it the bot stored for other places)."""

    fact_id: str


@dataclass(frozen=True, slots=True)
class ForgetSection:
    """One of the six summaries, in every place, with its earlier values."""

    name: str


@dataclass(frozen=True, slots=True)
class ForgetMinutes:
    """What was learned in the last `minutes` (1 to `MAX_FORGET_MINUTES`)."""

    minutes: int


@dataclass(frozen=True, slots=True)
class ForgetEverything:
    """The whole memory, the records of what replies used and everything pending."""


ForgetRequest = ForgetFact | ForgetSection | ForgetMinutes | ForgetEverything


@dataclass(frozen=True, slots=True)
class Forgotten:
    """What a forget removed: facts, summaries (cleared or put back as they were) and pending turns dropped."""

    facts: int = 0
    sections: int = 0
    turns: int = 0

    @property
    def any_memory(self) -> bool:
        """Whether a fact or a summary was forgotten (pending turns aside): there was something to forget."""
        return bool(self.facts or self.sections)


@dataclass(frozen=True, slots=True)
class Incognito:
    """Learn nothing from the user for `minutes`; 0 until `Resume` (a pause). What was waiting is dropped."""

    minutes: int


@dataclass(frozen=True, slots=True)
class Fresh:
    """Replies use none of the user's memory for `minutes`; 0 until `Resume`. Nothing is deleted."""

    minutes: int


@dataclass(frozen=True, slots=True)
class Resume:
    """End the pause, incognito and fresh modes."""


PrivacyMode = Incognito | Fresh | Resume
PAUSE = Incognito(0)


@dataclass(frozen=True, slots=True)
class ModeChange:
    """The user's privacy record just before and just after a change of mode."""

    before: PrivacyRecord
    after: PrivacyRecord


# --- importing a memory file (`/memory import`) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImportPreview:
    """What an import would do, kept pending under `token` until the user confirms or cancels it (or it expires).
    `adding`, `known` and `sensitive` hold the memories' words (the user's own, shown only to them); `refused`
    holds one line per refused item that never repeats it (a credential is named by its kind only), as a `Phrase`
    for the application to put in the user's words."""

    token: str
    adding: tuple[str, ...]
    known: tuple[str, ...]
    refused: tuple[Phrase, ...]
    sensitive: tuple[tuple[str, str], ...]  # (words, kind of data)
    expires_at: str


@dataclass(frozen=True, slots=True)
class Imported:
    """What a confirmed import stored: the new facts' ids, and how many sensitive memories it left out."""

    fact_ids: tuple[str, ...]
    sensitive_left_out: int = 0
