"""A user in 300 ticket channels: the memory document's size and the cost of one model save, with and without the cap
on places with summaries (`MEMORY_MAX_PLACES`, default 50), in one run.

    .venv/bin/python -m bench.place_cap [--places 300] [--saves 40] [--smoke]

The user's document holds `--places` restricted channels (a ticket bot's: one per ticket), each with the six
summaries of about 350 characters and their previous values of the day (8 kept per summary), about 22 KB a place;
plus 100 facts at the fact cap. Every save is an extraction's save through `MemoryWriter.change` with a
`ModelAuthor` (lock, read, private copy, write gate, caps, write; the file store without fsync, so what is timed is
the copying, comparing and serialising a document's size costs on the event loop): it rewrites one summary of the
newest ticket. Baseline: the same writer with no cap (the cap set past any count). Ours: the default cap; its first
save trims the document, which is reported on its own. Saves of the two alternate, so noise hits them alike.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import Table, exit_code, fmt_ms, header, p50, p95, parser
from bot.config import Settings
from bot.memory.drivers.bundle import build_file_storage
from bot.memory.models import MemoryFile, Place, PlaceMemory
from bot.memory.parts.writer import MemoryWriter
from bot.memory.rules.write_gate import ModelAuthor
from tests.memory.realistic import memory_at_cap
from tests.support.engine import save_memory

USER = 312345678901234567
GUILD = 7070
FIRST_TICKET = 800000000000000000
T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
WORDS = [
    "order", "refund", "parcel", "courier", "address", "invoice", "delayed", "replacement", "warehouse", "tracking",
    "customer", "support", "weekend", "morning", "colour", "size", "exchange", "voucher", "receipt", "damaged", "box",
]
TARGET_RATIO = 2.0  # the capped save must be at least this much cheaper (CPU) at 300 places


def sentence(seed: int, chars: int = 350) -> str:
    words = [WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(chars // 5)]
    return " ".join(words)[:chars].capitalize() + "."


def ticket_summaries(n: int) -> PlaceMemory:
    """Six summaries, each rewritten 9 times within the day (8 previous values kept)."""
    place = PlaceMemory()
    for k, (_, section) in enumerate(place.sections()):
        for version in range(9):
            section.replace(sentence(n * 100 + k * 10 + version), T0 + timedelta(minutes=n * 2, seconds=version))
    return place


def document(places: int) -> MemoryFile:
    memory = memory_at_cap(100, seed=7)
    for n in range(places):
        memory.places[f"channel:{FIRST_TICKET + n}"] = ticket_summaries(n)
    return memory


def size(memory: MemoryFile) -> int:
    return len(json.dumps(memory.model_dump(mode="json")).encode())


async def save_once(writer: MemoryWriter, place: Place, n: int) -> tuple[int, int]:
    """One extraction-like save: rewrite one summary of `place`; (wall ns, CPU ns)."""
    now = T0 + timedelta(days=1, seconds=n)
    author = ModelAuthor(place, "place", now, grounding="")
    cpu, wall = time.process_time_ns(), time.perf_counter_ns()
    async with writer.change(USER, author) as draft:
        summaries = draft.place_memory(place.key)
        summaries.user.topOfMind.replace(sentence(n), now)
        draft.set_place_memory(place.key, summaries)
    return time.perf_counter_ns() - wall, time.process_time_ns() - cpu


async def run(places: int, saves: int) -> tuple[Table, dict[str, Any]]:
    cap = Settings.model_fields["memory_max_places"].default
    newest = Place.channel(FIRST_TICKET + places - 1, GUILD)
    with tempfile.TemporaryDirectory(prefix="bench-places-") as tmp:
        writers: dict[str, MemoryWriter] = {}
        bundles = []
        for name, limit in (("uncapped", 10**9), ("capped", cap)):
            bundle = build_file_storage(Path(tmp) / name, durable=False)
            await bundle.open()
            await save_memory(bundle.memories, USER, document(places))
            bundles.append(bundle)
            writers[name] = MemoryWriter(bundle.memories, max_facts=100, max_places=limit)
        before = size(await bundles[0].memories.load(USER))
        first_wall, first_cpu = await save_once(writers["capped"], newest, 0)  # trims past the cap
        wall: dict[str, list[int]] = {name: [] for name in writers}
        cpu: dict[str, list[int]] = {name: [] for name in writers}
        for n in range(1, saves + 1):
            for name, writer in writers.items():
                w, c = await save_once(writer, newest, n)
                wall[name].append(w)
                cpu[name].append(c)
        after = {name: await bundle.memories.load(USER) for name, bundle in zip(writers, bundles, strict=True)}
        for bundle in bundles:
            await bundle.close()

    table = Table(f"one user in {places} ticket channels: document and model save, cap {cap} (MEMORY_MAX_PLACES) "
                  f"against no cap, {saves} saves each")
    table.add("places with summaries after the saves", f"{len(after['capped'].places)}",
              f"{len(after['uncapped'].places)}", "", f"<= {cap}", len(after["capped"].places) <= cap, hard=True)
    table.add("document size (JSON)", f"{size(after['capped']) / 1e6:.2f} MB", f"{size(after['uncapped']) / 1e6:.2f} MB",
              f"{size(after['uncapped']) / size(after['capped']):.1f}x smaller")
    table.add("model save, CPU time p50 / p95", f"{fmt_ms(p50(cpu['capped']), 1)} / {fmt_ms(p95(cpu['capped']), 1)}",
              f"{fmt_ms(p50(cpu['uncapped']), 1)} / {fmt_ms(p95(cpu['uncapped']), 1)}",
              f"{p50(cpu['uncapped']) / p50(cpu['capped']):.1f}x cheaper (p50)", f">= {TARGET_RATIO:g}x",
              p50(cpu["uncapped"]) / p50(cpu["capped"]) >= TARGET_RATIO)
    table.add("model save, wall time p50 / p95",
              f"{fmt_ms(p50(wall['capped']), 1)} / {fmt_ms(p95(wall['capped']), 1)}",
              f"{fmt_ms(p50(wall['uncapped']), 1)} / {fmt_ms(p95(wall['uncapped']), 1)}",
              f"{p50(wall['uncapped']) / p50(wall['capped']):.1f}x faster (p50)")
    table.add("the first capped save (trims the document)", f"{fmt_ms(first_wall, 1)} wall, {fmt_ms(first_cpu, 1)} CPU")
    table.note(f"the document before: {places} places with six summaries (350 characters, 8 previous values each) "
               f"and 100 facts: {before / 1e6:.2f} MB of JSON")
    table.note("each save: MemoryWriter.change with a ModelAuthor rewriting one summary of the newest ticket's place, "
               "on the file store without fsync (the copying, gate and serialising are what a document's size costs)")
    return table, {"before": before}


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--places", type=int, default=300)
    p.add_argument("--saves", type=int, default=40)
    args = p.parse_args(argv)
    header("places with summaries: document size and save cost", args.smoke)
    places, saves = (80, 3) if args.smoke else (args.places, args.saves)
    table, _ = asyncio.run(run(places, saves))
    table.print()
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
