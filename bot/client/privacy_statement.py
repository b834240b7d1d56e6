"""The privacy statement `/privacy` shows, built from the live settings so it never drifts from what the bot does.

Discord's Developer Terms ask a bot that stores user data to say what it stores, why, for how long, and how to
have it deleted. Every number here comes from the settings the process runs with: the retention period, the
contact, the LLM endpoint the messages go to, which of a channel's messages go with each reply, and how long a
message can wait on disk before it is distilled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.config import Settings
from bot.memory.doors import MemorySwitch


def endpoint_name(settings: Settings) -> str:
    """Who processes the messages: "OpenAI" or the endpoint's host (never its path, query or credentials)."""
    if settings.openai_base_url is None:
        return "OpenAI"
    host = urlsplit(settings.openai_base_url).hostname or "the configured endpoint"
    if host in {"localhost", "127.0.0.1", "::1", "host.docker.internal"}:
        return "a language model running on the bot's own server"
    return host


@dataclass(frozen=True, slots=True)
class CommandHelp:
    name: str
    description: str
    message_menu: bool = False  # an entry of the Apps menu on a message, not a slash command

    def line(self) -> str:
        if self.message_menu:
            return f"- the message menu **{self.name}** (Apps): {self.description}"
        return f"- `/{self.name}`: {self.description}"


def retention_text(days: int) -> str:
    if days == 0:
        return "Kept until you delete it: this bot's operator has not set an automatic expiry."
    return (
        f"Deleted automatically, with every trace of it, after **{days} days** in which you have not talked to "
        "the bot."
    )


def _places_text(scope: str) -> str:
    if scope == "user":
        return (
            "- This bot keeps one memory per person: what you say in DMs or in any server can be used in its replies "
            "to you anywhere."
        )
    return (
        "- It is used only where you said it: what you tell it in DMs only in DMs; what you say in a server's "
        "public channels only in that server (and your DMs); what you say in a private channel only there (and "
        "your DMs). `/memory share` makes one fact usable everywhere."
    )


def _history_text(settings: Settings) -> str:
    """What else each reply sends to the model provider: the channel's recent messages, whose."""
    count = settings.history_messages
    if count <= 0:
        return "- Replies send no other messages of the channel with yours, only the ones you reply to."
    if settings.history_scope == "conversation":
        return (
            f"- With each reply it also sends up to **{count}** recent messages of the channel that were to or from "
            "the bot (and the messages you reply to); other members' chat is not sent. Nothing of it is stored."
        )
    return (
        f"- With each reply it also sends the channel's last **{count}** messages, including those of members who "
        "never talked to the bot, so it can follow the conversation. They are sent, not stored: memory learns only "
        "from your own words."
    )


def _where_text(settings: Settings) -> str:
    if settings.database_url is not None:
        return (
            "- In a PostgreSQL database run by whoever runs this bot (the operator), shared by the bot's processes "
            "and reachable only with the bot's database password."
        )
    return (
        "- In files on the server of whoever runs this bot (the operator), readable only by the bot's own system "
        "account."
    )


def _encryption_lines(settings: Settings) -> list[str]:
    if settings.memory_encryption_key is None:
        return []
    return [
        "- Your profile and your waiting messages are encrypted with a key of your own. `/memory forget` destroys "
        "that key, so copies in the operator's backups can no longer be read either."
    ]


def privacy_statement(
    settings: Settings,
    *,
    pending_seconds: float,
    commands: Sequence[CommandHelp],
    here: MemorySwitch | None = None,
    server_name: str | None = None,
    persona_here: bool = False,
) -> str:
    """The statement, in Discord markdown (fits one embed description). `pending_seconds`: the longest a turn
    waits on disk before it is distilled (the memory service computes it); `here`: the switch where it is asked."""
    minutes = max(1, math.ceil(pending_seconds / 60))
    lines = [
        "**What it stores about you**",
        "- A profile distilled from what you say to it: six short summaries (work, personal life, what is on your "
        "mind, recent months, earlier context, background) and a list of facts. "
        "It does not keep a transcript of your messages.",
        f"- Your recent messages to it and its replies, only until they are distilled: normally at most "
        f"**{minutes} minutes**. If the language model cannot be reached for longer, they wait in the bot's "
        f"{'database' if settings.database_url is not None else 'files'} until it can; messages it keeps failing "
        "on are dropped a day after it gives up on them. "
        "`/memory forget` deletes them at once.",
        "- For its last 1,000 replies, which of your summaries and facts each one used (their ids, never their "
        "text), so you can ask it \"What did you remember?\".",
        "- When you last talked to it (for the automatic deletion below), and your settings (pause, incognito, "
        "fresh); the ids of the messages your facts came from; your summaries' earlier versions, for 24 hours "
        "(`/memory forget minutes:` puts them back).",
        "- How many tokens your conversations used today (daily budgets, `/usage`), until the next day.",
        "- For each fact you forget or correct, a fingerprint of its words (keyed hashes, no text), as long as your "
        "memory is kept: the bot does not learn it again unless you say it again. Its words leave your summaries.",
        "",
        "**What it never keeps, and what only if you ask**",
        "- Passwords, PINs, API keys, tokens, card and bank account numbers are never written into your memory: "
        "code removes them before anything is saved, and `/memory remember` refuses them.",
        "- Your health, sex life, religion, politics and finances are kept only when you ask it to remember them "
        "(`/memory remember`, or \"remember that ...\" in your message); the request covers what you said with it, "
        "not what you say later.",
        "- The same holds for recovery from addiction, organ donation and transplant lists, criminal records, "
        "immigration status, sexual orientation and gender identity, trade-union membership, and genetic and "
        "biometric data.",
        "- A password given over two messages (\"I changed my wifi password\" … \"it's now ...\") is removed too.",
        "",
        "**Deleted and edited messages**",
        "- Delete a message on Discord and what it taught goes too (not facts you wrote or corrected); an edited "
        "message is learned again as it reads now.",
        "",
        "**Where**",
        _where_text(settings),
        *_encryption_lines(settings),
        f"- Your messages are sent to **{endpoint_name(settings)}** to write the replies and to distil the "
        "profile.",
        _history_text(settings),
        "",
        "**For how long**",
        f"- {retention_text(settings.memory_retention_days)}",
        "",
        "**Who can see it**",
        "- You, with the commands below (only you see their answers). It goes into the bot's replies to you and "
        "to nobody else. Server admins cannot read it. The operator who runs the bot has access to its "
        f"{'database' if settings.database_url is not None else 'disk'}.",
        _places_text(settings.memory_scope),
        "- What you say in an age-restricted (NSFW) channel is used only in that server's age-restricted channels: "
        "never in DMs or other channels, even if you share it.",
        "- Server admins may give the bot a persona and a model for their server or a channel (`/bot-settings`); "
        "that changes how it speaks, never what it stores about you.",
        "",

        "**See, export and delete it**",
        *[command.line() for command in commands],
    ]
    if here is not None and server_name is not None:
        lines += [
            "",
            f"**In {server_name}**",
            f"- Learning is {'on' if here.learning else '**off**'} and using memory in replies is "
            f"{'on' if here.recall else '**off**'} here (server admins: `/memory-admin`).",
        ]
        if persona_here:
            lines.append("- Here the bot speaks with a persona this server's admins set.")
    contact = settings.privacy_contact.strip()
    lines += [
        "",
        "**Contact**",
        f"- {contact}" if contact else "- The operator has not published a contact; ask the admins of the server "
        "where you met the bot.",
    ]
    return "\n".join(lines)
