"""Journal: the write-ahead record of pending turns. Replay keeps exactly what is live; torn tails cost nothing
acknowledged; and, with a real process killed by SIGKILL at random moments, no acknowledged turn is ever lost."""

from __future__ import annotations

import errno
import json
import logging
import os
import random
import shutil
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.models import ConversationKey, Turn
from tests.memory.crash_writer import WriterPool, finish, read_line

ALICE, BOB = 1001, 2002
CHANNEL = 555
KILLS = 100
SOAK_KILLS = int(os.environ.get("SOAK_KILLS", "2000"))
SEED = 7


def turn(turn_id: str, user: int = ALICE, text: str | None = None) -> Turn:
    return Turn(
        role="user", author_id=user, author_name="someone", text=text or f"text of {turn_id}",
        at=datetime(2024, 5, 1, 12, 0, tzinfo=UTC), turn_id=turn_id,
    )


def key(user: int = ALICE, channel: int = CHANNEL) -> ConversationKey:
    return ConversationKey(channel, user)


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def live_ids(journal_or_path: Journal | Path) -> list[tuple[int, str]]:
    journal = journal_or_path if isinstance(journal_or_path, Journal) else Journal(journal_or_path)
    return [(item.key.user_id, item.turn.turn_id) for item in journal.replay()]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / JOURNAL_NAME


async def test_records_are_appended_and_fsynced(path: Path) -> None:
    synced: list[int] = []

    def fsync(fd: int) -> None:
        synced.append(fd)
        os.fsync(fd)

    journal = Journal(path, fsync=fsync)
    await journal.add(key(), [turn("1"), turn("2")])
    await journal.done(ALICE, ["1"])
    await journal.done(ALICE, [])  # nothing to record
    ops = records(path)
    assert [r["op"] for r in ops] == ["turn", "turn", "done"]
    assert ops[0] == {
        "op": "turn", "conv": str(CHANNEL), "user": str(ALICE), "place": "dm", "turn": turn("1").to_json(),
    }
    assert ops[2] == {"op": "done", "user": str(ALICE), "turnIds": ["1"]}
    assert len(synced) == 2  # one fsync per append, before it returns
    await journal.forget_user(BOB)  # not a byte of Bob's in the file: nothing to rewrite
    assert [r["op"] for r in records(path)] == ["turn", "turn", "done"] and len(synced) == 2
    await journal.add(key(BOB), [turn("9", BOB)])
    await journal.forget_user(BOB)  # rewrites the file at once: only what is still pending remains
    assert records(path) == [
        {"op": "turn", "conv": str(CHANNEL), "user": str(ALICE), "place": "dm", "turn": turn("2").to_json()}
    ]
    assert len(synced) == 4  # Bob's append, then the rewrite's temp file, fsynced before the rename
    assert journal.pending == 1 and journal.pending_for(ALICE) == 1 and journal.pending_for(BOB) == 0


async def test_replay_returns_live_turns_in_order_and_compacts(path: Path) -> None:
    journal = Journal(path)
    await journal.add(key(ALICE), [turn("a1"), turn("a2")])
    await journal.add(key(BOB, 777), [turn("b1", BOB)])
    await journal.add(key(ALICE), [turn("a3")])
    await journal.done(ALICE, ["a2"])
    await journal.add(key(BOB, 777), [turn("b2", BOB, text="多语言 ✓")])
    await journal.done(BOB, ["b1"])
    assert len(records(path)) == 7

    fresh = Journal(path)
    pending = fresh.replay()

    assert [(p.key, p.turn.turn_id) for p in pending] == [
        (key(ALICE), "a1"), (key(ALICE), "a3"), (key(BOB, 777), "b2"),
    ]
    assert pending[2].turn == turn("b2", BOB, text="多语言 ✓")
    assert fresh.pending == 3
    compacted = records(path)
    assert [r["op"] for r in compacted] == ["turn"] * 3  # only live records remain
    assert [r["turn"]["turnId"] for r in compacted] == ["a1", "a3", "b2"]  # type: ignore[index]
    assert live_ids(path) == [(ALICE, "a1"), (ALICE, "a3"), (BOB, "b2")]  # replaying again changes nothing
    assert not list(path.parent.glob("*.compact"))


async def test_replay_of_missing_journal_is_empty(path: Path) -> None:
    assert Journal(path).replay() == []


async def test_purge_then_add_keeps_only_later_turns(path: Path) -> None:
    journal = Journal(path)
    await journal.add(key(ALICE), [turn("old1"), turn("old2")])
    await journal.add(key(BOB), [turn("bob1", BOB)])
    await journal.add(key(ALICE, 999), [turn("old3")])
    await journal.forget_user(ALICE)
    await journal.add(key(ALICE), [turn("new1")])
    assert journal.pending_for(ALICE) == 1
    assert live_ids(path) == [(BOB, "bob1"), (ALICE, "new1")]


async def test_done_of_one_user_never_clears_another_users_turn(path: Path) -> None:
    # The same message id can reach two users' batches (the bot's reply in a shared channel).
    journal = Journal(path)
    await journal.add(key(ALICE), [turn("42", ALICE)])
    await journal.add(key(BOB), [turn("42", BOB)])
    await journal.done(ALICE, ["42"])
    assert journal.pending_for(BOB) == 1
    assert live_ids(path) == [(BOB, "42")]


async def test_turns_without_ids_are_not_collapsed(path: Path) -> None:
    journal = Journal(path)
    await journal.add(key(), [turn(""), turn(""), turn("x")])
    assert journal.pending == 3
    assert [p.turn.text for p in Journal(path).replay()] == ["text of ", "text of ", "text of x"]


async def test_torn_last_line_is_skipped_and_earlier_records_survive(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(path)
    await journal.add(key(), [turn("1"), turn("2")])
    await journal.done(ALICE, ["1"])
    full = json.dumps({"op": "turn", "conv": "5", "user": str(ALICE), "turn": turn("3").to_json()})
    with open(path, "ab") as handle:  # what a crash in the middle of an append leaves
        handle.write(full.encode()[: len(full) // 2])
    caplog.set_level(logging.WARNING, logger="bot.memory.drivers.files.journal")

    fresh = Journal(path)
    assert live_ids(fresh) == [(ALICE, "2")]
    assert any(r.levelno == logging.WARNING and "unreadable" in r.getMessage() for r in caplog.records)
    assert "text of" not in caplog.text  # no message contents in logs
    await fresh.add(key(), [turn("4")])
    assert live_ids(path) == [(ALICE, "2"), (ALICE, "4")]


async def test_append_after_a_torn_tail_starts_a_fresh_line(path: Path) -> None:
    # A journal appended to without a replay first (or after a failed write) must not glue its record onto
    # the torn line: that would lose an acknowledged turn.
    await Journal(path).add(key(), [turn("1")])
    with open(path, "ab") as handle:
        handle.write(b'{"op":"turn","conv":"1","us')
    await Journal(path).add(key(), [turn("2")])
    assert live_ids(path) == [(ALICE, "1"), (ALICE, "2")]


@pytest.mark.parametrize(
    "garbage",
    [
        b'{"op":"turn","conv":"1","user":"2","turn":[]}',
        b'{"op":"turn","conv":"x","user":"2","turn":{}}',
        b'{"op":"done","user":"1001","turnIds":5}',
        b'{"op":"purge"}',
        b"[1,2,3]",
        b'"just a string"',
        b"null",
        b"\xff\xfe\x00garbage",
        b"\x00" * 64,  # what a power cut can leave in a file's tail
        b"[" * 50_000,
    ],
)
async def test_unreadable_records_are_skipped(path: Path, garbage: bytes, caplog: pytest.LogCaptureFixture) -> None:
    journal = Journal(path)
    await journal.add(key(), [turn("1")])
    with open(path, "ab") as handle:
        handle.write(garbage + b"\n")
    await Journal(path).add(key(), [turn("2")])
    caplog.set_level(logging.WARNING, logger="bot.memory.drivers.files.journal")
    assert live_ids(path) == [(ALICE, "1"), (ALICE, "2")]
    assert "skipped 1 unreadable" in caplog.text


async def test_compaction_during_appends_keeps_exactly_the_live_records(path: Path) -> None:
    rng = random.Random(3)
    journal = Journal(path, compact_after=5)
    expected: dict[tuple[int, str], None] = {}
    max_lines = 0
    for n in range(300):
        user = rng.choice((ALICE, BOB))
        await journal.add(key(user), [turn(str(n), user)])
        expected[(user, str(n))] = None
        mine = [tid for uid, tid in expected if uid == user]
        if len(mine) > 2 and rng.random() < 0.8:
            done = rng.sample(mine, 2)
            await journal.done(user, done)
            for tid in done:
                del expected[(user, tid)]
        if rng.random() < 0.03:
            await journal.forget_user(user)
            expected = {k: None for k in expected if k[0] != user}
        max_lines = max(max_lines, len(path.read_bytes().splitlines()))
        assert journal.pending == len(expected)
    assert max_lines < 60, f"never compacted: {max_lines} lines"  # 300 turns + their done records otherwise
    assert live_ids(path) == list(expected)


async def test_failed_fsync_raises_and_changes_nothing(path: Path) -> None:
    failing = {"on": False}

    def fsync(fd: int) -> None:
        if failing["on"]:
            raise OSError(errno.EIO, "I/O error")
        os.fsync(fd)

    journal = Journal(path, fsync=fsync)
    await journal.add(key(), [turn("1")])
    failing["on"] = True
    with pytest.raises(OSError) as caught:
        await journal.add(key(), [turn("2")])
    assert caught.value.errno == errno.EIO
    assert journal.pending == 1  # not acknowledged, not counted
    failing["on"] = False
    await journal.add(key(), [turn("3")])
    # "2" reached the file before its fsync failed: replaying it is harmless (never acknowledged, never lost).
    assert set(live_ids(path)) >= {(ALICE, "1"), (ALICE, "3")}


async def test_failed_compaction_is_not_an_error(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    calls = {"n": 0}

    def fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 5:  # appends are calls 1-4; the compaction after the 4th append is call 5
            raise OSError(errno.ENOSPC, "No space left on device")
        os.fsync(fd)

    caplog.set_level(logging.WARNING, logger="bot.memory.drivers.files.journal")
    journal = Journal(path, compact_after=2, fsync=fsync)
    await journal.add(key(), [turn("1")])
    await journal.done(ALICE, ["1"])
    await journal.add(key(), [turn("2")])  # 3 lines, 1 live: not yet mostly obsolete (3 <= 4 * 1)
    await journal.done(ALICE, ["2"])  # 4 lines, 0 live: compaction, whose fsync fails: logged, not raised
    assert calls["n"] == 5
    assert "compaction failed" in caplog.text
    assert not list(path.parent.glob("*.compact"))
    await journal.add(key(), [turn("3")])
    assert live_ids(path) == [(ALICE, "3")]


# --- SIGKILL at random moments ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    kind: str  # add | done | purge
    user: int
    turn_id: str = ""

    @classmethod
    def parse(cls, words: list[str]) -> Op:
        return cls(words[0], int(words[1]), words[2] if len(words) > 2 else "")


def applied(state: list[tuple[int, str]], op: Op) -> list[tuple[int, str]]:
    if op.kind == "add":
        return [*state, (op.user, op.turn_id)] if (op.user, op.turn_id) not in state else state
    if op.kind == "done":
        return [item for item in state if item != (op.user, op.turn_id)]
    return [item for item in state if item[0] != op.user]


@dataclass
class JournalKillStats:
    kills: int = 0
    acknowledged_adds: int = 0
    in_flight_landed: int = 0
    torn_tails: int = 0
    lines_read: int = 0  # before the kill, chosen by the seeded rng


def run_output(lines: Iterable[bytes], state: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], Op | None, int]:
    """Apply the acknowledged operations of one writer run; return the state, the operation in flight, adds."""
    in_flight: Op | None = None
    adds = 0
    for raw in lines:
        words = raw.decode().split()
        if words[0] == "intent":
            assert in_flight is None, "the writer runs one operation at a time"
            in_flight = Op.parse(words[1:])
        else:
            assert words[0] == "ok" and in_flight == Op.parse(words[1:]), words
            state = applied(state, in_flight)
            adds += in_flight.kind == "add"
            in_flight = None
    return state, in_flight, adds


def journal_kill_loop(folder: Path, kills: int, seed: int) -> JournalKillStats:
    rng = random.Random(seed)
    stats = JournalKillStats()
    state: list[tuple[int, str]] = []  # what must be live: every acknowledged add, minus acknowledged done/purge
    journal_path = folder / JOURNAL_NAME
    check_dir = folder.parent / "replay-copy"
    with WriterPool(lambda run: ["--journal", str(folder), str(run)]) as writers:
        for _ in range(kills):
            proc = writers.start()
            try:
                ready = read_line(proc).decode().split()
                assert ready[0] == "ready"
                seen = [(int(u), t) for u, t in (item.split(":") for item in ready[1:])]
                assert seen == state, "the writer's own replay disagrees with what was acknowledged"
                lines = [read_line(proc) for _ in range(rng.randint(0, 8))]
                stats.lines_read += len(lines)
            finally:
                proc.send_signal(signal.SIGKILL)
                rest, err = finish(proc)
            assert proc.returncode == -signal.SIGKILL, f"writer was not killed: rc={proc.returncode} {err!r}"
            expected, in_flight, adds = run_output([*lines, *rest.splitlines()], state)
            stats.acknowledged_adds += adds

            raw = journal_path.read_bytes() if journal_path.exists() else b""
            body = raw.splitlines()
            for line in body[:-1]:
                json.loads(line)  # only the very last line can be torn
            if body and not raw.endswith(b"\n"):
                stats.torn_tails += 1

            shutil.rmtree(check_dir, ignore_errors=True)  # replay a copy: the next writer must meet the raw file
            check_dir.mkdir()
            if journal_path.exists():
                shutil.copy2(journal_path, check_dir / JOURNAL_NAME)
            actual = live_ids(check_dir / JOURNAL_NAME)
            allowed = [expected] + ([applied(expected, in_flight)] if in_flight else [])
            assert actual in allowed, (
                f"journal holds {actual}; acknowledged state {expected}, in flight {in_flight}"
            )
            stats.in_flight_landed += actual != expected
            state = actual
            stats.kills += 1
    return stats


@pytest.mark.timeout(300)  # normally well under a minute; generous for a loaded CI box
def test_sigkill_never_loses_an_acknowledged_turn(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    stats = journal_kill_loop(folder, KILLS, SEED)
    print(f"\njournal: {stats.kills} kills, {stats.acknowledged_adds} acknowledged turns, "
          f"{stats.in_flight_landed} in-flight ops landed, {stats.torn_tails} torn tails")
    assert stats.kills == KILLS
    # The writers did real work between kills: every step of theirs prints at most 6 lines, one of them "ok add".
    assert stats.acknowledged_adds >= stats.lines_read // 6 > 0


@pytest.mark.soak
@pytest.mark.timeout(0)  # as long as SOAK_KILLS takes
@pytest.mark.skipif(os.environ.get("RUN_SOAK") != "1", reason="soak: set RUN_SOAK=1")
def test_sigkill_soak(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    stats = journal_kill_loop(folder, SOAK_KILLS, SEED + 1)
    print(f"\njournal soak: {stats.kills} kills, {stats.acknowledged_adds} acknowledged turns, "
          f"{stats.in_flight_landed} in-flight landed, {stats.torn_tails} torn tails")
    assert stats.kills == SOAK_KILLS
