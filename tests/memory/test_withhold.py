"""What is withheld from memory: the sensitive-data backstop and the model's mark, requests to remember, and the
apply step that enforces both (credentials never, sensitive data only on request). Error rates of the backstop on
a held-out set: `bench/sensitive_gate.py`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.memory.models import Fact, MemoryFile, Place, Turn
from bot.memory.phrases import Phrase
from bot.memory.pipeline.answer import ExtractionResult
from bot.memory.pipeline.apply import apply_extraction
from bot.memory.rules import credentials
from bot.memory.rules.sensitive import (
    FINANCES,
    HEALTH,
    POLITICS,
    RELIGION,
    SENSITIVE_UNSPECIFIED,
    SEX_LIFE,
    _scan,
    category_of,
    marked_category,
)
from bot.memory.rules.withhold import (
    NO_REQUESTS,
    Requests,
    asked_to_remember,
    credential_refusal,
    credentials_together,
    fact_withheld,
    for_the_queue,
    redacted_together,
    requests_in,
    summary_kept,
)
from bot.memory.rules.write_gate import GateReport, ModelAuthor, admit
from tests.support.llm_server import extraction_payload

CORPORA = Path(__file__).resolve().parents[2] / "bench" / "corpora"
DEV = json.loads((CORPORA / "sensitive_dev.json").read_text(encoding="utf-8"))
NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)
USER = 1001
KEY = "sk-proj-4fQz9LmN2xVb7KpR1sTy8WcD3eHg6JuA0iOk5nMl"


# --- the model's mark ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "category"),
    [
        ("health", HEALTH), ("Medical", HEALTH), ("mental_health", HEALTH), ("sexual orientation", SEX_LIFE),
        ("sex life", SEX_LIFE), ("sex_life", SEX_LIFE), ("Religious beliefs", RELIGION), ("political", POLITICS),
        ("Finance", FINANCES), (["finances"], FINANCES), (True, SENSITIVE_UNSPECIFIED), ("yes", SENSITIVE_UNSPECIFIED),
        (None, None), (False, None), ("", None), ("none", None), ("no", None), ("not sensitive", None), (0, None),
    ],
)
def test_the_mark_is_read_however_a_model_writes_it(value: Any, category: str | None) -> None:
    assert marked_category(value) == category


def test_the_mark_travels_with_the_extraction_and_unmarked_facts_keep_their_shape() -> None:
    result = ExtractionResult.model_validate(
        {"newFacts": [{"content": "Has asthma", "confidence": 0.9, "sensitive": "Health"},
                      {"content": "Likes tea", "confidence": 0.9}]}
    )
    assert [fact.sensitive for fact in result.newFacts] == [HEALTH, None]
    assert result.newFacts[1].model_dump() == {"content": "Likes tea", "category": "context", "confidence": 0.9}


# --- the backstop -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Has type 1 diabetes", HEALTH), ("Takes sertraline for anxiety", HEALTH), ("Sees a therapist weekly", HEALTH),
        ("Is seven months pregnant", HEALTH), ("They manage their diabetes with an insulin pump.", HEALTH),
        ("Came out as bisexual last year", SEX_LIFE), ("Is gay", SEX_LIFE), ("Is a practising Muslim", RELIGION),
        ("Goes to church every Sunday", RELIGION), ("Votes Labour", POLITICS), ("Is a registered Republican", POLITICS),
        ("Earns about $85,000 a year", FINANCES), ("Has $40k in student loan debt", FINANCES),
        ("Is behind on rent this month", FINANCES), ("Broke her wrist skating last month", HEALTH),
        ("Tore his ACL playing five-a-side", HEALTH), ("Had her gallbladder removed in December", HEALTH),
        ("Is off work with a slipped disc", HEALTH), ("Cracked a rib snowboarding in Andorra", HEALTH),
        ("Has been a Jehovah's Witness all their life", RELIGION), ("Follows Shia Islam", RELIGION),
        ("Does the 5am fajr prayer", RELIGION), ("Gave up chocolate for Lent", RELIGION),
        ("Walks to her synagogue every Saturday", RELIGION), ("Is firmly against abortion", POLITICS),
        ("Joined the climate march in Berlin", POLITICS), ("Describes their politics as centrist", POLITICS),
        ("Supports Scottish independence", POLITICS), ("Stood as a Pirate Party candidate", POLITICS),
        ("I'm a nurse who has type 1 diabetes", HEALTH),
    ],
)
def test_the_backstop_finds_what_is_said_about_the_user(text: str, category: str) -> None:
    assert category_of(text) == category


@pytest.mark.parametrize(
    "text",
    [
        "Works as a nurse", "Follows politics podcasts", "Is a bank teller", "Studies political science",
        "Works on diabetes research software", "Is a liberal arts student", "Is conservative about code changes",
        "Their cat has diabetes", "Their sister is pregnant", "Has a girlfriend named Mia", "Is straight-edge",
        "Visited a Buddhist temple in Kyoto", "Saving up for a trip to Japan", "Bought a PS5 for 500 euros",
        "Works as a loan officer", "Likes praying mantis photography", "Pulled back from the house sale",
        "Broke the arm of the garden chair", "Jake's daughter broke her arm at gymnastics",
        "Nina's mother had knee surgery", "Their favourite player tore his ACL", "Went to Paris in March",
        "Backs the Raiders every season", "Watched a documentary about Extinction Rebellion",
        "Supports her daughter's independence", "Teaches a yoga class at their local church hall",
    ],
)
def test_the_backstop_keeps_jobs_interests_and_other_peoples_matters(text: str) -> None:
    assert category_of(text) is None


def test_the_development_set_is_classified_as_measured() -> None:
    """The rules were written against this set; the two facts it still drops are known costs of the patterns."""
    missed = [item["text"] for item in DEV["sensitive"] if category_of(item["text"]) is None]
    wrong = [item["text"] for item in DEV["sensitive"] if category_of(item["text"]) not in (None, item["category"])]
    dropped = [text for text in DEV["clean"] if category_of(text) is not None]
    assert missed == [] and wrong == []
    assert dropped == ["Plays the Sims and makes their Sims go to church",
                       "Sells handmade jewellery and made $300 at the last market"]


def test_the_word_triggers_only_skip_patterns_that_could_not_match() -> None:
    held_out = json.loads((CORPORA / "sensitive_heldout.json").read_text(encoding="utf-8"))
    texts = [item["text"] for corpus in (DEV, held_out) for item in corpus["sensitive"]]
    texts += [text for corpus in (DEV, held_out) for text in corpus["clean"]]
    texts += [f"I'm {word}" for word in ("gay", "Muslim", "a Democrat", "pregnant", "broke")]
    texts += ["Sprained my left ankle", "Had my tonsils out at 27", "Is recovering from a herniated disc",
              "Observes the Navratri fast", "Goes to every solidarity march", "Phone banks for the Greens"]
    assert [_scan(text, triggers=True) for text in texts] == [_scan(text, triggers=False) for text in texts]


# --- requests to remember -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("remember that I have diabetes", ["I have diabetes"]),
        ("Please remember I'm bisexual.", ["I'm bisexual"]),
        ("hey, can you remember that I'm Muslim? thanks", ["I'm Muslim"]),
        ("I want you to remember: I vote Green", ["I vote Green"]),
        ("Also don't forget that I'm on Adderall", ["I'm on Adderall"]),
        ("between us, remember that I'm being treated for depression", ["I'm being treated for depression"]),
        ("Keep in mind that I have a heart condition", ["I have a heart condition"]),
        ("merk dir, dass ich Diabetes habe", ["ich Diabetes habe"]),
        ("recuerda que soy católica", ["soy católica"]),
        ("I remember that my dad was diabetic", []),
        ("Do you remember that I have diabetes?", []),
        ("remember when I told you about my surgery?", []),
        ("don't remember this: I have diabetes", []),
        ("I have diabetes", []),
    ],
)
def test_a_request_is_an_explicit_ask(text: str, asked: list[str]) -> None:
    assert asked_to_remember(text) == asked


def test_only_the_users_own_turns_can_ask() -> None:
    turns = [
        Turn("user", USER, "alice", "remember that I have diabetes", NOW, "1"),
        Turn("assistant", 999, "bot", "Sure, remember that you can ask me to forget it", NOW, "2"),
        Turn("user", 2002, "bob", "remember that I'm Catholic", NOW, "3"),
    ]
    assert requests_in(turns, USER) == Requests(("I have diabetes",))


def test_a_request_covers_its_category_and_its_words_only() -> None:
    asked = Requests(("I have diabetes",))
    assert asked.covers("Has type 1 diabetes", HEALTH)
    assert asked.covers("Takes insulin every morning", HEALTH)  # same category, same batch
    assert not asked.covers("Is Catholic", RELIGION)
    by_words = Requests(("I'm seeing Dr. Patel on Tuesdays",))  # names no category: its words do
    assert by_words.covers("Sees Dr. Patel, a psychiatrist, on Tuesdays", HEALTH)
    assert not by_words.covers("Has asthma", HEALTH)
    known = NO_REQUESTS.knowing(["Has type 1 diabetes", "Drinks tea with their diabetes-friendly sweetener"])
    assert known.covers("They manage their diabetes with an insulin pump.", HEALTH)
    assert not NO_REQUESTS.knowing(["Likes the Diabetes UK charity run"]).covers("They have diabetes.", HEALTH)
    assert not known.covers("They have been struggling with depression.", HEALTH)


def test_what_a_fact_is_withheld_for() -> None:
    assert fact_withheld(f"Their OpenAI key is {KEY}", None, Requests(("my key",))) == "API key"
    assert fact_withheld("Has type 1 diabetes", None, NO_REQUESTS) == HEALTH  # the backstop
    assert fact_withheld("Is under a lot of strain lately", "health", NO_REQUESTS) == HEALTH  # the model's mark
    assert fact_withheld("Has type 1 diabetes", HEALTH, Requests(("I have diabetes",))) is None
    assert fact_withheld("Likes tea", None, NO_REQUESTS) is None


def test_a_summary_loses_only_the_sentences_it_may_not_keep() -> None:
    text = (f"They are a backend developer in Lisbon. Their OpenAI key is {KEY}. They were diagnosed with ADHD "
            "last year. They vote Labour. They like hiking.")
    assert summary_kept(text, NO_REQUESTS) == "They are a backend developer in Lisbon. They like hiking."
    asked = Requests(("I have ADHD",))
    assert summary_kept(text, asked) == (
        "They are a backend developer in Lisbon. They were diagnosed with ADHD last year. They like hiking."
    )


def test_the_refusal_names_the_kind_never_the_secret() -> None:
    refusal = credential_refusal(f"My OpenAI key is {KEY}")
    assert refusal is not None
    line = str(refusal)
    assert "an API key" in line and KEY not in line and "\n" not in line
    assert refusal.values["kind"] == Phrase("an API key")  # the kind, as words the application translates
    assert credential_refusal("my password is hunter2") is not None
    assert "hunter2" not in str(credential_refusal("my password is hunter2"))
    assert credential_refusal("I have type 1 diabetes") is None  # the user's own words may be sensitive


def test_a_pending_turn_is_rewritten_without_its_secrets_and_left_alone_without_any() -> None:
    turn = Turn("user", USER, "alice", f"my key is {KEY}, and I write Go", NOW, "t1")
    [clean] = redacted_together([], [turn], USER)
    assert clean.text == "my key is [API key removed], and I write Go"
    assert (clean.turn_id, clean.author_id, clean.at) == (turn.turn_id, turn.author_id, turn.at)
    plain = Turn("user", USER, "alice", "I write Go", NOW, "t2")
    assert redacted_together([], [plain], USER)[0] is plain


def test_a_password_given_in_the_message_after_its_name_is_cut_reading_the_turns_waiting() -> None:
    waiting = [Turn("user", USER, "alice", "I changed my wifi password again", NOW, "t1")]
    reply = Turn("assistant", 999, "bot", "ok! so it's tulip88 now?", NOW, "t3")
    value = Turn("user", USER, "alice", "it's now tulip88 lol", NOW, "t2")
    other = Turn("user", 2002, "bob", "it's now kettle77", NOW, "t4")  # cut only when read with Alice's words
    cut, bot, bobs = redacted_together(waiting, [value, reply, other], USER)
    assert cut.text == "it's now [password removed] lol"
    assert bot.text == "ok! so it's [password removed] now?"  # a reply repeating the value loses it too
    assert bobs.text == other.text
    assert redacted_together(waiting, [Turn("user", USER, "alice", other.text, NOW, "t5")], USER)[0].text != other.text
    assert redacted_together([], [value], USER)[0] is value  # alone, the message holds no secret


def test_a_value_found_in_the_history_a_reply_was_written_from_is_cut_from_the_reply_and_the_users_words() -> None:
    history = ["my router password is Marigold-Kettle-58", "and the guest one is the same"]
    asked = Turn("user", USER, "alice", "was it Marigold-Kettle-58?", NOW, "t1")
    reply = Turn("assistant", 999, "bot", "Yes: Marigold-Kettle-58, from your earlier message.", NOW, "t2")
    said, quoted = redacted_together([], [asked, reply], USER, shown=history)
    assert said.text == "was it [password removed]?" and "Marigold" not in quoted.text
    assert redacted_together([], [reply], USER)[0] is reply  # without the history nothing names it


def test_a_value_found_elsewhere_is_cut_but_never_out_of_a_longer_number_or_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The trained reader takes a guess of the same shape ("Marigold-589") for a password of its own: here only what
    # the history holds is looked for.
    monkeypatch.setattr(credentials, "credentials_read", lambda text: [])
    history = ["my router password is Marigold-58"]
    asked = Turn("user", USER, "alice", "is it Marigold-58 or Marigold-589, or Marigold-58s?", NOW, "t1")
    [said] = redacted_together([], [asked], USER, shown=history)
    assert said.text == "is it [password removed] or Marigold-589, or [password removed]s?"
    value = Turn("user", USER, "alice", "Kingfisher#31", NOW, "t2")
    reply = Turn("assistant", 999, "bot", "Kingfisher#31, or Kingfisher#310?", NOW, "t3")
    assert for_the_queue([value, reply], USER)[1].text == "[password removed], or Kingfisher#310?"


def test_a_lone_password_like_word_is_written_down_cut_because_its_name_may_come_next() -> None:
    value = Turn("user", USER, "alice", "Kingfisher#31", NOW, "t1")
    reply = Turn("assistant", 999, "bot", "Kingfisher#31? what's that?", NOW, "t2")
    queued, bot = for_the_queue(redacted_together([], [value, reply], USER), USER)
    assert queued.text == "[password removed]" and bot.text == "[password removed]? what's that?"
    named = Turn("user", USER, "alice", "thats my new email password dont forget it", NOW, "t3")
    assert redacted_together([value], [named], USER)[0] is named  # the name alone holds nothing to cut
    sentence = Turn("user", USER, "alice", "I bought a Pixel 8 for my dad", NOW, "t4")
    assert for_the_queue([sentence], USER)[0] is sentence  # words around it: no lone value
    bobs = Turn("user", 2002, "bob", "Marigold#57", NOW, "t5")
    assert for_the_queue([bobs], USER)[0] is bobs  # only the user's own words are read


def test_facts_and_summary_sentences_that_hold_a_secret_only_together_are_withheld() -> None:
    assert credentials_together(["Changed their wifi password again", "The new one is sunflower42"]) == [False, True]
    assert credentials_together(["Changed their wifi password again", "Lives in Leeds"]) == [False, False]
    summary = "They changed the wifi password. It is now sunflower42. They live in Leeds."
    assert summary_kept(summary, NO_REQUESTS) == "They changed the wifi password. They live in Leeds."


# --- the write path: apply, then the gate -------------------------------------------------------------------


def apply(memory: MemoryFile, requests: Requests = NO_REQUESTS, **answer: Any) -> GateReport:
    """An extraction applied as the engine applies it: the apply step, then the write gate (which withholds)."""
    result = ExtractionResult.model_validate(extraction_payload(**answer))
    before = memory.model_copy(deep=True)
    apply_extraction(memory, result, now=NOW, min_confidence=0.7, max_facts=100, duplicate_similarity=0.85)
    said = json.dumps(answer)  # the user said all of it: only the withheld rule is under test
    return admit(before, memory, ModelAuthor(Place.dm(), "place", NOW, grounding=said, requests=requests))


def test_apply_stores_no_credential_and_no_unrequested_sensitive_fact() -> None:
    memory = MemoryFile()
    report = apply(
        memory,
        facts=[(f"Their OpenAI API key is {KEY}", "knowledge"), ("Has type 1 diabetes", "context"),
               {"content": "Is under a lot of strain", "confidence": 0.9, "sensitive": "health"},
               ("Writes Go at work", "knowledge")],
        work=f"Writes Go. Their key is {KEY}.",
        personal="Likes hiking. They vote Labour.",
    )
    assert [fact.content for fact in memory.facts] == ["Writes Go at work"]
    assert report.withheld == 5  # three facts, and a sentence of each summary
    assert memory.user.workContext.summary == "Writes Go."
    assert memory.user.personalContext.summary == "Likes hiking."
    assert KEY not in memory.model_dump_json()


def test_a_secret_a_model_splits_over_two_facts_or_two_sentences_is_not_stored() -> None:
    memory = MemoryFile()
    report = apply(
        memory,
        facts=[("Changed their wifi password again", "context"), ("The new one is sunflower42", "context"),
               ("Keeps chickens in the garden", "context")],
        personal="Changed the wifi password. It is now sunflower42. Keeps chickens.",
    )
    assert [fact.content for fact in memory.facts] == ["Changed their wifi password again",
                                                       "Keeps chickens in the garden"]
    assert memory.user.personalContext.summary == "Changed the wifi password. Keeps chickens."
    assert report.withheld == 2 and "sunflower42" not in memory.model_dump_json()


def test_a_request_in_the_batch_keeps_that_sensitive_fact_and_nothing_else_sensitive() -> None:
    memory = MemoryFile()
    apply(memory, Requests(("I have diabetes",)),
          facts=[("Has type 1 diabetes", "context"), ("Is Catholic", "context")],
          personal="They have type 1 diabetes. They are Catholic.")
    assert [fact.content for fact in memory.facts] == ["Has type 1 diabetes"]
    assert memory.user.personalContext.summary == "They have type 1 diabetes."
    # A later batch without a request: a new sensitive fact is not kept, the summary may restate the kept one.
    apply(memory, facts=[("Has asthma", "context")],
          personal="They have type 1 diabetes and use an insulin pump. They have asthma.")
    assert [fact.content for fact in memory.facts] == ["Has type 1 diabetes"]
    assert memory.user.personalContext.summary == "They have type 1 diabetes and use an insulin pump."


def test_a_withheld_replacement_does_not_hold_back_the_removal_it_replaces() -> None:
    """A removal whose replacing fact is not stored is normally taken back (no lost memory); a replacement withheld
    for privacy is not a reason to keep the old, sensitive fact."""
    memory = MemoryFile(facts=[Fact(id="fact_00000001", content="Has type 1 diabetes", confidence=0.9)])
    apply(memory, facts=[("Was cured of type 1 diabetes after a transplant", "context")], remove=["fact_00000001"])
    assert memory.facts == []


def test_a_summary_sentence_quoting_a_withheld_message_is_dropped_however_the_rest_of_it_reads() -> None:
    """A model's sentence may bury the user's sensitive words in a long ordinary one ("They heard: <a reply that
    echoes them>"), which the reader alone then scores low: the quoted run is read on its own. What the sentence
    shares with the ordinary part of the message stays, and a request to remember keeps it all."""
    said = Turn("user", USER, "alice", "they approved my hardship fund application so I can pay rent, and we moved "
                "to a new flat in Leeds", NOW, "t1")
    summary = ("They heard: Alice here is everything I was given they approved my hardship fund application so can "
               "pay rent. Alice moved to a new flat in Leeds.")
    assert summary_kept(summary, requests_in([said], USER)) == "Alice moved to a new flat in Leeds."
    assert summary_kept(summary, NO_REQUESTS) == summary  # without the message, nothing marks the first sentence
    asked = Turn("user", USER, "alice", f"please remember that {said.text}", NOW, "t2")
    assert summary_kept(summary, requests_in([asked], USER)) == summary
