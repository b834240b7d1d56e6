"""What the bot says when a reply cannot be what the user asked for: the model failed, had nothing to say, or the
bot is too busy; shared by the chat and the reply actions. Marked for the catalogs (`N_`): each is said in its
reader's language where it is sent."""

from __future__ import annotations

from bot.i18n.speech import N_

LLM_ERROR_REPLY = N_("Sorry, I couldn't reach my language model just now. Please try again in a moment.")
EMPTY_REPLY = N_("I don't have an answer for that right now.")
BUSY_REPLY = N_(
    "I'm answering a lot of messages right now and couldn't get to this one. Please try again in a minute."
)
UNREADABLE_MEMORY_NOTICE = N_(
    "-# Note: what I remembered about you earlier could not be read (the stored copy was damaged), so I started "
    "a new memory. The damaged copy was kept aside for the bot's operator; `/memory forget` deletes it with the rest."
)
"""Told once, privately (a DM or an ephemeral answer, never a server channel), after a user's memory was kept aside."""
IMAGES_REFUSED_NOTE = N_("-# This model can't look at images, so I answered from the text alone.")
