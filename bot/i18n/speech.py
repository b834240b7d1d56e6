"""`Speech`: the bot's words in one reader's language, and numbers and dates written their way.

A message is its English text, which is also its message id in the catalogs: `speech.tr("Forgotten: `{fact_id}`.",
fact_id=fact_id)`. Placeholders are named (`{count}`, never positional), filled after translation with `str.format`,
so a translation may put them in any order; what a user wrote is only ever a value, never part of a template. A
constant defined before anyone reads it is marked with `N_` (`Np_` with plural forms) and translated where it is
said; `trn` chooses the plural form the language needs. The marks `tr`, `trn`, `N_`, `Np_`, discord.py's
`locale_str` and the engine's `Phrase` and `InvalidRequest` are what `pybabel extract` reads (`babel.cfg`).
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Mapping
from datetime import date, datetime

from babel import Locale
from babel.dates import format_date, format_skeleton
from babel.numbers import format_decimal, format_percent
from babel.units import format_unit

from bot.i18n.catalogs import catalog
from bot.i18n.languages import ENGLISH, LANGUAGES
from bot.memory.errors import Phrase

log = logging.getLogger(__name__)

COMMAND_NAME_LENGTH = 32
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def N_(message: str) -> str:
    """Mark `message` for the catalogs without translating it: it is translated where it is said (`Speech.tr`)."""
    return message


def Np_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a message with plural forms for the catalogs; it is said with `Speech.trn(*message, count)`."""
    return singular, plural


def valid_command_name(name: str) -> bool:
    """Discord's rule for a slash command's name in any language: 1 to 32 letters, digits, `-` or `_` (any script),
    lower case."""
    return (
        0 < len(name) <= COMMAND_NAME_LENGTH
        and name == name.lower()
        and all(char in "-_" or unicodedata.category(char)[0] in "LN" for char in name)
    )


class Speech:
    """One language's words. Get one with `speech_in(language)` (or from `bot.i18n.readers`); it is immutable."""

    def __init__(self, language: str = ENGLISH) -> None:
        self.language = language if language in LANGUAGES else ENGLISH
        self._catalog = catalog(self.language)
        self._locale = Locale.parse(self.language)

    def tr(self, message: str, /, **values: object) -> str:
        """`message` in this language, its placeholders filled with `values`."""
        return self._fill(self._catalog.gettext(message), message, values)

    def trn(self, singular: str, plural: str, count: int, /, **values: object) -> str:
        """The plural form this language uses for `count`; `{count}` is the number written this language's way."""
        values.setdefault("count", self.number(count))
        english = singular if count == 1 else plural
        return self._fill(self._catalog.ngettext(singular, plural, count), english, values)

    def phrase(self, phrase: Phrase) -> str:
        """The engine's words (an `InvalidRequest`, a refused import line) in this language; numbers in it are
        written this language's way, and phrases inside it are translated too."""
        values = {name: self._value(value) for name, value in phrase.values.items()}
        return self.tr(phrase.template, **values)

    def _value(self, value: str | float | Phrase) -> str:
        if isinstance(value, Phrase):
            return self.phrase(value)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self.number(value)
        return str(value)

    def _fill(self, text: str, english: str, values: Mapping[str, object]) -> str:
        try:
            return text.format_map(values)
        except (KeyError, IndexError, ValueError):
            log.warning("the %s translation of %r does not fit its values; said in English", self.language, english)
            return english.format_map(values)

    def listing(self, parts: list[str]) -> str:
        """Parts of one note side by side ("said Jun 1, 2024, until Jun 9, 2024"), with this language's comma."""
        if not parts:
            return ""
        text = parts[0]
        for part in parts[1:]:
            text = self.tr("{list}, {item}", list=text, item=part)
        return text

    # --- numbers, dates, commands ---------------------------------------------------------------------------

    def number(self, value: float) -> str:
        """12,345 / 12 345 / 12.345, as the language writes it."""
        return str(format_decimal(value, locale=self._locale))

    def percent(self, value: float) -> str:
        """0.9 as "90%", "90 %"..."""
        return str(format_percent(value, locale=self._locale))

    def duration(self, value: int, unit: str, *, long: bool = False) -> str:
        """`value` seconds, minutes or hours (`unit`: "second", "minute", "hour") as this language writes them:
        "5 min", "5分钟" (`long`: "5 minutes")."""
        return str(format_unit(value, f"duration-{unit}", length="long" if long else "short", locale=self._locale))

    def date(self, value: date | str) -> str:
        """A day in this language's medium form ("Jun 14, 2024", "2024年6月14日"). An ISO text is read as a day
        (`2024-06-14`) or a month (`2024-06`); any other text (a week, a year) is shown as it is."""
        if isinstance(value, str):
            if day := _ISO_DAY.match(value):
                value = date(int(day[1]), int(day[2]), int(day[3]))
            elif month := _ISO_MONTH.match(value):
                return str(format_skeleton("yMMM", datetime(int(month[1]), int(month[2]), 1), locale=self._locale))
            else:
                return value
        return str(format_date(value, format="medium", locale=self._locale))

    def command_word(self, name: str) -> str:
        """One word of a slash command's name as Discord shows it in this language: its translation when that is a
        valid command name, else the English name (what the translator gives Discord too)."""
        translated = self._catalog.gettext(name)
        return translated if valid_command_name(translated) else name

    def command(self, path: str) -> str:
        """`/memory show` as this language's Discord shows it (`/记忆 查看`)."""
        return "/" + " ".join(self.command_word(word) for word in path.split())


@functools.cache
def speech_in(language: str) -> Speech:
    """The one `Speech` of a language (catalogs are read once)."""
    return Speech(language)


ENGLISH_SPEECH = speech_in(ENGLISH)


def every_translation(message: str) -> frozenset[str]:
    """`message` in every language the bot speaks: to recognise the bot's own words whatever language they were
    said in (the "still writing" mark of a reply being streamed)."""
    return frozenset(speech_in(language).tr(message) for language in LANGUAGES)
