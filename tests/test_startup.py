"""What an operator sees when `python -m bot` starts, through the real entry point as a process: every missing
setting in one line, a malformed token refused before any connection, and a start line naming the LLM endpoint and
where memory lives (files or PostgreSQL), never a secret."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.test_process import (  # noqa: F401 (fixtures)
    API_KEY,
    TOKEN,
    Spawn,
    assert_one_clean_line,
    clean_env,
    llm_server,
    run_bot_command,
    spawn,
    standin_env,
    workdir,
)

CLIENT_SECRET = "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW"  # what people paste from the OAuth2 page instead of the token
PASSWORD = "s3cr3t-Db-pass-4c5d6e"


def test_a_fresh_clone_hears_of_every_missing_setting_at_once(workdir: Path) -> None:  # noqa: F811
    result = run_bot_command([], workdir, clean_env())
    assert result.returncode == 2, result.stderr
    line = assert_one_clean_line(result.stderr, "DISCORD_TOKEN is required", "OPENAI_API_KEY is required")
    assert line.startswith("memory-bot: invalid configuration: ")
    assert result.stdout == ""


def test_a_malformed_token_is_refused_before_connecting(workdir: Path) -> None:  # noqa: F811
    """`--unreachable-discord` would log in against a dead port (exit 1, "cannot reach Discord"): a status of 2 and
    the token's line show the check came first."""
    env = standin_env(workdir / "data", "http://127.0.0.1:9/v1", DISCORD_TOKEN=CLIENT_SECRET, OPENAI_API_KEY=API_KEY)
    result = run_bot_command(["--unreachable-discord"], workdir, env, module="tests.standin")
    assert result.returncode == 2, result.stderr
    assert_one_clean_line(result.stderr, "DISCORD_TOKEN is not a bot token", "Reset Token")
    everything = result.stderr + result.stdout
    assert CLIENT_SECRET not in everything and API_KEY not in everything
    assert "cannot reach Discord" not in everything
    assert not (workdir / "data").exists(), "nothing was started"


def starting_line(output: str) -> str:
    lines = [line for line in output.splitlines() if "starting: chat model" in line]
    assert len(lines) == 1, output
    return lines[0]


def test_the_start_line_names_the_endpoint_and_the_memory_folder(workdir: Path, spawn: Spawn) -> None:  # noqa: F811
    data_dir = workdir / "data"
    with llm_server(workdir, []) as server:
        bot = spawn(data_dir, standin_env(data_dir, server.base_url, OPENAI_API_KEY=API_KEY))
        bot.wait_ready()
        bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    line = starting_line(output)
    assert f"at {server.base_url}," in line
    assert f"memory in files in {data_dir}," in line
    assert TOKEN not in output and API_KEY not in output


def test_the_start_line_names_the_database_but_never_its_password(
    workdir: Path, spawn: Spawn, postgres_url: str  # noqa: F811
) -> None:
    host_and_database = postgres_url.split("@", 1)[1]  # 127.0.0.1:PORT/name (the test server trusts 127.0.0.1)
    url = postgres_url.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")
    data_dir = workdir / "data"
    with llm_server(workdir, []) as server:
        bot = spawn(data_dir, standin_env(data_dir, server.base_url, DATABASE_URL=url))
        bot.wait_ready()
        bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    assert f"memory in PostgreSQL at {host_and_database}," in starting_line(output)
    assert PASSWORD not in output and TOKEN not in output
