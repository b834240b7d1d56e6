"""The commands' names and descriptions in Discord's command picker, in each language the bot speaks.

discord.py asks the command tree's translator (`CommandTree.set_translator`, done in `MemoryBot.setup_hook`) for
every name, description and choice of every command, in every Discord locale, when it syncs the commands; the
answers become the `name_localizations` and `description_localizations` Discord shows. The English words stay the
commands' base names, valid everywhere: `/memory show` is a public contract. A translation is given only where
Discord accepts it: a slash command's name must be a valid name (`valid_command_name`), a message menu's name at
most 32 characters, a description or a choice at most 100; otherwise (and for options' names, which stay English
so `fact:` means the same in every language) the English is shown.
"""

from __future__ import annotations

from discord import Locale, app_commands
from discord.app_commands import TranslationContextLocation, TranslationContextTypes, locale_str

from bot.i18n.languages import ENGLISH, language_of
from bot.i18n.speech import COMMAND_NAME_LENGTH, speech_in, valid_command_name

TEXT_LENGTH = 100  # a description or a choice's name
_NAMES = (TranslationContextLocation.command_name, TranslationContextLocation.group_name)


class CatalogTranslator(app_commands.Translator):
    """discord.py's translator, answered from the gettext catalogs."""

    async def translate(
        self, string: locale_str, locale: Locale, context: TranslationContextTypes
    ) -> str | None:
        language = language_of(locale)
        if language == ENGLISH or context.location is TranslationContextLocation.parameter_name:
            return None
        translated = speech_in(language).tr(string.message)
        if translated == string.message or not _acceptable(translated, context):
            return None
        return translated


def _acceptable(text: str, context: TranslationContextTypes) -> bool:
    if context.location in _NAMES:
        if isinstance(context.data, app_commands.ContextMenu):
            return 0 < len(text) <= COMMAND_NAME_LENGTH
        return valid_command_name(text)
    return 0 < len(text) <= TEXT_LENGTH
