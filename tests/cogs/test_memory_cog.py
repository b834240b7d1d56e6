"""`/memory show | forget | export | pause | resume`, invoked through the real command callbacks and view buttons of
the loaded cog, with spec'd interactions: every answer ephemeral, slow work deferred first, Discord's embed limits
kept, only the caller's memory read or changed, and a wipe that nothing pending can undo."""

from __future__ import annotations

import json
from typing import Any

import discord
import pytest
from discord import app_commands
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memory.models import Fact, MemoryFile
from cogs.memory.rendering import build_show_pages, fact_line
from tests.cogs.conftest import ALICE_ID, BOB_ID, MakeHarness
from tests.helpers import (
    Harness,
    calls,
    check_discord_limits,
    extraction_input,
    last_text,
    make_guild,
    make_interaction,
    make_user,
    press,
    seed_memory,
)
from tests.support.engine import parts
from tests.support.llm_server import extraction

ALICE = make_user(ALICE_ID, "Alice")
BOB = make_user(BOB_ID, "Bob")


def assert_ephemeral(interaction: Any) -> None:
    """Every message the interaction produced is visible to the caller only."""
    made = [c for c in calls(interaction) if c.name in ("send_message", "defer", "followup.send")]
    assert made, "the interaction was never answered"
    for call in made:
        assert call.kwargs.get("ephemeral") is True, call


def assert_deferred_first(interaction: Any) -> None:
    names = [c.name for c in calls(interaction)]
    assert names[0] == "defer", names
    assert "followup.send" in names


async def run(h: Harness, command: str, user: Any, **options: Any) -> Any:
    """Invoke `/memory <command>` as discord.py does: the command's callback bound to the cog."""
    interaction = make_interaction(user, guild=make_guild() if options.pop("in_guild", False) else None)
    cog: Any = h.memory_cog
    await getattr(cog, command).callback(cog, interaction, **options)
    return interaction


def sent_kwargs(interaction: Any) -> dict[str, Any]:
    return calls(interaction)[-1].kwargs


def file_bytes(attachment: discord.File) -> bytes:
    attachment.reset()
    data = attachment.fp.read()
    assert isinstance(data, bytes)
    return data


# --- /memory show -----------------------------------------------------------------------------------------


async def test_show_with_an_empty_memory_says_so_kindly(harness: Harness) -> None:
    interaction = await run(harness, "show", ALICE)
    assert_deferred_first(interaction)
    assert_ephemeral(interaction)
    assert "don't remember anything about you yet" in last_text(interaction)
    assert "embed" not in sent_kwargs(interaction)


async def test_show_lists_summaries_and_facts_with_ids_in_a_real_embed(harness: Harness) -> None:
    alice = await seed_memory(
        harness.memory, ALICE_ID, ["Grows tomatoes on a balcony", "Prefers short answers"],
        workContext="Runs a small bakery", topOfMind="Opening a second shop",
    )
    await seed_memory(harness.memory, BOB_ID, ["Collects vintage synthesizers"])
    interaction = await run(harness, "show", ALICE, in_guild=True)
    assert_deferred_first(interaction)
    assert_ephemeral(interaction)
    kwargs = sent_kwargs(interaction)
    embed = kwargs["embed"]
    assert isinstance(embed, discord.Embed)
    assert "file" not in kwargs
    for fact in alice.facts:
        assert fact.id in embed.description and fact.content in embed.description  # type: ignore[operator]
    fields = {field.name: field.value for field in embed.fields}
    # Learned in DMs; asked in a server channel, where DM memory is not used: each item says so.
    assert fields == {"Work · DMs, not used here": "Runs a small bakery",
                      "Top of mind · DMs, not used here": "Opening a second shop"}
    assert "synthesizers" not in str(embed.to_dict())


async def test_show_with_100_long_facts_pages_them_within_embed_limits(harness: Harness) -> None:
    contents = [f"Fact number {n}: " + "a detailed and rather long statement about the user " * 4 for n in range(100)]
    alice = await seed_memory(harness.memory, ALICE_ID, contents, personalContext="Speaks Dutch and English")
    interaction = await run(harness, "show", ALICE)
    assert_deferred_first(interaction)
    assert_ephemeral(interaction)
    kwargs = sent_kwargs(interaction)
    view = kwargs["view"]
    assert type(view).__name__ == "ShowPagesView" and kwargs["embed"] is view.pages[0]
    assert view.timeout is not None and 0 < view.timeout <= 900  # the buttons expire
    shown = ""
    for page in view.pages:
        check_discord_limits(embed=page)
        shown += page.description or ""
    assert all(fact.id in shown for fact in alice.facts)
    assert view.pages[0].fields[0].value == "Speaks Dutch and English"
    assert view.pages[0].footer.text is not None and view.pages[0].footer.text.startswith("Page 1/")


async def test_show_with_very_long_summaries_stays_within_embed_limits(harness: Harness) -> None:
    sections = ["workContext", "personalContext", "topOfMind", "recentMonths", "earlierContext",
                "longTermBackground"]
    summaries = {name: f"{name} begins. " + "so much to say " * 150 + f"{name} ends." for name in sections}
    await seed_memory(harness.memory, ALICE_ID, ["Likes tea"], **summaries)
    interaction = await run(harness, "show", ALICE)
    kwargs = sent_kwargs(interaction)
    pages = kwargs["view"].pages
    for embed in pages:
        check_discord_limits(embed=embed)  # what Discord itself would refuse with a 400
    assert kwargs["embed"] is pages[0]
    assert sum(len(embed.fields) for embed in pages) == 6  # every summary, shortened to a field and paged
    full = file_bytes(kwargs["file"]).decode()
    assert all(f"{name} ends." in full for name in sections)


@pytest.mark.parametrize("target", [4080, 4090, 4096])
def test_facts_that_fill_the_description_to_the_brim_still_fit(target: int) -> None:
    """The fact lines alone just fit in 4,096 characters: the heading above them must not push them over."""
    facts: list[Fact] = []
    while True:
        facts.append(Fact(id=f"fact_{len(facts):08x}", content="remembered detail " * 5, category="context"))
        lines = [fact_line(f) for f in facts]
        if len("\n".join(lines)) > target - 200:
            break
    short = len("\n".join(lines))
    facts.append(Fact(id=f"fact_{len(facts):08x}", content="x" * 10, category="context"))
    pad = target - short - len("\n" + fact_line(facts[-1]))
    facts[-1].content = "x" * (10 + pad)
    lines = [fact_line(f) for f in facts]
    assert len("\n".join(lines)) == target
    pages, attachment = build_show_pages(MemoryFile(facts=facts))
    for page in pages:
        check_discord_limits(embed=page)
    assert attachment is None
    assert all(any(f"`{f.id}`" in (page.description or "") for page in pages) for f in facts)


_SECTIONS = ("workContext", "personalContext", "topOfMind", "recentMonths", "earlierContext", "longTermBackground")


def _sized(low: int, high: int) -> st.SearchStrategy[str]:
    """Text near the sizes that matter (long ones are made of words, as summaries are), or any short text."""
    words = st.integers(low, high).map(lambda n: ("so much to say " * (n // 15 + 1))[:n].strip() or "x")
    return st.one_of(words, st.text(min_size=max(low, 1), max_size=40))


@settings(deadline=None, max_examples=150)
@given(
    facts=st.lists(_sized(1, 400), max_size=120),
    summaries=st.lists(st.one_of(st.just(""), _sized(0, 3000)), min_size=6, max_size=6),
    search=st.one_of(st.none(), st.sampled_from(["so much", "x", "zzz-nothing"])),
)
def test_any_memory_is_shown_within_discords_limits_and_nothing_is_hidden(
    facts: list[str], summaries: list[str], search: str | None
) -> None:
    memory = MemoryFile(facts=[Fact(id=f"fact_{n:08x}", content=text) for n, text in enumerate(facts)])
    for name, text in zip(_SECTIONS, summaries, strict=True):
        section = getattr(memory.user, name, None) or getattr(memory.history, name)
        section.summary = text
    pages, attachment = build_show_pages(memory, search=search)
    for page in pages:
        check_discord_limits(embed=page)
    described = "".join(page.description or "" for page in pages)
    wanted = [f for f in memory.facts
              if not search or any(search.casefold() in text.casefold() for text in (f.content, f.id, f.category))]
    assert all(f"`{fact.id}`" in described for fact in wanted)
    assert described.count("`fact_") == len(wanted)  # and no other fact
    if search:
        assert not pages[0].fields and attachment is None
    elif attachment is None:
        assert all(field.value == summary for field, summary in zip(pages[0].fields, filter(None, summaries),
                                                                    strict=True))
    else:
        full = file_bytes(attachment).decode()
        assert all(fact.id in full for fact in memory.facts)
        assert all(summary in full for summary in summaries)


# --- /memory forget fact:<id> -----------------------------------------------------------------------------


async def test_forget_one_fact_removes_it_from_disk(harness: Harness) -> None:
    alice = await seed_memory(harness.memory, ALICE_ID, ["Lives in Lisbon", "Has two cats"])
    bob = await seed_memory(harness.memory, BOB_ID, ["Lives in Oslo"])
    gone, kept = alice.facts
    interaction = await run(harness, "forget", ALICE, fact=gone.id)
    assert_deferred_first(interaction)
    assert_ephemeral(interaction)
    assert gone.id in last_text(interaction) and "Forgotten" in last_text(interaction)
    on_disk = harness.memory_on_disk(ALICE_ID)
    assert on_disk is not None
    assert [f["id"] for f in on_disk["facts"]] == [kept.id]
    assert harness.memory_on_disk(BOB_ID) == json.loads(bob.model_dump_json())


async def test_forget_an_unknown_id_or_someone_elses_fact_is_a_polite_no(harness: Harness) -> None:
    await seed_memory(harness.memory, ALICE_ID, ["Lives in Lisbon"])
    bob = await seed_memory(harness.memory, BOB_ID, ["Lives in Oslo"])
    before = harness.memory_on_disk(ALICE_ID)
    for fact_id in ["fact_deadbeef", bob.facts[0].id]:
        interaction = await run(harness, "forget", ALICE, fact=fact_id)
        assert_ephemeral(interaction)
        assert last_text(interaction) == f"You have no fact with the id `{fact_id}`."
    assert harness.memory_on_disk(ALICE_ID) == before
    assert harness.memory_on_disk(BOB_ID) == json.loads(bob.model_dump_json())


async def test_autocomplete_offers_only_the_callers_facts_filtered_by_what_they_typed(harness: Harness) -> None:
    contents = [f"Fact {n} about the garden and the weather " + "with many more words " * 8 for n in range(30)]
    contents[7] = "Plays chess every Sunday"
    alice = await seed_memory(harness.memory, ALICE_ID, contents)
    bob = await seed_memory(harness.memory, BOB_ID, ["Plays chess online", "Bob's garden has a pond"])
    alice_ids = {fact.id for fact in alice.facts}
    cog: Any = harness.memory_cog  # discord.py types `autocomplete` handlers as unbound
    interaction = make_interaction(ALICE)

    everything = await cog.forget_autocomplete(interaction, "")
    assert len(everything) == 25
    for choice in everything:
        assert isinstance(choice, app_commands.Choice)
        assert choice.value in alice_ids
        assert len(choice.name) <= 100 and choice.name.startswith(choice.value)

    chess = await cog.forget_autocomplete(interaction, "CHESS")
    assert [c.value for c in chess] == [alice.facts[7].id]
    by_id = await cog.forget_autocomplete(interaction, alice.facts[3].id)
    assert [c.value for c in by_id] == [alice.facts[3].id]
    assert await cog.forget_autocomplete(interaction, "pond") == []
    assert not {c.value for c in await cog.forget_autocomplete(interaction, "garden")} & {f.id for f in bob.facts}
    assert calls(interaction) == []  # autocomplete answers by returning choices, not by responding


# --- /memory forget (everything) --------------------------------------------------------------------------


async def ask_to_forget_everything(h: Harness, user: Any) -> tuple[Any, Any]:
    interaction = await run(h, "forget", user)
    [call] = calls(interaction)
    assert call.name == "send_message"
    assert_ephemeral(interaction)
    view = call.kwargs["view"]
    assert type(view).__name__ == "ConfirmForgetView"
    assert view.timeout is not None and 0 < view.timeout <= 900  # it expires
    return interaction, view


async def test_another_user_cannot_press_confirm(harness: Harness) -> None:
    await seed_memory(harness.memory, ALICE_ID, ["Lives in Lisbon"])
    _, view = await ask_to_forget_everything(harness, ALICE)
    intruder = make_interaction(BOB, guild=make_guild())
    assert await view.interaction_check(intruder) is False
    assert not await press(view, view.confirm, make_interaction(BOB))
    assert_ephemeral(intruder)
    assert "Only the person who asked" in last_text(intruder)
    assert harness.memory_on_disk(ALICE_ID) is not None
    assert not view.is_finished()


async def test_confirming_wipes_the_memory_and_cancels_pending_updates(make_harness: MakeHarness) -> None:
    h = await make_harness(memory_debounce_seconds=30, memory_max_wait_seconds=60)
    h.llm.extract = lambda body: extraction(
        facts=[(f"Said: {t['text']}", "context") for t in extraction_input(body)["newTurns"] if t["speaker"] == "user"]
    )
    await seed_memory(h.memory, ALICE_ID, ["Lives in Lisbon"])
    alice_dm, bob_dm = h.discord.dm(ALICE), h.discord.dm(BOB)
    await h.chat.on_message(h.discord.message(alice_dm, ALICE, "I just moved to Porto"))
    await h.chat.on_message(h.discord.message(bob_dm, BOB, "I just adopted a dog"))
    assert parts(h.memory).learning.debouncer.has_pending_for(ALICE_ID)

    _, view = await ask_to_forget_everything(h, ALICE)
    confirm = make_interaction(ALICE)
    assert await press(view, view.confirm, confirm)
    assert [c.name for c in calls(confirm)] == ["defer", "edit_original_response"]
    assert_ephemeral(confirm)
    assert "forgotten everything" in last_text(confirm)
    assert calls(confirm)[-1].kwargs["view"] is None
    assert not h.memory_path(ALICE_ID).exists()
    assert not parts(h.memory).learning.debouncer.has_pending_for(ALICE_ID)

    assert await parts(h.memory).learning.debouncer.flush(10)
    texts = [t["text"] for body in h.llm.extraction_requests for t in extraction_input(body)["newTurns"]]
    assert texts == ["I just adopted a dog", "Happy to help with that!"]  # Bob's update still happens
    assert not h.memory_path(ALICE_ID).exists()

    await h.close()  # a restart replays the journal: nothing of Alice's may come back from it
    again = await make_harness(data_dir=h.settings.data_dir)
    await again.settle()
    assert not again.memory_path(ALICE_ID).exists()
    assert len(h.llm.extraction_requests) == 1


async def test_cancel_leaves_the_memory_intact(harness: Harness) -> None:
    alice = await seed_memory(harness.memory, ALICE_ID, ["Lives in Lisbon"])
    _, view = await ask_to_forget_everything(harness, ALICE)
    cancel = make_interaction(ALICE)
    assert await press(view, view.cancel, cancel)
    [call] = calls(cancel)
    assert call.name == "edit_message" and call.kwargs["view"] is None
    assert "unchanged" in call.content
    assert harness.memory_on_disk(ALICE_ID) == json.loads(alice.model_dump_json())
    assert view.is_finished()


async def test_an_expired_confirmation_edits_the_original_response(harness: Harness) -> None:
    await seed_memory(harness.memory, ALICE_ID, ["Lives in Lisbon"])
    origin, view = await ask_to_forget_everything(harness, ALICE)
    await view.on_timeout()
    last = calls(origin)[-1]
    assert last.name == "edit_original_response"
    assert "expired" in last.content and last.kwargs["view"] is None
    assert harness.memory_on_disk(ALICE_ID) is not None


# --- /memory export ---------------------------------------------------------------------------------------


async def test_export_attaches_the_callers_memory_as_json(harness: Harness) -> None:
    await seed_memory(harness.memory, ALICE_ID, ["Lives in Lisbon"], workContext="Translator")
    await seed_memory(harness.memory, BOB_ID, ["Lives in Oslo"])
    interaction = await run(harness, "export", ALICE, in_guild=True)
    assert_deferred_first(interaction)
    assert_ephemeral(interaction)
    attachment = sent_kwargs(interaction)["file"]
    assert isinstance(attachment, discord.File)
    assert attachment.filename.endswith(".json")
    exported = json.loads(file_bytes(attachment))
    assert exported == {**(harness.memory_on_disk(ALICE_ID) or {}), "exportedFor": str(ALICE_ID)}  # names whose
    MemoryFile.model_validate(exported)
    assert "Oslo" not in json.dumps(exported)


# --- /memory pause and resume -----------------------------------------------------------------------------


async def test_pause_stops_learning_survives_a_restart_and_resume_starts_it_again(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness()
    h.llm.extract = lambda body: extraction(facts=[("Is learning the cello", "goal")])
    dm = h.discord.dm(ALICE)

    paused = await run(h, "pause", ALICE)
    assert_deferred_first(paused)
    assert_ephemeral(paused)
    assert last_text(paused).startswith("Paused")
    assert last_text(await run(h, "pause", ALICE)) == "Learning was already paused."
    await h.chat.on_message(h.discord.message(dm, ALICE, "I started cello lessons"))
    await h.settle()
    assert h.llm.extraction_requests == [] and h.memory_on_disk(ALICE_ID) is None

    await h.close()
    h = await make_harness(data_dir=h.settings.data_dir)  # a restart: new store, pause list and service
    h.llm.extract = lambda body: extraction(facts=[("Is learning the cello", "goal")])
    dm = h.discord.dm(ALICE)
    await h.chat.on_message(h.discord.message(dm, ALICE, "cello lesson two today"))
    await h.settle()
    assert h.llm.extraction_requests == [] and h.memory_on_disk(ALICE_ID) is None
    shown = await run(h, "show", ALICE)
    assert "Learning is paused" in last_text(shown)

    resumed = await run(h, "resume", ALICE)
    assert_ephemeral(resumed)
    assert last_text(resumed).startswith("Resumed")
    await h.chat.on_message(h.discord.message(dm, ALICE, "cello lesson three, getting better"))
    await h.settle()
    assert len(h.llm.extraction_requests) == 1
    stored = h.memory_on_disk(ALICE_ID)
    assert stored is not None and [f["content"] for f in stored["facts"]] == ["Is learning the cello"]


# --- the command definitions ------------------------------------------------------------------------------


async def test_the_memory_commands_work_in_servers_and_dms_and_take_no_user(harness: Harness) -> None:
    group = harness.bot.tree.get_command("memory")
    assert isinstance(group, app_commands.Group)
    payload = group.to_dict(harness.bot.tree)
    assert {0, 1} <= set(payload["contexts"])  # 0: guild, 1: bot DM
    assert {option["name"] for option in payload["options"]} == {
        "show", "remember", "edit", "share", "unshare", "forget", "export", "import", "incognito", "fresh", "pause",
        "resume",
    }
    options = {(sub["name"], o["name"]): o for sub in payload["options"] for o in sub.get("options", [])}
    assert set(options) == {
        ("show", "search"), ("remember", "text"), ("remember", "everywhere"), ("edit", "fact"), ("edit", "text"),
        ("forget", "fact"), ("forget", "section"), ("forget", "minutes"), ("incognito", "minutes"),
        ("fresh", "minutes"), ("share", "fact"), ("unshare", "fact"), ("import", "file"),
    }  # no command names another user
    assert options[("import", "file")]["type"] == discord.AppCommandOptionType.attachment.value
    assert all(options[(command, "fact")]["autocomplete"] for command in ("edit", "forget", "share", "unshare"))
    assert [c["value"] for c in options[("forget", "section")]["choices"]] == [
        "workContext", "personalContext", "topOfMind", "recentMonths", "earlierContext", "longTermBackground"]
    assert (options[("forget", "minutes")]["min_value"], options[("forget", "minutes")]["max_value"]) == (1, 1440)
    assert (options[("incognito", "minutes")]["min_value"], options[("incognito", "minutes")]["max_value"]) == (0, 1440)
    assert options[("remember", "text")]["max_length"] == 400
    menu = harness.bot.tree.get_command("What did you remember?", type=discord.AppCommandType.message)
    assert menu is not None and {0, 1} <= set(menu.to_dict(harness.bot.tree)["contexts"])
