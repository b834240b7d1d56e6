"""The compiled gettext catalogs: `bot/locales/<language>/LC_MESSAGES/messages.mo`, read once per language.

The `.po` files beside them are the source (edited with Babel's `pybabel extract/update/compile`, see
docs/languages.md); the `.mo` files are committed with them, so an install, the Docker image and the tests need no
build step (a test checks each `.mo` holds exactly its `.po`). A catalog that is missing or unreadable leaves that
language in English, with a warning, rather than stopping the bot.
"""

from __future__ import annotations

import functools
import gettext
import logging
from pathlib import Path

from babel.support import NullTranslations, Translations

from bot.i18n.languages import LANGUAGES

log = logging.getLogger(__name__)

LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"
DOMAIN = "messages"


def catalog_path(language: str, suffix: str = ".mo") -> Path:
    return LOCALES_DIR / language / "LC_MESSAGES" / f"{DOMAIN}{suffix}"


@functools.cache
def catalog(language: str) -> gettext.NullTranslations:
    """The language's translations (English words stand where a catalog has none)."""
    if language not in LANGUAGES:
        return NullTranslations()
    path = catalog_path(language)
    try:
        with path.open("rb") as file:
            return Translations(file, domain=DOMAIN)
    except (OSError, ValueError) as error:  # gettext raises OSError for a malformed file too
        log.warning("no usable catalog for %s at %s (%s); answering in English", language, path, type(error).__name__)
        return NullTranslations()
