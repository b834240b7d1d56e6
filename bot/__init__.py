"""Discord bot with long-term, per-user memory."""
