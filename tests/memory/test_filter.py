"""The message filter: which chat messages become turns for the extractor (docs/architecture.md)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memory.models import IncomingMessage
from bot.memory.pipeline.filter import TRUNCATION_MARKER, clip, filter_messages, is_trivial, strip_mentions

BOT = 900
ALICE = 101
BOB = 102
OTHER_BOT = 555
START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


class Chat:
    """Builds a conversation with increasing message ids and times."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.messages: list[IncomingMessage] = []

    def say(self, author: int, content: str, **extra: object) -> IncomingMessage:
        message_id = next(self._ids)
        flags: dict[str, object] = {}
        if author == BOT:
            flags = {"author_is_bot": True, "is_self": True}
        elif author == OTHER_BOT:
            flags = {"author_is_bot": True}
        message = IncomingMessage(
            message_id=message_id,
            author_id=author,
            author_name={BOT: "Memo", ALICE: "alice", BOB: "bob", OTHER_BOT: "otherbot"}.get(author, "x"),
            content=content,
            created_at=START + timedelta(seconds=message_id),
            **(flags | extra),  # type: ignore[arg-type]
        )
        self.messages.append(message)
        return message

    def turns(self, max_chars: int = 2000) -> list[tuple[str, str]]:
        return [(turn.role, turn.text) for turn in filter_messages(self.messages, bot_id=BOT, max_chars=max_chars)]


def test_keeps_the_users_words_and_the_bots_final_reply() -> None:
    chat = Chat()
    chat.say(ALICE, "I write Go microservices at work")
    chat.say(BOT, "Nice! What do you use for tracing?")
    chat.say(ALICE, "OpenTelemetry with Jaeger")
    assert chat.turns() == [
        ("user", "I write Go microservices at work"),
        ("assistant", "Nice! What do you use for tracing?"),
        ("user", "OpenTelemetry with Jaeger"),
    ]


def test_turn_carries_author_time_and_message_id() -> None:
    chat = Chat()
    message = chat.say(ALICE, "I moved to Lisbon")
    [turn] = filter_messages(chat.messages, bot_id=BOT)
    assert (turn.author_id, turn.author_name, turn.at, turn.turn_id) == (ALICE, "alice", message.created_at, "1")


def test_drops_other_bots_and_system_messages() -> None:
    chat = Chat()
    chat.say(OTHER_BOT, "Level up! alice reached level 5")
    chat.say(ALICE, "alice pinned a message", is_system=True)
    chat.say(ALICE, "I am learning Rust")
    assert chat.turns() == [("user", "I am learning Rust")]


def test_drops_empty_and_attachment_only_messages_but_keeps_captions() -> None:
    chat = Chat()
    chat.say(ALICE, "", attachment_count=2)
    chat.say(ALICE, "   \n ")
    chat.say(ALICE, f"<@{BOT}>")  # only the mention: nothing left
    chat.say(ALICE, "my cat Miso", attachment_count=1)
    assert chat.turns() == [("user", "my cat Miso")]


@pytest.mark.parametrize(
    "ack",
    ["ok", "OK!", "okay thanks", "thanks", "Thank you!!", "thx", "ty", "cool", "lol", "got it", "👍", "🙏🙏", "...",
     "ok, thanks", "谢谢", "好的", "好的，谢谢！", "嗯嗯", "ありがとう", "なるほど", "ｏｋ"],
)
def test_trivial_acknowledgements_are_trivial(ack: str) -> None:
    assert is_trivial(ack)


@pytest.mark.parametrize(
    "meaningful",
    ["yes", "no", "Yes.", "No!", "nope, I use vim", "ok so I switched to Arch", "thanks to Go I got the job",
     "I prefer short answers", "我喜欢爬山", "私は猫が好きです", "42"],
)
def test_answers_and_statements_are_not_trivial(meaningful: str) -> None:
    assert not is_trivial(meaningful)


def test_drops_a_trivial_ack_and_the_reply_to_it_by_reply_reference() -> None:
    chat = Chat()
    chat.say(ALICE, "I run Postgres 16")
    chat.say(BOT, "Good choice, the new features are great.")
    thanks = chat.say(ALICE, "thanks!")
    chat.say(BOB, "what is a vacuum?")
    chat.say(BOT, "You're welcome!", reply_to_id=thanks.message_id)
    assert chat.turns() == [
        ("user", "I run Postgres 16"),
        ("assistant", "Good choice, the new features are great."),
        ("user", "what is a vacuum?"),
    ]


def test_drops_the_reply_to_a_trivial_ack_by_adjacency() -> None:
    chat = Chat()
    chat.say(ALICE, "I run Postgres 16")
    chat.say(ALICE, "谢谢")
    chat.say(BOT, "不客气！")
    chat.say(ALICE, "one more question about indexes")
    chat.say(BOT, "Sure, B-tree indexes are the default.")
    assert chat.turns() == [
        ("user", "I run Postgres 16"),
        ("user", "one more question about indexes"),
        ("assistant", "Sure, B-tree indexes are the default."),
    ]


def test_a_reply_to_a_real_question_is_kept_even_right_after_an_ack() -> None:
    chat = Chat()
    question = chat.say(ALICE, "what is the capital of Peru?")
    chat.say(ALICE, "ok")
    chat.say(BOT, "Lima.", reply_to_id=question.message_id)
    assert chat.turns() == [("user", "what is the capital of Peru?"), ("assistant", "Lima.")]


def test_only_the_reply_right_after_an_ack_is_dropped() -> None:
    chat = Chat()
    chat.say(ALICE, "ok")
    chat.say(BOT, "👍")
    chat.say(BOT, "By the way, did your deploy work?")
    assert chat.turns() == [("assistant", "By the way, did your deploy work?")]


def test_yes_and_no_are_kept_with_their_reply() -> None:
    chat = Chat()
    chat.say(BOT, "Do you want answers in French?")
    chat.say(ALICE, "yes")
    chat.say(BOT, "D'accord, je répondrai en français.")
    chat.say(ALICE, "no")
    assert chat.turns() == [
        ("assistant", "Do you want answers in French?"),
        ("user", "yes"),
        ("assistant", "D'accord, je répondrai en français."),
        ("user", "no"),
    ]


def test_strips_the_bots_mentions_but_not_other_peoples() -> None:
    chat = Chat()
    chat.say(ALICE, f"<@{BOT}> I work with <@{BOB}> on <@!{BOT}> the billing service <@!{BOB}>")
    assert chat.turns() == [("user", f"I work with <@{BOB}> on   the billing service <@!{BOB}>")]


def test_strip_mentions_forms() -> None:
    assert strip_mentions(f"<@{BOT}> hi", BOT) == "hi"
    assert strip_mentions(f"<@!{BOT}>hi", BOT) == "hi"
    assert strip_mentions(f"hi <@{BOT}1>", BOT) == f"hi <@{BOT}1>"  # another id that starts with ours
    assert strip_mentions(f"<@&{BOT}> role ping", BOT) == f"<@&{BOT}> role ping"  # a role, not the bot
    assert strip_mentions("  hi  ", None) == "hi"


def test_a_long_message_is_cut_to_head_and_tail_with_a_marker() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    clipped = clip(text, 500)
    assert len(clipped) <= 500
    assert clipped.startswith("HEAD") and clipped.endswith("TAIL")
    assert "characters omitted" in clipped
    head, _, rest = clipped.partition("\n[… ")
    omitted = int(rest.split(" ", 1)[0])
    tail = rest.split("omitted …]\n", 1)[1]
    assert len(head) + omitted + len(tail) == len(text)  # the marker says exactly how much is missing
    assert len(head) > len(tail)  # the start usually says what the paste is


def test_a_message_at_the_limit_is_untouched() -> None:
    assert clip("a" * 500, 500) == "a" * 500


@pytest.mark.parametrize("max_chars", [0, 1, 5, 20, 39, 40, 41, 60, 100])
def test_clip_never_exceeds_the_limit_even_when_the_marker_does_not_fit(max_chars: int) -> None:
    clipped = clip("y" * 1000, max_chars)
    assert len(clipped) <= max_chars
    assert clipped == "" or clipped.startswith("y")


def test_filter_clips_long_turns() -> None:
    chat = Chat()
    chat.say(ALICE, "log: " + "E" * 5000)
    [(_, text)] = chat.turns(max_chars=300)
    assert len(text) <= 300
    assert TRUNCATION_MARKER.split("{")[0] in text


# --- properties -------------------------------------------------------------------------------------------

_AUTHORS = st.sampled_from([BOT, ALICE, BOB, OTHER_BOT])
_TEXT = st.one_of(
    st.text(max_size=300),
    st.sampled_from(["ok", "thanks", "谢谢", "yes", "", f"<@{BOT}>", f"<@!{BOT}> hi", "👍", "I use Go"]),
    st.text(alphabet="ab <@!>0123456789\n", max_size=2500),
)


@st.composite
def conversations(draw: st.DrawFn) -> list[IncomingMessage]:
    count = draw(st.integers(min_value=0, max_value=25))
    messages = []
    for message_id in range(1, count + 1):
        author = draw(_AUTHORS)
        messages.append(
            IncomingMessage(
                message_id=message_id,
                author_id=author,
                author_name=draw(st.text(max_size=10)),
                content=draw(_TEXT),
                created_at=START + timedelta(seconds=message_id),
                author_is_bot=author in {BOT, OTHER_BOT} or draw(st.booleans()),
                is_self=author == BOT,
                is_system=draw(st.booleans()) and draw(st.booleans()),
                attachment_count=draw(st.integers(min_value=0, max_value=3)),
                reply_to_id=draw(st.none() | st.integers(min_value=1, max_value=max(count, 1))),
            )
        )
    return messages


@settings(max_examples=200, deadline=None)
@given(messages=conversations(), max_chars=st.integers(min_value=1, max_value=2500))
def test_filter_properties(messages: list[IncomingMessage], max_chars: int) -> None:
    turns = filter_messages(messages, bot_id=BOT, max_chars=max_chars)
    by_id = {str(message.message_id): message for message in messages}
    positions = [messages.index(by_id[turn.turn_id]) for turn in turns]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)  # input order, no copies
    for turn in turns:
        source = by_id[turn.turn_id]
        assert len(turn.text) <= max_chars
        assert turn.text.strip()
        assert not source.is_system
        assert not (source.author_is_bot and not source.is_self)  # never another bot's words
        assert turn.role == ("assistant" if source.is_self else "user")
        assert f"<@{BOT}>" not in turn.text and f"<@!{BOT}>" not in turn.text


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=5000), max_chars=st.integers(min_value=0, max_value=3000))
def test_clip_properties(text: str, max_chars: int) -> None:
    clipped = clip(text, max_chars)
    assert len(clipped) <= max_chars
    if len(text) <= max_chars:
        assert clipped == text
    else:
        assert text.startswith(clipped[:1])
