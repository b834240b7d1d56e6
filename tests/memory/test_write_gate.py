"""The write gate's rules, one by one, on memory documents in RAM (`bot.memory.rules.write_gate`): who wrote a
change decides what of it is kept. A model's change in a place: the place rule (facts the place may not use, other
places' and shared facts, the user's own facts, new facts), only the place's own summaries, identifiers the user
never wrote, withheld data. The user's change: credentials refused. The system's change: passed as it is. The rules
for history (closed facts) are in test_time.py, the sources of confirmed and split facts in test_sources.py. Pure
functions, no I/O."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.memory.errors import InvalidRequest
from bot.memory.models import Fact, MemoryFile, Place, iso
from bot.memory.rules import write_gate
from bot.memory.rules.places import Scope
from bot.memory.rules.withhold import NO_REQUESTS, Requests
from bot.memory.rules.write_gate import (
    GateReport,
    ModelAuthor,
    SystemAuthor,
    UserAuthor,
    admit,
    derived_from,
    identifiers,
    sensitive_mark,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
EARLIER = "2026-02-01T12:00:00+00:00"
DM = Place.dm()
GUILD = Place.guild(7001)  # a server's public channels
CHANNEL = Place.channel(55, 7001)  # a restricted channel of that server: it also sees the server's public memory
KEY = "sk-proj-4fQz9LmN2xVb7KpR1sTy8WcD3eHg6JuA0iOk5nMl"


def fact(fact_id: str, content: str, **fields: Any) -> Fact:
    return Fact.model_validate({"id": fact_id, "content": content, "createdAt": EARLIER, "lastConfirmedAt": EARLIER,
                                **fields})


def model(
    place: Place = DM, *, scope: Scope = "place", grounding: str = "", requests: Requests = NO_REQUESTS
) -> ModelAuthor:
    """A model's extraction of a batch said in `place`, with `grounding` as what the user said."""
    return ModelAuthor(place, scope, NOW, grounding=grounding, requests=requests)


def changed(before: MemoryFile) -> MemoryFile:
    """A private copy of `before` for the change under test."""
    return before.model_copy(deep=True)


def by_id(memory: MemoryFile) -> dict[str, Fact]:
    return {item.id: item for item in memory.facts}


def counts(report: GateReport) -> tuple[int, int, int, int]:
    return report.restored, report.split, report.ungrounded, report.withheld


@pytest.fixture
def fact_ids(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ids the gate gives new facts, predictable: fact_new00001, fact_new00002, ... (the list of those given)."""
    given: list[str] = []

    def next_id() -> str:
        given.append(f"fact_new{len(given) + 1:05d}")
        return given[-1]

    monkeypatch.setattr(write_gate, "new_fact_id", next_id)
    yield given


# --- facts the place may not use -----------------------------------------------------------------------------


@pytest.mark.parametrize("change", ["reword", "remove", "share", "confirm"])
def test_a_fact_the_place_may_not_use_is_put_back_as_it_was(change: str) -> None:
    private = fact("fact_0000000a", "Is training for a marathon")  # learned in DMs: no server channel may use it
    before = MemoryFile(facts=[private])
    after = changed(before)
    target = after.facts[0]
    if change == "reword":
        target.content = "Is training for the Berlin marathon"
    elif change == "remove":
        after.facts.clear()
    elif change == "share":
        target.shared = True
    else:
        target.confidence, target.lastConfirmedAt = 1.0, iso(NOW)
    report = admit(before, after, model(GUILD, grounding="berlin"))
    assert after.facts == [private]
    assert counts(report) == (1, 0, 0, 0)


def test_a_fact_of_another_place_left_alone_is_not_counted() -> None:
    before = MemoryFile(facts=[fact("fact_0000000a", "Is training for a marathon")])
    after = changed(before)
    report = admit(before, after, model(GUILD))
    assert after.facts == before.facts and report.held_back() == 0


# --- facts of another place, and shared facts ------------------------------------------------------------------


def test_a_rewording_of_another_places_fact_is_stored_as_the_places_own(fact_ids: list[str]) -> None:
    public = fact("fact_0000000a", "Plays chess", place=GUILD.key, confidence=0.8)
    before = MemoryFile(facts=[public])
    after = changed(before)
    after.facts[0].content = "Plays chess every Sunday"
    after.facts[0].confidence = 0.9
    after.facts[0].lastConfirmedAt = iso(NOW)
    report = admit(before, after, model(CHANNEL))
    original, copy = after.facts
    assert (original.id, original.content, original.place) == ("fact_0000000a", "Plays chess", GUILD.key)
    assert (original.confidence, original.lastConfirmedAt) == (0.9, iso(NOW))  # confirmed by the batch
    assert (copy.id, copy.content, copy.place, copy.shared) == ("fact_new00001", "Plays chess every Sunday",
                                                               CHANNEL.key, False)
    assert derived_from(copy) == "fact_0000000a"  # forgetting the original forgets the copy too
    assert copy.createdAt == copy.lastConfirmedAt == iso(NOW) and not copy.closed
    assert counts(report) == (0, 1, 0, 0)


def test_a_shared_fact_is_at_most_confirmed_never_lowered_or_moved() -> None:
    shared = fact("fact_0000000a", "Lives in Lyon", shared=True, confidence=0.9, lastConfirmedAt=iso(NOW))
    before = MemoryFile(facts=[shared])
    after = changed(before)
    after.facts[0].confidence = 0.5  # the model is less sure: the stored confidence stays
    after.facts[0].lastConfirmedAt = EARLIER
    after.facts[0].place = GUILD.key
    after.facts[0].shared = False
    report = admit(before, after, model(GUILD))
    assert after.facts == [shared]
    assert report.held_back() == 0


def test_a_recategorised_fact_of_another_place_is_split_like_a_rewording(fact_ids: list[str]) -> None:
    before = MemoryFile(facts=[fact("fact_0000000a", "Plays chess", place=GUILD.key, category="context")])
    after = changed(before)
    after.facts[0].category = "preference"
    report = admit(before, after, model(CHANNEL))
    assert [(f.id, f.category, f.place) for f in after.facts] == [
        ("fact_0000000a", "context", GUILD.key), ("fact_new00001", "preference", CHANNEL.key),
    ]
    assert report.split == 1


# --- the place's own facts -------------------------------------------------------------------------------------


def test_the_places_own_fact_may_be_reworded_but_not_moved_shared_or_claimed() -> None:
    own = fact("fact_0000000a", "Plays chess", place=CHANNEL.key)
    before = MemoryFile(facts=[own])
    after = changed(before)
    reworded = after.facts[0]
    reworded.content, reworded.place, reworded.shared, reworded.origin = "Plays chess online", "dm", True, "user"
    report = admit(before, after, model(CHANNEL))
    [kept] = after.facts
    assert (kept.id, kept.content, kept.place, kept.shared, kept.origin) == (
        "fact_0000000a", "Plays chess online", CHANNEL.key, False, "",
    )
    assert not kept.user_owned and report.held_back() == 0


def test_the_model_may_remove_the_places_own_fact() -> None:
    before = MemoryFile(facts=[fact("fact_0000000a", "Plays chess"), fact("fact_0000000b", "Lives in Lyon")])
    after = changed(before)
    after.facts.pop(0)
    report = admit(before, after, model(DM))
    assert [f.id for f in after.facts] == ["fact_0000000b"] and report.held_back() == 0


# --- the user's own facts --------------------------------------------------------------------------------------


@pytest.mark.parametrize("origin", ["user", "corrected"])
def test_the_model_never_removes_or_rewords_what_the_user_wrote(origin: str) -> None:
    written = fact("fact_0000000a", "Is vegetarian", origin=origin, confidence=0.9)
    reworded_too = fact("fact_0000000b", "Speaks Dutch", origin=origin, confidence=0.9)
    before = MemoryFile(facts=[written, reworded_too])
    after = changed(before)
    after.facts.pop(0)
    after.facts[0].content = "Speaks a little Dutch"
    after.facts[0].confidence = 1.0
    report = admit(before, after, model(DM))
    assert [(f.id, f.content, f.origin) for f in after.facts] == [
        ("fact_0000000a", "Is vegetarian", origin), ("fact_0000000b", "Speaks Dutch", origin),
    ]
    assert after.facts[1].confidence == 1.0  # confirming is allowed
    assert counts(report) == (2, 0, 0, 0)  # no copy of the rewording: the user's words are theirs


# --- new facts ---------------------------------------------------------------------------------------------------


def test_a_new_fact_belongs_to_the_place_unshared_open_and_never_the_users() -> None:
    before = MemoryFile()
    after = changed(before)
    after.facts.append(
        fact("fact_0000000a", "Plays chess", place="dm", shared=True, origin="user", validTo=iso(NOW),
             supersededBy="fact_0000000z")
    )
    report = admit(before, after, model(CHANNEL))
    [new] = after.facts
    assert (new.id, new.place, new.shared, new.origin, new.closed) == (
        "fact_0000000a", CHANNEL.key, False, "", False,
    )
    assert report.held_back() == 0


def test_with_one_memory_per_user_a_new_fact_still_belongs_to_the_place_it_was_said_in() -> None:
    after = MemoryFile(facts=[fact("fact_0000000a", "Plays chess")])
    admit(MemoryFile(), after, model(GUILD, scope="user"))
    assert after.facts[0].place == GUILD.key


def test_a_new_fact_whose_id_is_taken_gets_a_fresh_one_and_what_it_replaces_follows(fact_ids: list[str]) -> None:
    public = fact("fact_0000000a", "Plays chess", place=GUILD.key)
    own = fact("fact_0000000b", "Lives in Lyon", place=CHANNEL.key)
    before = MemoryFile(facts=[public, own])
    after = changed(before)
    after.facts[0].content = "Plays chess every Sunday"  # split: its copy takes fact_new00001
    after.facts.append(fact("fact_new00001", "Moved to Marseille"))  # the model chose the same id
    after.facts[1].close(valid_to=iso(NOW), superseded_by="fact_new00001")
    admit(before, after, model(CHANNEL))
    facts = by_id(after)
    assert facts["fact_new00001"].content == "Plays chess every Sunday"
    assert facts["fact_new00002"].content == "Moved to Marseille"
    assert facts["fact_0000000b"].supersededBy == "fact_new00002"  # the fact that replaced it, not the copy
    assert [f.id for f in after.facts] == ["fact_0000000a", "fact_new00001", "fact_0000000b", "fact_new00002"]


# --- summaries --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("scope", "writes"), [("place", GUILD.key), ("user", "dm")])
def test_only_the_places_own_summaries_change(scope: Scope, writes: str) -> None:
    before = MemoryFile()
    before.user.workContext.summary = "Nurse"
    before.places[CHANNEL.key] = before.place_memory(CHANNEL.key)
    before.places[CHANNEL.key].user.topOfMind.summary = "Waiting for a refund"
    after = changed(before)
    after.user.workContext.summary = "Nurse at night"
    summaries = after.place_memory(GUILD.key)
    summaries.user.topOfMind.summary = "Plans a chess club"
    after.set_place_memory(GUILD.key, summaries)
    after.places[CHANNEL.key].user.topOfMind.summary = "Got the refund"
    report = admit(before, after, model(GUILD, scope=scope))
    dm_now = after.user.workContext.summary
    guild_now = after.place_memory(GUILD.key).user.topOfMind.summary
    assert after.places[CHANNEL.key].user.topOfMind.summary == "Waiting for a refund"
    if writes == "dm":
        assert (dm_now, guild_now) == ("Nurse at night", "")
    else:
        assert (dm_now, guild_now) == ("Nurse", "Plans a chess club")
    assert report.restored == 2


# --- identifiers the user never wrote --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("order #4411x arrives", {"4411x"}),
        ("code A1B2C3 works", {"a1b2c3"}),
        ("the secret-12-3 door", {"secret-12-3"}),
        ("on 2024-06-14 at 12:30, the 3rd time", set()),
        ("the 21st at 12h30, or 10.30pm", set()),
        ("1234 steps, ab1, 2024-W24 and 2024年5月", set()),
        ("room 12b, v2", set()),  # shorter than four characters
    ],
)
def test_identifiers_mix_letters_and_digits_and_are_not_dates_times_or_numbers(text: str, found: set[str]) -> None:
    assert identifiers(text) == found


def test_a_new_fact_holding_an_identifier_the_user_never_wrote_is_dropped() -> None:
    before = MemoryFile()
    after = changed(before)
    after.facts += [fact("fact_0000000a", "Ordered parcel 4411X"), fact("fact_0000000b", "Ordered parcel 9981Q")]
    report = admit(before, after, model(DM, grounding="my order number is 4411x"))
    assert [f.content for f in after.facts] == ["Ordered parcel 4411X"]  # the user's own, whatever the case
    assert counts(report) == (0, 0, 1, 0)


def test_a_stored_fact_keeps_its_identifier_while_its_words_stay() -> None:
    stored = fact("fact_0000000a", "Ordered parcel 9981Q", confidence=0.7)
    before = MemoryFile(facts=[stored])
    after = changed(before)
    after.facts[0].confidence = 0.9  # confirmed: the words are as stored, nothing new to ground
    report = admit(before, after, model(DM))
    assert [(f.content, f.confidence) for f in after.facts] == [("Ordered parcel 9981Q", 0.9)]
    assert report.held_back() == 0


def test_a_summary_holding_an_identifier_the_user_never_wrote_keeps_its_old_text() -> None:
    before = MemoryFile()
    before.user.topOfMind.summary = "Waiting for a parcel"
    before.user.workContext.summary = "Nurse"
    after = changed(before)
    after.user.topOfMind.summary = "Waiting for parcel ZX81QK"  # quoted from someone else
    after.user.workContext.summary = "Nurse, badge N7731"
    report = admit(before, after, model(DM, grounding="my badge is n7731"))
    assert after.user.topOfMind.summary == "Waiting for a parcel"
    assert after.user.workContext.summary == "Nurse, badge N7731"
    assert counts(report) == (0, 0, 1, 0)


# --- withheld data ----------------------------------------------------------------------------------------------


def test_a_credential_is_never_stored_even_when_the_user_asked_to_remember_it() -> None:
    before = MemoryFile()
    after = changed(before)
    after.facts.append(fact("fact_0000000a", f"Their API key is {KEY}"))
    report = admit(before, after, model(DM, grounding=KEY, requests=Requests((f"my API key is {KEY}",))))
    assert after.facts == [] and counts(report) == (0, 0, 0, 1)


def test_a_sensitive_fact_is_stored_only_when_the_batch_asked_to_remember_it() -> None:
    def proposed() -> tuple[MemoryFile, MemoryFile]:
        before = MemoryFile()
        after = changed(before)
        strain = fact("fact_0000000a", "Is under a lot of strain")
        setattr(strain, "sensitive", "health")  # noqa: B010 (the model's mark, an extra field)
        after.facts += [strain, fact("fact_0000000b", "Has type 1 diabetes")]  # the backstop reads this one
        return before, after

    before, after = proposed()
    assert sensitive_mark(after.facts[0]) == "health" and sensitive_mark(after.facts[1]) is None
    report = admit(before, after, model(DM))
    assert after.facts == [] and report.withheld == 2
    before, after = proposed()
    report = admit(before, after, model(DM, requests=Requests(("I am under a lot of strain",))))
    assert [f.content for f in after.facts] == ["Is under a lot of strain"] and report.withheld == 1


def test_a_stored_fact_reworded_with_withheld_words_keeps_its_old_wording() -> None:
    stored = fact("fact_0000000a", "Uses a password manager")
    before = MemoryFile(facts=[stored])
    after = changed(before)
    after.facts[0].content = f"Uses a password manager; their API key is {KEY}"
    report = admit(before, after, model(DM, grounding=KEY))
    assert after.facts == [stored] and counts(report) == (0, 0, 0, 1)


def test_a_summary_keeps_its_sentences_without_withheld_data_or_else_its_old_text() -> None:
    before = MemoryFile(facts=[fact("fact_0000000a", "Has type 1 diabetes")])  # kept with the user's leave
    before.user.personalContext.summary = "Likes hiking."
    before.user.topOfMind.summary = "Busy week."
    after = changed(before)
    after.user.personalContext.summary = "Likes hiking. They vote Labour. They have type 1 diabetes."
    after.user.topOfMind.summary = "Is in therapy for depression."
    report = admit(before, after, model(DM))
    # Restating what memory already holds is allowed; new sensitive sentences go, and a summary left with none of
    # its new sentences keeps its old value.
    assert after.user.personalContext.summary == "Likes hiking. They have type 1 diabetes."
    assert after.user.topOfMind.summary == "Busy week."
    assert counts(report) == (0, 0, 0, 2)


# --- the user, and the system ----------------------------------------------------------------------------------


def test_a_credential_the_user_writes_is_refused_naming_its_kind_never_the_secret() -> None:
    before = MemoryFile()
    after = changed(before)
    after.facts.append(fact("fact_0000000a", f"My API key is {KEY}", origin="user"))
    with pytest.raises(InvalidRequest) as refused:
        admit(before, after, UserAuthor())
    assert "API key" in str(refused.value) and KEY not in str(refused.value)


def test_the_user_keeps_their_own_sensitive_words_in_any_place() -> None:
    before = MemoryFile(facts=[fact("fact_0000000a", f"Old note: key {KEY}")])  # stored before: not the user's edit
    after = changed(before)
    after.facts.append(fact("fact_0000000b", "Has type 1 diabetes, badge N7731", origin="user", place=GUILD.key,
                            shared=True))
    report = admit(before, after, UserAuthor())
    assert [f.id for f in after.facts] == ["fact_0000000a", "fact_0000000b"]
    assert (after.facts[1].place, after.facts[1].shared) == (GUILD.key, True)
    assert report.held_back() == 0


def test_the_systems_changes_pass_as_they_are() -> None:
    history = fact("fact_0000000a", "Lived in Paris", validTo=EARLIER, supersededBy="fact_0000000b")
    written = fact("fact_0000000b", "Is vegetarian", origin="user")
    before = MemoryFile(facts=[history, written, fact("fact_0000000c", "Plays chess", place=GUILD.key)])
    before.places[CHANNEL.key] = before.place_memory(CHANNEL.key)
    before.places[CHANNEL.key].user.topOfMind.summary = "Waiting for parcel ZX81QK"
    after = changed(before)
    after.facts = [after.facts[2]]  # retention or a retraction may remove anything, history and the user's own
    after.facts[0].content = "Plays chess, ticket 4411X"
    after.places.clear()
    expected = after.model_copy(deep=True)
    report = admit(before, after, SystemAuthor())
    assert after == expected and report.held_back() == 0


def test_what_was_held_back_adds_up() -> None:
    assert GateReport(restored=1, split=2, ungrounded=3, withheld=4).held_back() == 10
    assert GateReport().held_back() == 0
