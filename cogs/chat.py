"""Chat: answers people with their memory in the prompt, then hands the exchange to the memory engine.

Replies in DMs to every message, and in servers when @mentioned or when someone replies to one of the bot's
messages. The prompt carries the speaking user's memory and nobody else's; afterwards only that user's turn and the
bot's reply go to the debouncer under `(channel or thread id, user id)`, so in a busy channel each person's facts
come from their own words alone.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import discord
import openai
from discord.ext import commands

from bot.conversation import HistoryEntry, bounded_history, chat_messages, recent_texts, system_message
from bot.memory.filter import filter_messages
from bot.memory.models import ConversationKey, IncomingMessage
from bot.memory.service import MemoryPrompt
from bot.ratelimit import RateLimiter
from bot.splitting import split_message

if TYPE_CHECKING:
    from bot.discord_bot import MemoryBot

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
LLM_ERROR_REPLY = "Sorry, I couldn't reach my language model just now. Please try again in a moment."
EMPTY_REPLY = "I don't have an answer for that right now."
PUBLIC_CHANNEL_NOTE = (
    "This is a shared server channel that other people can read: use what you remember about the user discreetly "
    "and do not recite personal details unless they bring them up."
)
_USER_MENTION = re.compile(r"<@!?(\d+)>")
_ROLE_MENTION = re.compile(r"<@&(\d+)>")
_RUNS_OF_SPACES = re.compile(r"[ \t]{2,}")
_REPLYABLE_TYPES = (discord.MessageType.default, discord.MessageType.reply)


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
        is_system=message.type not in _REPLYABLE_TYPES,
        attachment_count=len(message.attachments),
        reply_to_id=reference,
    )


class ChatCog(commands.Cog):
    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.settings = bot.resources.settings
        self.memory = bot.resources.memory
        self.chat = bot.resources.chat
        self.limiter = RateLimiter(self.settings.rate_limit_messages, self.settings.rate_limit_window_seconds)

    # --- when to answer ------------------------------------------------------------------------------------

    def _allowed_place(self, message: discord.Message) -> bool:
        if message.guild is None:
            return self.settings.allow_dms
        if self.settings.allowed_guild_ids and message.guild.id not in self.settings.allowed_guild_ids:
            return False
        if self.settings.allowed_channel_ids:
            channel = message.channel
            place = channel.parent_id if isinstance(channel, discord.Thread) else channel.id
            return place in self.settings.allowed_channel_ids or channel.id in self.settings.allowed_channel_ids
        return True

    async def _replies_to_me(self, message: discord.Message) -> bool:
        reference = message.reference
        me = self.bot.user
        if reference is None or reference.message_id is None or me is None:
            return False
        if reference.type is discord.MessageReferenceType.forward:
            return False  # sharing one of the bot's messages elsewhere is not talking to it
        target = reference.resolved or reference.cached_message
        if target is None:
            try:
                target = await message.channel.fetch_message(reference.message_id)
            except discord.HTTPException:
                return False
        return isinstance(target, discord.Message) and target.author.id == me.id

    async def should_reply(self, message: discord.Message) -> bool:
        me = self.bot.user
        if me is None or not self.bot.accepting or message.type not in _REPLYABLE_TYPES:
            return False
        if message.author.bot or message.author.id == me.id:
            return False
        if not self._allowed_place(message):
            return False
        if message.guild is None:
            return True
        if any(user.id == me.id for user in message.mentions):
            return True
        own_role = own_role_id(message)
        if own_role is not None and any(role.id == own_role for role in message.role_mentions):
            return True
        return await self._replies_to_me(message)

    # --- answering -----------------------------------------------------------------------------------------

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if not await self.should_reply(message):
            return
        author = message.author
        started = time.perf_counter()
        self.memory.note_activity(author.id)
        if not self.limiter.allow(author.id):
            if self.limiter.should_notice(author.id):
                wait = max(1, round(self.limiter.retry_after(author.id)))
                await self._send(message, [f"You're sending messages faster than I can think. Try again in {wait}s."])
            log.info("rate limit: user %s over %d messages per window", author.id, self.limiter.max_events)
            return
        me = self.bot.user
        bot_id = me.id if me else None
        text = readable_text(message, bot_id)
        shown = text or ("(sent an attachment)" if message.attachments else "(mentioned you without saying anything)")
        current = HistoryEntry(author.id, author.display_name, shown)
        try:
            async with contextlib.AsyncExitStack() as typing:
                await self._show_typing(message, typing)
                history = await self.history_before(message, bot_id)
                answer, used = await self.bot.resources.metrics.chat_request(self.answer(message, history, current))
        except openai.OpenAIError:
            log.exception("reply to message %s failed", message.id)
            await self._send(message, [LLM_ERROR_REPLY])
            return
        sent = await self._send(message, split_message(answer) or [EMPTY_REPLY])
        self.bot.resources.metrics.reply_finished(started, sent=bool(sent))
        if sent:
            await self.memory.record_reply([part.id for part in sent], author.id, used)
        if sent and self.bot.resources.switches.in_channel(message.channel).learning:
            # Only the user's own words are learned: `text` is empty for a bare mention or an attachment, never
            # the placeholder the model was shown, so the filter drops it instead of storing our stand-in.
            await self.learn(message, text, sent[0], answer, bot_id)

    async def _show_typing(self, message: discord.Message, stack: contextlib.AsyncExitStack) -> None:
        """Show "typing" until the stack closes; a refused typing request must not cost the user their reply."""
        try:
            await stack.enter_async_context(message.channel.typing())
        except discord.HTTPException as error:
            log.warning("could not show typing in channel %s (HTTP %s)", message.channel.id, error.status)

    async def history_before(self, message: discord.Message, bot_id: int | None) -> list[HistoryEntry]:
        """The recent conversation in this channel or thread, oldest first, bounded by count and characters."""
        limit = self.settings.history_messages
        if limit <= 0:
            return []
        entries: list[HistoryEntry] = []
        try:
            async for past in message.channel.history(limit=limit, before=message):
                if past.type not in _REPLYABLE_TYPES:
                    continue
                text = readable_text(past, bot_id)
                if not text:
                    continue
                entries.append(
                    HistoryEntry(past.author.id, past.author.display_name, text, is_self=past.author.id == bot_id)
                )
        except discord.HTTPException as error:
            # Without "Read Message History" in this channel the bot still answers, just without the context.
            log.warning("could not read the history of channel %s (HTTP %s)", message.channel.id, error.status)
            return []
        entries.reverse()
        return bounded_history(entries, max_messages=limit, max_chars=self.settings.history_chars)

    async def answer(
        self, message: discord.Message, history: list[HistoryEntry], current: HistoryEntry
    ) -> tuple[str, MemoryPrompt]:
        """Ask the chat model, with the speaking user's memory (and only theirs) in the system prompt; returns the
        answer and the memory it was given."""
        used = await self.memory.memory_prompt(
            current.author_id, recent_texts(history, current), user_label=current.author_name
        ) if self.bot.resources.switches.in_channel(message.channel).recall else MemoryPrompt()
        base = self.settings.system_prompt
        if message.guild is not None:
            base = f"{base}\n\n{PUBLIC_CHANNEL_NOTE}"
        system = system_message(base, now=datetime.now(UTC), speaker_name=current.author_name, memory_block=used.text)
        return await self.chat.reply(chat_messages(system=system, history=history, current=current)), used

    async def _send(self, message: discord.Message, chunks: list[str]) -> list[discord.Message]:
        """Reply with mentions disabled; the first chunk as a reply, the rest as follow-ups. Empty on failure."""
        try:
            sent = [await message.reply(chunks[0], mention_author=False, allowed_mentions=NO_MENTIONS)]
            for chunk in chunks[1:]:
                sent.append(await message.channel.send(chunk, allowed_mentions=NO_MENTIONS))
        except discord.HTTPException:
            log.exception("could not send a reply in channel %s", message.channel.id)
            return []
        return sent

    async def learn(
        self, message: discord.Message, text: str, sent: discord.Message, answer: str, bot_id: int | None
    ) -> None:
        """Hand this user's turn and the bot's reply to the memory engine (skipped while they paused learning)."""
        user_turn = as_incoming(message, text, is_self=False)
        bot_turn = IncomingMessage(
            message_id=sent.id,
            author_id=bot_id or 0,
            author_name="assistant",
            content=answer,
            created_at=sent.created_at,
            is_self=True,
            reply_to_id=message.id,
        )
        turns = filter_messages([user_turn, bot_turn], bot_id=bot_id, max_chars=self.settings.memory_max_turn_chars)
        await self.memory.remember(ConversationKey(message.channel.id, message.author.id), turns)


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(ChatCog(bot))
