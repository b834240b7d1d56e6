"""Fakes of discord.py objects for cog tests, in the spirit of python-discord/bot's `tests/helpers.py`.

Every fake is `MagicMock(spec_set=<discord.py class>)`: reading or setting an attribute the real class does not
have fails the test, coroutine methods are `AsyncMock`s, and `isinstance(fake, discord.Thread)` holds as it would
for the real object. The methods the cogs call (`reply`, `send`, `fetch_message`, `history`, `typing`, the
interaction responses) also check every call against the real method's signature, as `create_autospec` would
(which is 20-100 times slower to build: too slow for tests that make hundreds of messages). Cheap real objects are
used as they are (`discord.MessageReference`, `discord.Embed`, `discord.File`, views and buttons).

`FakeDiscord` is a tiny model of the places the bot talks in: channels, threads and DMs keep a log of their
messages, so `channel.history()` yields what was said there (newest first, like Discord), `fetch_message` finds a
message or raises `discord.NotFound`, and what the bot sends through `reply`/`send` lands in the log as a message
authored by the bot. `build_harness` makes the real `MemoryBot` with real resources (settings, the one `AsyncOpenAI`
client, store, journal, debouncer) talking to the test Chat Completions server, without logging in to Discord.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any
from unittest.mock import DEFAULT, MagicMock

import discord

from bot.app import Resources, build_resources, start_memory
from bot.client.memory_bot import MemoryBot
from bot.config import Settings
from bot.memory.models import Fact, MemoryFile
from bot.memory.service import MemoryService
from cogs.chat import ChatCog
from cogs.memory import MemoryCog
from tests.support.engine import parts, save_memory, wait_idle
from tests.support.llm_server import ChatServer, RecordedRequest, Response, extraction, reply

BOT_ID = 424242424242424242
CHAT_MODEL = "chat-test-model"
MEMORY_MODEL = "memory-test-model"

_snowflakes = itertools.count(discord.utils.time_snowflake(datetime(2024, 5, 1, tzinfo=UTC)), 1 << 22)


class Clock:
    """A test's clock, moved by hand: give it to the engine (`harness.memory.clock`) and to `FakeDiscord.clock`
    so messages and memory agree on what "the last n minutes" were."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def next_id() -> int:
    """A fresh snowflake, increasing: later objects have later creation times, as on Discord."""
    return next(_snowflakes)


def spec(cls: type, **attrs: Any) -> Any:
    """A fake instance of a discord.py class with these attributes set (unknown names fail, now and later)."""
    fake = MagicMock(spec_set=cls)
    for name, value in attrs.items():
        setattr(fake, name, value)
    return fake


def behave(fake: Any, cls: type, name: str, impl: Callable[..., Any]) -> None:
    """Make `fake.<name>(...)` run `impl`, after checking the arguments against the real method's signature
    (a misspelt keyword such as `allowed_mention=` fails the test, as it would fail at run time)."""
    signature = inspect.signature(getattr(cls, name))
    if inspect.iscoroutinefunction(impl):

        async def checked_async(*args: Any, **kwargs: Any) -> Any:
            signature.bind(None, *args, **kwargs)
            return await impl(*args, **kwargs)

        getattr(fake, name).side_effect = checked_async
    else:

        def checked(*args: Any, **kwargs: Any) -> Any:
            signature.bind(None, *args, **kwargs)
            return impl(*args, **kwargs)

        getattr(fake, name).side_effect = checked


# --- people -----------------------------------------------------------------------------------------------


def make_client_user(user_id: int = BOT_ID, name: str = "MemoryBot") -> Any:
    """The bot's own account, as `bot.user` returns it."""
    return spec(
        discord.ClientUser, id=user_id, name=name, display_name=name, global_name=None, bot=True,
        mention=f"<@{user_id}>",
    )


def make_user(user_id: int | None = None, name: str = "someone", *, bot: bool = False) -> Any:
    """A `discord.User` (DM authors, interaction users in DMs)."""
    user_id = user_id if user_id is not None else next_id()
    return spec(
        discord.User, id=user_id, name=name.lower(), display_name=name, global_name=name, bot=bot,
        mention=f"<@{user_id}>",
    )


def make_member(user: Any, guild: Any, *, nick: str | None = None) -> Any:
    """A `discord.Member` of `guild` for `user` (guild message authors and mentions)."""
    return spec(
        discord.Member, id=user.id, name=user.name, display_name=nick or user.display_name, nick=nick,
        global_name=user.global_name, bot=user.bot, guild=guild, mention=user.mention,
    )


def make_guild(
    guild_id: int | None = None, name: str = "Test server", *, bot_role: Any = None,
    locale: discord.Locale = discord.Locale.american_english,
) -> Any:
    """A server; `bot_role` is the bot's managed role there (`Guild.self_role`), None by default. Its @everyone
    role (`default_role`) has the server's id, as on Discord; `locale` is its preferred language."""
    guild_id = guild_id if guild_id is not None else next_id()
    everyone = make_role("@everyone", guild_id)
    return spec(
        discord.Guild, id=guild_id, name=name, self_role=bot_role, default_role=everyone, preferred_locale=locale
    )


def make_role(name: str, role_id: int | None = None, *, managed: bool = False) -> Any:
    role_id = role_id if role_id is not None else next_id()
    return spec(discord.Role, id=role_id, name=name, managed=managed, mention=f"<@&{role_id}>")


def make_attachment(
    filename: str, data: bytes, content_type: str | None = None, *, size: int | None = None,
    fail: BaseException | None = None,
) -> Any:
    """A `discord.Attachment` whose `read()` returns `data` (or raises `fail`); `size` as Discord reports it."""
    attachment = spec(
        discord.Attachment, id=next_id(), filename=filename, size=len(data) if size is None else size,
        content_type=content_type, url=f"https://cdn.discordapp.com/attachments/1/2/{filename}",
    )

    async def read(*, use_cached: bool = False) -> bytes:
        if fail is not None:
            raise fail
        return data

    behave(attachment, discord.Attachment, "read", read)
    return attachment


# --- typing -----------------------------------------------------------------------------------------------


class TypingRecorder:
    """What `channel.typing()` returns: an async context manager that records whether it is active.

    `active` is a plain bool, so the test server's thread can read it while a request is in flight.
    `fail` makes entering raise like discord.py does when the typing endpoint refuses.
    """

    def __init__(self) -> None:
        self.entered = 0
        self.exited = 0
        self.active = False
        self.fail: BaseException | None = None

    async def __aenter__(self) -> None:
        if self.fail is not None:
            raise self.fail
        self.entered += 1
        self.active = True

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.exited += 1
        self.active = False


def http_error(status: int, text: str = "test error") -> discord.HTTPException:
    """A discord.py HTTP error as the library raises it (NotFound for 404, Forbidden for 403)."""
    response = MagicMock(status=status, reason=text)
    cls = {403: discord.Forbidden, 404: discord.NotFound}.get(status, discord.HTTPException)
    return cls(response, text)


# --- places and messages ----------------------------------------------------------------------------------


class FakeDiscord:
    """Channels, threads and DMs with message logs; the bot's messages are recorded where it sent them."""

    def __init__(self, me: Any) -> None:
        self.me = me
        self.logs: dict[int, list[Any]] = defaultdict(list)
        self.typing: dict[int, TypingRecorder] = {}
        self.sent: list[Sent] = []
        self.history_errors: dict[int, BaseException] = {}  # channel id -> what reading its history raises
        self.edit_error: Callable[[Sent, str], BaseException | None] | None = None  # what an edit raises, if any
        # Dates new messages (as `created_at`); None: their snowflake's time. Set it to the engine's test clock when
        # a test moves time, so "the last n minutes" means the same to the messages and to the engine.
        self.clock: Callable[[], datetime] | None = None

    # places

    def _messageable(self, channel: Any) -> Any:
        channel_id = channel.id
        cls = channel.__class__
        recorder = self.typing.setdefault(channel_id, TypingRecorder())
        behave(channel, cls, "typing", lambda: recorder)
        behave(channel, cls, "history", lambda **kw: self._history(channel_id, **kw))

        async def fetch_message(message_id: int) -> Any:
            for message in self.logs[channel_id]:
                if message.id == message_id:
                    return message
            raise http_error(404, "Unknown Message")

        async def send(content: str | None = None, **kwargs: Any) -> Any:
            reference = kwargs.get("reference")
            if isinstance(reference, discord.MessageReference):
                target = self.find(channel_id, reference.message_id)
                if target is None and reference.fail_if_not_exists:
                    raise http_error(400, "Invalid Form Body: message_reference: Unknown message")
                reference.resolved = target
                return self._bot_message(channel, content or "", kwargs, reference=reference)
            return self._bot_message(channel, content or "", kwargs)

        behave(channel, cls, "fetch_message", fetch_message)
        behave(channel, cls, "send", send)
        return channel

    def find(self, channel_id: int, message_id: int | None) -> Any:
        return next((m for m in self.logs[channel_id] if m.id == message_id), None)

    def delete(self, message: Any) -> None:
        """Delete a message, as its author or a moderator would (thread-safe enough for the server's thread)."""
        log = self.logs[message.channel.id]
        if message in log:
            log.remove(message)

    def text_channel(
        self, guild: Any, channel_id: int | None = None, name: str = "general", *, private: bool = False
    ) -> Any:
        """A server text channel; `private` ones cannot be read by the server's @everyone role (staff rooms)."""
        channel = spec(
            discord.TextChannel, id=channel_id if channel_id is not None else next_id(), name=name, guild=guild,
            type=discord.ChannelType.text,
        )

        def permissions_for(target: Any) -> discord.Permissions:
            everyone = target is guild.default_role
            return discord.Permissions(view_channel=not (private and everyone), read_message_history=True)

        behave(channel, discord.TextChannel, "permissions_for", permissions_for)
        return self._messageable(channel)

    def thread(
        self, parent: Any, thread_id: int | None = None, name: str = "a thread", *, private: bool = False
    ) -> Any:
        """A thread of `parent`: public (anyone who can read the parent can) or `private` (invited members only)."""
        kind = discord.ChannelType.private_thread if private else discord.ChannelType.public_thread
        thread = spec(
            discord.Thread, id=thread_id if thread_id is not None else next_id(), name=name, guild=parent.guild,
            parent=parent, parent_id=parent.id, type=kind,
        )
        return self._messageable(thread)

    def dm(self, user: Any, channel_id: int | None = None) -> Any:
        channel = spec(
            discord.DMChannel, id=channel_id if channel_id is not None else next_id(), recipient=user,
            guild=None, type=discord.ChannelType.private,
        )
        return self._messageable(channel)

    # messages

    def message(
        self,
        channel: Any,
        author: Any,
        content: str,
        *,
        mentions: Iterable[Any] = (),
        role_mentions: Iterable[Any] = (),
        reference: discord.MessageReference | None = None,
        type: discord.MessageType = discord.MessageType.default,
        attachments: Iterable[Any] = (),
        log: bool = True,
    ) -> Any:
        """A message posted in `channel` (and recorded in its log unless `log` is False)."""
        message_id = next_id()
        message = spec(
            discord.Message,
            id=message_id,
            content=content,
            author=author,
            channel=channel,
            guild=channel.guild,
            mentions=list(mentions),
            role_mentions=list(role_mentions),
            reference=reference,
            type=type,
            attachments=list(attachments),
            created_at=self.clock() if self.clock is not None else discord.utils.snowflake_time(message_id),
            jump_url=f"https://discord.com/channels/@me/{channel.id}/{message_id}",
        )

        async def reply_to(content: str | None = None, **kwargs: Any) -> Any:
            if self.find(channel.id, message_id) is None:  # `Message.reply` fails for a deleted message
                raise http_error(400, "Invalid Form Body: message_reference: Unknown message")
            ref = discord.MessageReference(message_id=message.id, channel_id=channel.id)
            ref.resolved = message
            return self._bot_message(channel, content or "", kwargs, reference=ref)

        behave(message, discord.Message, "reply", reply_to)

        def to_reference(
            *, fail_if_not_exists: bool = True, type: discord.MessageReferenceType = discord.MessageReferenceType.reply
        ) -> discord.MessageReference:
            return discord.MessageReference(
                message_id=message_id, channel_id=channel.id, fail_if_not_exists=fail_if_not_exists, type=type
            )

        behave(message, discord.Message, "to_reference", to_reference)
        if log:
            self.logs[channel.id].append(message)
        return message

    def mention_bot(self, channel: Any, author: Any, text: str, **kwargs: Any) -> Any:
        """A guild message that @mentions the bot: `<@bot> text`."""
        me = make_member(self.me, channel.guild) if channel.guild is not None else self.me
        return self.message(channel, author, f"<@{self.me.id}> {text}", mentions=[me], **kwargs)

    def reply_to(
        self, channel: Any, author: Any, target: Any, text: str, *, resolved: bool = True, **kwargs: Any
    ) -> Any:
        """A message replying to `target` (a real `MessageReference`, resolved or left for `fetch_message`)."""
        reference = discord.MessageReference(message_id=target.id, channel_id=channel.id)
        reference.resolved = target if resolved else None
        return self.message(channel, author, text, reference=reference, type=discord.MessageType.reply, **kwargs)

    def _bot_message(
        self, channel: Any, content: str, kwargs: dict[str, Any], reference: discord.MessageReference | None = None
    ) -> Any:
        check_discord_limits(content, **kwargs)
        sent = self.message(
            channel, self.me, content, reference=reference,
            type=discord.MessageType.reply if reference else discord.MessageType.default,
        )
        record = Sent(channel.id, content, kwargs, sent, posted_at=time.monotonic(), posted_content=content)
        self.sent.append(record)

        async def edit(**kwargs: Any) -> Any:
            failure = self.edit_error(record, kwargs.get("content") or "") if self.edit_error else None
            if failure is not None:
                raise failure
            if record.deleted:
                raise http_error(404, "Unknown Message")
            check_discord_limits(**kwargs)
            record.edits.append(Edit(time.monotonic(), kwargs.get("content") or "", kwargs))
            record.content = sent.content = kwargs.get("content") or ""
            return sent

        async def delete(*, delay: float | None = None) -> None:
            record.deleted = True
            self.delete(sent)

        behave(sent, discord.Message, "edit", edit)
        behave(sent, discord.Message, "delete", delete)
        return sent

    async def _history(
        self, channel_id: int, *, limit: int | None = 100, before: Any = None, **_: Any
    ) -> AsyncIterator[Any]:
        if channel_id in self.history_errors:
            raise self.history_errors[channel_id]
        before_id = getattr(before, "id", before)
        older = [m for m in self.logs[channel_id] if before_id is None or m.id < before_id]
        older.sort(key=lambda m: m.id, reverse=True)
        for message in older[:limit] if limit is not None else older:
            yield message

    def bot_messages(self, channel: Any | None = None) -> list[Sent]:
        """What the bot has in the channel (or everywhere) now: deleted messages left out."""
        return [s for s in self.sent if (channel is None or s.channel_id == channel.id) and not s.deleted]

    def replies_to(self, message: Any) -> list[Sent]:
        """The bot's messages answering `message`: the reply that references it and the messages after it in the
        same channel, up to the next reply to something else."""
        result: list[Sent] = []
        for record in self.bot_messages():
            reference = record.kwargs.get("reference")
            if isinstance(reference, discord.MessageReference):
                if result:
                    break
                if reference.message_id == message.id:
                    result.append(record)
            elif result and record.channel_id == message.channel.id:
                result.append(record)
        return result

    def reply_text(self, message: Any) -> str:
        """The text the bot answered `message` with, its messages joined."""
        return "\n".join(record.content for record in self.replies_to(message))


@dataclass(frozen=True)
class Edit:
    at: float  # time.monotonic()
    content: str
    kwargs: dict[str, Any]


@dataclass
class Sent:
    """One message the bot sent: where, what it says now, the keyword arguments it was posted with, its edits."""

    channel_id: int
    content: str
    kwargs: dict[str, Any]
    message: Any
    posted_at: float = 0.0
    posted_content: str = ""
    edits: list[Edit] = field(default_factory=list)
    deleted: bool = False



# --- interactions -----------------------------------------------------------------------------------------

EMBED_TOTAL_LIMIT = 6000
EMBED_DESCRIPTION_LIMIT = 4096
EMBED_FIELD_VALUE_LIMIT = 1024
MESSAGE_LIMIT = 2000


def check_discord_limits(content: str | None = None, *, embed: discord.Embed | None = None, **_: Any) -> None:
    """Raise what Discord answers (400) for content or an embed over its limits."""
    if content is not None and len(content) > MESSAGE_LIMIT:
        raise http_error(400, "Must be 2000 or fewer in length.")
    if embed is not None:
        too_big = (
            len(embed) > EMBED_TOTAL_LIMIT
            or len(embed.description or "") > EMBED_DESCRIPTION_LIMIT
            or any(len(str(f.value)) > EMBED_FIELD_VALUE_LIMIT or len(str(f.name)) > 256 for f in embed.fields)
            or len(embed.fields) > 25
        )
        if too_big:
            raise http_error(400, "Invalid Form Body: embed too large")


@dataclass(frozen=True)
class Call:
    """One interaction response or follow-up, in the order they happened."""

    name: str  # "send_message", "defer", "edit_message", "followup.send", "edit_original_response"
    kwargs: dict[str, Any]
    args: tuple[Any, ...] = ()

    @property
    def content(self) -> str:
        return str(self.args[0] if self.args else self.kwargs.get("content") or "")


def make_interaction(
    user: Any, *, guild: Any = None, channel: Any = None, locale: discord.Locale = discord.Locale.american_english
) -> Any:
    """A spec'd `discord.Interaction` for `user`, with a stateful `response` (InteractionResponse) and
    `followup` (Webhook): answering twice raises `InteractionResponded`, a follow-up or an edit before any answer
    fails, and everything is recorded in order in `calls(interaction)` (kept in the real `extras` dict). `locale` is
    the user's Discord language; `guild_locale` is the server's, as Discord sends them."""
    interaction = spec(
        discord.Interaction, id=next_id(), user=user, guild=guild, guild_id=guild.id if guild is not None else None,
        channel=channel, extras={"calls": []}, locale=locale,
        guild_locale=guild.preferred_locale if guild is not None else None,
    )
    log: list[Call] = interaction.extras["calls"]
    done = [False]

    def answer(name: str) -> Callable[..., Any]:
        async def respond(*args: Any, **kwargs: Any) -> Any:
            if done[0]:
                raise discord.InteractionResponded(interaction)
            check_discord_limits(*args, **kwargs)
            done[0] = True
            log.append(Call(name, kwargs, args))
            return DEFAULT

        return respond

    def after_answer(name: str) -> Callable[..., Any]:
        async def respond(*args: Any, **kwargs: Any) -> Any:
            if not done[0]:
                raise AssertionError(f"{name} before the interaction was answered (Discord: Unknown Webhook)")
            check_discord_limits(*args, **kwargs)
            log.append(Call(name, kwargs, args))
            return DEFAULT

        return respond

    response = spec(discord.InteractionResponse)
    for name in ("send_message", "defer", "edit_message"):
        behave(response, discord.InteractionResponse, name, answer(name))
    behave(response, discord.InteractionResponse, "is_done", lambda: done[0])
    followup = spec(discord.Webhook)
    behave(followup, discord.Webhook, "send", after_answer("followup.send"))
    interaction.response = response
    interaction.followup = followup
    behave(interaction, discord.Interaction, "edit_original_response", after_answer("edit_original_response"))
    return interaction


def calls(interaction: Any) -> list[Call]:
    return list(interaction.extras["calls"])


def last_text(interaction: Any) -> str:
    return calls(interaction)[-1].content


async def press(view: discord.ui.View, item: discord.ui.Item[Any], interaction: Any) -> bool:
    """Dispatch a component press as discord.py's `View._scheduled_task` does: the check, then the callback."""
    if not await view.interaction_check(interaction):
        return False
    await item.callback(interaction)
    return True


async def press_through_discord(view: discord.ui.View, item: discord.ui.Item[Any], interaction: Any) -> bool:
    """Press as discord.py's view store does (`View._dispatch_item`): checks, callback and the view's own
    `on_error`; False when the view is stopped and discord.py would drop the press."""
    interaction.data = {"custom_id": getattr(item, "custom_id", ""), "component_type": 2}
    before = asyncio.all_tasks()
    view._dispatch_item(item, interaction)  # schedules the press as a task (returned only by discord.py >= 2.6)
    scheduled = asyncio.all_tasks() - before
    await asyncio.gather(*scheduled)
    return bool(scheduled)


def command_payload(path: str, **options: Any) -> dict[str, Any]:
    """The `data` of an APPLICATION_COMMAND interaction for `/memory forget fact:x` as `("memory forget", fact=x)`."""
    kinds = {bool: 5, int: 4, float: 10, str: 3}
    leaf: list[dict[str, Any]] = [
        {"type": kinds[type(value)], "name": name, "value": value} for name, value in options.items()
    ]
    names = path.split()
    for name in reversed(names[1:]):
        leaf = [{"type": 1, "name": name, "options": leaf}]
    return {"id": str(next_id()), "name": names[0], "type": 1, "options": leaf}


async def run_slash(bot: MemoryBot, interaction: Any, path: str, **options: Any) -> Any:
    """Invoke a slash command as discord.py's gateway handler does: the bot's `CommandTree._from_interaction`
    (command lookup, option parsing, checks, the callback, the tree's error handler), awaited to the end."""
    interaction.data = command_payload(path, **options)
    interaction.type = discord.InteractionType.application_command
    interaction.client = bot
    interaction.command_failed = False
    try:  # the real Interaction.command property reads the slot the tree fills in; a spec'd fake needs it set
        interaction.command = bot.tree._get_app_command_options(interaction.data)[0]
    except discord.app_commands.CommandNotFound:
        interaction.command = None
    before = asyncio.all_tasks()
    bot.tree._from_interaction(interaction)
    await asyncio.gather(*(asyncio.all_tasks() - before))
    return interaction


async def run_message_menu(bot: MemoryBot, interaction: Any, name: str, message: Any) -> Any:
    """Invoke a message context menu ("What did you remember?") on `message` as the bot's `CommandTree` does once it
    has resolved Discord's payload to the message: the menu's checks and callback, then the tree's error handler.
    (The tree's own resolution builds a `discord.Message` from raw JSON, which a spec'd fake cannot come from.)"""
    menu = bot.tree.get_command(name, type=discord.AppCommandType.message)
    assert isinstance(menu, discord.app_commands.ContextMenu), f"no message menu called {name!r}"
    interaction.data = {"id": str(next_id()), "name": name, "type": 3, "target_id": str(message.id)}
    interaction.type = discord.InteractionType.application_command
    interaction.client = bot
    interaction.command_failed = False
    interaction.command = menu
    try:
        await menu._invoke(interaction, message)
    except discord.app_commands.AppCommandError as error:
        await bot.tree.on_error(interaction, error)
    return interaction


async def dispatch(bot: MemoryBot, event: str, *args: Any) -> None:
    """`bot.dispatch(event, *args)` as the gateway does, then wait for every handler it scheduled (the Bot's own
    `on_<event>` and the cogs' listeners) to finish."""
    before = asyncio.all_tasks()
    bot.dispatch(event, *args)
    await asyncio.gather(*(t for t in asyncio.all_tasks() - before if t.get_name().startswith("discord.py:")))


# --- the LLM side -----------------------------------------------------------------------------------------


class ScriptedLLM:
    """The ChatServer's responder, routing by model: chat replies from a queue (then `chat_reply(body)`),
    extractions from `extract(body)`. Routing by model keeps a queued chat answer from being eaten by an
    extraction that happens to run at the same moment. Called on the server's thread."""

    def __init__(self, server: ChatServer) -> None:
        self.server = server
        self._lock = threading.Lock()
        self._chat_queue: deque[Response] = deque()
        self.chat_reply: Callable[[dict[str, Any]], Response] = lambda body: reply("Happy to help with that!")
        self.extract: Callable[[dict[str, Any]], Response] = lambda body: extraction()
        self.on_chat: Callable[[dict[str, Any]], None] | None = None
        server.responder = self

    def say(self, *responses: Response) -> None:
        """Queue answers for the next chat requests."""
        with self._lock:
            self._chat_queue.extend(responses)

    def __call__(self, body: dict[str, Any]) -> Response:
        if body.get("model") != CHAT_MODEL:
            return self.extract(body)
        if self.on_chat is not None:
            self.on_chat(body)
        with self._lock:
            if self._chat_queue:
                return self._chat_queue.popleft()
        return self.chat_reply(body)

    def requests(self, model: str) -> list[RecordedRequest]:
        return [r for r in self.server.requests if r["body"].get("model") == model]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests(CHAT_MODEL)]

    @property
    def extraction_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests(MEMORY_MODEL)]


def system_text(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


_MEMORY_BLOCK = re.compile(r"<user_memory\b.*?</user_memory>", re.DOTALL)


def memory_text(body: dict[str, Any]) -> str:
    """Where a reply prompt carries memory: the system message (the profile) and the memory block ending the
    newest message (the facts selected for it)."""
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else "".join(str(p.get("text", "")) for p in last if isinstance(p, dict))
    return "\n".join([system_text(body), *_MEMORY_BLOCK.findall(text)])


def extraction_input(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON payload (today, currentMemory, newTurns) an extraction request carries."""
    content = str(body["messages"][-1]["content"])
    return dict(json.loads(content[content.index("{") :]))


TOKEN = re.compile(r"secret-(\d+)-(\d+)")


def tokens_in(text: str) -> set[str]:
    return {match.group(0) for match in TOKEN.finditer(text)}


def owners_in(text: str) -> set[int]:
    """The user ids whose `secret-<uid>-<n>` tokens appear in `text`."""
    return {int(match.group(1)) for match in TOKEN.finditer(text)}


# --- the bot ----------------------------------------------------------------------------------------------


@dataclass
class Harness:
    """The real MemoryBot with real resources, cogs loaded, `bot.user` set, not logged in."""

    bot: MemoryBot
    resources: Resources
    llm: ScriptedLLM
    discord: FakeDiscord

    @property
    def settings(self) -> Settings:
        return self.resources.settings

    @property
    def memory(self) -> MemoryService:
        return self.resources.memory

    # `load_extension` executes each cog module afresh (a new module object in `sys.modules`), so the loaded
    # cogs are instances of classes other than the ones this file imported: check by name, not by isinstance.

    @property
    def chat(self) -> ChatCog:
        cog = self.bot.get_cog("ChatCog")
        assert cog is not None and type(cog).__name__ == "ChatCog"
        return cog  # type: ignore[return-value]

    @property
    def memory_cog(self) -> MemoryCog:
        cog = self.bot.get_cog("MemoryCog")
        assert cog is not None and type(cog).__name__ == "MemoryCog"
        return cog  # type: ignore[return-value]

    def memory_path(self, user_id: int) -> Path:
        return self.settings.memory_dir / f"{user_id}.json"

    def memory_on_disk(self, user_id: int) -> dict[str, Any] | None:
        path = self.memory_path(user_id)
        return dict(json.loads(path.read_bytes())) if path.exists() else None

    async def settle(self) -> None:
        """Wait until every debounced update has been extracted and saved."""
        await wait_idle(self.memory)

    async def close(self) -> None:
        """Stop the bot (idempotent); pending updates are dropped, as a crash would (the journal keeps them)."""
        if self.bot.is_closed():
            return
        await parts(self.memory).learning.debouncer.close()
        await parts(self.memory).learning.outage.close()
        await parts(self.memory).storage.close()  # the takeover sweep stops, then the pool closes
        await self.bot.close()
        await self.resources.aclose()


def make_settings(server: ChatServer, data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "discord_token": "test-discord-token",
        "openai_api_key": "test-openai-key",
        "openai_base_url": server.base_url,
        "chat_model": CHAT_MODEL,
        "memory_model": MEMORY_MODEL,
        "data_dir": data_dir,
        "memory_debounce_seconds": 0.05,
        "memory_max_wait_seconds": 5.0,
        "memory_extraction_retries": 1,
        "rate_limit_messages": 0,
        "llm_timeout_seconds": 10.0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


async def build_harness(llm: ScriptedLLM, data_dir: Path, **overrides: Any) -> Harness:
    resources = build_resources(make_settings(llm.server, data_dir, **overrides))
    await start_memory(resources)
    bot = MemoryBot(resources)
    me = make_client_user()
    bot._connection.user = me  # where discord.py's `Client.user` reads it; no login
    await bot._async_setup_hook()  # what login does first: binds the bot to the running loop, so dispatch works
    await bot.prepare()  # the translator, then the cogs, as `setup_hook` does
    assert not bot.failed_extensions
    return Harness(bot=bot, resources=resources, llm=llm, discord=FakeDiscord(me))


async def seed_memory(
    memory: MemoryService, user_id: int, facts: Iterable[str] = (), *, place: str = "dm", **summaries: str
) -> MemoryFile:
    """Store a memory for `user_id` directly, learned in `place` (fact ids `fact_<n>` made unique per user)."""
    stored = MemoryFile()
    for n, content in enumerate(facts):
        stored.facts.append(
            Fact(id=f"fact_{user_id % 0xFFFF:04x}{n:04x}", content=content, category="context", confidence=0.9,
                 createdAt="2024-05-01T00:00:00+00:00", place=place)
        )
    in_place = stored.place_memory(place)
    for name, text in summaries.items():
        section = getattr(in_place.user, name, None) or getattr(in_place.history, name)
        section.summary = text
    stored.set_place_memory(place, in_place)
    await save_memory(parts(memory).storage.memories, user_id, stored)
    return stored

