"""Whose language a message is said in.

- An answer to an interaction (a slash command, a button, a message menu) is read by the person who used it: their
  Discord client's language, `interaction.locale`.
- A message in a server channel is read by everyone there: the server's language, `guild.preferred_locale`.
- A message in a DM is read by one person, whose language Discord sends only with their interactions: the language
  of their last interaction with this process (`LocaleBook`), else English.

The book is in RAM only, bounded (least recently used first out), and so forgotten at a restart: it holds a language
code per user id and nothing else. Forgetting everything drops the user's entry too.
"""

from __future__ import annotations

from typing import Any

import discord

from bot.i18n.languages import ENGLISH, language_of
from bot.i18n.speech import Speech, speech_in
from bot.storage.lru import LruCache

REMEMBERED_USERS = 50_000


def interaction_speech(interaction: discord.Interaction[Any]) -> Speech:
    """The language of the person who used the interaction."""
    return speech_in(language_of(interaction.locale))


def guild_speech(guild: discord.Guild | None) -> Speech:
    """The language of a server (English without one)."""
    return speech_in(language_of(guild.preferred_locale) if guild is not None else ENGLISH)


class LocaleBook:
    """The language each user's Discord client last reported, for the messages the bot sends them in DMs."""

    def __init__(self, size: int = REMEMBERED_USERS) -> None:
        self._languages: LruCache[int, str] = LruCache(size)

    def note(self, interaction: discord.Interaction[Any]) -> None:
        """Remember the language of the person who used an interaction."""
        self._languages.put(interaction.user.id, language_of(interaction.locale))

    def language(self, user_id: int) -> str:
        return self._languages.peek(user_id) or ENGLISH

    def forget(self, user_id: int) -> None:
        self._languages.discard(user_id)

    def __len__(self) -> int:
        return len(self._languages)

    def speech_for(self, message: discord.Message) -> Speech:
        """The language of a message the bot sends in reply to `message`: the server's in a server, its author's
        in a DM."""
        if message.guild is not None:
            return guild_speech(message.guild)
        return speech_in(self.language(message.author.id))
