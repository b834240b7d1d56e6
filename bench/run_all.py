"""Run every benchmark: `python -m bench` (default sizes) or `python -m bench --smoke` (tiny sizes, < 30 s).

    .venv/bin/python -m bench [--smoke] [--data DATA_DIR_OF_LOCOMO] [--only NAME,NAME]

The benchmarks run one after the other in this process (the heavy libraries are imported once); the footprint
benchmark starts its own interpreters, and in a smoke run it runs alongside the others to save time (timings of a
smoke run mean nothing anyway). Exit status 1 when a benchmark fails: in a smoke run only on errors and failed
correctness checks (lost updates, the delay bound, the bot not starting or not exiting cleanly), in a full run
also on a missed target.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from bench.common import DEFAULT_LOCOMO, LOCOMO_HINT, PROJECT_ROOT, SMOKE_NOTE, grid, machine_line

BENCHMARKS = (
    "selection_latency",
    "selection_quality",
    "selection_chat",
    "selection_fusion",
    "staleness_selection",
    "prompt_cache",
    "reply_path",
    "first_text",
    "chat_burst",
    "debounce_savings",
    "extraction_cost",
    "store_throughput",
    "storage_backends",
    "encryption_cost",
    "usage_counting",
    "crash_takeover",
    "retention_sweep",
    "history_sweep",
    "load_lag",
    "apply_at_cap",
    "guard_errors",
    "credential_gate",
    "sensitive_gate",
    "gate_corpora",
    "gate_classifier",
    "credential_classifier",
    "recall_state",
    "place_cap",
    "update_suite",
    "forget_suite",
    "selection_embeddings",
    "embedding_cost",
    "footprint",
)
NEEDS_DATA = (  # the LoCoMo-10 folder
    "selection_quality", "selection_chat", "selection_fusion", "prompt_cache", "staleness_selection",
    "selection_embeddings",
)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--smoke", action="store_true", help="tiny sizes: checks that every benchmark runs")
    p.add_argument(
        "--data", type=Path, default=DEFAULT_LOCOMO, help="the LoCoMo-10 folder (scripts/fetch_locomo.py fetches it)"
    )
    p.add_argument("--only", default="", help="comma-separated benchmark names")
    args = p.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        p.error(f"unknown benchmark(s): {', '.join(unknown)}")
    for needs_data in NEEDS_DATA:
        if args.smoke and needs_data in names and not any(args.data.glob("*.json")):
            # The evaluation data lives outside the repository; a smoke run checks the code, not the data.
            print(f"{needs_data} skipped: no LoCoMo data in {args.data} ({LOCOMO_HINT} with --data)\n", flush=True)
            names.remove(needs_data)
    mode = f" ({SMOKE_NOTE}; `python -m bench` measures)" if args.smoke else ""
    print(f"# benchmarks{mode}\n\n{machine_line()}\n", flush=True)
    started = time.perf_counter()

    def argv_for(name: str) -> list[str]:
        extra = [str(args.data)] if name in NEEDS_DATA else []
        return [*extra, *(["--smoke"] if args.smoke else [])]

    background: subprocess.Popen[str] | None = None
    background_started = 0.0
    if args.smoke and "footprint" in names:
        names.remove("footprint")
        background_started = time.perf_counter()
        background = subprocess.Popen(
            [sys.executable, "-m", "bench.footprint", *argv_for("footprint")],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    results: list[tuple[str, int, float]] = []
    for name in names:
        t0 = time.perf_counter()
        try:
            code = importlib.import_module(f"bench.{name}").main(argv_for(name))
        except SystemExit as stop:  # a benchmark that refuses its input (no data folder, say)
            code = stop.code if isinstance(stop.code, int) else 1
            print(f"{name}: {stop.code}", flush=True)
        except Exception:
            traceback.print_exc()
            code = 1
        results.append((name, code, time.perf_counter() - t0))

    if background is not None:
        output, _ = background.communicate(timeout=300)
        print(output, flush=True)
        results.append(("footprint", background.returncode, time.perf_counter() - background_started))

    rows = [[name, "ok" if code == 0 else f"FAILED ({code})", f"{seconds:.1f}"] for name, code, seconds in results]
    print(grid("summary", ["benchmark", "result", "seconds"], rows,
               [f"total {time.perf_counter() - started:.1f} s"]), flush=True)
    return 0 if all(code == 0 for _, code, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
