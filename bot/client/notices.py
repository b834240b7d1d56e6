"""What the bot says when a reply cannot be what the user asked for: the model failed, had nothing to say, or the
bot is too busy; shared by the chat and the reply actions."""

from __future__ import annotations

LLM_ERROR_REPLY = "Sorry, I couldn't reach my language model just now. Please try again in a moment."
EMPTY_REPLY = "I don't have an answer for that right now."
BUSY_REPLY = "I'm answering a lot of messages right now and couldn't get to this one. Please try again in a minute."
UNREADABLE_MEMORY_NOTICE = (
    "-# Note: what I remembered about you earlier could not be read (the stored copy was damaged), so I started "
    "a new memory. The damaged copy was kept aside for the bot's operator; `/memory forget` deletes it with the rest."
)
"""Told once, privately (a DM or an ephemeral answer, never a server channel), after a user's memory was kept aside."""
IMAGES_REFUSED_NOTE = "-# This model can't look at images, so I answered from the text alone."
