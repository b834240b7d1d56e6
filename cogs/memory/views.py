"""The buttons of `/memory`: page through `/memory show`, confirm `/memory forget`.

Everything a button needs is in its custom id (owner, expiry, the page it turns to, the search), so a press after a
restart works: the pages are rebuilt from the memory as it is now, and a late press hears that it expired. Only the
person who asked can press them; a failed press answers with an apology and takes the buttons away. Labels and
answers are in the language of the person pressing (a label is set when the message is sent, in the language of the
person who asked; both are the same person).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord.ext import commands

from bot.client.interactions import SafeView, apologise_in_place, failure_summary
from bot.i18n.readers import LocaleBook, interaction_speech
from bot.i18n.speech import ENGLISH_SPEECH, N_, Speech
from bot.memory.doors import ForgetEverything
from cogs.memory.rendering import PlaceLabels, build_show_pages

if TYPE_CHECKING:
    from bot.memory.service import MemoryService

log = logging.getLogger(__name__)

CONFIRM_TIMEOUT_SECONDS = 60.0
PAGES_TIMEOUT_SECONDS = 300.0
SEARCH_KEPT = 40  # characters of a search kept (the page buttons carry it in their custom id)
OWNER_ONLY = N_("Only the person who asked can press this.")
CONFIRM_EXPIRED = N_("This confirmation expired: use /memory forget again.")
PAGES_EXPIRED = N_("These buttons expired: use /memory show again.")


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


def _forget_language(interaction: discord.Interaction, user_id: int) -> None:
    """Forgetting everything drops the language the bot noted for the user too (`LocaleBook`)."""
    locales = getattr(interaction.client, "locales", None)
    if isinstance(locales, LocaleBook):
        locales.forget(user_id)


def _expires_in(seconds: float) -> int:
    return int(time.time() + seconds)


def _expired(expires: int) -> bool:
    return time.time() >= expires


async def _owner_only(interaction: discord.Interaction, owner_id: int) -> bool:
    if interaction.user.id != owner_id:
        await interaction.response.send_message(interaction_speech(interaction).tr(OWNER_ONLY), ephemeral=True)
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
        source: PageSource | None = None, speech: Speech = ENGLISH_SPEECH,
    ) -> None:
        label = speech.tr("Previous") if step == "p" else speech.tr("Next")
        super().__init__(discord.ui.Button(
            label=label, style=discord.ButtonStyle.secondary, disabled=disabled,
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
        speech = interaction_speech(interaction)
        if _expired(self.expires):
            await interaction.response.edit_message(content=speech.tr(PAGES_EXPIRED), view=None)
            return
        source: PageSource = self.source or _memory_cog(interaction)
        memory = await source.memory.user(self.owner_id).show()
        pages, _ = build_show_pages(memory, search=self.search or None, labels=source.place_labels(interaction))
        index = max(0, min(len(pages) - 1, self.page))
        view = ShowPagesView(
            self.owner_id, pages, source=source, search=self.search, index=index, expires=self.expires, speech=speech,
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
        speech: Speech = ENGLISH_SPEECH,
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
        self.previous = PageButton(
            "p", owner_id, expires, max(0, index - 1), kept, disabled=index == 0, source=source, speech=speech
        )
        self.next = PageButton(
            "n", owner_id, expires, min(last, index + 1), kept, disabled=index >= last, source=source, speech=speech
        )
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

    def __init__(
        self, action: str, owner_id: int, expires: int, *, memory: MemoryService | None = None,
        speech: Speech = ENGLISH_SPEECH,
    ) -> None:
        yes = action == "yes"
        super().__init__(discord.ui.Button(
            label=speech.tr("Forget everything") if yes else speech.tr("Cancel"),
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
        speech = interaction_speech(interaction)
        if _expired(self.expires):
            self._settle("expired")
            await interaction.response.edit_message(content=speech.tr(CONFIRM_EXPIRED), view=None)
            return
        if self.action == "no":
            self._settle("cancelled")
            cancelled = speech.tr("Cancelled: your memory is unchanged.")
            await interaction.response.edit_message(content=cancelled, view=None)
            return
        self._settle("forgotten")
        await interaction.response.defer(ephemeral=True)
        memory = self.memory or _memory_cog(interaction).memory
        forgotten = await memory.user(self.owner_id).forget(ForgetEverything())
        _forget_language(interaction, self.owner_id)
        text = speech.tr("Done: I've forgotten everything I knew about you.")
        if not forgotten.any_memory:
            text = speech.tr("Done: I had nothing stored.")
        await interaction.edit_original_response(content=text, view=None)


class ConfirmForgetView(SafeView):
    """Two buttons only the caller can press (`ForgetButton`); they expire after a minute and keep working across a
    restart of the bot. While the process runs, the message says it expired when the minute is up."""

    def __init__(
        self, owner_id: int, memory: MemoryService | None = None, *, timeout: float = CONFIRM_TIMEOUT_SECONDS,
        speech: Speech = ENGLISH_SPEECH,
    ) -> None:
        super().__init__(timeout=timeout)
        self.owner_id = owner_id
        self.origin: discord.Interaction | None = None
        self.outcome: str | None = None
        self.speech = speech
        expires = _expires_in(timeout)
        self.confirm = ForgetButton("yes", owner_id, expires, memory=memory, speech=speech)
        self.cancel = ForgetButton("no", owner_id, expires, memory=memory, speech=speech)
        self.add_item(self.confirm)
        self.add_item(self.cancel)

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return await _owner_only(interaction, self.owner_id)

    async def on_timeout(self) -> None:
        self.outcome = "expired"
        if self.origin is not None:
            try:
                expired = self.speech.tr("This confirmation expired.")
                await self.origin.edit_original_response(content=expired, view=None)
            except discord.HTTPException:
                log.debug("could not edit an expired confirmation", exc_info=True)
