"""`/memory show | remember | edit | share | unshare | forget | export | ...`: each user sees and controls their own
memory, privately. `show` names the place each item was learned in and marks what the place it was asked in cannot
use; `remember` stores a fact in the place where it is typed (or everywhere).

Every response is ephemeral (only the caller sees it) and only ever reads or changes the caller's own memory:
no command takes a user id. Slow work is deferred first so the 3-second interaction deadline is never missed.
"""

from __future__ import annotations

import io
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands
from discord.ext import commands

from bot.client.interactions import SafeView, apologise_in_place, failure_summary
from bot.client.locations import place_name, place_of
from bot.memory.models import DM_PLACE, SECTION_NAMES, Fact, MemoryFile
from bot.memory.pipeline.render import SECTION_LABELS
from bot.memory.service import (
    MAX_FORGET_MINUTES,
    MAX_MODE_MINUTES,
    MAX_USER_FACT_CHARS,
    InvalidRequest,
    PrivacyRecord,
    RecalledItem,
)

if TYPE_CHECKING:
    from bot.client.memory_bot import MemoryBot
    from bot.memory.service import MemoryService

log = logging.getLogger(__name__)

CONFIRM_TIMEOUT_SECONDS = 60.0
PAGES_TIMEOUT_SECONDS = 300.0
FACTS_PER_PAGE = 10
DEFAULT_MODE_MINUTES = 60
SHOW_FOOTER = "Correct one with /memory edit, remove one with /memory forget fact:<id>, or all with /memory forget."
EMBED_DESCRIPTION_LIMIT = 4096
EMBED_FIELD_LIMIT = 1024
EMBED_TOTAL_LIMIT = 6000
AUTOCOMPLETE_LIMIT = 25
EMBED_COLOUR = discord.Colour.blurple()
EMBED_FIELDS_MAX = 25
EMBED_FIELD_NAME_LIMIT = 256
FACT_LINE_LIMIT = 1500  # one fact's line; a page's description holds several
SEARCH_KEPT = 40  # characters of a search kept (the page buttons carry it in their custom id)
OWNER_ONLY = "Only the person who asked can press this."
CONFIRM_EXPIRED = "This confirmation expired: use /memory forget again."
PAGES_EXPIRED = "These buttons expired: use /memory show again."
EVERYWHERE = app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=True)
NOT_HERE = "not used here"
HISTORY_NOTE = "no longer true, never used in replies"


@dataclass(frozen=True, slots=True)
class PlaceLabels:
    """How `/memory show` names places, and which items the place it was asked in may use."""

    here: str
    name: Callable[[str], str]
    fact_usable: Callable[[Fact], bool]
    summaries_usable: Callable[[str], bool]

    def fact_where(self, fact: Fact) -> str:
        where = "shared everywhere" if fact.shared else self.name(fact.place)
        return where if self.fact_usable(fact) else f"{where}, {NOT_HERE}"

    def summary_where(self, place: str) -> str:
        where = self.name(place)
        return where if self.summaries_usable(place) else f"{where}, {NOT_HERE}"

    def hidden(self, memory: MemoryFile) -> int:
        """How many facts (history aside: it is used nowhere) and places' summaries the place asked in does not
        use."""
        learned_in = [place for place in memory.summary_places() if not memory.place_memory(place).is_empty()]
        return sum(not self.fact_usable(fact) for fact in memory.live_facts()) + sum(
            not self.summaries_usable(place) for place in learned_in
        )


IN_DMS = PlaceLabels(
    here="DMs",
    name=lambda key: "DMs" if key == DM_PLACE else key,
    fact_usable=lambda fact: True,
    summaries_usable=lambda key: True,
)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fact_line(
    fact_id: str, content: str, category: str, confidence: float, *, user_owned: bool = False, where: str = ""
) -> str:
    note = "yours" if user_owned else f"{category}, {confidence:.0%}"
    line = f"`{fact_id}` {discord.utils.escape_markdown(content)} · *{note}*"
    return f"{line} · {discord.utils.escape_markdown(where)}" if where else line


def history_note(fact: Fact, memory: MemoryFile) -> str:
    """How a closed fact ended: since when it no longer holds, and the fact that replaced it (while it is kept)."""
    parts = [f"until {fact.validTo[:10]}"] if fact.validTo else []
    if fact.supersededBy and memory.fact_by_id(fact.supersededBy) is not None:
        parts.append(f"replaced by {fact.supersededBy}")
    return ", ".join(parts) or "no longer holds"


def history_line(fact: Fact, memory: MemoryFile, labels: PlaceLabels) -> str:
    """A closed fact: history, used in no reply, forgotten like any fact."""
    where = "shared everywhere" if fact.shared else labels.name(fact.place)
    line = f"`{fact.id}` ~~{discord.utils.escape_markdown(fact.content)}~~ · *{history_note(fact, memory)}*"
    return f"{line} · {discord.utils.escape_markdown(where)}"


def _summaries(memory: MemoryFile, labels: PlaceLabels) -> list[tuple[str, str]]:
    """(heading, text) of every non-empty summary of every place, each heading naming its place."""
    found = []
    for place in memory.summary_places():
        for name, section in memory.sections_of(place):
            if section.summary:
                heading = f"{SECTION_LABELS[name]} · {labels.summary_where(place)}"
                found.append((_clip(heading, EMBED_FIELD_NAME_LIMIT), section.summary))
    return found


def memory_as_markdown(memory: MemoryFile, labels: PlaceLabels = IN_DMS) -> str:
    """The whole memory as a Markdown document, for when it does not fit in an embed."""
    lines = ["# What I remember about you", "", f"Asked in: {labels.here}", ""]
    for heading, summary in _summaries(memory, labels):
        lines += [f"## {heading}", summary, ""]
    live = memory.live_facts()
    if live:
        lines += ["## Facts", ""]
        lines += [f"- `{f.id}` {f.content} ({'yours' if f.user_owned else f'{f.category}, {f.confidence:.0%}'}; "
                  f"{labels.fact_where(f)})" for f in live]
    history = [fact for fact in memory.facts if fact.closed]
    if history:
        lines += ["", "## History", "", HISTORY_NOTE, ""]
        lines += [f"- `{f.id}` {f.content} ({history_note(f, memory)}; {labels.name(f.place)})" for f in history]
    return "\n".join(lines) + "\n"


def _matches(fact: Fact, needle: str) -> bool:
    return needle in fact.id.casefold() or needle in fact.content.casefold() or needle in fact.category.casefold()


def _fact_lines(facts: list[Fact], labels: PlaceLabels) -> list[str]:
    return [
        fact_line(f.id, f.content, f.category, f.confidence, user_owned=f.user_owned, where=labels.fact_where(f))
        for f in facts
    ]


@dataclass
class _Page:
    fields: list[tuple[str, str]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    size: int = 0  # characters of fields and description so far
    has_facts: bool = False  # holds lines of facts that hold now (history alone goes without the facts' heading)


def build_show_pages(
    memory: MemoryFile, *, search: str | None = None, labels: PlaceLabels = IN_DMS
) -> tuple[list[discord.Embed], discord.File | None]:
    """Embeds within every Discord limit (6,000 characters in all, 25 fields, 1,024 per field value, 4,096 per
    description), one per page: the summaries (unless searching) as fields, then the facts, a few per page; as many
    pages as it takes, however many places and however long their names.

    `search` keeps the facts whose id, text or category contain it (case-insensitive). A summary longer than a field
    holds is shortened, and the whole memory is attached as a file as well. Every item names its place; what the
    place asked in does not use is marked, and the footer says why. The same memory, search and labels always give
    the same pages (the page buttons rebuild them).
    """
    footer = SHOW_FOOTER
    if labels.hidden(memory):
        footer = (
            f"Items marked \"{NOT_HERE}\" were learned elsewhere and are not used in {_clip(labels.here, 120)}; "
            "/memory share fact:<id> makes a fact usable everywhere. " + footer
        )
    needle = (search or "").strip().casefold()
    matching = [fact for fact in memory.facts if _matches(fact, needle)] if needle else list(memory.facts)
    facts = [fact for fact in matching if not fact.closed]
    history = [fact for fact in matching if fact.closed]
    title = "What I remember about you" if not needle else f"Facts matching “{_clip(search or '', 60)}”"
    summaries = [] if needle else _summaries(memory, labels)
    clipped = any(len(text) > EMBED_FIELD_LIMIT for _, text in summaries)
    pointer = "Some summaries are shortened here: the full text is in the attached file.\n" if clipped else ""
    heading = f"**Facts** ({len(facts)})\n" if facts else ""
    if needle and not matching:
        heading = "No fact matches that search."
    room = EMBED_TOTAL_LIMIT - len(title) - len(f"Page 9999/9999 · {footer}") - len(pointer) - len(heading) - 16
    description_room = EMBED_DESCRIPTION_LIMIT - len(pointer) - len(heading) - 16
    pages = [_Page()]
    for name, text in summaries:
        value = _clip(text, EMBED_FIELD_LIMIT)
        cost = len(name) + len(value)
        page = pages[-1]
        if page.fields and (len(page.fields) >= EMBED_FIELDS_MAX or page.size + cost > room):
            pages.append(page := _Page())
        page.fields.append((name, value))
        page.size += cost
    used = 0  # description characters on the current page
    lines = _fact_lines(facts, labels)
    if history:
        lines += [f"**History** ({len(history)}) · {HISTORY_NOTE}"]
        lines += [history_line(fact, memory, labels) for fact in history]
    for index, line in enumerate(_clip(line, FACT_LINE_LIMIT) for line in lines):
        cost = len(line) + 1
        page = pages[-1]
        full = len(page.lines) >= FACTS_PER_PAGE or page.size + cost > room or used + cost > description_room
        if full and (page.lines or page.fields):
            pages.append(page := _Page())
            used = 0
        page.lines.append(line)
        page.has_facts = page.has_facts or index < len(facts)
        page.size += cost
        used += cost
    embeds: list[discord.Embed] = []
    for number, page in enumerate(pages, start=1):
        embed = discord.Embed(title=title, colour=EMBED_COLOUR)
        for name, value in page.fields:
            embed.add_field(name=name, value=value, inline=False)
        parts = [pointer] if number == 1 and pointer else []
        if page.lines or (number == 1 and not matching and heading):
            parts.append((heading if page.has_facts or not page.lines else "") + "\n".join(page.lines))
        embed.description = "".join(parts).strip() or None
        prefix = f"Page {number}/{len(pages)} · " if len(pages) > 1 else ""
        embed.set_footer(text=prefix + footer)
        embeds.append(embed)
    attachment = None
    if clipped:
        data = memory_as_markdown(memory, labels).encode("utf-8")
        attachment = discord.File(io.BytesIO(data), filename="memory.md")
    return embeds, attachment


class PageSource(Protocol):
    """Where page buttons rebuild `/memory show` from: the memory service and the place labels of a press."""

    memory: MemoryService

    def place_labels(self, interaction: discord.Interaction) -> PlaceLabels: ...


def _memory_cog(interaction: discord.Interaction) -> Any:
    """The loaded memory cog of the bot the press reached (a press after a restart has nothing else to go on)."""
    client = interaction.client
    cog = client.get_cog("MemoryCog") if isinstance(client, commands.bot.BotBase) else None
    if cog is None:
        raise RuntimeError("the memory commands are not loaded")
    return cog


def _expires_in(seconds: float) -> int:
    return int(time.time() + seconds)


def _expired(expires: int) -> bool:
    return time.time() >= expires


async def _owner_only(interaction: discord.Interaction, owner_id: int) -> bool:
    if interaction.user.id != owner_id:
        await interaction.response.send_message(OWNER_ONLY, ephemeral=True)
        return False
    return True


async def _answering_failures(
    interaction: discord.Interaction,
    what: str,
    work: Callable[[], Awaitable[None]],
    view: discord.ui.View | discord.ui.LayoutView | None,
) -> None:
    """Run a button's work; a failure is logged in one line and answered with an apology, the buttons taken away
    (discord.py would only log it and leave the user at "This interaction failed")."""
    try:
        await work()
    except Exception as error:  # noqa: BLE001 -- every failure must answer the press
        log.error("button %s failed for user %s: %s", what, interaction.user.id, failure_summary(error))
        if view is not None:
            view.stop()
        await apologise_in_place(interaction)


class PageButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=re.compile(
        r"memory:page:(?P<step>[pn]):(?P<owner>[0-9]{1,20}):(?P<expires>[0-9]{1,12}):(?P<page>[0-9]{1,4}):"
        r"(?P<search>.*)", re.DOTALL,
    ),
):
    """Previous or next page of `/memory show`. Everything it needs is in its custom id (owner, expiry, the page it
    turns to, the search), so it works after a restart: the pages are rebuilt from the memory as it is now."""

    def __init__(
        self, step: str, owner_id: int, expires: int, page: int, search: str, *, disabled: bool = False,
        source: PageSource | None = None,
    ) -> None:
        super().__init__(discord.ui.Button(
            label="Previous" if step == "p" else "Next", style=discord.ButtonStyle.secondary, disabled=disabled,
            custom_id=f"memory:page:{step}:{owner_id}:{expires}:{page}:{search[:SEARCH_KEPT]}",
        ))
        self.step, self.owner_id, self.expires, self.page, self.search = step, owner_id, expires, page, search
        self.source = source

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> PageButton:
        return cls(match["step"], int(match["owner"]), int(match["expires"]), int(match["page"]), match["search"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return await _owner_only(interaction, self.owner_id)

    async def callback(self, interaction: discord.Interaction) -> Any:
        await _answering_failures(interaction, self.item.label or "page", lambda: self._turn(interaction), self.view)

    async def _turn(self, interaction: discord.Interaction) -> None:
        if _expired(self.expires):
            await interaction.response.edit_message(content=PAGES_EXPIRED, view=None)
            return
        source: PageSource = self.source or _memory_cog(interaction)
        memory = await source.memory.show(self.owner_id)
        pages, _ = build_show_pages(memory, search=self.search or None, labels=source.place_labels(interaction))
        index = max(0, min(len(pages) - 1, self.page))
        view = ShowPagesView(
            self.owner_id, pages, source=source, search=self.search, index=index, expires=self.expires,
        ) if len(pages) > 1 else None
        await interaction.response.edit_message(embed=pages[index], view=view)


class ShowPagesView(SafeView):
    """Previous / next buttons for `/memory show`: only the caller can press them, they expire (and say so when
    pressed late), and they keep working across a restart of the bot (`PageButton`). While the process runs, the
    buttons are taken away when they expire."""

    def __init__(
        self,
        owner_id: int,
        pages: list[discord.Embed],
        *,
        source: PageSource | None = None,
        search: str | None = None,
        index: int = 0,
        timeout: float = PAGES_TIMEOUT_SECONDS,
        expires: int | None = None,
    ) -> None:
        expires = expires if expires is not None else _expires_in(timeout)
        super().__init__(timeout=max(1.0, expires - time.time()))
        self.owner_id = owner_id
        self.pages = pages
        self.index = index
        self.expires = expires
        self.origin: discord.Interaction | None = None
        kept = (search or "")[:SEARCH_KEPT]
        last = len(pages) - 1
        self.previous = PageButton("p", owner_id, expires, max(0, index - 1), kept, disabled=index == 0, source=source)
        self.next = PageButton("n", owner_id, expires, min(last, index + 1), kept, disabled=index >= last,
                               source=source)
        self.add_item(self.previous)
        self.add_item(self.next)

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return await _owner_only(interaction, self.owner_id)

    async def on_timeout(self) -> None:
        if self.origin is not None:
            try:
                await self.origin.edit_original_response(view=None)
            except discord.HTTPException:
                log.debug("could not remove the buttons of an expired page view", exc_info=True)


class ForgetButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=r"memory:forget:(?P<action>yes|no):(?P<owner>[0-9]{1,20}):(?P<expires>[0-9]{1,12})",
):
    """"Forget everything" or "Cancel" of `/memory forget`. Owner and expiry are in the custom id, so a press after
    a restart works, a late press hears that it expired, and only the owner can press."""

    def __init__(self, action: str, owner_id: int, expires: int, *, memory: MemoryService | None = None) -> None:
        yes = action == "yes"
        super().__init__(discord.ui.Button(
            label="Forget everything" if yes else "Cancel",
            style=discord.ButtonStyle.danger if yes else discord.ButtonStyle.secondary,
            custom_id=f"memory:forget:{action}:{owner_id}:{expires}",
        ))
        self.action, self.owner_id, self.expires, self.memory = action, owner_id, expires, memory

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ForgetButton:
        return cls(match["action"], int(match["owner"]), int(match["expires"]))

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return await _owner_only(interaction, self.owner_id)

    async def callback(self, interaction: discord.Interaction) -> Any:
        await _answering_failures(
            interaction, self.item.label or "forget", lambda: self._press(interaction), self.view
        )

    def _settle(self, outcome: str) -> None:
        view = self.view
        if isinstance(view, ConfirmForgetView):
            view.outcome = outcome
        if view is not None:
            view.stop()

    async def _press(self, interaction: discord.Interaction) -> None:
        if _expired(self.expires):
            self._settle("expired")
            await interaction.response.edit_message(content=CONFIRM_EXPIRED, view=None)
            return
        if self.action == "no":
            self._settle("cancelled")
            await interaction.response.edit_message(content="Cancelled: your memory is unchanged.", view=None)
            return
        self._settle("forgotten")
        await interaction.response.defer(ephemeral=True)
        memory = self.memory or _memory_cog(interaction).memory
        existed = await memory.forget_all(self.owner_id)
        text = "Done: I've forgotten everything I knew about you." if existed else "Done: I had nothing stored."
        await interaction.edit_original_response(content=text, view=None)


class ConfirmForgetView(SafeView):
    """Two buttons only the caller can press (`ForgetButton`); they expire after a minute and keep working across a
    restart of the bot. While the process runs, the message says it expired when the minute is up."""

    def __init__(
        self, owner_id: int, memory: MemoryService | None = None, *, timeout: float = CONFIRM_TIMEOUT_SECONDS
    ) -> None:
        super().__init__(timeout=timeout)
        self.owner_id = owner_id
        self.origin: discord.Interaction | None = None
        self.outcome: str | None = None
        expires = _expires_in(timeout)
        self.confirm = ForgetButton("yes", owner_id, expires, memory=memory)
        self.cancel = ForgetButton("no", owner_id, expires, memory=memory)
        self.add_item(self.confirm)
        self.add_item(self.cancel)

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return await _owner_only(interaction, self.owner_id)

    async def on_timeout(self) -> None:
        self.outcome = "expired"
        if self.origin is not None:
            try:
                await self.origin.edit_original_response(content="This confirmation expired.", view=None)
            except discord.HTTPException:
                log.debug("could not edit an expired confirmation", exc_info=True)


def _until(moment: datetime) -> str:
    """A time every reader sees in their own time zone: "<date and time> (<in 40 minutes>)"."""
    return f"{discord.utils.format_dt(moment, 'f')} ({discord.utils.format_dt(moment, 'R')})"


def describe_modes(modes: PrivacyRecord) -> str:
    """One line per mode that is on, for replies and `/memory show`; empty when none is."""
    lines = []
    if modes.paused:
        lines.append("Learning is paused until you use /memory resume.")
    elif modes.incognito_until is not None:
        lines.append(f"Incognito: I'm not learning from you until {_until(modes.incognito_until)}.")
    if modes.fresh_until_resume:
        lines.append("Fresh: my replies don't use your memory until you use /memory resume.")
    elif modes.fresh_until is not None:
        lines.append(f"Fresh: my replies don't use your memory until {_until(modes.fresh_until)}.")
    return "\n".join(lines)


def recalled_embed(items: list[RecalledItem], name: Callable[[str], str] = IN_DMS.name) -> discord.Embed:
    """What one reply's prompt carried, with today's text; within Discord's embed limits. Summaries learned
    elsewhere than in DMs say where (`name` puts a place in words)."""
    lines = []
    summaries = [item for item in items if item.kind == "section"]
    facts = [item for item in items if item.kind == "fact"]
    if summaries:
        lines.append("**Summaries**")
        for item in summaries:
            text = "*since forgotten*" if item.text is None else discord.utils.escape_markdown(_clip(item.text, 300))
            where = "" if item.place == DM_PLACE else f" ({name(item.place)})"
            lines.append(f"- {SECTION_LABELS.get(item.key, item.key)}{where}: {text}")
    if facts:
        lines.append("**Facts**")
        for item in facts:
            text = "*since forgotten*" if item.text is None else discord.utils.escape_markdown(_clip(item.text, 200))
            lines.append(f"- `{item.key}` {text}")
    embed = discord.Embed(title="What I remembered for that reply", colour=EMBED_COLOUR)
    embed.description = _clip("\n".join(lines), EMBED_DESCRIPTION_LIMIT)
    embed.set_footer(text="Shown as they are now. Correct with /memory edit, remove with /memory forget.")
    return embed


SECTION_CHOICES = [app_commands.Choice(name=name, value=name) for name in SECTION_NAMES]


class MemoryCog(commands.Cog):
    memory_group = app_commands.Group(
        name="memory",
        description="See and control what I remember about you",
        allowed_contexts=EVERYWHERE,
    )

    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot
        self.memory = bot.resources.memory
        self.inspect_menu = app_commands.ContextMenu(
            name="What did you remember?", callback=self.what_did_you_remember, allowed_contexts=EVERYWHERE
        )

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.inspect_menu)
        self.bot.add_dynamic_items(ForgetButton, PageButton)  # buttons sent before a restart still answer

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.inspect_menu.name, type=self.inspect_menu.type)
        self.bot.remove_dynamic_items(ForgetButton, PageButton)

    async def _answer(self, interaction: discord.Interaction, text: str, **kwargs: Any) -> None:
        """A private follow-up; an empty `text` sends no content at all (an embed alone), not an empty string."""
        if text:
            kwargs["content"] = text
        await interaction.followup.send(ephemeral=True, **kwargs)

    # --- seeing --------------------------------------------------------------------------------------------

    @memory_group.command(name="show", description="Show what I remember about you (only you can see it)")
    @app_commands.describe(search="Only show facts containing this text (its first 40 characters)")
    async def show(self, interaction: discord.Interaction, search: str | None = None) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        user_id = interaction.user.id
        memory = await self.memory.show(user_id)
        modes = describe_modes(self.memory.privacy_of(user_id))
        if memory.is_empty():
            note = modes or "Chat with me and I'll pick things up as we go."
            await self._answer(interaction, f"I don't remember anything about you yet. {note}")
            return
        search = search[:SEARCH_KEPT] if search else None  # what the page buttons can carry
        pages, attachment = build_show_pages(memory, search=search, labels=self.place_labels(interaction))
        extra: dict[str, Any] = {"embed": pages[0]}
        if attachment is not None:
            extra["file"] = attachment
        view = None
        if len(pages) > 1:
            view = ShowPagesView(user_id, pages, source=self, search=search)
            view.origin = interaction
            extra["view"] = view
        await self._answer(interaction, modes, **extra)

    # --- adding and correcting -----------------------------------------------------------------------------

    @memory_group.command(name="remember", description="Tell me something to remember about you, in your words")
    @app_commands.describe(
        text="What to remember (up to 400 characters)",
        everywhere="Use it in every server and DM, not only where you say it",
    )
    async def remember(
        self,
        interaction: discord.Interaction,
        text: app_commands.Range[str, 1, MAX_USER_FACT_CHARS],
        everywhere: bool = False,
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            here = place_of(interaction.channel, interaction.guild)
            fact = await self.memory.add_fact(interaction.user.id, text, place=here, everywhere=everywhere)
        except InvalidRequest as error:
            await self._answer(interaction, str(error))
            return
        where = "everywhere" if fact.shared else f"in {place_name(fact.place, self.bot)}"
        await self._answer(
            interaction, f"Remembered as `{fact.id}` (used {where}): {discord.utils.escape_markdown(fact.content)}"
        )

    @memory_group.command(name="edit", description="Correct one of the facts I remember about you")
    @app_commands.describe(fact="The fact to correct", text="What it should say (up to 400 characters)")
    async def edit(
        self,
        interaction: discord.Interaction,
        fact: str,
        text: app_commands.Range[str, 1, MAX_USER_FACT_CHARS],
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        fact_id = fact.strip().split(" ", 1)[0]
        try:
            updated = await self.memory.edit_fact(interaction.user.id, fact_id, text)
        except InvalidRequest as error:
            await self._answer(interaction, str(error))
            return
        await self._answer(
            interaction, f"Corrected `{updated.id}`: {discord.utils.escape_markdown(updated.content)}"
        )

    # --- forgetting ----------------------------------------------------------------------------------------

    @memory_group.command(name="forget", description="Forget a fact, a summary, the last minutes, or everything")
    @app_commands.describe(
        fact="The id of one fact to forget",
        section="One of the six summaries to clear (everywhere)",
        minutes="Forget what I learned in the last n minutes (1 to 1440)",
    )
    @app_commands.choices(section=SECTION_CHOICES)
    async def forget(
        self,
        interaction: discord.Interaction,
        fact: str | None = None,
        section: str | None = None,
        minutes: app_commands.Range[int, 1, MAX_FORGET_MINUTES] | None = None,
    ) -> None:
        user_id = interaction.user.id
        given = [option for option in (fact, section, minutes) if option is not None]
        if not given:
            view = ConfirmForgetView(user_id, self.memory)
            view.origin = interaction
            await interaction.response.send_message(
                "Forget everything I know about you? This cannot be undone.", view=view, ephemeral=True
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        if len(given) > 1:
            await self._answer(interaction, "Pick one of fact, section or minutes (or none to forget everything).")
            return
        try:
            text = await self._forget_one(user_id, fact, section, minutes)
        except InvalidRequest as error:
            text = str(error)
        await self._answer(interaction, text)

    async def _forget_one(self, user_id: int, fact: str | None, section: str | None, minutes: int | None) -> str:
        if fact is not None:
            fact_id = fact.strip().split(" ", 1)[0]
            removed = await self.memory.forget_fact(user_id, fact_id)
            return f"Forgotten: `{fact_id}`." if removed else f"You have no fact with the id `{fact_id}`."
        if section is not None:
            cleared = await self.memory.forget_section(user_id, section)
            label = SECTION_LABELS.get(section, section)
            return f"Cleared the “{label}” summary." if cleared else f"The “{label}” summary was already empty."
        assert minutes is not None
        report = await self.memory.forget_since(user_id, minutes)
        if not (report.facts or report.sections or report.turns):
            return f"I learned nothing from you in the last {minutes} minutes, so there was nothing to forget."
        return (
            f"Forgot the last {minutes} minutes: {report.facts} facts removed, {report.sections} summaries put "
            f"back as they were, {report.turns} messages I hadn't learned from yet dropped."
        )

    async def _autocomplete_facts(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """The caller's own facts, matching what they typed in the id or the text."""
        memory = await self.memory.show(interaction.user.id)
        needle = current.strip().casefold()
        choices = []
        for item in reversed(memory.facts):  # newest first
            if needle and needle not in item.id and needle not in item.content.casefold():
                continue
            label = f"{item.id} · " + ("(history) " if item.closed else "") + item.content
            choices.append(app_commands.Choice(name=_clip(label, 100), value=item.id))
            if len(choices) == AUTOCOMPLETE_LIMIT:
                break
        return choices

    @forget.autocomplete("fact")
    async def forget_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._autocomplete_facts(interaction, current)

    @edit.autocomplete("fact")
    async def edit_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._autocomplete_facts(interaction, current)

    # --- places -------------------------------------------------------------------------------------------

    def place_labels(self, interaction: discord.Interaction) -> PlaceLabels:
        """Names from the bot's cache, and what the place the command was used in may use."""
        here = place_of(interaction.channel, interaction.guild)
        if here.kind == "dm":
            here_name = "DMs"
        elif here.kind == "guild":
            here_name = place_name(here.key, self.bot)
        else:
            name = getattr(interaction.channel, "name", None)
            here_name = f"#{name}" if name else place_name(here.key, self.bot)
        return PlaceLabels(
            here=here_name,
            name=lambda key: place_name(key, self.bot),
            fact_usable=lambda fact: self.memory.can_use(here, fact),
            summaries_usable=lambda key: self.memory.can_use_summaries_of(here, key),
        )

    @memory_group.command(name="share", description="Let me use one fact everywhere: DMs and every server")
    @app_commands.describe(fact="The id of the fact to share everywhere")
    async def share(self, interaction: discord.Interaction, fact: str) -> None:
        await self._set_shared(interaction, fact, True)

    @share.autocomplete("fact")
    async def share_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._autocomplete_facts(interaction, current)

    @memory_group.command(name="unshare", description="Use one fact again only where I learned it")
    @app_commands.describe(fact="The id of the fact to keep to where it was learned")
    async def unshare(self, interaction: discord.Interaction, fact: str) -> None:
        await self._set_shared(interaction, fact, False)

    @unshare.autocomplete("fact")
    async def unshare_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self._autocomplete_facts(interaction, current)

    async def _set_shared(self, interaction: discord.Interaction, fact: str, shared: bool) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        fact_id = fact.strip().split(" ", 1)[0]
        changed = await self.memory.set_shared(interaction.user.id, fact_id, shared)
        if changed is None:
            text = f"You have no fact with the id `{fact_id}`."
        elif shared:
            text = (
                f"Shared: I can now use `{fact_id}` everywhere, in DMs and in every server."
                if changed else f"`{fact_id}` was already shared everywhere."
            )
        else:
            memory = await self.memory.show(interaction.user.id)
            item = memory.fact_by_id(fact_id)
            where = place_name(item.place, self.bot) if item is not None else "where I learned it"
            text = (
                f"Unshared: I use `{fact_id}` again only where I learned it ({where})."
                if changed else f"`{fact_id}` was not shared; I use it only where I learned it ({where})."
            )
        await self._answer(interaction, text)

    @memory_group.command(name="export", description="Download everything I remember about you as JSON")
    async def export(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        data = await self.memory.export(interaction.user.id)
        attachment = discord.File(io.BytesIO(data), filename=f"memory-{interaction.user.id}.json")
        await interaction.followup.send("Here is your memory file.", file=attachment, ephemeral=True)

    # --- privacy modes -------------------------------------------------------------------------------------

    @memory_group.command(name="incognito", description="Don't learn anything from me for a while")
    @app_commands.describe(minutes="For how long (default 60; 0 = until /memory resume)")
    async def incognito(
        self, interaction: discord.Interaction, minutes: app_commands.Range[int, 0, MAX_MODE_MINUTES] = 60
    ) -> None:
        await self._set_mode(interaction, self.memory.set_incognito, minutes)

    @memory_group.command(name="fresh", description="Reply without using anything you remember about me, for a while")
    @app_commands.describe(minutes="For how long (default 60; 0 = until /memory resume)")
    async def fresh(
        self, interaction: discord.Interaction, minutes: app_commands.Range[int, 0, MAX_MODE_MINUTES] = 60
    ) -> None:
        await self._set_mode(interaction, self.memory.set_fresh, minutes)

    async def _set_mode(
        self, interaction: discord.Interaction, setter: Callable[[int, int], Awaitable[PrivacyRecord]], minutes: int
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            modes = await setter(interaction.user.id, minutes)
        except InvalidRequest as error:
            await self._answer(interaction, str(error))
            return
        note = " Nothing is deleted." if setter == self.memory.set_fresh else ""
        await self._answer(interaction, describe_modes(modes) + note)

    @memory_group.command(
        name="pause", description="Stop learning about you until /memory resume (I still use what I know)"
    )
    async def pause(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        changed = await self.memory.set_paused(interaction.user.id, True)
        await self._answer(
            interaction,
            "Paused: I won't learn anything new about you until you use /memory resume."
            if changed else "Learning was already paused.",
        )

    @memory_group.command(name="resume", description="Learn about you again and use your memory in replies")
    async def resume(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        changed = await self.memory.resume(interaction.user.id)
        await self._answer(
            interaction,
            "Resumed: I'll remember what you tell me again, and my replies use what I remember."
            if changed else "Nothing to resume: learning was on and my replies already use your memory.",
        )

    # --- what did you remember? ----------------------------------------------------------------------------

    async def what_did_you_remember(self, interaction: discord.Interaction, message: discord.Message) -> None:
        """On one of the bot's replies to the caller: the summaries and facts its prompt carried, as they are now."""
        await interaction.response.defer(ephemeral=True, thinking=True)
        me = self.bot.user
        if me is None or message.author.id != me.id:
            await self._answer(interaction, "That isn't one of my replies: use this on a message I sent.")
            return
        record = await self.memory.reply_record(message.id)
        if record is None:
            await self._answer(
                interaction,
                "I have no record of what that message used: it isn't a chat reply, or it is older than the "
                "replies I keep track of.",
            )
            return
        try:
            items = await self.memory.recalled(interaction.user.id, record)
        except InvalidRequest as error:
            await self._answer(interaction, str(error))
            return
        if not items:
            await self._answer(interaction, "Nothing: that reply used nothing I remember about you.")
            return
        await self._answer(interaction, "", embed=recalled_embed(items, lambda key: place_name(key, self.bot)))


async def setup(bot: MemoryBot) -> None:
    await bot.add_cog(MemoryCog(bot))
