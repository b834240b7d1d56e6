"""Whether DISCORD_TOKEN can be a bot token, judged by its shape alone, in words that fit what was pasted.

Checked at start so a pasted client secret, public key, application id or a "Bot " prefix is named at once instead
of being sent to Discord (which rejects it only after the slow imports and a network round trip). The token itself
is never quoted, not even in part.
"""

from __future__ import annotations

import base64
import binascii
import re

_TOKEN_SHAPE = re.compile(r"([A-Za-z0-9_-]{16,})\.([A-Za-z0-9_-]{4,})\.([A-Za-z0-9_-]{20,})")
_RESET_HINT = "Developer Portal > your application > Bot > Reset Token"


def discord_token_problem(token: str) -> str | None:
    """Why `token` cannot be a Discord bot token, or None; never quotes it.

    A bot token is three dot-separated base64url parts, the first of them the bot's user id. Checked at start so a
    pasted client secret, public key, application id or a "Bot " prefix is named at once instead of being sent to
    Discord (which rejects it only after the slow imports and a network round trip)."""
    if not token:
        return "DISCORD_TOKEN is empty"
    if token[:4].lower() == "bot ":
        return "DISCORD_TOKEN starts with 'Bot ': set the token alone, without the prefix"
    if token.isdecimal():
        return f"DISCORD_TOKEN is a number (an application or user id), not the bot token: {_RESET_HINT}"
    problem = _token_shape_problem(token)
    return None if problem is None else f"DISCORD_TOKEN is not a bot token: {problem}: {_RESET_HINT}"


def _token_shape_problem(token: str) -> str | None:
    """What about the token's shape is wrong, in words that fit what was pasted, or None; never quotes it."""
    if any(mark in token for mark in "\"'"):
        return "it is wrapped in quotes; write the token alone"
    parts = token.split(".")
    if len(parts) != 3:  # a bot token has three
        found = "no dots" if len(parts) == 1 else f"{len(parts)} parts"
        return (
            f"a bot token has three parts separated by dots and this one has {found} (the client secret and the "
            "public key have none; a token cut short while pasting has two)"
        )
    shape = _TOKEN_SHAPE.fullmatch(token)
    if shape is None:
        return (
            f"it has three parts, but {len(token)} characters where a bot token has about 70, of letters, digits, "
            "'-' and '_'"
        )
    user_id = ""
    try:
        user_id = base64.urlsafe_b64decode(shape.group(1) + "=" * (-len(shape.group(1)) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        user_id = ""
    if not (user_id.isdecimal() and 15 <= len(user_id) <= 21):
        return "its first part should be the bot's user id in base64, and it is not"
    return None
