"""User ids as the storage keys them: decimal Discord snowflakes, so no id can name a path outside a folder or
overflow a PostgreSQL bigint."""

from __future__ import annotations

import re

from bot.storage.errors import InvalidUserId

_SNOWFLAKE = re.compile(r"[0-9]{1,20}")
MAX_BIGINT = 2**63 - 1


def validate_user_id(user_id: int | str) -> str:
    """The canonical decimal form of a Discord user id, or `InvalidUserId`."""
    if isinstance(user_id, bool):
        raise InvalidUserId("user id must be a decimal Discord snowflake")
    text = str(user_id) if isinstance(user_id, int) else user_id
    if not isinstance(text, str) or not _SNOWFLAKE.fullmatch(text) or int(text) >= 2**64 or int(text) <= 0:
        raise InvalidUserId("user id must be a decimal Discord snowflake")
    return str(int(text))


def is_snowflake_text(text: str) -> bool:
    """True for a name part that looks like a user id (file listings)."""
    return _SNOWFLAKE.fullmatch(text) is not None


def user_key(user_id: int | str) -> int:
    """The user id as a PostgreSQL bigint (every Discord snowflake fits)."""
    uid = int(validate_user_id(user_id))
    if uid > MAX_BIGINT:
        raise InvalidUserId("user id must be a decimal Discord snowflake")
    return uid
