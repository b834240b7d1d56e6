"""Memory places: what is learned in private stays private.

Every turn, fact and summary has a place, a plain value the chat layer computes from Discord and the engine only
compares:
- `dm`: a direct conversation with the bot;
- `guild:<id>`: a server channel or thread that the server's @everyone role can read;
- `channel:<id>`: a channel or thread of a server that @everyone cannot read (a staff channel, a private thread);
- `nsfw:<id>`: an age-restricted channel or thread: `nsfw:<server id>` for those @everyone can read, `nsfw:<channel
  id>` for a restricted one. What is learned there is used only there, never in DMs, public or other channels, even
  when shared (Discord asks that what is outside age-restricted spaces suit minors); it reads the server's public
  memory as a restricted channel does. It is a place of its own whatever `MEMORY_SCOPE` says.

What a reply or an extraction in place P may use:
- in a DM: everything the user has, from every place;
- in a public channel of server G: what was learned in G's public channels, plus what the user shared;
- in a restricted channel C of server G: what was learned in C, plus G's public memory, plus what the user shared.
A restricted place needs its server to know which public memory it may add, so `Place` carries the guild id; the
stored item keeps only its place key (`"channel:<id>"`), which is all a reader needs to decide.

`MEMORY_SCOPE=user` reads every place as a DM (one memory everywhere) and keeps one set of summaries (the DM
place's); facts still record where they were learned, so switching back to `place` is safe.

This module is pure: no discord, no I/O.
"""

from __future__ import annotations

from typing import Literal

from bot.memory.models import DM_PLACE, NSFW_KIND, Fact, MemoryFile, Place, Section, new_fact_id

Scope = Literal["place", "user"]


def reader(place: Place, scope: Scope) -> Place:
    """The place whose view a reply or extraction gets: itself, or a DM (everything) with one memory per user."""
    return place if scope == "place" or place.kind == NSFW_KIND else Place.dm()


def summary_place(place: Place, scope: Scope) -> str:
    """The key of the summaries an extraction in `place` rewrites."""
    return reader(place, scope).key


def may_use(place: Place, item_place: str, *, shared: bool = False) -> bool:
    """True when a reply or extraction in `place` may use an item learned in `item_place`."""
    if is_age_restricted(item_place):  # only where it was learned, shared or not
        return item_place == place.key
    if shared or place.kind == "dm" or item_place == place.key:
        return True
    return item_place == place.guild_key  # a restricted channel also sees its server's public memory


def is_age_restricted(place_key: str) -> bool:
    """The key names an age-restricted place."""
    return place_key.startswith(f"{NSFW_KIND}:")


def usable_facts(memory: MemoryFile, place: Place) -> list[Fact]:
    """The facts a reply or an extraction in `place` may use: those of the places it may read, and only those that
    hold now. A closed fact (replaced by a later statement) is history: it reaches no prompt of either kind."""
    return [fact for fact in memory.facts if not fact.closed and may_use(place, fact.place, shared=fact.shared)]


def usable_summaries(memory: MemoryFile, place: Place) -> list[tuple[str, str, Section]]:
    """(place key, section name, section) of every non-empty summary `place` may use; its own place first."""
    own = place.key
    keys = sorted(memory.summary_places(), key=lambda key: (key != own, key != DM_PLACE, key))
    found = []
    for key in keys:
        if not may_use(place, key):
            continue
        found += [(key, name, section) for name, section in memory.sections_of(key) if section.summary.strip()]
    return found


# --- extraction: a view of what the place may use, applied, then merged back ---------------------------


def extraction_view(memory: MemoryFile, place: Place, scope: Scope) -> MemoryFile:
    """A private copy holding what an extraction in `place` may see and change: the summaries it rewrites (its
    own place's) and the facts it may use. The extractor is shown this and nothing else, and the apply step
    works on it, so it can only touch what the place may use."""
    view = MemoryFile()
    own = memory.place_memory(summary_place(place, scope))
    view.user = own.user.model_copy(deep=True)
    view.history = own.history.model_copy(deep=True)
    view.facts = [fact.model_copy(deep=True) for fact in usable_facts(memory, reader(place, scope))]
    return view


def merge_extraction_view(memory: MemoryFile, view: MemoryFile, place: Place, scope: Scope) -> list[Fact]:
    """Write an applied `extraction_view` back: the place's summaries, the usable facts as changed (confirmed,
    merged, removed, closed), and the new facts, which record `place` as where they were learned. Facts the place
    may not use, and history, are untouched and keep their position. Returns the new facts."""
    key = summary_place(place, scope)
    summaries = memory.place_memory(key)  # keeps fields of a newer version this one does not know
    summaries.user, summaries.history = view.user, view.history
    memory.set_place_memory(key, summaries)
    seen = {fact.id for fact in usable_facts(memory, reader(place, scope))}
    updated = {fact.id: fact for fact in view.facts}
    kept: list[Fact] = []
    for fact in memory.facts:
        if fact.id not in seen:
            kept.append(fact)
        elif fact.id in updated:
            kept.append(updated[fact.id])
    taken = {fact.id for fact in kept}
    added = [fact for fact in view.facts if fact.id not in seen]
    renamed: dict[str, str] = {}
    for fact in added:
        fact.place = place.key
        fact.shared = False
        original = fact.id
        while fact.id in taken:  # a new id that happens to equal a hidden fact's
            fact.id = new_fact_id()
        if fact.id != original:
            renamed[original] = fact.id
        taken.add(fact.id)
    for fact in view.facts:  # a fact the batch closed names its replacement by the replacement's final id
        if fact.supersededBy in renamed:
            fact.supersededBy = renamed[fact.supersededBy]
    memory.facts = kept + added
    return added


