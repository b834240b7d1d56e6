"""How `/memory` shows a memory on Discord: pages of embeds within every Discord limit, the whole memory as
Markdown when it does not fit, the privacy modes in words, and what one reply used.

Every item names the place it was learned in; what the place the command was used in cannot use is marked, and
closed facts appear as history with their dates. The same memory, search and labels always give the same pages (the
page buttons rebuild them after a restart). Everything the bot says here is in the reader's language (the labels'
`speech`), with dates and numbers written their way; what memory holds stays in the words the user used.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import discord

from bot.i18n.speech import ENGLISH_SPEECH, N_, Speech
from bot.memory.doors import PrivacyRecord, RecalledItem
from bot.memory.models import DM_PLACE, ORIGIN_IMPORTED, Fact, MemoryFile
from bot.memory.pipeline.render import SECTION_LABELS

FACTS_PER_PAGE = 10
SHOW_FOOTER = N_("Correct one with /memory edit, remove one with /memory forget fact:<id>, or all with /memory forget.")
EMBED_DESCRIPTION_LIMIT = 4096
EMBED_FIELD_LIMIT = 1024
EMBED_TOTAL_LIMIT = 6000
EMBED_COLOUR = discord.Colour.blurple()
EMBED_FIELDS_MAX = 25
EMBED_FIELD_NAME_LIMIT = 256
FACT_LINE_LIMIT = 1500  # one fact's line; a page's description holds several
NOT_HERE = N_("not used here")
HISTORY_NOTE = N_("no longer true, never used in replies")


@dataclass(frozen=True, slots=True)
class PlaceLabels:
    """How `/memory show` names places, and which items the place it was asked in may use; `speech` is the
    reader's language."""

    here: str
    name: Callable[[str], str]
    fact_usable: Callable[[Fact], bool]
    summaries_usable: Callable[[str], bool]
    speech: Speech = ENGLISH_SPEECH

    def fact_where(self, fact: Fact) -> str:
        where = self.speech.tr("shared everywhere") if fact.shared else self.name(fact.place)
        return where if self.fact_usable(fact) else self._not_here(where)

    def summary_where(self, place: str) -> str:
        where = self.name(place)
        return where if self.summaries_usable(place) else self._not_here(where)

    def _not_here(self, where: str) -> str:
        return self.speech.tr("{place}, not used here", place=where)

    def hidden(self, memory: MemoryFile) -> int:
        """How many facts (history aside: it is used nowhere) and places' summaries the place asked in does not
        use."""
        learned_in = [place for place in memory.summary_places() if not memory.place_memory(place).is_empty()]
        return sum(not self.fact_usable(fact) for fact in memory.live_facts()) + sum(
            not self.summaries_usable(place) for place in learned_in
        )


IN_DMS = PlaceLabels(
    here=ENGLISH_SPEECH.tr("DMs"),
    name=lambda key: ENGLISH_SPEECH.tr("DMs") if key == DM_PLACE else key,
    fact_usable=lambda fact: True,
    summaries_usable=lambda key: True,
)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def section_label(name: str, speech: Speech) -> str:
    """One of the six summaries by its label, in the reader's language ("Work", "工作")."""
    return speech.tr(SECTION_LABELS.get(name, name))


def owner_note(fact: Fact, speech: Speech = ENGLISH_SPEECH) -> str:
    """Whose words a fact is: "yours" (written or imported), or the model's category and confidence."""
    if fact.origin == ORIGIN_IMPORTED:
        return speech.tr("yours, imported")
    if fact.user_owned:
        return speech.tr("yours")
    return speech.tr("{category}, {confidence}", category=speech.tr(fact.category),
                     confidence=speech.percent(round(fact.confidence, 2)))


def fact_line(fact: Fact, *, where: str = "", speech: Speech = ENGLISH_SPEECH) -> str:
    line = f"`{fact.id}` {discord.utils.escape_markdown(fact.content)} · *{owner_note(fact, speech)}*"
    return f"{line} · {discord.utils.escape_markdown(where)}" if where else line


def history_note(fact: Fact, memory: MemoryFile, speech: Speech = ENGLISH_SPEECH) -> str:
    """How a closed fact ended: since when it no longer holds, and the fact that replaced it (while it is kept)."""
    parts = [speech.tr("said {date}", date=speech.date(fact.said_at[:10]))] if fact.said_at and fact.validUntil else []
    ended = fact.validUntil if fact.validUntil and not fact.supersededBy else fact.validTo[:10]
    parts += [speech.tr("until {date}", date=speech.date(ended))] if ended else []
    if fact.supersededBy and memory.fact_by_id(fact.supersededBy) is not None:
        parts.append(speech.tr("replaced by {fact_id}", fact_id=fact.supersededBy))
    return speech.listing(parts) or speech.tr("no longer holds")


def history_line(fact: Fact, memory: MemoryFile, labels: PlaceLabels) -> str:
    """A closed fact: history, used in no reply, forgotten like any fact."""
    speech = labels.speech
    where = speech.tr("shared everywhere") if fact.shared else labels.name(fact.place)
    line = f"`{fact.id}` ~~{discord.utils.escape_markdown(fact.content)}~~ · *{history_note(fact, memory, speech)}*"
    return f"{line} · {discord.utils.escape_markdown(where)}"


def _summaries(memory: MemoryFile, labels: PlaceLabels) -> list[tuple[str, str]]:
    """(heading, text) of every non-empty summary of every place, each heading naming its place."""
    found = []
    for place in memory.summary_places():
        for name, section in memory.sections_of(place):
            if section.summary:
                heading = f"{section_label(name, labels.speech)} · {labels.summary_where(place)}"
                found.append((clip(heading, EMBED_FIELD_NAME_LIMIT), section.summary))
    return found


def memory_as_markdown(memory: MemoryFile, labels: PlaceLabels = IN_DMS) -> str:
    """The whole memory as a Markdown document, for when it does not fit in an embed."""
    speech = labels.speech
    lines = ["# " + speech.tr("What I remember about you"), "", speech.tr("Asked in: {place}", place=labels.here), ""]
    for heading, summary in _summaries(memory, labels):
        lines += [f"## {heading}", summary, ""]
    live = memory.live_facts()
    if live:
        lines += ["## " + speech.tr("Facts"), ""]
        lines += [f"- `{f.id}` {f.content} ({owner_note(f, speech)}; {labels.fact_where(f)})" for f in live]
    history = [fact for fact in memory.facts if fact.closed]
    if history:
        lines += ["", "## " + speech.tr("History"), "", speech.tr(HISTORY_NOTE), ""]
        lines += [f"- `{f.id}` {f.content} ({history_note(f, memory, speech)}; {labels.name(f.place)})"
                  for f in history]
    return "\n".join(lines) + "\n"


def _matches(fact: Fact, needle: str) -> bool:
    return needle in fact.id.casefold() or needle in fact.content.casefold() or needle in fact.category.casefold()


@dataclass
class _Page:
    fields: list[tuple[str, str]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    size: int = 0  # characters of fields and description so far
    used: int = 0  # characters of the description so far
    has_facts: bool = False  # holds lines of facts that hold now (history alone goes without the facts' heading)


@dataclass
class _Layout:
    """What goes on the pages of one `/memory show`, worked out before they are filled."""

    title: str
    footer: str
    speech: Speech  # the reader's language (the pages' numbers)
    pointer: str  # says that shortened summaries are in the attached file
    heading: str  # above the facts: their count, or that the search matched nothing
    summaries: list[tuple[str, str]]
    lines: list[str]  # the facts that hold now, then the history
    live: int  # how many of `lines` are facts that hold now
    no_facts: bool  # nothing matched, or there are no facts at all
    clipped: bool

    @property
    def room(self) -> int:
        """Characters a page may hold in fields and description: an embed's total less its fixed texts."""
        fixed = len(self.title) + len(self.page(9999, 9999) + self.footer) + len(self.pointer) + len(self.heading)
        return EMBED_TOTAL_LIMIT - fixed - 16

    def page(self, number: int, total: int) -> str:
        return self.speech.tr("Page {number}/{total} · ", number=number, total=total)

    @property
    def description_room(self) -> int:
        return EMBED_DESCRIPTION_LIMIT - len(self.pointer) - len(self.heading) - 16


def _layout(memory: MemoryFile, search: str | None, labels: PlaceLabels) -> _Layout:
    speech = labels.speech
    footer = speech.tr(SHOW_FOOTER)
    if labels.hidden(memory):
        footer = speech.tr(
            "Items marked “{not_here}” were learned elsewhere and are not used in {place}; /memory share "
            "fact:<id> makes a fact usable everywhere.", not_here=speech.tr(NOT_HERE), place=clip(labels.here, 120),
        ) + " " + footer
    needle = (search or "").strip().casefold()
    matching = [fact for fact in memory.facts if _matches(fact, needle)] if needle else list(memory.facts)
    facts = [fact for fact in matching if not fact.closed]
    history = [fact for fact in matching if fact.closed]
    summaries = [] if needle else _summaries(memory, labels)
    clipped = any(len(text) > EMBED_FIELD_LIMIT for _, text in summaries)
    lines = [fact_line(f, where=labels.fact_where(f), speech=speech) for f in facts]
    if history:
        count = speech.number(len(history))
        lines += [speech.tr("**History** ({count}) · {note}", count=count, note=speech.tr(HISTORY_NOTE))]
        lines += [history_line(fact, memory, labels) for fact in history]
    heading = speech.tr("**Facts** ({count})", count=speech.number(len(facts))) + "\n" if facts else ""
    title = speech.tr("What I remember about you")
    if needle:
        title = speech.tr("Facts matching “{search}”", search=clip(search or "", 60))
    pointer = speech.tr("Some summaries are shortened here: the full text is in the attached file.") + "\n"
    return _Layout(
        title=title,
        footer=footer,
        speech=speech,
        pointer=pointer if clipped else "",
        heading=speech.tr("No fact matches that search.") if needle and not matching else heading,
        summaries=summaries,
        lines=[clip(line, FACT_LINE_LIMIT) for line in lines],
        live=len(facts),
        no_facts=not matching,
        clipped=clipped,
    )


def _fill(layout: _Layout) -> list[_Page]:
    """The summaries as fields, then the fact lines, a few per page, each page within the embed limits."""
    pages = [_Page()]
    for name, text in layout.summaries:
        value = clip(text, EMBED_FIELD_LIMIT)
        cost = len(name) + len(value)
        page = pages[-1]
        if page.fields and (len(page.fields) >= EMBED_FIELDS_MAX or page.size + cost > layout.room):
            pages.append(page := _Page())
        page.fields.append((name, value))
        page.size += cost
    for index, line in enumerate(layout.lines):
        cost = len(line) + 1
        page = pages[-1]
        full = (
            len(page.lines) >= FACTS_PER_PAGE or page.size + cost > layout.room
            or page.used + cost > layout.description_room
        )
        if full and (page.lines or page.fields):
            pages.append(page := _Page())
        page.lines.append(line)
        page.has_facts = page.has_facts or index < layout.live
        page.size += cost
        page.used += cost
    return pages


def _embed(layout: _Layout, page: _Page, number: int, total: int) -> discord.Embed:
    embed = discord.Embed(title=layout.title, colour=EMBED_COLOUR)
    for name, value in page.fields:
        embed.add_field(name=name, value=value, inline=False)
    parts = [layout.pointer] if number == 1 and layout.pointer else []
    if page.lines or (number == 1 and layout.no_facts and layout.heading):
        parts.append((layout.heading if page.has_facts or not page.lines else "") + "\n".join(page.lines))
    embed.description = "".join(parts).strip() or None
    prefix = layout.page(number, total) if total > 1 else ""
    embed.set_footer(text=prefix + layout.footer)
    return embed


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
    layout = _layout(memory, search, labels)
    pages = _fill(layout)
    embeds = [_embed(layout, page, number, len(pages)) for number, page in enumerate(pages, start=1)]
    attachment = None
    if layout.clipped:
        data = memory_as_markdown(memory, labels).encode("utf-8")
        attachment = discord.File(io.BytesIO(data), filename="memory.md")
    return embeds, attachment


def _until(moment: datetime) -> str:
    """A time every reader sees in their own time zone: "<date and time> (<in 40 minutes>)"."""
    return f"{discord.utils.format_dt(moment, 'f')} ({discord.utils.format_dt(moment, 'R')})"


def describe_modes(modes: PrivacyRecord, speech: Speech = ENGLISH_SPEECH) -> str:
    """One line per mode that is on, for replies and `/memory show`; empty when none is."""
    lines = []
    if modes.paused:
        lines.append(speech.tr("Learning is paused until you use /memory resume."))
    elif modes.incognito_until is not None:
        until = _until(modes.incognito_until)
        lines.append(speech.tr("Incognito: I'm not learning from you until {until}.", until=until))
    if modes.fresh_until_resume:
        lines.append(speech.tr("Fresh: my replies don't use your memory until you use /memory resume."))
    elif modes.fresh_until is not None:
        until = _until(modes.fresh_until)
        lines.append(speech.tr("Fresh: my replies don't use your memory until {until}.", until=until))
    return "\n".join(lines)


def recalled_embed(
    items: list[RecalledItem], name: Callable[[str], str] = IN_DMS.name, speech: Speech = ENGLISH_SPEECH
) -> discord.Embed:
    """What one reply's prompt carried, with today's text; within Discord's embed limits. Summaries learned
    elsewhere than in DMs say where (`name` puts a place in words)."""
    lines = []
    summaries = [item for item in items if item.kind == "section"]
    facts = [item for item in items if item.kind == "fact"]
    forgotten = "*" + speech.tr("since forgotten") + "*"
    if summaries:
        lines.append("**" + speech.tr("Summaries") + "**")
        for item in summaries:
            text = forgotten if item.text is None else discord.utils.escape_markdown(clip(item.text, 300))
            where = "" if item.place == DM_PLACE else f" ({name(item.place)})"
            lines.append(f"- {section_label(item.key, speech)}{where}: {text}")
    if facts:
        lines.append("**" + speech.tr("Facts") + "**")
        for item in facts:
            text = forgotten if item.text is None else discord.utils.escape_markdown(clip(item.text, 200))
            lines.append(f"- `{item.key}` {text}")
    embed = discord.Embed(title=speech.tr("What I remembered for that reply"), colour=EMBED_COLOUR)
    embed.description = clip("\n".join(lines), EMBED_DESCRIPTION_LIMIT)
    embed.set_footer(text=speech.tr("Shown as they are now. Correct with /memory edit, remove with /memory forget."))
    return embed
