"""Footprint: import time, start-up time to ready, resident memory at idle with 1,000 memory files, clean SIGTERM.

    .venv/bin/python -m bench.footprint [--users 1000] [--runs 5] [--idle 5] [--smoke]

1. Import time, median of --runs fresh interpreters each (interleaved): `import bot.cli` (what `python -m bot`
   imports before it starts; the heavy libraries load later, in `run_bot`) and `import bot.app` (the whole
   application graph) against `python -c "pass"` and a bare `import discord, openai, sklearn`.
2. Start-up and memory, with the helpers of bench/footprint_rss.py: a temporary DATA_DIR with --users memory files,
   `python -m tests.standin` (the bot's test-only entry point: everything but the Discord login), dummy secrets and
   OPENAI_BASE_URL=http://127.0.0.1:9/v1 (nothing listens, nothing leaves); ready = DATA_DIR/heartbeat.json says
   connected. VmRSS after --idle seconds against the bare-imports interpreter (target < 200 MB); then SIGTERM, and
   the exit status must be 0.
"""

from __future__ import annotations

import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.common import Table, exit_code, header, parser
from bench.footprint_rss import (
    TARGET_MB,
    Warm,
    measure_baseline,
    measure_warm,
    offline_env,
    populate,
    proc_status_kb,
    wait_for_ready,
)

SNIPPETS = {
    "pass": "pass",
    "bot.cli": "import bot.cli",
    "bot.app": "import bot.app",
    "bare": "import discord, openai, sklearn",
}


def import_times(python: str, workdir: Path, runs: int, names: Sequence[str]) -> dict[str, float]:
    """Median wall seconds of a fresh interpreter running each snippet (interleaved, after one warm-up each)."""
    env = offline_env({})
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(runs + 1 if runs > 1 else 1):
        for name in names:
            start = time.perf_counter()
            subprocess.run([python, "-c", SNIPPETS[name]], cwd=workdir, env=env, check=True)
            if round_ > 0 or runs == 1:  # the first round warms the page cache (skipped for a single run)
                samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def run_bot(python: str, root: Path, data_dir: Path, idle: float) -> dict[str, object]:
    workdir = root / "cwd"
    env = offline_env(
        {
            "DATA_DIR": str(data_dir),
            "DISCORD_TOKEN": "MTIzNDU2Nzg5MDEyMzQ1Njc4.BeNcH0.dummy-token-never-sent-anywhere-0123456",  # shaped like one
            "OPENAI_API_KEY": "bench-dummy-key",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
            "LOG_LEVEL": "INFO",
        }
    )
    log_path = root / "bot.log"
    result: dict[str, object] = {}
    with log_path.open("wb") as log:
        proc = subprocess.Popen([python, "-m", "tests.standin"], cwd=workdir, env=env, stdout=log, stderr=log)
        try:
            ready = wait_for_ready(proc, data_dir / "heartbeat.json", 120.0)
            result["ready_s"] = ready
            if ready is not None:
                time.sleep(idle)
                if proc.poll() is None:
                    result["rss_mb"] = proc_status_kb(proc.pid, "VmRSS") / 1024
                    result["hwm_mb"] = proc_status_kb(proc.pid, "VmHWM") / 1024
            stop = time.perf_counter()
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                result["status"] = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                result["status"] = "killed after 60 s"
            result["stop_s"] = time.perf_counter() - stop
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    result["log_tail"] = "\n".join(log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-30:])
    return result


def all_users_active(python: str, workdir: Path, memory_dir: Path) -> Warm | str:
    """bench/footprint_rss.py's estimate of the extra memory when every user is active."""
    try:
        return measure_warm(python, workdir, memory_dir, None)
    except Exception as error:  # report, do not fail the benchmark
        return f"{type(error).__name__}: {error}"


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--facts", type=int, default=30, help="facts per user (±5)")
    p.add_argument("--runs", type=int, default=5, help="interpreters per import-time figure")
    p.add_argument("--idle", type=float, default=5.0, help="seconds at idle before reading RSS")
    args = p.parse_args(argv)
    header("footprint (import, start-up, memory, SIGTERM)", args.smoke)
    python = sys.executable
    users, runs, idle = (20, 1, 0.5) if args.smoke else (args.users, args.runs, args.idle)

    imports = Table(f"import time, median of {runs} fresh interpreters (existing .pyc used)")
    startup = Table(f"python -m bot with {users} memory files on disk (Discord stand-in, LLM endpoint closed)")
    with tempfile.TemporaryDirectory(prefix="bench-footprint-") as tmp:
        root = Path(tmp)
        (root / "cwd").mkdir()  # no .env here: only the settings we pass apply
        names = ["pass", "bot.cli"] if args.smoke else list(SNIPPETS)
        times = import_times(python, root / "cwd", runs, names)
        imports.add("import bot.cli (what python -m bot loads first)", f"{times['bot.cli']:.2f} s",
                    f"python -c pass {times['pass']:.2f} s", f"{times['bot.cli'] - times['pass']:+.2f} s")
        if not args.smoke:
            imports.add("import bot.app (the whole application)", f"{times['bot.app']:.2f} s",
                        f"import discord, openai, sklearn {times['bare']:.2f} s",
                        f"{times['bot.app'] - times['bare']:+.2f} s")

        data_dir = root / "data"
        files, size = populate(data_dir, users, args.facts)
        baseline_mb = baseline_s = None
        if not args.smoke:
            baseline_mb, baseline_s = measure_baseline(python, root / "cwd", settle=1.0, pycache=None)
        bot = run_bot(python, root, data_dir, idle)
        warm = None if args.smoke else all_users_active(python, root / "cwd", data_dir / "memory")

    ready, rss, hwm, status = bot.get("ready_s"), bot.get("rss_mb"), bot.get("hwm_mb"), bot.get("status")
    startup.add("time to ready (heartbeat connected)", f"{ready:.2f} s" if isinstance(ready, float) else "never",
                f"bare imports {baseline_s:.2f} s" if baseline_s else "",
                f"{ready - baseline_s:+.2f} s" if isinstance(ready, float) and baseline_s else "",
                "ready", isinstance(ready, float), hard=True)
    if isinstance(rss, float) and isinstance(hwm, float):
        startup.add(f"resident memory after {idle:g} s idle (VmRSS)", f"{rss:.1f} MB",
                    f"bare imports {baseline_mb:.1f} MB" if baseline_mb else "",
                    f"{rss - baseline_mb:+.1f} MB" if baseline_mb else "", f"< {TARGET_MB:.0f} MB", rss < TARGET_MB)
        startup.add("peak resident memory (VmHWM)", f"{hwm:.1f} MB")
    if isinstance(warm, Warm) and isinstance(rss, float):
        active = rss + warm.cached_mb + warm.indexed_mb
        startup.add(f"estimate with all {warm.users} users active (files cached + indexes)", f"{active:.1f} MB",
                    f"idle {rss:.1f} MB", f"+{warm.cached_mb:.1f} cache +{warm.indexed_mb:.1f} indexes",
                    "(not idle: no target)")
        if warm.store_entries > 0 and warm.store_capacity > 0:
            indexes = warm.indexed_mb * max(1.0, warm.index_capacity / max(warm.index_entries, 1))
            full = rss + warm.per_file_kb * warm.store_capacity / 1024 + indexes
            startup.add(f"  store cache held {warm.store_entries} of {warm.store_capacity} files, selector "
                        f"{warm.index_entries} of {warm.index_capacity} indexes; both full",
                        f"{full:.1f} MB", f"{warm.per_file_kb:.0f} KB per cached file",
                        f"+{indexes:.1f} indexes", "(extrapolated)")
        startup.note("all users active = bench/footprint_rss.py's estimate: every memory file loaded through the store "
                     "(default cache size) and a selector index fitted for each user (the selector keeps its default "
                     "number), measured in a separate engine-only process; both full = the same per-file and "
                     "per-index costs times the two caches' capacities (30 +/- 5 facts per user)")
    elif isinstance(warm, str):
        startup.note(f"all-users-active estimate unavailable: {warm}")
    startup.add("exit status after SIGTERM", f"{status}", "", "", "0", status == 0, hard=True)
    if isinstance(bot.get("stop_s"), float):
        startup.add("shutdown time after SIGTERM", f"{bot['stop_s']:.2f} s")
    startup.note(f"{files} memory files, {size / 1e6:.1f} MB on disk; bare imports = python -c \"import discord, "
                 "openai, sklearn\" left idle, measured in the same run (bench/footprint_rss.py)")
    imports.print()
    startup.print()
    if status != 0 or ready is None:
        print("bot output (last 30 lines):\n" + str(bot.get("log_tail", "")))
    return exit_code([imports, startup], smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
