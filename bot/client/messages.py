"""Discord messages as the bot reads them: the text without the bot's mention, as a plain `IncomingMessage` for the
memory engine, and which message types are people talking.

Shared by the chat, the reply actions and the edit listener, so all three read a message the same way.
"""

from __future__ import annotations

import re

import discord

from bot.memory.models import IncomingMessage

_USER_MENTION = re.compile(r"<@!?(\d+)>")
_ROLE_MENTION = re.compile(r"<@&(\d+)>")
_RUNS_OF_SPACES = re.compile(r"[ \t]{2,}")
REPLYABLE_TYPES = (discord.MessageType.default, discord.MessageType.reply)


def own_role_id(message: discord.Message) -> int | None:
    """The id of the bot's managed role in the message's server: picking "@Bot" in Discord's mention list often
    inserts that role instead of the bot's user, and people mean the bot all the same."""
    if message.guild is None:
        return None
    role = message.guild.self_role
    return role.id if role is not None else None


def readable_text(message: discord.Message, bot_id: int | None) -> str:
    """Message text with the bot's mention (user or own role) removed and other mentions shown as @names."""
    names = {member.id: member.display_name for member in message.mentions}
    roles = {role.id: role.name for role in message.role_mentions}
    own_role = own_role_id(message)

    def replace(match: re.Match[str]) -> str:
        mentioned = int(match.group(1))
        if mentioned == bot_id:
            return ""
        return f"@{names.get(mentioned, 'someone')}"

    def replace_role(match: re.Match[str]) -> str:
        mentioned = int(match.group(1))
        if mentioned == own_role:
            return ""
        return f"@{roles.get(mentioned, 'a role')}"

    text = _ROLE_MENTION.sub(replace_role, _USER_MENTION.sub(replace, message.content))
    return _RUNS_OF_SPACES.sub(" ", text).strip()


def as_incoming(message: discord.Message, text: str, *, is_self: bool) -> IncomingMessage:
    reference = message.reference.message_id if message.reference is not None else None
    return IncomingMessage(
        message_id=message.id,
        author_id=message.author.id,
        author_name=message.author.display_name,
        content=text,
        created_at=message.created_at,
        author_is_bot=message.author.bot,
        is_self=is_self,
        is_system=message.type not in REPLYABLE_TYPES,
        attachment_count=len(message.attachments),
        reply_to_id=reference,
    )



def describe_failure(error: BaseException) -> str:
    """The kind of failure for the log: the error class and HTTP status, never the answer or the prompt."""
    status = getattr(error, "status_code", None) or getattr(error, "status", None)
    return f"{type(error).__name__}" + (f" (HTTP {status})" if status else "")
