"""The languages the bot speaks, and which of them a Discord locale reads.

A language is named by its catalog's folder under `bot/locales/` (gettext's `ll_CC` form). Discord names locales
`zh-CN`, `pt-BR`, `es-ES`...; each one the bot has a catalog for maps to it, Latin American Spanish to the Spanish
catalog, and every other locale (or none) to English, the language the bot's words are written in.
"""

from __future__ import annotations

ENGLISH = "en"
LANGUAGES: dict[str, str] = {  # catalog folder -> the language's name in itself
    "en": "English",
    "zh_CN": "简体中文",
    "ja": "日本語",
    "ko": "한국어",
    "es_ES": "Español",
    "pt_BR": "Português (Brasil)",
    "fr": "Français",
    "de": "Deutsch",
}
_DISCORD = {
    "en-US": "en", "en-GB": "en", "zh-CN": "zh_CN", "ja": "ja", "ko": "ko", "es-ES": "es_ES", "es-419": "es_ES",
    "pt-BR": "pt_BR", "fr": "fr", "de": "de",
}


def language_of(locale: object) -> str:
    """The catalog for a Discord locale (a `discord.Locale`, or its value such as "zh-CN"); English for a locale the
    bot has no catalog for, and for anything that is not a locale at all."""
    value = getattr(locale, "value", locale)
    if not isinstance(value, str):
        return ENGLISH
    if value in LANGUAGES:
        return value
    return _DISCORD.get(value, ENGLISH)
