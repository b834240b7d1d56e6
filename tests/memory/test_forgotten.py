"""What a forgotten or corrected fact takes with it and what keeps it from coming back (`bot.memory.rules.forgotten`
and its rule in the write gate), on memory documents in RAM: the scrub of every summary value of every place, the
fingerprints (no text, keyed), and the gate's refusal of the model's restatements and paraphrases unless the user
said the words again after the forget. Pure functions, no I/O."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.memory.models import Fact, MemoryFile, Place, PlaceMemory, PreviousSummary
from bot.memory.rules.forgotten import (
    Fingerprints,
    carried,
    is_rare,
    restates,
    scrub,
    stamp,
    taken_back,
    words_of,
)
from bot.memory.rules.write_gate import ModelAuthor, UserAuthor, admit

FORGOT_AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PRINTS = Fingerprints(b"k" * 32)
NURSE = "Works night shifts as a nurse at Saint Mary hospital in Dublin"
GUILD = Place.guild(7001)


def fact(fact_id: str, content: str) -> Fact:
    return Fact(id=fact_id, content=content, createdAt="2026-02-01T12:00:00+00:00")


def forgotten_memory() -> MemoryFile:
    memory = MemoryFile(facts=[fact("fact_choir", "Sings in a choir on Sundays")])
    PRINTS.leave(memory, taken_back([NURSE]), FORGOT_AT)
    return memory


def extraction(memory: MemoryFile, *facts: str, summary: str = "") -> MemoryFile:
    after = memory.model_copy(deep=True)
    after.facts += [fact(f"fact_new{n}", text) for n, text in enumerate(facts)]
    if summary:
        after.user.workContext.summary = summary
    return after


def author(*said: tuple[datetime, str]) -> ModelAuthor:
    texts = " ".join(text for _, text in said)
    return ModelAuthor(
        Place.dm(), "place", FORGOT_AT + timedelta(hours=1), grounding=texts,
        said=tuple((stamp(at), text) for at, text in said),
    )


def test_distinctive_words_are_normalised_and_leave_common_ones_out() -> None:
    assert words_of(NURSE) == {"night", "shift", "nurs", "saint", "mary", "hospital", "dublin"}
    assert words_of("The Wi-Fi password is tok-a-12-q") == {"wi-fi", "password", "tok-a-12-q"}
    assert words_of("welders welding") == {"weld"} == words_of("welder")
    assert words_of("drives driving") == words_of("drive") and words_of("in 2026") == set()


def test_scrub_reaches_every_place_and_every_earlier_value_and_keeps_the_rest() -> None:
    memory = MemoryFile()
    memory.user.workContext.summary = "Alice is a nurse in Dublin. She sings in a choir."
    memory.user.workContext.previous = [PreviousSummary(summary="Works nights at Saint Mary.", replacedAt="x")]
    public = PlaceMemory()
    public.history.recentMonths.summary = "Talked about Dublin traffic! Likes kayaks."
    memory.places[GUILD.key] = public
    changed = scrub(memory, taken_back([NURSE]))
    assert changed == 3
    assert memory.user.workContext.summary == "She sings in a choir."
    assert memory.user.workContext.previous[0].summary == ""
    assert memory.places[GUILD.key].history.recentMonths.summary == "Likes kayaks."


def test_words_the_users_other_facts_share_are_not_the_forgotten_facts() -> None:
    others = ["Talked about kayaks at the harbour", "Talked about a choir", "Talked about bread"]
    assert taken_back(["Talked about the nurse job"], others=others) == {"nurs", "job"}
    assert taken_back(["Lives in Dublin"], "Lives in Cork") == {"dublin"}  # a correction takes back the old value


def test_a_fingerprint_holds_no_text_and_depends_on_the_installation_key() -> None:
    memory = forgotten_memory()
    [print_] = memory.forgotten
    assert len(print_.words) == len(words_of(NURSE))
    stored = print_.model_dump_json()
    assert not any(word in stored for word in words_of(NURSE))
    assert all(len(word) == 16 and int(word, 16) >= 0 for word in print_.words)  # hex digits only
    assert set(print_.words).isdisjoint({Fingerprints(b"x" * 32).of(word) for word in words_of(NURSE)})


def test_the_gate_refuses_a_paraphrase_or_a_restatement_the_user_did_not_say_again() -> None:
    memory = forgotten_memory()
    after = extraction(
        memory, "Does nights as a Dublin nurse", "Enjoys hiking", summary="Hikes a lot. Is a nurse in Dublin."
    )
    report = admit(memory, after, author((FORGOT_AT + timedelta(minutes=5), "I went hiking")), prints=PRINTS)
    assert [f.content for f in after.facts] == ["Sings in a choir on Sundays", "Enjoys hiking"]
    assert after.user.workContext.summary == "Hikes a lot."
    assert report.forgotten == 2 and after.forgotten == memory.forgotten


def test_one_shared_common_word_is_another_fact_but_a_name_is_the_fact() -> None:
    memory = forgotten_memory()
    after = extraction(memory, "Has a sister who works nights")
    admit(memory, after, author((FORGOT_AT + timedelta(minutes=5), "my sister moved")), prints=PRINTS)
    assert "Has a sister who works nights" in [f.content for f in after.facts]
    named = MemoryFile()
    PRINTS.leave(named, taken_back([NURSE]), FORGOT_AT, texts=[NURSE])
    later = FORGOT_AT + timedelta(minutes=5)
    for said, kept in (("my sister moved", False), ("my sister moved to Dublin", True)):
        after = extraction(named, "Has a sister in Dublin")
        admit(named, after, author((later, said)), prints=PRINTS)
        assert ("Has a sister in Dublin" in [f.content for f in after.facts]) is kept


def test_words_said_before_the_forget_do_not_bring_it_back() -> None:
    memory = forgotten_memory()
    after = extraction(memory, "Is a nurse in Dublin")
    admit(memory, after, author((FORGOT_AT - timedelta(seconds=1), "I'm a nurse in Dublin")), prints=PRINTS)
    assert "Is a nurse in Dublin" not in [f.content for f in after.facts]


def test_the_user_saying_it_again_after_the_forget_is_learned_and_lifts_a_print_said_whole() -> None:
    memory = forgotten_memory()
    after = extraction(memory, "Is a nurse in Dublin")
    said = (FORGOT_AT + timedelta(seconds=1), "I'm still a nurse in Dublin")
    admit(memory, after, author(said), prints=PRINTS)
    assert "Is a nurse in Dublin" in [f.content for f in after.facts]
    assert after.forgotten  # only part of it was said again: the rest stays guarded
    whole = extraction(memory, NURSE)
    admit(memory, whole, author((said[0], "I work night shifts as a nurse at Saint Mary hospital in Dublin")),
          prints=PRINTS)
    assert NURSE in [f.content for f in whole.facts] and whole.forgotten == []


def test_the_model_cannot_drop_a_fingerprint_and_the_users_own_fact_lifts_one() -> None:
    memory = forgotten_memory()
    after = extraction(memory)
    after.forgotten = []
    admit(memory, after, author(), prints=PRINTS)
    assert after.forgotten == memory.forgotten
    typed = extraction(memory, NURSE)
    admit(memory, typed, UserAuthor(), prints=PRINTS)
    assert typed.forgotten == []


def test_a_restatement_carries_every_word_of_the_original() -> None:
    assert restates(NURSE, NURSE + " while pregnant")
    assert not restates(NURSE, "Works at Saint Mary hospital")


def test_a_code_is_the_facts_own_however_often_other_facts_say_it() -> None:
    others = ["Heard about tok-a-15-q", "Heard about tok-a-15-q and more", "Knows tok-a-15-q from here"]
    assert "tok-a-15-q" in taken_back(["Talked about tok-a-15-q near the glacier"], others=others)
    memory = MemoryFile()
    PRINTS.leave(memory, {"tok-a-15-q", "glacier", "talk", "visit"}, FORGOT_AT)
    after = extraction(memory, "Heard about tok-a-15-q")
    admit(memory, after, author((FORGOT_AT + timedelta(minutes=1), "something else")), prints=PRINTS)
    assert after.facts == []  # one code alone is enough to call it the forgotten fact


@pytest.mark.parametrize(
    ("taken", "later"),
    [
        ("Renovating a farmhouse in Galicia", "Has a Galician place"),  # a place and its adjective, both ways
        ("Studies Galician poetry", "Lives in Galicia"),
        ("Teaches in Japan", "Japanese teacher"),
        ("Spent a winter in Sicily", "Sicilian winters"),
        ("Works as a cardiologist", "Works in cardiology"),
        ("An amateur astronomer", "Does astronomy"),
        ("Glassblower at the studio", "Blows glass"),  # a compound and its words, both ways
        ("Glassblower at the studio", "Makes blown glass"),
        ("Fights fires for the county", "Is a firefighter"),
        ("Moving to Québec", "Moving to Quebec"),  # accents
        ("Partner is from Norway", "Has a Norwegian partner"),  # a place and its irregular adjective
        ("Sings in a Welsh choir", "Sings in a choir in Wales"),
        ("Grandmother was from Peru", "Has Peruvian roots"),
        ("Shoemaker in Northampton", "Makes shoes for a living"),  # joined with a common word
        ("Dog walker in Clapham", "Runs a dog-walking round"),  # a hyphenated word's parts
        ("Volunteer lifeguard", "Guards lives as a volunteer"),  # "lives" and "life"
        ("Learning to play the saxophone", "Is a beginner saxophonist"),  # one rare word is enough
        ("Lives in Tromsø", "Moved to Tromso"),  # a letter a keyboard without it writes otherwise
        ("Works as a puppeteer", "Does puppetry"),
        ("最近在学做陶艺", "正在学习陶艺"),  # Chinese: pairs of characters
        ("週末に盆栽を育てている", "盆栽が趣味"),  # Japanese: the words between the kana
        ("Pratique la calligraphie japonaise le soir", "Fait de la calligraphie au pinceau"),  # a long word, in French
    ],
)
def test_a_later_text_carries_the_words_in_another_form(taken: str, later: str) -> None:
    words = taken_back([taken])
    assert carried(later).hits(words)
    memory = MemoryFile()
    PRINTS.leave(memory, words, FORGOT_AT, texts=[taken])
    after = extraction(memory, later, summary=f"{later}. Enjoys tea.")
    admit(memory, after, author((FORGOT_AT + timedelta(minutes=5), "something else")), prints=PRINTS)
    assert after.facts == [] and after.user.workContext.summary == "Enjoys tea."


def test_other_forms_neither_match_unrelated_words_nor_keep_the_user_from_saying_it_again() -> None:
    words = taken_back(["Is an artist in Leeds", "Plays the piano"])
    assert not carried("Loves modern art and pianos are loud").hits(words - {"piano"})
    memory = MemoryFile()
    PRINTS.leave(memory, taken_back(["Renovating a farmhouse in Galicia"]), FORGOT_AT)
    after = extraction(memory, "Has a Galician farmhouse")
    admit(memory, after, author((FORGOT_AT + timedelta(minutes=5), "yes, my farmhouse in Galicia")), prints=PRINTS)
    assert [f.content for f in after.facts] == ["Has a Galician farmhouse"]


def test_a_rare_word_is_enough_alone_and_a_frequent_one_is_not() -> None:
    assert is_rare("saxophon") and is_rare("lifeguard")
    assert not is_rare("play") and not is_rare("learn") and not is_rare("six")
    assert not is_rare("sax") and not is_rare("ピアノ")  # short, or a script no word list covers
    memory = MemoryFile()
    PRINTS.leave(memory, taken_back(["Learning to play the saxophone"]), FORGOT_AT)
    after = extraction(memory, "Likes to play chess", "Is learning Spanish")
    admit(memory, after, author((FORGOT_AT + timedelta(minutes=5), "something else")), prints=PRINTS)
    assert [f.content for f in after.facts] == ["Likes to play chess", "Is learning Spanish"]


def test_a_corrected_facts_words_come_back_beside_what_the_correction_kept() -> None:
    old, new = "Beekeeper with six hives in Somerset", "Keeps chickens in Somerset"
    memory = MemoryFile()
    PRINTS.leave(memory, taken_back([old], new), FORGOT_AT, texts=[old], kept=words_of(old) & words_of(new))
    later = author((FORGOT_AT + timedelta(minutes=5), "something else"))
    for text, kept in (("Looks after six beehives near Somerset villages", False), (new, True),
                       ("Has six cousins", True)):  # one weak word without the correction's context is another fact
        after = extraction(memory, text)
        admit(memory, after, later, prints=PRINTS)
        assert (text in [f.content for f in after.facts]) is kept, text


def test_the_user_saying_the_heart_of_it_again_lets_the_models_small_additions_pass() -> None:
    memory = MemoryFile()
    PRINTS.leave(memory, taken_back(["Makes goat's cheese at home"]), FORGOT_AT)
    again = FORGOT_AT + timedelta(minutes=5)
    for said, kept in (("I make my own cheese, mostly goat's cheese", True), ("I like goats", False)):
        after = extraction(memory, "Makes goat's cheese at home")
        admit(memory, after, author((again, said)), prints=PRINTS)
        assert ("Makes goat's cheese at home" in [f.content for f in after.facts]) is kept, said


def test_the_user_telling_most_of_the_fact_again_lets_the_models_details_back_and_a_mention_does_not() -> None:
    memory = MemoryFile()
    forgotten = "Dog walker in Clapham on weekdays"
    PRINTS.leave(memory, taken_back([forgotten]), FORGOT_AT, texts=[forgotten])
    again = FORGOT_AT + timedelta(minutes=5)
    for said, kept in (("I walk dogs in Clapham again", True), ("Clapham is busy today", False)):
        after = extraction(memory, forgotten)
        admit(memory, after, author((again, said)), prints=PRINTS)
        assert (forgotten in [f.content for f in after.facts]) is kept, said


def test_words_of_chinese_japanese_and_korean_are_found_without_spaces() -> None:
    assert words_of("最近在学做陶艺") == {"做陶", "陶艺"}  # the pairs of grammar characters say nothing
    assert words_of("週末に盆栽を育てている") == {"週末", "盆栽"}
    assert words_of("도자기를 배우고 있어요") >= {"도자기"}  # without the particle
    assert {"北京", "家人"} <= words_of("Lives in 北京 with 家人")  # nouns of common characters stay
    memory = MemoryFile()
    PRINTS.leave(memory, taken_back(["最近在学做陶艺"]), FORGOT_AT)
    after = extraction(memory, "最近在学做饭")  # learning to cook: another fact
    admit(memory, after, author((FORGOT_AT + timedelta(minutes=5), "今天做了饭")), prints=PRINTS)
    assert [f.content for f in after.facts] == ["最近在学做饭"]


def test_in_other_languages_the_users_own_words_again_let_the_fact_back() -> None:
    memory = MemoryFile()
    forgotten = "Hace paella valenciana todos los domingos"
    PRINTS.leave(memory, taken_back([forgotten]), FORGOT_AT, texts=[forgotten])
    after = extraction(memory, forgotten)
    admit(memory, after, author((FORGOT_AT + timedelta(minutes=5), "Este domingo otra vez paella valenciana")),
          prints=PRINTS)
    assert forgotten in [f.content for f in after.facts]
