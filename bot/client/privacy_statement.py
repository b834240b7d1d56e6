"""The privacy statement `/privacy` shows, built from the live settings so it never drifts from what the bot does.

Discord's Developer Terms ask a bot that stores user data to say what it stores, why, for how long, and how to
have it deleted. Every number here comes from the settings the process runs with: the retention period, the
contact, the LLM endpoint the messages go to (and the embedding endpoint, when one computes vectors of them), which
of a channel's messages go with each reply, and how long a message can wait on disk before it is distilled.

The statement is a promise, so each language says the same thing: every sentence is one catalog message (its
variants are whole sentences too, never words glued together), in the reader's language (`speech`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.config import Settings
from bot.i18n.speech import ENGLISH_SPEECH, N_, Speech
from bot.memory.doors import MemorySwitch

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "host.docker.internal"})


def endpoint_host(endpoint: str) -> str | None:
    """The host of an endpoint given as a URL (`https://user:pw@host/v1`) or as a host name; never its path,
    query or credentials."""
    if "://" not in endpoint:
        endpoint = "//" + endpoint
    try:
        return urlsplit(endpoint).hostname
    except ValueError:
        return None


def endpoint_name(settings: Settings, speech: Speech = ENGLISH_SPEECH) -> str:
    """Who processes the messages: "OpenAI" or the endpoint's host (never its path, query or credentials)."""
    if settings.openai_base_url is None:
        return "OpenAI"
    host = endpoint_host(settings.openai_base_url)
    if host is None:
        return speech.tr("the configured endpoint")
    if host in LOCAL_HOSTS:
        return speech.tr("a language model running on the bot's own server")
    return host


@dataclass(frozen=True, slots=True)
class CommandHelp:
    name: str
    description: str
    message_menu: bool = False  # an entry of the Apps menu on a message, not a slash command

    def line(self, speech: Speech = ENGLISH_SPEECH) -> str:
        description = speech.tr(self.description)
        if self.message_menu:
            return speech.tr("- the message menu **{menu}** (Apps): {description}", menu=speech.tr(self.name),
                             description=description)
        return speech.tr("- `{command}`: {description}", command=speech.command(self.name), description=description)


def retention_text(days: int, speech: Speech = ENGLISH_SPEECH) -> str:
    if days == 0:
        return speech.tr("Kept until you delete it: this bot's operator has not set an automatic expiry.")
    return speech.trn(
        "Deleted automatically, with every trace of it, after **{count} day** in which you have not talked to the "
        "bot.",
        "Deleted automatically, with every trace of it, after **{count} days** in which you have not talked to the "
        "bot.",
        days,
    )


def _places_text(scope: str, speech: Speech) -> str:
    if scope == "user":
        return speech.tr(
            "- This bot keeps one memory per person: what you say in DMs or in any server can be used in its replies "
            "to you anywhere."
        )
    return speech.tr(
        "- It is used only where you said it: what you tell it in DMs only in DMs; what you say in a server's "
        "public channels only in that server (and your DMs); what you say in a private channel only there (and "
        "your DMs). `/memory share` makes one fact usable everywhere."
    )


def _history_text(settings: Settings, speech: Speech) -> str:
    """What else each reply sends to the model provider: the channel's recent messages, whose."""
    count = settings.history_messages
    if count <= 0:
        return speech.tr("- Replies send no other messages of the channel with yours, only the ones you reply to.")
    if settings.history_scope == "conversation":
        return speech.trn(
            "- With each reply it also sends up to **{count}** recent message of the channel that was to or from "
            "the bot (and the messages you reply to); other members' chat is not sent. Nothing of it is stored.",
            "- With each reply it also sends up to **{count}** recent messages of the channel that were to or from "
            "the bot (and the messages you reply to); other members' chat is not sent. Nothing of it is stored.",
            count,
        )
    return speech.trn(
        "- With each reply it also sends the channel's last **{count}** message, including those of members who "
        "never talked to the bot, so it can follow the conversation. They are sent, not stored: memory learns only "
        "from your own words.",
        "- With each reply it also sends the channel's last **{count}** messages, including those of members who "
        "never talked to the bot, so it can follow the conversation. They are sent, not stored: memory learns only "
        "from your own words.",
        count,
    )


def _where_text(settings: Settings, speech: Speech) -> str:
    if settings.database_url is not None:
        return speech.tr(
            "- In a PostgreSQL database run by whoever runs this bot (the operator), shared by the bot's processes "
            "and reachable only with the bot's database password."
        )
    return speech.tr(
        "- In files on the server of whoever runs this bot (the operator), readable only by the bot's own system "
        "account."
    )


def _encryption_lines(settings: Settings, speech: Speech) -> list[str]:
    if settings.memory_encryption_key is None:
        return []
    return [speech.tr(
        "- Your profile and your waiting messages are encrypted with a key of your own. `/memory forget` destroys "
        "that key, so copies in the operator's backups can no longer be read either."
    )]


def _embedding_lines(settings: Settings, endpoint: str | None, speech: Speech) -> list[str]:
    """What goes to the embedding endpoint, when one computes the vectors that recall facts by meaning."""
    if endpoint is None:
        return []
    host = endpoint_host(endpoint)
    if host is None:
        name = speech.tr("the configured embedding endpoint")
    elif host in LOCAL_HOSTS:
        name = speech.tr("an embedding model running on the bot's own server")
    else:
        name = host
    if settings.memory_encryption_key is not None:
        return [speech.tr(
            "- The text of your facts and of your recent messages is also sent to **{endpoint}**, which turns it "
            "into vectors (lists of numbers) so that the bot can recall facts by their meaning. The vectors are "
            "stored with your facts, encrypted like them, and deleted with them.",
            endpoint=name,
        )]
    return [speech.tr(
        "- The text of your facts and of your recent messages is also sent to **{endpoint}**, which turns it into "
        "vectors (lists of numbers) so that the bot can recall facts by their meaning. The vectors are stored with "
        "your facts and deleted with them.",
        endpoint=name,
    )]


def _stored_lines(settings: Settings, minutes: int, speech: Speech) -> list[str]:
    if settings.database_url is not None:
        waiting = speech.trn(
            "- Your recent messages to it and its replies, only until they are distilled: normally at most "
            "**{count} minute**. If the language model cannot be reached for longer, they wait in the bot's "
            "database until it can; messages it keeps failing on are dropped a day after it gives up on them. "
            "`/memory forget` deletes them at once.",
            "- Your recent messages to it and its replies, only until they are distilled: normally at most "
            "**{count} minutes**. If the language model cannot be reached for longer, they wait in the bot's "
            "database until it can; messages it keeps failing on are dropped a day after it gives up on them. "
            "`/memory forget` deletes them at once.",
            minutes,
        )
    else:
        waiting = speech.trn(
            "- Your recent messages to it and its replies, only until they are distilled: normally at most "
            "**{count} minute**. If the language model cannot be reached for longer, they wait in the bot's "
            "files until it can; messages it keeps failing on are dropped a day after it gives up on them. "
            "`/memory forget` deletes them at once.",
            "- Your recent messages to it and its replies, only until they are distilled: normally at most "
            "**{count} minutes**. If the language model cannot be reached for longer, they wait in the bot's "
            "files until it can; messages it keeps failing on are dropped a day after it gives up on them. "
            "`/memory forget` deletes them at once.",
            minutes,
        )
    return [
        "**" + speech.tr("What it stores about you") + "**",
        speech.tr(
            "- A profile distilled from what you say to it: six short summaries (work, personal life, what is on "
            "your mind, recent months, earlier context, background) and a list of facts. It does not keep a "
            "transcript of your messages."
        ),
        waiting,
        speech.tr(
            "- For its last {count} replies, which of your summaries and facts each one used (their ids, never "
            "their text), so you can ask it “What did you remember?”.",
            count=speech.number(1000),
        ),
        speech.tr(
            "- When you last talked to it (for the automatic deletion below), and your settings (pause, incognito, "
            "fresh); the ids of the messages your facts came from; your summaries' earlier versions, for 24 hours "
            "(`/memory forget minutes:` puts them back)."
        ),
        speech.tr("- How many tokens your conversations used today (daily budgets, `/usage`), until the next day."),
        speech.tr(
            "- For each fact you forget or correct, a fingerprint of its words (keyed hashes, no text), as long as "
            "your memory is kept: the bot does not learn it again unless you say it again. Its words leave your "
            "summaries."
        ),
    ]


def _never_lines(speech: Speech) -> list[str]:
    return [
        "**" + speech.tr("What it never keeps, and what only if you ask") + "**",
        speech.tr(
            "- Passwords, PINs, API keys, tokens, card and bank account numbers are never written into your memory: "
            "code removes them before anything is saved, and `/memory remember` refuses them."
        ),
        speech.tr(
            "- Your health, sex life, religion, politics and finances are kept only when you ask it to remember them "
            "(`/memory remember`, or “remember that ...” in your message); the request covers what you said with it, "
            "not what you say later."
        ),
        speech.tr(
            "- The same holds for recovery from addiction, organ donation and transplant lists, criminal records, "
            "immigration status, sexual orientation and gender identity, trade-union membership, and genetic and "
            "biometric data."
        ),
        speech.tr(
            "- A password given over two messages (“I changed my wifi password” … “it's now ...”) is removed too."
        ),
        "",
        "**" + speech.tr("Deleted and edited messages") + "**",
        speech.tr(
            "- Delete a message on Discord and what it taught goes too (not facts you wrote or corrected); an edited "
            "message is learned again as it reads now."
        ),
    ]


def _who_lines(settings: Settings, speech: Speech) -> list[str]:
    if settings.database_url is not None:
        you = speech.tr(
            "- You, with the commands below (only you see their answers). It goes into the bot's replies to you and "
            "to nobody else. Server admins cannot read it. The operator who runs the bot has access to its database."
        )
    else:
        you = speech.tr(
            "- You, with the commands below (only you see their answers). It goes into the bot's replies to you and "
            "to nobody else. Server admins cannot read it. The operator who runs the bot has access to its disk."
        )
    return [
        "**" + speech.tr("Who can see it") + "**",
        you,
        _places_text(settings.memory_scope, speech),
        speech.tr(
            "- What you say in an age-restricted (NSFW) channel is used only in that server's age-restricted "
            "channels: never in DMs or other channels, even if you share it."
        ),
        speech.tr(
            "- Server admins may give the bot a persona and a model for their server or a channel (`/bot-settings`); "
            "that changes how it speaks, never what it stores about you."
        ),
    ]


ON = N_("on")
OFF = N_("off")


def _here_lines(here: MemorySwitch, server_name: str, persona_here: bool, speech: Speech) -> list[str]:
    def state(on: bool) -> str:
        return speech.tr(ON) if on else "**" + speech.tr(OFF) + "**"

    lines = [
        "",
        "**" + speech.tr("In {server}", server=server_name) + "**",
        speech.tr(
            "- Learning is {learning} and using memory in replies is {recall} here (server admins: "
            "`/memory-admin`).",
            learning=state(here.learning), recall=state(here.recall),
        ),
    ]
    if persona_here:
        lines.append(speech.tr("- Here the bot speaks with a persona this server's admins set."))
    return lines


def privacy_statement(
    settings: Settings,
    *,
    pending_seconds: float,
    commands: Sequence[CommandHelp],
    here: MemorySwitch | None = None,
    server_name: str | None = None,
    persona_here: bool = False,
    embedding_endpoint: str | None = None,
    speech: Speech = ENGLISH_SPEECH,
) -> str:
    """The statement, in Discord markdown (fits one embed description), in `speech`'s language. `pending_seconds`:
    the longest a turn waits on disk before it is distilled (the memory service computes it); `here`: the switch
    where it is asked; `embedding_endpoint`: where the text of facts and messages goes to be turned into vectors for
    recall by meaning (a URL or a host; None: nowhere)."""
    minutes = max(1, math.ceil(pending_seconds / 60))
    lines = [
        *_stored_lines(settings, minutes, speech),
        "",
        *_never_lines(speech),
        "",
        "**" + speech.tr("Where") + "**",
        _where_text(settings, speech),
        *_encryption_lines(settings, speech),
        speech.tr(
            "- Your messages are sent to **{endpoint}** to write the replies and to distil the profile.",
            endpoint=endpoint_name(settings, speech),
        ),
        *_embedding_lines(settings, embedding_endpoint, speech),
        _history_text(settings, speech),
        "",
        "**" + speech.tr("For how long") + "**",
        f"- {retention_text(settings.memory_retention_days, speech)}",
        "",
        *_who_lines(settings, speech),
        "",
        "**" + speech.tr("See, export and delete it") + "**",
        *[command.line(speech) for command in commands],
    ]
    if here is not None and server_name is not None:
        lines += _here_lines(here, server_name, persona_here, speech)
    contact = settings.privacy_contact.strip()
    lines += [
        "",
        "**" + speech.tr("Contact") + "**",
        f"- {contact}" if contact else speech.tr(
            "- The operator has not published a contact; ask the admins of the server where you met the bot."
        ),
    ]
    return "\n".join(lines)
