"""The catalogs (`bot/locales/`) and the machinery that speaks through them (`bot/i18n/`).

- every catalog has every message the code marks, and nothing else; each translation keeps its message's named
  placeholders (and no positional ones); the English catalog says the messages themselves;
- the template (`messages.pot`) is what `pybabel extract` finds in the code today, with the keywords the docs give;
- each committed `.mo` holds exactly its `.po` (they are compiled with `pybabel compile` and committed together);
- the engine words users read are all marked (`bot/i18n/vocabulary.py`), the "still writing" mark fits its room;
- a reader's language is chosen from what Discord says, and numbers, dates and plurals follow it.
"""

from __future__ import annotations

import gettext
import re
import string
from datetime import date
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import discord
import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords
from babel.messages.pofile import read_po

from bot.chat.streaming import MARK_ROOM, STILL_WRITING
from bot.i18n import vocabulary
from bot.i18n.catalogs import LOCALES_DIR, catalog_path
from bot.i18n.languages import ENGLISH, LANGUAGES, language_of
from bot.i18n.readers import LocaleBook
from bot.i18n.speech import Speech, every_translation, speech_in, valid_command_name
from bot.memory.errors import InvalidRequest, Phrase
from tests.helpers import make_interaction, make_user

ROOT = Path(__file__).resolve().parent.parent
KEYWORDS = ("tr", "trn:1,2", "N_", "Np_:1,2", "locale_str", "Phrase", "InvalidRequest")
TRANSLATED = [language for language in LANGUAGES if language != ENGLISH]


def read_catalog(path: Path, language: str | None = None) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=language)


def messages(catalog: Catalog) -> dict[Any, Any]:
    """msgid (a tuple for plural messages) -> msgstr (a tuple of forms for plural messages)."""
    def plain(value: Any) -> Any:
        return tuple(value) if isinstance(value, list | tuple) else value

    return {plain(m.id): plain(m.string) for m in catalog if m.id}


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


TEMPLATE = read_catalog(LOCALES_DIR / "messages.pot")


# --- completeness -------------------------------------------------------------------------------------------


def test_the_eight_languages_are_there() -> None:
    assert set(LANGUAGES) == {"en", "zh_CN", "ja", "ko", "es_ES", "pt_BR", "fr", "de"}
    assert len(messages(TEMPLATE)) > 300


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_catalog_has_every_message_and_a_translation_of_each(language: str) -> None:
    po = read_catalog(catalog_path(language, ".po"), language)
    found = messages(po)
    assert set(found) == set(messages(TEMPLATE)), "run pybabel update (docs/languages.md)"
    empty = [key for key, value in found.items() if not value or (isinstance(value, tuple) and not all(value))]
    assert empty == []
    assert [m.id for m in po if m.id and m.fuzzy] == []
    if isinstance(po.num_plurals, int):
        plural_forms = {len(value) for value in found.values() if isinstance(value, tuple)}
        assert plural_forms <= {po.num_plurals}


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_translation_keeps_its_placeholders(language: str) -> None:
    wrong = []
    for key, value in messages(read_catalog(catalog_path(language, ".po"), language)).items():
        sources = [key] if isinstance(key, str) else list(key)
        expected = [placeholders(text) for text in sources]
        for text in [value] if isinstance(value, str) else list(value):
            names = placeholders(text)
            # a plural form may leave out `{count}` ("the last minute"), as the English singular does
            allowed = set().union(*expected)
            required = set.intersection(*expected)
            if not required <= names <= allowed or any(name == "" or name.isdigit() for name in names):
                wrong.append((key, text))
    assert wrong == []


def test_the_messages_use_named_placeholders_only() -> None:
    positional = [key for key in messages(TEMPLATE) for text in ([key] if isinstance(key, str) else key)
                  if any(name == "" or name.isdigit() for name in placeholders(text))]
    assert positional == []


def test_english_says_the_messages_themselves() -> None:
    for key, value in messages(read_catalog(catalog_path(ENGLISH, ".po"), ENGLISH)).items():
        assert value == key, key


# --- the template is the code's; the .mo files are the .po files' -------------------------------------------


def extracted() -> set[Any]:
    with (ROOT / "babel.cfg").open(encoding="utf-8") as file:
        method_map, options_map = _mapping(file)
    keywords = parse_keywords(list(KEYWORDS))
    top = {"bot", "cogs"}

    def only_code(path: str) -> bool:
        relative = Path(path).relative_to(ROOT)
        return relative.parts[0] in top and not any(part.startswith((".", "_")) for part in relative.parts)

    found = set()
    for _, _, message, _, _ in extract_from_dir(
        str(ROOT), method_map, options_map, keywords=keywords, directory_filter=only_code
    ):
        found.add(tuple(message) if isinstance(message, list | tuple) else message)
    return found


def _mapping(file: Any) -> Any:
    from babel.messages import frontend

    parse = getattr(frontend, "parse_mapping_cfg", None) or frontend.parse_mapping
    return parse(file)


def test_the_template_holds_exactly_what_the_code_marks() -> None:
    """`messages.pot` is up to date: run `pybabel extract` (docs/languages.md) after changing a message."""
    in_code = extracted()
    in_template = set(messages(TEMPLATE))
    assert sorted(map(str, in_code - in_template)) == [], "marked in the code, missing from the catalogs"
    assert sorted(map(str, in_template - in_code)) == [], "in the catalogs, no longer in the code"


def test_the_documented_extraction_uses_the_same_keywords() -> None:
    text = (ROOT / "docs" / "languages.md").read_text("utf-8")
    command = next(line for line in text.splitlines() if line.startswith("pybabel extract"))
    assert re.findall(r"-k (\S+)", command) == list(KEYWORDS)
    assert "-F babel.cfg" in command and "--no-default-keywords" in command


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_compiled_catalog_holds_its_po(language: str) -> None:
    """Each `.mo` is `pybabel compile` of its `.po`: the same messages, the same translations, the same plurals."""
    with catalog_path(language).open("rb") as file:
        compiled = gettext.GNUTranslations(file)
    po = read_catalog(catalog_path(language, ".po"), language)
    for key, value in messages(po).items():
        if isinstance(key, str):
            assert compiled.gettext(key) == value, key
        else:
            for n in range(0, 30):
                assert compiled.ngettext(key[0], key[1], n) == value[_form(po, n)], (key, n)
    assert compiled.info().get("plural-forms", "").replace(" ", "") == po.plural_forms.replace(" ", "")


def _form(po: Catalog, n: int) -> int:
    """The plural form the catalog's own Plural-Forms picks for `n`, read by gettext itself."""
    return int(gettext.c2py(po.plural_expr)(n))  # type: ignore[attr-defined]


# --- the engine's words, the mark ---------------------------------------------------------------------------


def test_every_engine_word_users_read_is_marked() -> None:
    from bot.memory.models import FACT_CATEGORIES
    from bot.memory.pipeline.render import SECTION_LABELS
    from bot.memory.rules import guard
    from bot.memory.rules.sensitive import CATEGORIES, SENSITIVE_UNSPECIFIED

    assert set(SECTION_LABELS.values()) == set(vocabulary.SECTION_LABELS)
    assert set(FACT_CATEGORIES) == set(vocabulary.FACT_CATEGORIES)
    assert {*CATEGORIES, SENSITIVE_UNSPECIFIED} == set(vocabulary.SENSITIVE_CATEGORIES)
    assert {rule.reason for rule in guard.RULES} == set(vocabulary.REFUSAL_REASONS)


def test_the_still_writing_mark_fits_its_room_in_every_language() -> None:
    marks = every_translation(STILL_WRITING)
    assert len(marks) == len(LANGUAGES)
    assert all(len("\n-# " + mark) <= MARK_ROOM for mark in marks)


# --- choosing the language ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("locale", "language"),
    [
        (discord.Locale.american_english, "en"), (discord.Locale.british_english, "en"),
        (discord.Locale.chinese, "zh_CN"), (discord.Locale.japanese, "ja"), (discord.Locale.korean, "ko"),
        (discord.Locale.spain_spanish, "es_ES"), ("es-419", "es_ES"), (discord.Locale.brazil_portuguese, "pt_BR"),
        (discord.Locale.french, "fr"), (discord.Locale.german, "de"),
        (discord.Locale.taiwan_chinese, "en"), (discord.Locale.italian, "en"), (None, "en"), (MagicMock(), "en"),
    ],
)
def test_a_discord_locale_reads_its_catalog_or_english(locale: Any, language: str) -> None:
    assert language_of(locale) == language


def test_the_book_of_languages_is_bounded_and_forgets() -> None:
    book = LocaleBook(size=2)
    users = [make_user(n) for n in (1, 2, 3)]
    for user, locale in zip(users, (discord.Locale.japanese, discord.Locale.german, discord.Locale.french),
                            strict=True):
        book.note(make_interaction(user, locale=locale))
    assert len(book) == 2
    assert book.language(1) == "en"  # the least recently noted went first
    assert (book.language(2), book.language(3)) == ("de", "fr")
    book.forget(3)
    assert book.language(3) == "en"


# --- saying things ------------------------------------------------------------------------------------------


def test_placeholders_are_filled_after_translation() -> None:
    said = speech_in("ja").tr("You have no fact with the id `{fact_id}`.", fact_id="fact_{0}")
    assert "`fact_{0}`" in said and said != "You have no fact with the id `fact_{0}`."  # user text is never a template


def test_a_translation_that_does_not_fit_its_values_falls_back_to_english(caplog: pytest.LogCaptureFixture) -> None:
    speech = Speech("de")
    speech._catalog = gettext.NullTranslations()
    speech._catalog.gettext = lambda message: "Kaputt {missing}"  # type: ignore[method-assign]
    assert speech.tr("Forgotten: `{fact_id}`.", fact_id="fact_1") == "Forgotten: `fact_1`."
    assert "does not fit its values" in caplog.text and "fact_1" not in caplog.text


@pytest.mark.parametrize(
    ("language", "one", "zero", "many"),
    [("en", "1 memory", "0 memories", "2 memories"), ("fr", "1 souvenir", "0 souvenir", "2 souvenirs"),
     ("de", "1 Erinnerung", "0 Erinnerungen", "2 Erinnerungen")],
)
def test_plurals_follow_the_language(language: str, one: str, zero: str, many: str) -> None:
    speech = speech_in(language)

    def said(n: int) -> str:
        return speech.trn("Imported {count} memory.", "Imported {count} memories.", n)

    assert one in said(1) and zero in said(0) and many in said(2)


def test_numbers_and_dates_are_written_the_readers_way() -> None:
    assert speech_in("en").number(12345) == "12,345"
    assert speech_in("de").number(12345) == "12.345"
    assert speech_in("fr").number(12345).replace("\u202f", " ") == "12 345"
    assert speech_in("en").date("2024-06-14") == "Jun 14, 2024"
    assert speech_in("zh_CN").date("2024-06-14") == "2024年6月14日"
    assert speech_in("de").date(date(2024, 6, 14)) == "14.06.2024"
    assert speech_in("ja").date("2024-06") == "2024年6月"
    assert speech_in("fr").date("2024-W24") == "2024-W24"  # a week is shown as it is
    assert speech_in("de").duration(5, "minute") == "5 Min."


def test_the_engines_refusal_is_said_in_the_readers_language() -> None:
    refused = InvalidRequest("Minutes must be between 1 and {most}.", most=1440)
    assert str(refused) == "Minutes must be between 1 and 1440."
    assert speech_in("de").phrase(refused.phrase) == "Die Minuten müssen zwischen 1 und 1.440 liegen."
    nested = Phrase("I can't store that as a fact: {reason}.", reason=Phrase("authority claim"))
    assert speech_in("fr").phrase(nested).endswith("prétention d’autorité.")


def test_a_command_is_named_as_discord_shows_it() -> None:
    assert speech_in("zh_CN").command("memory show") == "/记忆 查看"
    assert speech_in("en").command("memory show") == "/memory show"
    assert speech_in("fr").command("memory pause") == "/mémoire pause"  # the same word: the English name
    assert valid_command_name("gedächtnis-admin") and valid_command_name("记忆")
    assert not valid_command_name("Gedächtnis") and not valid_command_name("two words") and not valid_command_name("")
