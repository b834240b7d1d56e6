"""A process that writes forever, for the SIGKILL tests (`test_crash_safety.py`, `test_journal.py`).

Run from the repo root:
    python -m tests.memory.crash_writer DIR USERID              # memory file mode
    python -m tests.memory.crash_writer --journal DIR RUN       # journal mode
With `--wait-for-go` it imports everything and then waits for `go` on stdin before touching DIR.

Memory file mode: updates one user's memory through `MemoryStore.edit` in a loop. Generation N writes "generation N"
into two summaries, a padding block and a new fact (keeping the last `KEEP_FACTS` facts, one per generation), so a
file mixing two writes is detectable. Prints `ready G` (G = the generation found on disk) after start-up, then the
number N after each edit has returned, i.e. after the new file is fsynced and renamed into place.

Journal mode: drives a `Journal` the way the engine does (add turns, mark old ones done, purge a user), printing
`intent <op>` before each operation and `ok <op>` once it returned (durable), so the test knows exactly which
operation, at most one, was in flight when the kill came. Prints `ready <live turn ids>` after its replay.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from bot.memory.models import ConversationKey, Fact, MemoryFile, Turn

KEEP_FACTS = 20
PADDING_REPEAT = 400
JOURNAL_COMPACT_AFTER = 8
JOURNAL_USERS = (111, 222)
REPO_ROOT = Path(__file__).resolve().parents[2]
_GENERATION = re.compile(r"generation (\d+)")


def padding(generation: int) -> str:
    """A block that makes each file span several pages and carries the generation all the way through."""
    return f" <g{generation}>" * PADDING_REPEAT


def generation_of(memory: MemoryFile) -> int:
    """The generation a memory file was written at (0 for an empty one)."""
    found = _GENERATION.match(memory.user.topOfMind.summary)
    return int(found.group(1)) if found else 0


def check_consistent(memory: MemoryFile) -> int:
    """Raise AssertionError unless every part of the file comes from the same generation; return it."""
    generation = generation_of(memory)
    if generation == 0:
        assert memory.is_empty(), "a file without a generation must be empty"
        return 0
    assert memory.user.topOfMind.summary == f"generation {generation}{padding(generation)}"
    assert memory.history.recentMonths.summary == f"generation {generation}"
    expected = list(range(max(1, generation - KEEP_FACTS + 1), generation + 1))
    assert [fact.content for fact in memory.facts] == [f"generation {n}" for n in expected], "facts mixed"
    assert [fact.id for fact in memory.facts] == [f"fact_{n:08x}" for n in expected]
    assert memory.appliedTurnIds == [f"turn-{generation}"]
    return generation


async def store_loop(folder: Path, user_id: int) -> None:
    from bot.memory.drivers.files.memories import MemoryStore  # imported per mode: each restart should be quick

    store = MemoryStore(folder)
    store.prepare()
    generation = check_consistent(await store.load(user_id))
    print(f"ready {generation}", flush=True)
    while True:
        generation += 1
        async with store.edit(user_id) as memory:
            memory.user.topOfMind.summary = f"generation {generation}{padding(generation)}"
            memory.history.recentMonths.summary = f"generation {generation}"
            memory.facts.append(
                Fact(id=f"fact_{generation:08x}", content=f"generation {generation}", confidence=0.9)
            )
            memory.facts = memory.facts[-KEEP_FACTS:]
            memory.appliedTurnIds = [f"turn-{generation}"]
        print(generation, flush=True)


def journal_turn(user_id: int, turn_id: str) -> Turn:
    return Turn(
        role="user", author_id=user_id, author_name=f"user{user_id}", text=f"message {turn_id} " + "x" * 200,
        at=datetime(2024, 5, 1, tzinfo=UTC), turn_id=turn_id,
    )


async def journal_loop(folder: Path, run: int) -> None:
    from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal

    journal = Journal(folder / JOURNAL_NAME, compact_after=JOURNAL_COMPACT_AFTER)
    live = [(item.key.user_id, item.turn.turn_id) for item in journal.replay()]
    print("ready " + " ".join(f"{user}:{turn_id}" for user, turn_id in live), flush=True)
    main, other = JOURNAL_USERS
    step = 0
    while True:
        step += 1
        turn_id = f"{run}-{step}"
        user = other if step % 3 == 0 else main
        print(f"intent add {user} {turn_id}", flush=True)
        await journal.add(ConversationKey(9000 + user, user), [journal_turn(user, turn_id)])
        print(f"ok add {user} {turn_id}", flush=True)
        live.append((user, turn_id))
        mine = [tid for uid, tid in live if uid == main]
        if len(mine) > 3:
            print(f"intent done {main} {mine[0]}", flush=True)
            await journal.done(main, [mine[0]])
            print(f"ok done {main} {mine[0]}", flush=True)
            live.remove((main, mine[0]))
        if step % 10 == 0:
            print(f"intent purge {other}", flush=True)
            await journal.forget_user(other)
            print(f"ok purge {other}", flush=True)
            live = [(uid, tid) for uid, tid in live if uid != other]


# --- the test side: starting, reading and reaping writers ----------------------------------------------------


def read_line(proc: subprocess.Popen[bytes]) -> bytes:
    """The writer's next line; fails with its stderr if it ended instead."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        _, err = finish(proc)
        raise AssertionError(f"writer ended early (rc={proc.returncode}): {err.decode(errors='replace')[-3000:]}")
    return line


def finish(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Reap a (killed) writer and return the rest of its stdout and stderr. Reads through the same buffered pipe
    objects `read_line` used: `communicate` would miss lines they had already buffered."""
    assert proc.stdout is not None and proc.stderr is not None
    if proc.stdin is not None and not proc.stdin.closed:
        proc.stdin.close()
    with proc.stdout, proc.stderr:
        rest = proc.stdout.read()
        err = proc.stderr.read()
    proc.wait()
    return rest, err


class WriterPool:
    """Starts writers a few at a time ahead of need (`--wait-for-go`), so Python's start-up overlaps the previous
    kill cycle instead of adding to it. Each `start()` returns a fresh process that has only now been allowed to
    touch the data folder; `arguments(n)` gives the n-th writer's arguments."""

    def __init__(self, arguments: Callable[[int], list[str]], ahead: int = 3) -> None:
        self._arguments = arguments
        self._ahead = ahead
        self._count = 0
        self._waiting: deque[subprocess.Popen[bytes]] = deque()

    def _spawn(self) -> None:
        args = [sys.executable, "-m", "tests.memory.crash_writer", "--wait-for-go", *self._arguments(self._count)]
        self._count += 1
        self._waiting.append(
            subprocess.Popen(
                args, cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )

    def start(self) -> subprocess.Popen[bytes]:
        while len(self._waiting) <= self._ahead:
            self._spawn()
        proc = self._waiting.popleft()
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        proc.stdin.close()
        return proc

    def __enter__(self) -> WriterPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        while self._waiting:
            proc = self._waiting.popleft()
            proc.kill()
            finish(proc)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--journal", action="store_true")
    parser.add_argument("folder", type=Path)
    parser.add_argument("number", type=int, help="user id (memory mode) or run number (journal mode)")
    parser.add_argument(
        "--wait-for-go", action="store_true",
        help="import everything, then wait for a line on stdin before touching DIR (lets a test start the next "
        "writer while the current one runs)",
    )
    args = parser.parse_args(argv)
    if args.journal:
        from bot.memory.drivers.files.journal import Journal  # noqa: F401  (warm the imports before waiting)
    else:
        from bot.memory.drivers.files.memories import MemoryStore  # noqa: F401
    if args.wait_for_go and sys.stdin.readline().strip() != "go":
        return
    loop = journal_loop(args.folder, args.number) if args.journal else store_loop(args.folder, args.number)
    asyncio.run(loop)


if __name__ == "__main__":
    main(sys.argv[1:])
