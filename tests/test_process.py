"""The real process: `python -m bot` started as a subprocess, stopped with real signals, its files checked.

Nothing here reaches the internet. The LLM is `python -m tests.support.llm_server` on 127.0.0.1 (a real HTTP server,
scripted per test); Discord is replaced by the test-only entry point `python -m tests.standin` (no login, everything
else real: settings, logging, cogs, journal replay, debouncer, extractor, store, signal handling, shutdown).

Each process runs in an empty working directory with the repository on PYTHONPATH and every bot setting removed
from the inherited environment, so neither the developer's shell nor a `.env` in the repository (which the README
tells admins to create) can change what a test sees. No sleeps: readiness is the heartbeat file the bot writes
once it is ready (polled with a short deadline), completion is the process exit.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import pytest

from bot.config import Settings
from bot.memory.drivers.files.journal import JOURNAL_NAME, Journal
from bot.memory.models import ConversationKey, Fact, MemoryFile, Turn
from bot.ops.health import HEARTBEAT_FILE, write_heartbeat
from tests.support.llm_server import Response, dump_script, error, extraction, stall

REPO = Path(__file__).resolve().parent.parent
SETTING_NAMES = {name.upper() for name in Settings.model_fields}
TOKEN = "MTE5OTk5OTk5OTk5OTk5OTk5.GtEsT1.known-discord-token-value-0123456789abcdefghij"
API_KEY = "sk-test-known-openai-key-value-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
CHANNEL = 900000000000000001
ALICE = 100000000000000001
FACT = "Writes Go microservices"
READY_SECONDS = 60.0  # a cold start imports discord.py, openai and scikit-learn; slow on a busy 1-vCPU runner


def clean_env(**settings: str) -> dict[str, str]:
    """The inherited environment minus every bot setting and proxy, plus `settings` (and the repo on the path)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key.upper() not in SETTING_NAMES and "PROXY" not in key.upper()
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env["NO_PROXY"] = "*"
    env.update(settings)
    return env


def run_bot_command(
    args: Sequence[str], cwd: Path, env: dict[str, str], timeout: float = 60, module: str = "bot"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def assert_one_clean_line(stream: str, *needles: str) -> str:
    lines = stream.splitlines()
    assert len(lines) == 1, f"expected exactly one line, got:\n{stream}"
    assert "Traceback" not in stream
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]


# --- the scripted LLM server, as a subprocess ---------------------------------------------------------------


@dataclass
class LLMServer:
    base_url: str
    process: subprocess.Popen[str]
    served: int | None = None


@contextmanager
def llm_server(workdir: Path, responses: Sequence[Response]) -> Iterator[LLMServer]:
    """`python -m tests.support.llm_server --port 0 --script ...`; yields once it printed READY; `served` set on
    exit."""
    script = workdir / "llm-script.jsonl"
    dump_script(script, responses)
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.llm_server", "--port", "0", "--script", str(script)],
        cwd=workdir,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = process.stdout.readline()
        match = re.fullmatch(r"READY (\d+)\n", ready)
        assert match, f"the LLM server did not start: {ready!r} {process.stderr.read() if process.stderr else ''}"
        server = LLMServer(f"http://127.0.0.1:{match.group(1)}/v1", process)
        yield server
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=15)
    served = re.search(r"served (\d+) requests", err)
    server.served = int(served.group(1)) if served else None


# --- memory fixtures on disk --------------------------------------------------------------------------------


def journal_turns(data_dir: Path, users: Sequence[int], text: str = "I write Go microservices at work.") -> None:
    """One pending user turn per user, written through the real Journal (as a crashed bot would have left it)."""

    async def fill() -> None:
        journal = Journal(data_dir / JOURNAL_NAME, durable=False)
        now = datetime.now(UTC)
        for index, user in enumerate(users):
            turn = Turn("user", user, f"user{index}", text, now, f"turn-{user}")
            await journal.add(ConversationKey(CHANNEL, user), [turn])

    data_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(fill())


def pending_users(data_dir: Path) -> list[int]:
    return [item.key.user_id for item in Journal(data_dir / JOURNAL_NAME).replay()]


def facts_of(data_dir: Path, user: int) -> list[str]:
    path = data_dir / "memory" / f"{user}.json"
    if not path.exists():
        return []
    return [fact["content"] for fact in json.loads(path.read_text("utf-8"))["facts"]]


# --- the bot, as a subprocess -------------------------------------------------------------------------------


@dataclass
class BotProcess:
    workdir: Path
    data_dir: Path
    env: dict[str, str]
    process: subprocess.Popen[str] | None = None
    files: list[IO[str]] = field(default_factory=list)

    def start(self) -> BotProcess:
        out = open(self.workdir / "bot.stdout", "w+", encoding="utf-8")  # noqa: SIM115 (closed in output())
        err = open(self.workdir / "bot.stderr", "w+", encoding="utf-8")  # noqa: SIM115
        self.files = [out, err]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.standin"], cwd=self.workdir, env=self.env, stdout=out, stderr=err, text=True
        )
        return self

    def wait_ready(self) -> None:
        """Until the heartbeat file exists (the stand-in writes it once cogs are loaded and signals handled)."""
        assert self.process is not None
        deadline = time.monotonic() + READY_SECONDS
        heartbeat = self.data_dir / HEARTBEAT_FILE
        while not heartbeat.exists():
            if self.process.poll() is not None:
                pytest.fail(f"the bot exited early with {self.process.returncode}:\n{self.output()}")
            if time.monotonic() > deadline:
                self.process.kill()
                pytest.fail(f"no heartbeat within {READY_SECONDS}s:\n{self.output()}")
            time.sleep(0.02)

    def stop(self, signum: int, timeout: float = 60) -> float:
        """Send the signal; returns the seconds until the process exited."""
        assert self.process is not None
        sent = time.monotonic()
        self.process.send_signal(signum)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            pytest.fail(f"the bot did not exit within {timeout}s of signal {signum}:\n{self.output()}")
        return time.monotonic() - sent

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process else None

    def output(self) -> str:
        texts = []
        for handle in self.files:
            handle.flush()
            handle.seek(0)
            texts.append(handle.read())
        return "\n".join(texts)

    def close(self) -> None:
        """Kill the process if a failed test left it running; close the output files."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        for handle in self.files:
            handle.close()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "cwd").mkdir()
    return tmp_path / "cwd"


Spawn = Callable[[Path, dict[str, str]], "BotProcess"]


@pytest.fixture
def spawn(workdir: Path) -> Iterator[Spawn]:
    """Starts bots in `workdir`; none outlives its test, whatever the test did."""
    started: list[BotProcess] = []

    def start(data_dir: Path, env: dict[str, str]) -> BotProcess:
        bot = BotProcess(workdir, data_dir, env)
        started.append(bot)
        return bot.start()

    yield start
    for bot in started:
        bot.close()


def standin_env(data_dir: Path, base_url: str, **settings: str) -> dict[str, str]:
    defaults = {
        "DISCORD_TOKEN": TOKEN,
        "OPENAI_BASE_URL": base_url,
        "DATA_DIR": str(data_dir),
        "MEMORY_DEBOUNCE_SECONDS": "600",  # only the shutdown flush can save anything
        "MEMORY_MAX_WAIT_SECONDS": "1200",
        "SHUTDOWN_TIMEOUT_SECONDS": "15",
    }
    return clean_env(**{**defaults, **settings})


# --- 1-3: start-up failures an admin can fix ----------------------------------------------------------------


def test_no_token_exits_2_with_one_line(workdir: Path) -> None:
    result = run_bot_command([], workdir, clean_env(OPENAI_API_KEY=API_KEY))
    assert result.returncode == 2
    assert_one_clean_line(result.stderr, "DISCORD_TOKEN")
    assert result.stdout == ""
    assert API_KEY not in result.stderr


def test_non_numeric_debounce_exits_2_naming_it_without_the_token(workdir: Path) -> None:
    env = clean_env(DISCORD_TOKEN=TOKEN, OPENAI_API_KEY=API_KEY, MEMORY_DEBOUNCE_SECONDS="half a minute")
    result = run_bot_command([], workdir, env)
    assert result.returncode == 2
    assert_one_clean_line(result.stderr, "MEMORY_DEBOUNCE_SECONDS")
    assert TOKEN not in result.stderr + result.stdout and API_KEY not in result.stderr + result.stdout
    assert "must be a number (given 'half a minute')" in result.stderr  # a short value shows the typo


def test_shard_ids_beyond_shard_count_exit_2_with_one_line(workdir: Path) -> None:
    env = clean_env(DISCORD_TOKEN=TOKEN, OPENAI_API_KEY=API_KEY, SHARD_COUNT="4", SHARD_IDS="3,4")
    result = run_bot_command([], workdir, env)
    assert result.returncode == 2
    assert_one_clean_line(result.stderr, "SHARD_IDS lists 4", "SHARD_COUNT=4")


def test_shards_split_over_processes_on_files_exit_2_naming_database_url(workdir: Path) -> None:
    """SHARD_IDS covering part of the shards means other processes run the rest: they need one shared memory."""
    data_dir = workdir / "data"
    env = standin_env(data_dir, "http://127.0.0.1:9/v1", SHARD_COUNT="2", SHARD_IDS="1")
    result = run_bot_command([], workdir, env)
    assert result.returncode == 2, result.stderr
    assert_one_clean_line(result.stderr, "DATABASE_URL", "SHARD_IDS=1", "SHARD_COUNT=2")
    assert not data_dir.exists(), "refused before anything was written"


def test_all_shards_in_one_process_on_files_start(workdir: Path, spawn: Spawn) -> None:
    data_dir = workdir / "data"
    with llm_server(workdir, []) as server:
        bot = spawn(data_dir, standin_env(data_dir, server.base_url, SHARD_COUNT="2", SHARD_IDS="1,0"))
        bot.wait_ready()
        bot.stop(signal.SIGTERM)
    assert bot.returncode == 0, bot.output()
    assert "running shards 0,1 of 2" in bot.output(), bot.output()


def test_one_data_dir_serves_one_process_the_console_included(workdir: Path, spawn: Spawn) -> None:
    """A second bot or a console on a folder a running bot holds is refused with one line naming the folder; the
    lock goes with its holder, even killed with SIGKILL."""
    data_dir = workdir / "data"
    with llm_server(workdir, []) as server:
        env = standin_env(data_dir, server.base_url)
        first = spawn(data_dir, env)
        first.wait_ready()
        second = run_bot_command([], workdir, env, module="tests.standin")
        assert second.returncode == 2, second.stderr
        line = assert_one_clean_line(second.stderr, "DATA_DIR", str(data_dir), "another memory-bot process")
        assert f"pid {first.process.pid}" in line  # type: ignore[union-attr]
        console = subprocess.run(
            [sys.executable, "-m", "bot", "console", "--user-id", str(ALICE)], cwd=workdir, env=env, input="",
            capture_output=True, text=True, timeout=60,
        )
        assert console.returncode == 2, console.stdout + console.stderr
        assert_one_clean_line(console.stderr, "DATA_DIR", str(data_dir))

        first.process.kill()  # type: ignore[union-attr]
        first.process.wait(timeout=30)  # type: ignore[union-attr]
        (data_dir / HEARTBEAT_FILE).unlink()  # the killed bot's: readiness is the new one's
        again = spawn(data_dir, env)
        again.wait_ready()
        again.stop(signal.SIGTERM)
    assert again.returncode == 0, again.output()


@pytest.mark.parametrize("layout", ["under a file", "is a file"])
def test_unusable_data_dir_exits_2_with_one_line(workdir: Path, layout: str) -> None:
    """Tests run as root, so a chmod would not stop anything: a regular file in the way does."""
    blocker = workdir / "afile"
    blocker.write_text("not a folder")
    data_dir = blocker / "sub" if layout == "under a file" else blocker
    env = standin_env(data_dir, "http://127.0.0.1:9/v1")
    result = run_bot_command([], workdir, env)
    assert result.returncode == 2, result.stderr
    assert_one_clean_line(result.stderr, "DATA_DIR", str(data_dir))
    assert blocker.read_text() == "not a folder"


def test_discord_unreachable_exits_1_with_one_line_and_no_traceback(workdir: Path) -> None:
    """No network (here: the real login against a port where nothing listens): one line, not a traceback."""
    data_dir = workdir / "data"
    env = standin_env(data_dir, "http://127.0.0.1:9/v1", SHUTDOWN_TIMEOUT_SECONDS="5")
    result = run_bot_command(["--unreachable-discord"], workdir, env, module="tests.standin")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    failures = [line for line in result.stderr.splitlines() if "memory-bot:" in line or "ERROR" in line]
    assert len(failures) == 1, result.stderr
    assert "cannot reach Discord" in failures[0]
    assert TOKEN not in result.stderr


@pytest.mark.parametrize(("mode", "warned"), [(0o644, True), (0o600, False)])
def test_a_dotenv_others_can_read_is_warned_about(workdir: Path, mode: int, warned: bool) -> None:
    """The secrets live in `.env`: a copy readable by every user of the machine gets a warning at start."""
    data_dir = workdir / "data"
    dotenv = workdir / ".env"
    dotenv.write_text(f"DISCORD_TOKEN={TOKEN}\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\nDATA_DIR={data_dir}\n")
    dotenv.chmod(mode)
    env = clean_env(SHUTDOWN_TIMEOUT_SECONDS="5")
    result = run_bot_command(["--unreachable-discord"], workdir, env, module="tests.standin")
    assert result.returncode == 1, result.stderr
    assert ("chmod 600 .env" in result.stderr) == warned, result.stderr
    assert TOKEN not in result.stderr


# --- 4-7: SIGTERM and SIGINT flush pending memory -----------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_flushes_the_pending_update_to_disk(
    workdir: Path, spawn: Spawn, signum: int
) -> None:
    data_dir = workdir / "data"
    journal_turns(data_dir, [ALICE])
    with llm_server(workdir, [extraction(work=FACT, facts=[(FACT, "knowledge")])]) as server:
        bot = spawn(data_dir, standin_env(data_dir, server.base_url))
        bot.wait_ready()
        assert facts_of(data_dir, ALICE) == []  # nothing was saved before the signal: debounce is 10 minutes
        elapsed = bot.stop(signum)
    output = bot.output()
    assert bot.returncode == 0, output
    assert elapsed < 15, f"exit took {elapsed:.1f}s, over SHUTDOWN_TIMEOUT_SECONDS"
    assert facts_of(data_dir, ALICE) == [FACT]
    assert pending_users(data_dir) == []
    assert server.served == 1
    assert "Traceback" not in output
    assert "I write Go microservices" not in output, "message contents must not be logged at INFO"
    print(f"\n{signal.Signals(signum).name}: flushed 1 batch and exited in {elapsed:.2f}s")


def test_a_sharded_process_names_its_shards_and_stops_cleanly(workdir: Path, spawn: Spawn, postgres_url: str) -> None:
    data_dir = workdir / "data"
    with llm_server(workdir, []) as server:
        env = standin_env(data_dir, server.base_url, SHARD_COUNT="4", SHARD_IDS="3,1", DATABASE_URL=postgres_url)
        bot = spawn(data_dir, env)
        bot.wait_ready()
        bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    starting = [line for line in output.splitlines() if "starting: chat model" in line]
    assert len(starting) == 1 and starting[0].endswith("running shards 1,3 of 4"), output
    assert "Traceback" not in output
    record = json.loads((data_dir / HEARTBEAT_FILE).read_bytes())
    assert record["connected"] is False and [s["id"] for s in record["shards"]] == [1, 3]  # marked at close


def test_a_stalled_llm_cannot_hold_shutdown_and_the_turn_stays_journaled(
    workdir: Path, spawn: Spawn
) -> None:
    data_dir = workdir / "data"
    journal_turns(data_dir, [ALICE])
    memory_file = data_dir / "memory" / f"{ALICE}.json"
    memory_file.parent.mkdir(parents=True)
    before = MemoryFile(facts=[Fact(id="fact_00000001", content="Likes tea", confidence=0.9)])
    memory_file.write_text(before.model_dump_json(indent=2), "utf-8")
    original = memory_file.read_bytes()
    timeout = 3.0
    with llm_server(workdir, [stall(30)]) as server:
        env = standin_env(data_dir, server.base_url, SHUTDOWN_TIMEOUT_SECONDS=str(timeout))
        bot = spawn(data_dir, env)
        bot.wait_ready()
        elapsed = bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    assert elapsed < timeout + 3.0, f"exit took {elapsed:.1f}s with SHUTDOWN_TIMEOUT_SECONDS={timeout}"
    assert server.served == 1, "the flush did try the extraction"
    assert pending_users(data_dir) == [ALICE], "the turn stays in the journal for the next start"
    assert memory_file.read_bytes() == original
    assert "stay journaled" in output, "the admin is told what was kept for the next start"
    print(f"\nstalled LLM: exited in {elapsed:.2f}s with SHUTDOWN_TIMEOUT_SECONDS={timeout}")


def test_secrets_never_appear_in_any_output_under_debug(
    workdir: Path, spawn: Spawn
) -> None:
    """Known token and key values through start, a permanent failure, a retried failure and shutdown."""
    data_dir = workdir / "data"
    bob = ALICE + 1
    journal_turns(data_dir, [ALICE, bob])
    leaky = f"upstream said: Incorrect API key provided: {API_KEY} (token {TOKEN})"
    script = [
        error(401, message=leaky),  # Alice: permanent, given up loudly
        error(500, message=leaky),  # Bob: transient, retried
        extraction(facts=[(FACT, "knowledge")]),
    ]
    with llm_server(workdir, script) as server:
        env = standin_env(
            data_dir,
            server.base_url,
            OPENAI_API_KEY=API_KEY,
            LOG_LEVEL="DEBUG",
            MEMORY_MAX_CONCURRENT_EXTRACTIONS="1",  # Alice's batch first, then Bob's: each meets its answer
            MEMORY_EXTRACTION_RETRIES="1",
        )
        bot = spawn(data_dir, env)
        bot.wait_ready()
        bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    assert server.served == 3
    assert " DEBUG " in output, "DEBUG logging was on"
    assert "given up" in output and "Retrying request" in output, "both error paths logged (the SDK logs its retry)"
    assert TOKEN not in output and API_KEY not in output
    assert TOKEN[:24] not in output and API_KEY[-24:] not in output  # not even a recognisable part
    assert facts_of(data_dir, bob) == [FACT]
    assert pending_users(data_dir) == [ALICE], "the given-up batch stays journaled"


def test_two_hundred_pending_batches_are_all_flushed_within_the_grace(
    workdir: Path, spawn: Spawn
) -> None:
    data_dir = workdir / "data"
    users = [ALICE + n for n in range(200)]
    journal_turns(data_dir, users)
    grace = 20.0
    with llm_server(workdir, [extraction(facts=[(FACT, "knowledge")])] * len(users)) as server:
        env = standin_env(data_dir, server.base_url, SHUTDOWN_TIMEOUT_SECONDS=str(grace))
        bot = spawn(data_dir, env)
        bot.wait_ready()
        elapsed = bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    assert elapsed < grace, f"exit took {elapsed:.1f}s"
    missing = [user for user in users if facts_of(data_dir, user) != [FACT]]
    assert missing == [], f"{len(missing)} users lost their update"
    assert pending_users(data_dir) == []
    assert server.served == len(users)
    print(f"\n200 pending batches: flushed and exited in {elapsed:.2f}s (grace {grace:.0f}s)")


def test_when_the_grace_runs_out_the_rest_stays_journaled(
    workdir: Path, spawn: Spawn
) -> None:
    """Half the answers come at once, the rest stall: nothing is lost, what did not finish is journaled."""
    data_dir = workdir / "data"
    users = [ALICE + n for n in range(200)]
    journal_turns(data_dir, users)
    grace = 6.0
    script = [extraction(facts=[(FACT, "knowledge")])] * 100 + [stall(60)] * 100
    with llm_server(workdir, script) as server:
        env = standin_env(data_dir, server.base_url, SHUTDOWN_TIMEOUT_SECONDS=str(grace))
        bot = spawn(data_dir, env)
        bot.wait_ready()
        elapsed = bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    assert elapsed < grace + 3.0, f"exit took {elapsed:.1f}s"
    saved = {user for user in users if facts_of(data_dir, user) == [FACT]}
    pending = set(pending_users(data_dir))
    assert saved | pending == set(users), f"lost: {sorted(set(users) - saved - pending)}"
    assert saved, "the answered half was saved"
    assert pending, "the stalled half stayed journaled"
    assert all(facts_of(data_dir, user) in ([], [FACT]) for user in users), "no half-written or doubled memory"
    print(f"\ngrace ran out: {len(saved)} saved, {len(pending)} journaled, exit in {elapsed:.2f}s (grace {grace:.0f}s)")


# --- 8: healthcheck -----------------------------------------------------------------------------------------


def test_healthcheck_is_healthy_with_a_fresh_heartbeat(workdir: Path) -> None:
    data_dir = workdir / "data"
    asyncio.run(write_heartbeat(data_dir, connected=True, latency_ms=42.0, guilds=2))
    result = run_bot_command(["healthcheck"], workdir, clean_env(DATA_DIR=str(data_dir)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert_one_clean_line(result.stdout, "healthy", "2 guilds")
    assert result.stderr == ""


def test_healthcheck_without_a_heartbeat_is_unhealthy(workdir: Path) -> None:
    result = run_bot_command(["healthcheck"], workdir, clean_env(DATA_DIR=str(workdir / "nowhere")))
    assert result.returncode == 1
    assert_one_clean_line(result.stdout, "unhealthy", "no heartbeat")


def test_healthcheck_reads_data_dir_from_dotenv_like_the_bot(workdir: Path) -> None:
    data_dir = workdir / "elsewhere"
    asyncio.run(write_heartbeat(data_dir, connected=True, latency_ms=None, guilds=1))
    (workdir / ".env").write_text(f"DISCORD_TOKEN={TOKEN}\nDATA_DIR={data_dir}\n", "utf-8")
    result = run_bot_command(["healthcheck"], workdir, clean_env())
    assert result.returncode == 0, result.stdout
    assert_one_clean_line(result.stdout, "healthy")
    assert TOKEN not in result.stdout + result.stderr


def test_healthcheck_with_a_malformed_setting_is_one_line(workdir: Path) -> None:
    env = clean_env(DATA_DIR=str(workdir), HEALTHCHECK_MAX_AGE_SECONDS="soon")
    result = run_bot_command(["healthcheck"], workdir, env)
    assert result.returncode == 1  # Docker reserves 2 for health checks
    assert_one_clean_line(result.stdout, "HEALTHCHECK_MAX_AGE_SECONDS")
    assert "Traceback" not in result.stderr
