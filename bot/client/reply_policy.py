"""The policy a reply follows, shared by the chat cog and the reply actions: which persona prompt and chat model
apply where a message was written (`/bot-settings`), who may talk to the bot (`DM_POLICY`, a server's allowed
roles) and today's token budgets (`USER_DAILY_TOKENS`, `GUILD_DAILY_TOKENS`), and the count of what a reply spent.

The admins' choices live in the memory engine's storage and are read through its doors (`community`, `budgets`);
this module words the answers. Lookup for a reply: thread, its channel, the
channel's category, the server, then the operator's environment (`SYSTEM_PROMPT`, `CHAT_MODEL`). A model an admin
chose that the operator has since removed from `ALLOWED_CHAT_MODELS` is skipped, not used.

DM_POLICY=members lets a user DM the bot when they are a member of a server the bot is in that has not switched
DMs off (`/bot-settings dms`) and whose allowed roles, if any, they have. Without the privileged members intent the
bot cannot list a user's servers, so it asks Discord for the user's membership server by server: first the servers
where it saw them talk to it, then the others, at most `MEMBER_LOOKUPS` requests per check; the verdict is kept
for a few minutes. A process only knows the servers of its own shards.

A refusal's notice is said in its reader's language: the server's in a server, the user's last known in a DM
(`MemoryBot.locales`), or the one given (an interaction's).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord
from openai.types.chat import ChatCompletionMessageParam

from bot.chat.concurrency import NoticeThrottle
from bot.chat.model import CallTokens
from bot.i18n.speech import N_, Speech
from bot.memory.doors import Chosen, Exceeded, estimate_tokens
from bot.memory.models import Location
from bot.storage.lru import LruCache

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot

log = logging.getLogger(__name__)

NOTICE_EVERY_SECONDS = 600.0  # one notice per user per ten minutes: a refused user must not make the bot spam
MEMBER_LOOKUPS = 10
MEMBER_VERDICT_SECONDS = 600.0
NOT_MEMBER_VERDICT_SECONDS = 60.0  # short: someone who just joined a server should not wait long
SEEN_USERS = 10_000

DMS_OFF = N_("I don't answer direct messages here. Talk to me in a server instead.")
DMS_MEMBERS_ONLY = N_(
    "I only answer direct messages from members of a server I'm in. Talk to me in a server we share instead."
)


def may_talk(member: object, roles: frozenset[int]) -> bool:
    """Whether a server member may talk to the bot there: no allowed roles set, one of them, or Manage Server
    (so admins never lock themselves out)."""
    if not roles:
        return True
    permissions = getattr(member, "guild_permissions", None)
    if getattr(permissions, "manage_guild", False) is True:
        return True
    return any(getattr(role, "id", None) in roles for role in getattr(member, "roles", None) or ())


def roles_text(roles: frozenset[int]) -> str:
    return ", ".join(f"<@&{role}>" for role in sorted(roles))


def budget_notice(exceeded: Exceeded, speech: Speech) -> str:
    """One short line: whose budget is used up and when it resets (a Discord timestamp, shown in local time)."""
    reset = f"{discord.utils.format_dt(exceeded.resets_at, 'R')} ({discord.utils.format_dt(exceeded.resets_at, 't')})"
    limit = speech.number(exceeded.limit)
    if exceeded.scope == "user":
        return speech.tr(
            "You've used today's token budget with me ({limit} tokens). It resets {reset}.", limit=limit, reset=reset
        )
    return speech.tr(
        "This server has used today's token budget with me ({limit} tokens). It resets {reset}.", limit=limit,
        reset=reset,
    )


@dataclass(frozen=True, slots=True)
class ReplySetup:
    """The persona prompt and chat model of one reply, and where each was set (None: the environment)."""

    system_prompt: str
    model: str
    prompt_from: Chosen | None = None
    model_from: Chosen | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why the bot does not call the model for a message: the notice to send (None: stay quiet this time) and
    whether the user's words may still be learned (past a budget: yes; not allowed to talk to the bot: no)."""

    notice: str | None
    learn: bool


def _texts(messages: Sequence[ChatCompletionMessageParam]) -> list[str]:
    texts: list[str] = []
    for message in messages:
        content: Any = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return texts


class ReplyPolicy:
    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.settings = bot.resources.settings
        self.memory = bot.resources.memory
        self.notices = NoticeThrottle(NOTICE_EVERY_SECONDS)
        self._verdicts: LruCache[int, tuple[bool, float]] = LruCache(SEEN_USERS)
        self._seen_in: LruCache[int, list[int]] = LruCache(SEEN_USERS)

    # --- persona and model ---------------------------------------------------------------------------------

    def reply_setup(self, where: Location) -> ReplySetup:
        """The persona and model set where the message was written, or the operator's environment."""
        choice = self.memory.community.at(where)
        prompt, model = choice.prompt, choice.model(self.settings.chat_models)
        return ReplySetup(
            system_prompt=prompt.value if prompt else self.settings.system_prompt,
            model=model.value if model else self.settings.chat_model,
            prompt_from=prompt,
            model_from=model,
        )

    # --- who may talk to the bot, and budgets ---------------------------------------------------------------

    async def refusal(
        self, message: discord.Message, *, always_tell: bool = False, speech: Speech | None = None
    ) -> Refusal | None:
        """Why the model is not called for this message (it was addressed to the bot), or None. The notice is
        given once per user in a while, or every time with `always_tell` (an interaction must be answered); it is
        in `speech`'s language, else in the language of the place the message was written."""
        author = message.author
        speech = speech or self.bot.locales.speech_for(message)
        if message.guild is None:
            if not await self.dm_allowed(author.id):
                off = self.settings.effective_dm_policy == "off"
                text = speech.tr(DMS_OFF) if off else speech.tr(DMS_MEMBERS_ONLY)
                return self._refuse(author.id, text, learn=False, tell=always_tell)
        else:
            self._saw(author.id, message.guild.id)
            roles = self.memory.community.allowed_roles(message.guild.id)
            if not may_talk(author, roles):
                text = speech.tr(
                    "In this server, only members with these roles can talk to me: {roles}.", roles=roles_text(roles)
                )
                return self._refuse(author.id, text, learn=False, tell=always_tell)
        exceeded = self.memory.budgets.exceeded(author.id, message.guild.id if message.guild else None)
        if exceeded is None:
            return None
        log.info("budget: no reply to user %s, the %s's daily budget is used up", author.id, exceeded.scope)
        return self._refuse(author.id, budget_notice(exceeded, speech), learn=True, tell=always_tell)

    def _refuse(self, user_id: int, text: str, *, learn: bool, tell: bool) -> Refusal:
        return Refusal(text if tell or self.notices.should_tell(user_id) else None, learn)

    def _saw(self, user_id: int, guild_id: int) -> None:
        guilds = self._seen_in.peek(user_id) or []
        self._seen_in.put(user_id, [guild_id, *(g for g in guilds if g != guild_id)][:8])

    async def dm_allowed(self, user_id: int) -> bool:
        policy = self.settings.effective_dm_policy
        if policy != "members":
            return policy == "all"
        now = time.monotonic()
        cached = self._verdicts.peek(user_id)
        if cached is not None and cached[1] > now:
            return cached[0]
        allowed = await self._member_somewhere(user_id)
        lasts = MEMBER_VERDICT_SECONDS if allowed else NOT_MEMBER_VERDICT_SECONDS
        self._verdicts.put(user_id, (allowed, now + lasts))
        log.info("DM policy: user %s %s", user_id, "admitted as a member" if allowed else "is no member; refused")
        return allowed

    async def _member_somewhere(self, user_id: int) -> bool:
        guilds = {guild.id: guild for guild in self.bot.guilds}
        order = [g for g in self._seen_in.peek(user_id) or [] if g in guilds]
        order += [g for g in guilds if g not in order]
        lookups = 0
        for guild_id in order:
            if not self.memory.community.dms_allowed(guild_id):
                continue
            guild = guilds[guild_id]
            member: object = guild.get_member(user_id)
            if member is None:
                if lookups >= MEMBER_LOOKUPS:
                    break
                lookups += 1
                try:
                    member = await guild.fetch_member(user_id)
                except discord.HTTPException:
                    continue
            if may_talk(member, self.memory.community.allowed_roles(guild_id)):
                return True
        return False

    # --- counting ------------------------------------------------------------------------------------------

    def count_reply(
        self,
        user_id: int,
        guild_id: int | None,
        messages: Sequence[ChatCompletionMessageParam],
        answer: str,
        tokens: CallTokens | None,
    ) -> None:
        """Count one reply's tokens for the budgets: as the endpoint reported them, or estimated when it did not."""
        if tokens is not None and tokens.total > 0:
            self.memory.budgets.count("chat", user_id=user_id, guild_id=guild_id, tokens=tokens.total)
            return
        estimate = estimate_tokens(_texts(messages), messages=len(messages)) + estimate_tokens([answer])
        self.memory.budgets.count("chat", user_id=user_id, guild_id=guild_id, tokens=estimate, estimated=True)
