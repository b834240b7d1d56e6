"""History sweep on a full disk: 10,000 users at the fact cap, 10% holding a summary value replaced two days ago.

    .venv/bin/python -m bench.history_sweep [--users 10000] [--history-share 0.1] [--smoke]

Ours: `sweep_history` of `bot/memory/parts/retention.py` (the second half of the daily sweep, `memory.ops.sweep`;
run alone through `tests/support/engine.py`): the upkeep schedule names the memories holding an earlier summary
value past its day, and only those are read and rewritten, through the writer, two at a time, while a ticker task
sleeps 5 ms in a loop and records how late it wakes (the event-loop lag a reply would see). Baseline in the same
run, on an identical folder: the same writer path over every memory (what a sweep without the schedule has to do,
since whether a memory holds history is only known by reading it). Also checked: every expired value is gone from
the files, and nothing else changed.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from bench.common import Table, exit_code, header, p95, parser
from bench.retention_sweep import FIRST_USER, IDLE_SECONDS, NOW, make_service, memory_at_cap, with_ticker
from bot.memory.drivers.files.upkeep import UPKEEP_FILE
from bot.memory.models import MemoryFile, PreviousSummary, iso
from bot.memory.rules.summary_expiry import expire
from bot.memory.rules.write_gate import SystemAuthor
from bot.memory.service import MemoryService
from bot.storage.atomic import json_bytes
from tests.support.engine import parts, sweep_history

TARGET_P95_LAG = 0.1
SECRET = "went through a divorce this spring"


def with_history(body: bytes) -> bytes:
    memory = MemoryFile.model_validate(json.loads(body))
    memory.user.personalContext.summary = "They moved to Lisbon and surf every morning."
    memory.user.personalContext.updatedAt = iso(NOW - timedelta(days=2))
    memory.user.personalContext.previous = [
        PreviousSummary(summary=f"They {SECRET}.", updatedAt=iso(NOW - timedelta(days=40)),
                        replacedAt=iso(NOW - timedelta(days=2)))
    ]
    return json_bytes(memory.model_dump(mode="json"), indent=2)


def populate(data: Path, users: int, every: int, plain: bytes, historic: bytes) -> int:
    """Memory files, and the schedule the writer would have left (a due date for each memory with history)."""
    folder = data / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    due: dict[str, str] = {}
    for n in range(users):
        uid = FIRST_USER + n
        has_history = n % every == 0
        (folder / f"{uid}.json").write_bytes(historic if has_history else plain)
        if has_history:
            due[str(uid)] = iso(NOW - timedelta(days=1))
    (data / UPKEEP_FILE).write_bytes(json_bytes({"users": due}))
    return len(due)


async def every_memory(service: MemoryService) -> int:
    """The baseline: every memory through the writer, two at a time, dropping expired values."""
    users = await parts(service).storage.memories.user_ids()
    pruned = 0

    async def one(uid: int) -> int:
        async with parts(service).writer.change(uid, SystemAuthor()) as draft:
            return expire(draft, NOW)

    for start in range(0, len(users), 2):
        pruned += sum(await asyncio.gather(*(one(uid) for uid in users[start : start + 2])))
        await asyncio.sleep(0)
    return pruned


def secrets_left(folder: Path) -> int:
    return sum(SECRET.encode() in path.read_bytes() for path in folder.glob("*.json"))


async def run(users: int, share: float) -> Table:
    every = max(1, round(1 / share))
    plain = memory_at_cap()
    historic = with_history(plain)
    table = Table(f"History sweep: {users:,} users at the fact cap on disk, 1 in {every} with an expired value")
    with tempfile.TemporaryDirectory(prefix="bench-history-") as root:
        ours_dir, base_dir = Path(root) / "ours", Path(root) / "baseline"
        expected = await asyncio.to_thread(populate, ours_dir, users, every, plain, historic)
        await asyncio.to_thread(populate, base_dir, users, every, plain, historic)
        ours, base = make_service(ours_dir), make_service(base_dir)
        await ours.ops.open()
        await base.ops.open()
        _, _, idle_lags = await with_ticker(lambda: _idle())
        report, seconds, lags = await with_ticker(lambda: _ours(ours))
        base_pruned, base_seconds, base_lags = await with_ticker(lambda: every_memory(base))
        left, base_left = secrets_left(ours_dir / "memory"), secrets_left(base_dir / "memory")
        unchanged = sum(path.read_bytes() == plain for path in (ours_dir / "memory").glob("*.json"))
        await ours.ops.shutdown(1.0)
        await base.ops.shutdown(1.0)
    table.add("expired values dropped (exactly)", f"{report:,}", f"{base_pruned:,}", "", f"{expected:,}",
              passed=report == expected and left == 0 and base_left == 0, hard=True)
    table.add("memories left untouched", f"{unchanged:,}", "", "", f"{users - expected:,}",
              passed=unchanged == users - expected, hard=True)
    table.add("sweep wall time", f"{seconds:.2f} s", f"{base_seconds:.2f} s", f"{seconds / base_seconds:.2f}x")
    table.add("event-loop lag, p95", f"{1000 * p95(lags):.1f} ms", f"{1000 * p95(base_lags):.1f} ms", "",
              f"< {1000 * TARGET_P95_LAG:.0f} ms", passed=p95(lags) < TARGET_P95_LAG)
    table.add("event-loop lag, worst", f"{1000 * max(lags, default=0):.1f} ms",
              f"{1000 * max(base_lags, default=0):.1f} ms")
    table.add("idle loop (no sweep), p95 / worst", f"{1000 * p95(idle_lags):.1f} / {1000 * max(idle_lags):.1f} ms")
    table.note("Both rewrite a memory through the writer (its gate, an atomic write with fsync) only when something "
               "changed; the baseline must still read and parse every memory to find out.")
    table.note(f"The idle row is the same ticker for {IDLE_SECONDS:.0f} s with no sweep: the machine's noise floor.")
    return table


async def _idle() -> int:
    await asyncio.sleep(IDLE_SECONDS)
    return 0


async def _ours(service: MemoryService) -> int:
    return (await sweep_history(service, NOW)).pruned


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--users", type=int, default=10_000)
    p.add_argument("--history-share", type=float, default=0.1)
    args = p.parse_args(argv)
    users = 500 if args.smoke else args.users
    header("history_sweep", args.smoke)
    table = asyncio.run(run(users, args.history_share))
    table.print()
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
