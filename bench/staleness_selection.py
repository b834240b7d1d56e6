"""Staleness on the held-out selection sets: evidence-hit@15 on LoCoMo-10 with `MEMORY_STALE_DAYS` off and on.

    .venv/bin/python -m bench.staleness_selection [DATA_DIR_OF_LOCOMO] [--smoke]

The data and the scoring are `bench.selection_quality`'s (every turn a fact, every question with evidence a query; a
hit when an evidence turn is among the 15 selected), with one addition: each turn is dated by its session's date
(`observedAt`), as the bot dates what it learns. LoCoMo's sessions span six to ten months, so the first sessions'
facts are stale by the end. The engine's selector (`FactSelector.select`) runs twice in the same run, without
staleness and with `stale_days=180`, at three moments: the day after the last session, and 180 and 365 days later
(a user who comes back after half a year or a year: then every fact is stale, the oldest most). Both halves of the
conversations are scored apart (the engine's constants were chosen on this data), and the factor's floor was chosen
on the first half only (0.8 lost a point there at 180 days; 0.9 and 0.95 lost none). Target: with staleness on, no drop of more than 0.5 points in any cell. A second table prices the factor per reply (selection at the
fact cap, on against off in the same run).
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.common import DEFAULT_LOCOMO, Table, exit_code, header, parser
from bench.selection_quality import TOP_K, Conversation, load_locomo
from bot.memory.models import Fact, iso
from bot.memory.pipeline.selector import FactSelector

STALE_DAYS = 180
LATER = (1, 180, 365)  # days after the last session
TOLERANCE = 0.005


def session_dates(path: Path) -> list[datetime]:
    """The date of each turn of one LoCoMo file, in the order `load_locomo` reads the turns."""
    data = json.loads(path.read_text(encoding="utf-8"))
    dates, session = [], 1
    while f"session_{session}" in data:
        said = datetime.strptime(str(data[f"session_{session}_date_time"]), "%I:%M %p on %d %B, %Y")
        dates += [said.replace(tzinfo=UTC)] * len(data[f"session_{session}"])
        session += 1
    return dates


def dated(data_dir: Path, smoke: bool) -> list[tuple[Conversation, datetime]]:
    """The conversations with their facts dated, and each one's last session date."""
    conversations, _ = load_locomo(data_dir, captions=False)
    if smoke:
        conversations = conversations[:2]
    found = []
    for conversation in conversations:
        dates = session_dates(data_dir / f"{conversation.name}.json")
        for fact, said in zip(conversation.facts, dates, strict=True):
            fact.createdAt = fact.observedAt = fact.lastConfirmedAt = iso(said)
        if smoke:
            conversation.questions = conversation.questions[:40]
        found.append((conversation, max(dates)))
    return found


def hit_rate(part: Sequence[tuple[Conversation, datetime]], stale_days: int, later: int) -> float:
    hits = total = 0
    for conversation, last in part:
        selector = FactSelector(top_k=TOP_K, stale_days=stale_days)
        now = last + timedelta(days=later)
        for question in conversation.questions:
            chosen = selector.select(conversation.name, 1, conversation.facts, [question.text], TOP_K, now=now)
            picked = {int(fact.id.removeprefix("fact_"), 16) for fact in chosen}
            hits += bool(picked & question.evidence)
            total += 1
    return hits / total if total else 0.0


def cost_table(smoke: bool) -> Table:
    """The price of the factor per reply: selection at the fact cap (100 facts of 150-300 characters, dated over two
    years), staleness off against on, interleaved in the same run (the ratio is what counts, not the figures)."""
    rng = random.Random(17)
    words = [f"{stem}{n}" for stem in ("cello", "river", "bakery", "train", "garden", "office") for n in range(40)]
    now = datetime(2025, 6, 1, tzinfo=UTC)
    facts = []
    for n in range(100):
        text = " ".join(rng.choice(words) for _ in range(60))[: rng.randint(150, 300)]
        stamp = iso(now - timedelta(days=rng.randint(0, 730)))
        facts.append(Fact(id=f"fact_{n:08x}", content=text, confidence=0.9, createdAt=stamp, lastConfirmedAt=stamp))
    rounds = 200 if smoke else 3000
    timings: dict[int, list[float]] = {0: [], STALE_DAYS: []}
    selectors = {days: FactSelector(top_k=TOP_K, stale_days=days) for days in timings}
    for selector in selectors.values():
        selector.select("u", 1, facts, ["warm up"], TOP_K, now=now)
    for _ in range(rounds):
        for days, selector in selectors.items():
            started = time.perf_counter()
            selector.select("u", 1, facts, [" ".join(rng.choice(words) for _ in range(12))], TOP_K, now=now)
            timings[days].append(time.perf_counter() - started)
    off, on = (statistics.median(timings[days]) * 1000 for days in (0, STALE_DAYS))
    result = Table("selection at the fact cap (100 facts), p50 per reply")
    result.add("staleness on vs off", f"{on:.3f} ms", f"{off:.3f} ms", f"{on / off:.2f}x", "<= 1.25x",
               passed=on <= 1.25 * off)
    result.note(f"{rounds} selections each, interleaved")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("data", nargs="?", type=Path, default=DEFAULT_LOCOMO)
    args = p.parse_args(argv)
    header("staleness on the held-out selection sets (LoCoMo-10)", args.smoke)
    conversations = dated(args.data, args.smoke)
    half = max(1, len(conversations) // 2)
    parts = [("conversations 1-" + str(half), conversations[:half]),
             (f"conversations {half + 1}-{len(conversations)}", conversations[half:]), ("all", conversations)]
    started = time.perf_counter()
    result = Table(f"evidence-hit@{TOP_K}, staleness off (baseline) vs MEMORY_STALE_DAYS={STALE_DAYS} (ours)")
    for later in LATER:
        for label, part in parts:
            if not part:
                continue
            off, on = hit_rate(part, 0, later), hit_rate(part, STALE_DAYS, later)
            result.add(f"{label}, {later} days after the last session", f"{on:.3f}", f"{off:.3f}",
                       f"{on - off:+.3f}", f">= {off - TOLERANCE:.3f}", passed=on >= off - TOLERANCE)
    result.note("ratio column: the difference, ours minus the baseline, in the same run")
    result.note(f"{time.perf_counter() - started:.1f} s")
    result.print()
    cost = cost_table(args.smoke)
    cost.print()
    return exit_code([result, cost], smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
