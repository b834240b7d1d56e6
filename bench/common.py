"""Shared helpers for the benchmarks: timing, percentiles, result tables, and seeded synthetic data.

Every benchmark measures our figure and its baseline in the same process and the same run, and reports ratios:
the machines are shared and noisy, so absolute times drift between runs while ratios hold.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LOCOMO = PROJECT_ROOT / "bench" / "data" / "locomo10"
"""Where `scripts/fetch_locomo.py` puts the LoCoMo-10 evaluation data (not in the repository: see that script)."""
LOCOMO_HINT = "fetch it with `python scripts/fetch_locomo.py`, or pass the folder holding it"

# --- statistics ----------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation, like numpy's default; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (rank - low))


def p50(values: Sequence[float]) -> float:
    return percentile(values, 50)


def p95(values: Sequence[float]) -> float:
    return percentile(values, 95)


def median(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


# --- timing --------------------------------------------------------------------------------------------------

NS_PER_MS = 1_000_000


def time_ns(fn: Callable[[], object], *, reps: int, warmup: int = 5) -> list[int]:
    """Wall time of `fn()` in nanoseconds, `reps` times after `warmup` untimed calls (GC off while timing)."""
    for _ in range(warmup):
        fn()
    samples: list[int] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(reps):
            start = time.perf_counter_ns()
            fn()
            samples.append(time.perf_counter_ns() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


def time_interleaved(
    candidates: dict[str, Callable[[], object]],
    *,
    reps: dict[str, int] | int,
    warmup: int = 5,
    budget_s: float | None = None,
    cpu: dict[str, list[int]] | None = None,
) -> dict[str, list[int]]:
    """Time several candidates in alternating rounds, so machine noise hits them alike.

    `reps` may differ per candidate (a slow baseline gets fewer); rounds go on until every candidate has its
    repetitions, or `budget_s` seconds have passed (each candidate then has at least 3 samples). Returns wall
    times (perf_counter_ns); with `cpu`, also fills it with CPU times (process_time_ns) of the same calls, which
    time stolen by other tenants of a shared machine does not inflate.
    """
    want = dict.fromkeys(candidates, reps) if isinstance(reps, int) else dict(reps)
    for fn in candidates.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[int]] = {name: [] for name in candidates}
    started = time.perf_counter()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        while True:
            active = [name for name in candidates if len(samples[name]) < want[name]]
            if not active:
                break
            over = budget_s is not None and time.perf_counter() - started > budget_s
            if over:
                active = [name for name in active if len(samples[name]) < 3]
                if not active:
                    break
            for name in active:
                fn = candidates[name]
                cpu_start = time.process_time_ns()
                start = time.perf_counter_ns()
                fn()
                samples[name].append(time.perf_counter_ns() - start)
                if cpu is not None:
                    cpu.setdefault(name, []).append(time.process_time_ns() - cpu_start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


async def time_async_ns(fn: Callable[[], Awaitable[object]], *, reps: int, warmup: int = 5) -> list[int]:
    """`time_ns` for a coroutine function, awaited on the running loop."""
    for _ in range(warmup):
        await fn()
    samples: list[int] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(reps):
            start = time.perf_counter_ns()
            await fn()
            samples.append(time.perf_counter_ns() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


def ms(ns: float) -> float:
    return ns / NS_PER_MS


# --- result tables -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    """One line of a result table: what was measured, our figure, the baseline's, their ratio, the target."""

    measure: str
    ours: str
    baseline: str = ""
    ratio: str = ""
    target: str = ""
    passed: bool | None = None  # None: informational, no target
    hard: bool = False  # a correctness check (lost updates, delay bound): fails even in a smoke run

    @property
    def verdict(self) -> str:
        """PASS or MISS against the target; in a smoke run only a correctness check has one (tiny sizes say
        nothing about a target, and a MISS there would be noise)."""
        if self.passed is None or (SMOKE_RUN.on and not self.hard):
            return ""
        return "PASS" if self.passed else "MISS"


@dataclass(slots=True)
class _SmokeRun:
    on: bool = False


SMOKE_RUN = _SmokeRun()
"""Whether this process is a smoke run (set by `header`, which every benchmark calls first)."""
SMOKE_NOTE = "smoke run: tiny sizes, this checks that the benchmark runs; its figures are not measurements"


@dataclass(slots=True)
class Table:
    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *args: object, **kwargs: object) -> Row:
        row = Row(*args, **kwargs)  # type: ignore[arg-type]
        self.rows.append(row)
        return row

    def note(self, text: str) -> None:
        self.notes.append(text)

    def render(self) -> str:
        header = ("measure", "ours", "baseline", "ratio", "target", "")
        body = [(r.measure, r.ours, r.baseline, r.ratio, r.target, r.verdict) for r in self.rows]
        widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]

        def fmt(line: Sequence[str]) -> str:
            cells = [str(line[0]).ljust(widths[0])] + [str(c).rjust(w) for c, w in zip(line[1:5], widths[1:5], strict=True)]
            return ("| " + " | ".join(cells) + " | " + str(line[5]).ljust(widths[5]) + " |").rstrip()

        rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        lines = [f"### {self.title}", "", fmt(header), rule, *(fmt(line) for line in body)]
        if self.notes:
            lines.append("")
            lines.extend(f"- {note}" for note in self.notes)
        return "\n".join(lines)

    def print(self) -> None:
        print(self.render(), flush=True)
        print(flush=True)

    def failed(self, *, smoke: bool) -> bool:
        """True when a target was missed (in a smoke run only correctness checks count)."""
        return any(row.passed is False and (row.hard or not smoke) for row in self.rows)


def ratio(ours: float, baseline: float, *, speedup: bool = False) -> str:
    """`baseline / ours` as "12.3x" when `speedup`, else `ours / baseline` as a percentage."""
    if speedup:
        return f"{baseline / ours:,.1f}x" if ours > 0 else "inf"
    return f"{100 * ours / baseline:.1f}%" if baseline > 0 else "n/a"


def fmt_ms(ns: float, digits: int = 3) -> str:
    return f"{ms(ns):.{digits}f} ms"


# --- command line --------------------------------------------------------------------------------------------


def parser(description: str | None) -> argparse.ArgumentParser:
    first = (description or "").strip().split("\n\n")[0]
    p = argparse.ArgumentParser(description=first, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny sizes: checks the benchmark runs, not the targets")
    return p


def machine_line() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()} "
        f"{platform.release()}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )


def header(name: str, smoke: bool) -> None:
    SMOKE_RUN.on = smoke
    mode = f" [{SMOKE_NOTE}]" if smoke else ""
    print(f"## {name}{mode}\n\n{machine_line()}\n", flush=True)


def exit_code(tables: Iterable[Table], *, smoke: bool) -> int:
    return 1 if any(table.failed(smoke=smoke) for table in tables) else 0


# --- seeded synthetic facts and dialogue ---------------------------------------------------------------------

CATEGORIES = ("preference", "knowledge", "context", "behavior", "goal", "relationship")
_SUBJECTS = (
    "Go microservices", "Rust embedded firmware", "a Django shop backend", "Kubernetes operators",
    "a Unity roguelike", "React dashboards", "data pipelines in Airflow", "a home-lab Proxmox cluster",
    "Elixir chat servers", "iOS apps in SwiftUI", "graph neural networks", "PostgreSQL tuning",
    "a Flutter fitness app", "Terraform modules", "a compiler for a toy language", "Grafana alerting",
    "a Raspberry Pi weather station", "Kafka consumers", "a Chrome extension", "Haskell parsers",
)
_LIKES = (
    "short answers", "code examples over prose", "answers in bullet points", "dark roast coffee",
    "bouldering on weekends", "Japanese jazz", "tabletop RPGs", "long-distance cycling", "sourdough baking",
    "mechanical keyboards", "sci-fi novels", "learning Korean", "trail running", "film photography",
    "chess openings", "growing chillies", "retro handheld consoles", "birdwatching", "watercolour painting",
    "Formula 1 races",
)
_PLACES = (
    "Berlin", "Osaka", "Toronto", "Lyon", "Melbourne", "Taipei", "Austin", "Kraków", "Nairobi", "Lisbon",
    "Montreal", "Seoul", "Edinburgh", "Porto", "Denver", "Tallinn", "Cape Town", "Hanoi", "Oslo", "Bogotá",
)
_PEOPLE = ("sister", "brother", "partner", "mother", "father", "best friend", "daughter", "son", "flatmate")
_JOBS = ("nurse", "teacher", "lawyer", "chef", "architect", "pilot", "data analyst", "carpenter", "vet")
_PETS = ("Miso", "Pixel", "Noodle", "Biscuit", "Tofu", "Kernel", "Pepper", "Mochi", "Ziggy", "Olive")
_TEMPLATES = (
    "Works on {subject} at their day job",
    "Prefers {like}",
    "Lives in {place} and works remotely",
    "Is learning {subject} in the evenings",
    "Has a cat named {pet}",
    "Is preparing a conference talk about {subject}",
    "Dislikes meetings before 10am and enjoys {like}",
    "Is migrating a legacy service to {subject}",
    "Their {person} works as a {job} in {place}",
    "Plans a trip to {place} next spring",
    "Spends most weekends on {like}",
    "Wants feedback on {subject} to be direct rather than diplomatic",
    "Recently started a side project about {subject}",
    "Grew up in {place} and moved away for university",
    "Has a dog named {pet} who hates thunderstorms",
    "Their {person} is visiting from {place} next month",
    "喜欢喝手冲咖啡，周末经常去爬山",
    "最近在学习日语，准备明年去大阪工作",
)
_DIALOGUE = (
    "Can you help me debug {subject}? The tests pass locally but fail in CI.",
    "I'm flying to {place} next week, any tips for the first day?",
    "My {person} asked me about {like}, what should I tell them?",
    "Give me a quick plan for learning {subject} in a month.",
    "Any ideas for a weekend of {like} near {place}?",
    "The deploy of {subject} broke again last night and I'm exhausted.",
    "What's a good gift for my {person}, who is a {job}?",
    "I want to write a short post about {subject}, can you outline it?",
    "{pet} kept me up all night, I need coffee and a simple answer.",
    "我下个月要去{place}出差，有什么推荐的吗？",
)


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        subject=rng.choice(_SUBJECTS),
        like=rng.choice(_LIKES),
        place=rng.choice(_PLACES),
        person=rng.choice(_PEOPLE),
        job=rng.choice(_JOBS),
        pet=rng.choice(_PETS),
    )


def fact_texts(n: int, seed: int = 1) -> list[str]:
    """`n` realistic fact sentences (mostly English, some Chinese), seeded."""
    rng = random.Random(seed)
    return [_fill(rng.choice(_TEMPLATES), rng) for _ in range(n)]


def make_facts(n: int, seed: int = 1) -> list[object]:
    """`n` `bot.memory.models.Fact` objects with seeded contents, categories and confidences."""
    from bot.memory.models import Fact, iso

    rng = random.Random(seed)
    now = datetime(2025, 6, 1, tzinfo=UTC)
    facts: list[object] = []
    for i, text in enumerate(fact_texts(n, seed)):
        created = now - timedelta(days=rng.randint(0, 365), seconds=rng.randint(0, 86_400))
        facts.append(
            Fact(
                id=f"fact_{i:08x}",
                content=text,
                category=rng.choice(CATEGORIES),
                confidence=round(rng.uniform(0.7, 1.0), 2),
                createdAt=iso(created),
                source=f"conversation:{rng.getrandbits(60)}",
                lastConfirmedAt=iso(created),
            )
        )
    return facts


def make_long_facts(n: int, seed: int = 1, low: int = 150, high: int = 300) -> list[object]:
    """`n` facts of realistic length for a talkative user: `low` to `high` characters each, seeded (several
    template sentences joined, the way the extractor folds details into one fact)."""
    rng = random.Random(seed)
    facts = make_facts(n, seed)
    for fact in facts:
        text, length = str(fact.content), rng.randint(low, high)  # type: ignore[attr-defined]
        while len(text) < length:
            text = f"{text}; {_fill(rng.choice(_TEMPLATES), rng).lower()}"
        fact.content = text[:high].rstrip("; ")  # type: ignore[attr-defined]
    return facts


def dialogues(count: int, seed: int = 2, turns: int = 3) -> list[list[str]]:
    """`count` recent-conversation windows of `turns` turns each (user lines and short bot replies), seeded."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        window = []
        for t in range(turns):
            if t % 2 == 0:
                window.append(_fill(rng.choice(_DIALOGUE), rng))
            else:
                window.append(
                    "Sure. Start small: check the logs, pin the versions, and try again with a clean cache. "
                    + _fill(rng.choice(_DIALOGUE), rng)
                )
        out.append(window)
    return out


def grid(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]], notes: Sequence[str] = ()) -> str:
    """A plain markdown table (first column left-aligned, the rest right-aligned)."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(line[i]) for line in cells) for i in range(len(headers))]

    def fmt(line: Sequence[str]) -> str:
        return "| " + " | ".join([line[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True))]) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    out = [f"### {title}", "", fmt(cells[0]), rule, *(fmt(line) for line in cells[1:])]
    if notes:
        out.append("")
        out.extend(f"- {note}" for note in notes)
    return "\n".join(out)
