"""Resident memory of the bot at idle with 1,000 users' memory files on disk (target: under 200 MB).

    .venv/bin/python bench/footprint_rss.py [--users 1000] [--facts 30] [--idle 5]

What it does, all on this machine and without reaching the internet:
1. makes a temporary DATA_DIR with --users memory files (the memory file format, ~--facts facts each);
2. measures a baseline: a bare `python -c "import discord, openai, sklearn"` process, idle;
3. starts `python -m tests.standin` (the bot's test-only entry point: `python -m bot` doing everything but the
   Discord login, reporting ready by writing DATA_DIR/heartbeat.json with connected=true) with that DATA_DIR,
   dummy secrets and OPENAI_BASE_URL pointing at a closed local port;
4. waits for that heartbeat, idles --idle seconds, reads VmRSS/VmHWM from /proc/<pid>/status;
5. sends SIGTERM and reports the exit status and how long the shutdown took.

Linux only (/proc). Prints a small table; exits 1 when the bot never became ready or RSS is over the target.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TARGET_MB = 200.0

CATEGORIES = ("preference", "knowledge", "context", "behavior", "goal", "relationship")
SUBJECTS = (
    "Go microservices",
    "Rust embedded firmware",
    "a Django shop backend",
    "Kubernetes operators",
    "a Unity roguelike",
    "React dashboards",
    "data pipelines in Airflow",
    "a home-lab Proxmox cluster",
    "Elixir chat servers",
    "iOS apps in SwiftUI",
    "a PhD on graph neural networks",
    "PostgreSQL tuning",
)
LIKES = (
    "short answers",
    "code examples over prose",
    "answers in bullet points",
    "dark roast coffee",
    "bouldering on weekends",
    "Japanese jazz",
    "tabletop RPGs",
    "long-distance cycling",
    "sourdough baking",
    "mechanical keyboards",
    "sci-fi novels by Ursula K. Le Guin",
    "learning Korean",
)
PLACES = (
    "Berlin",
    "Osaka",
    "Toronto",
    "Lyon",
    "Melbourne",
    "Taipei",
    "Austin",
    "Kraków",
    "Nairobi",
    "Lisbon",
)
TEMPLATES = (
    "Works on {subject} at their day job",
    "Prefers {like}",
    "Lives in {place} and is in the {tz} time zone",
    "Is currently learning {subject} in the evenings",
    "Has a cat named {pet}",
    "Is preparing a conference talk about {subject}",
    "Dislikes meetings before 10am; enjoys {like}",
    "Uses Neovim with a custom Lua config",
    "Is migrating a legacy service from Python 2 to {subject}",
    "Wants feedback to be direct rather than diplomatic",
    "Has a sister who works as a nurse in {place}",
    "Plans a trip to {place} next spring",
    "喜欢喝手冲咖啡，周末去爬山",  # text without spaces between words, as the selector must handle
    "最近在学习日语，准备明年去大阪工作",
)
PETS = ("Miso", "Pixel", "Noodle", "Biscuit", "Tofu", "Kernel")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def make_memory(rng: random.Random, facts: int, now: datetime) -> dict[str, object]:
    """One user's memory file as the bot writes it, with realistic lengths."""
    subject, like, place = rng.choice(SUBJECTS), rng.choice(LIKES), rng.choice(PLACES)

    def section(text: str) -> dict[str, str]:
        return {"summary": text, "updatedAt": _iso(now - timedelta(days=rng.randint(0, 60)))}

    fact_list = []
    for _ in range(facts):
        created = now - timedelta(days=rng.randint(0, 365), seconds=rng.randint(0, 86_400))
        content = rng.choice(TEMPLATES).format(
            subject=rng.choice(SUBJECTS),
            like=rng.choice(LIKES),
            place=rng.choice(PLACES),
            tz=f"UTC{rng.randint(-8, 9):+d}",
            pet=rng.choice(PETS),
        )
        fact_list.append(
            {
                "id": f"fact_{rng.getrandbits(32):08x}",
                "content": content,
                "category": rng.choice(CATEGORIES),
                "confidence": round(rng.uniform(0.7, 1.0), 2),
                "createdAt": _iso(created),
                "source": f"channel:{rng.getrandbits(60)}",
                "lastConfirmedAt": _iso(min(now, created + timedelta(days=rng.randint(0, 30)))),
            }
        )
    return {
        "version": "1.0",
        "user": {
            "workContext": section(
                f"Software engineer working mainly on {subject}; on call one week a month, "
                "cares about observability and clean deploys."
            ),
            "personalContext": section(f"Lives in {place}. Enjoys {like}. Speaks English and some German."),
            "topOfMind": section(f"Debugging a flaky integration test in {subject}; preparing for a job interview."),
        },
        "history": {
            "recentMonths": section(f"Moved the team's CI to GitHub Actions; started on {subject}."),
            "earlierContext": section("Studied physics before switching to software; first job at an agency."),
            "longTermBackground": section("Grew up bilingual; has been programming since school."),
        },
        "facts": fact_list,
    }


def populate(data_dir: Path, users: int, facts: int, seed: int = 1) -> tuple[int, int]:
    """Write `users` memory files into DATA_DIR/memory; return (files, total bytes)."""
    rng = random.Random(seed)
    now = datetime.now(UTC)
    memory_dir = data_dir / "memory"
    memory_dir.mkdir(parents=True)
    total = 0
    user_ids: set[int] = set()
    while len(user_ids) < users:
        user_ids.add(rng.randint(10**17, 10**19 - 1))  # Discord snowflakes: 18-19 digits
    for user_id in sorted(user_ids):
        blob = json.dumps(make_memory(rng, max(1, facts + rng.randint(-5, 5)), now), ensure_ascii=False, indent=2)
        path = memory_dir / f"{user_id}.json"
        path.write_text(blob, encoding="utf-8")
        total += len(blob.encode("utf-8"))
    return users, total


def proc_status_kb(pid: int, field: str) -> int:
    """A `VmRSS:`-style figure, in kB, from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def offline_env(extra: dict[str, str], pycache: Path | None = None) -> dict[str, str]:
    """A minimal environment: no inherited secrets, no proxies, the project importable, `extra` on top.

    With `pycache`, bytecode is looked up in (and never written to) that empty folder, so every module is
    compiled at import as in the container image, which ships no __pycache__.
    """
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(PROJECT_ROOT),
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NO_PROXY": "*",
    }
    if pycache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env.update(extra)
    return env


def measure_baseline(python: str, workdir: Path, settle: float, pycache: Path | None) -> tuple[float, float]:
    """RSS (MB) of a bare interpreter that imported the three heavy libraries; plus its import time (s)."""
    code = "import discord, openai, sklearn, sys, time; print('ready', flush=True); time.sleep(600)"
    start = time.monotonic()
    proc = subprocess.Popen(
        [python, "-c", code],
        cwd=workdir,
        env=offline_env({}, pycache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        import_s = time.monotonic() - start
        if line.strip() != "ready":
            raise RuntimeError(f"baseline process failed: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(settle)
        return proc_status_kb(proc.pid, "VmRSS") / 1024, import_s
    finally:
        proc.kill()
        proc.wait()


def wait_for_ready(proc: subprocess.Popen[bytes], heartbeat: Path, timeout: float) -> float | None:
    """Seconds until the heartbeat says connected=true; None when the bot died or the timeout passed."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if proc.poll() is not None:
            return None
        try:
            if json.loads(heartbeat.read_text(encoding="utf-8")).get("connected") is True:
                return time.monotonic() - start
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(0.1)
    return None


WARM_SCRIPT = """
import asyncio, os, sys
from pathlib import Path
from bot.config import Settings
from bot.memory.pipeline.selector import FactSelector
from bot.memory.drivers.files.memories import MemoryStore

CACHE_USERS = Settings.model_fields["memory_cache_users"].default  # the bot's default MEMORY_CACHE_USERS

def rss_mb():
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise KeyError("VmRSS")

async def main():
    folder = Path(sys.argv[1])
    store = MemoryStore(folder, cache_size=CACHE_USERS)
    selector = FactSelector(cache_size=CACHE_USERS)
    ids = sorted(p.stem for p in folder.glob("*.json"))
    before = rss_mb()
    for uid in ids:
        await store.load_with_revision(uid)
    cached = rss_mb()
    for uid in ids:
        memory, revision = await store.load_with_revision(uid)
        selector.index_for(uid, revision, memory.facts)
    indexed = rss_mb()
    held = (len(getattr(store, "_cache", ())), getattr(store, "_cache_size", -1),
            len(getattr(selector, "_cache", ())), getattr(selector, "_cache_size", -1))
    print(f"{len(ids)} {before:.1f} {cached:.1f} {indexed:.1f}", *held)

asyncio.run(main())
"""


@dataclass(frozen=True, slots=True)
class Warm:
    """Extra RSS with every user active, and what the engine's two caches hold at that point."""

    users: int
    cached_mb: float  # every memory file loaded once: the store's parsed-file cache
    indexed_mb: float  # then a selector index fitted for every user
    store_entries: int  # files the store's cache holds afterwards (of store_capacity; -1: unknown)
    store_capacity: int
    index_entries: int  # indexes the selector's cache holds afterwards (of index_capacity)
    index_capacity: int

    @property
    def per_file_kb(self) -> float:
        return 1024 * self.cached_mb / self.store_entries if self.store_entries > 0 else float("nan")

    @property
    def per_index_kb(self) -> float:
        return 1024 * self.indexed_mb / self.index_entries if self.index_entries > 0 else float("nan")


def measure_warm(python: str, workdir: Path, memory_dir: Path, pycache: Path | None) -> Warm | str:
    """Extra RSS when every user is active: all memory files in the store's cache, plus the selector's indexes.

    Runs the memory engine alone (no Discord) in a fresh process, with the store and selector built with their
    default cache sizes, as `bot.app` builds them; uses the engine's internal API, so it reports why when that
    API has changed instead of failing the whole benchmark.
    """
    result = subprocess.run(
        [python, "-c", WARM_SCRIPT, str(memory_dir)],
        cwd=workdir,
        env=offline_env({}, pycache),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        return (result.stderr.strip().splitlines() or ["no output"])[-1]
    users, before, cached, indexed, *held = result.stdout.split()
    store_entries, store_capacity, index_entries, index_capacity = (int(x) for x in held)
    return Warm(int(users), float(cached) - float(before), float(indexed) - float(cached),
                store_entries, store_capacity, index_entries, index_capacity)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--facts", type=int, default=30, help="facts per user (±5)")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds at idle before reading RSS")
    parser.add_argument("--ready-timeout", type=float, default=90.0)
    parser.add_argument("--stop-timeout", type=float, default=30.0)
    parser.add_argument("--python", default=sys.executable, help="interpreter to run the bot with")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="ignore existing .pyc files and compile every module at import, like the container image",
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="also estimate the extra memory when every user is active (all files cached, selector indexes built)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="footprint-") as tmp:
        root = Path(tmp)
        data_dir = root / "data"
        workdir = root / "cwd"  # no .env here, so only the settings below apply
        workdir.mkdir()
        pycache = root / "pycache" if args.no_bytecode else None
        if pycache is not None:
            pycache.mkdir()
        files, size = populate(data_dir, args.users, args.facts)
        print(f"memory files: {files} in {data_dir / 'memory'} ({size / 1e6:.1f} MB on disk)")

        baseline_mb, baseline_import_s = measure_baseline(args.python, workdir, settle=1.0, pycache=pycache)

        log_path = root / "bot.log"
        env = offline_env(
            {
                "DATA_DIR": str(data_dir),
                "DISCORD_TOKEN": "MTIzNDU2Nzg5MDEyMzQ1Njc4.BeNcH0.dummy-token-never-sent-anywhere-0123456",  # shaped like one
                "OPENAI_API_KEY": "bench-dummy-key",
                "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # discard port: nothing listens, nothing leaves
                "LOG_LEVEL": "INFO",
            },
            pycache,
        )
        with log_path.open("wb") as log:
            proc = subprocess.Popen([args.python, "-m", "tests.standin"], cwd=workdir, env=env, stdout=log, stderr=log)
            ready_s = wait_for_ready(proc, data_dir / "heartbeat.json", args.ready_timeout)
            rss_mb = hwm_mb = None
            if ready_s is not None:
                time.sleep(args.idle)
                if proc.poll() is None:
                    rss_mb = proc_status_kb(proc.pid, "VmRSS") / 1024
                    hwm_mb = proc_status_kb(proc.pid, "VmHWM") / 1024
            stop_start = time.monotonic()
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                status: int | str = proc.wait(timeout=args.stop_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                status = f"still running after {args.stop_timeout:.0f}s, killed"
            stop_s = time.monotonic() - stop_start
        output = log_path.read_text(encoding="utf-8", errors="replace")
        warm = measure_warm(args.python, workdir, data_dir / "memory", pycache) if args.warm else None

    print(
        f"bytecode: {'none (compiled at import, as in the image)' if args.no_bytecode else '.pyc files used where present'}"
    )
    print()
    print(f"{'measure':<34} {'value':>12}")
    print(f"{'-' * 34} {'-' * 12}")
    print(f"{'baseline RSS (bare imports) [1]':<34} {baseline_mb:>9.1f} MB")
    print(f"{'baseline import time':<34} {baseline_import_s:>10.2f} s")
    if ready_s is None or rss_mb is None or hwm_mb is None:
        print(f"{'bot ready':<34} {'never':>12}")
        print(f"{'bot exit status':<34} {status!s:>12}")
        print("\nbot output (last 40 lines):")
        print("\n".join(output.splitlines()[-40:]))
        return 1
    verdict = "ok" if rss_mb < TARGET_MB else "OVER TARGET"
    print(f"{'bot time to ready (heartbeat)':<34} {ready_s:>10.2f} s")
    print(f"{f'bot RSS after {args.idle:g}s idle':<34} {rss_mb:>9.1f} MB")
    print(f"{'bot peak RSS (VmHWM)':<34} {hwm_mb:>9.1f} MB")
    print(f"{'target':<34} {f'< {TARGET_MB:.0f} MB':>12}  {verdict}")
    print(f"{'bot exit status after SIGTERM':<34} {status!s:>12}")
    print(f"{'shutdown time':<34} {stop_s:>10.2f} s")
    if isinstance(warm, Warm):
        store_label = f"+ store cache, {warm.store_entries}/{warm.store_capacity} files [2]"
        print(f"{store_label:<34} {warm.cached_mb:>9.1f} MB")
        print(f"{f'+ selector indexes, {warm.index_entries}/{warm.index_capacity} [2]':<34} {warm.indexed_mb:>9.1f} MB")
        print(f"{'= bot RSS, every user active':<34} {rss_mb + warm.cached_mb + warm.indexed_mb:>9.1f} MB")
    elif warm is not None:
        print(f"warm estimate unavailable: {warm}")
    print('\n[1] python -c "import discord, openai, sklearn", idle')
    if isinstance(warm, Warm):
        print("[2] measured in a separate process running the memory engine alone over the same files")
    if status != 0:
        print("\nbot output (last 40 lines):")
        print("\n".join(output.splitlines()[-40:]))
    return 0 if rss_mb < TARGET_MB and status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
