"""`python -m bot console`: a terminal chat through the real pipeline, as a subprocess with piped stdin.

The LLM is a real Chat Completions server on 127.0.0.1 (the `chat_server` fixture): the console's own
`AsyncOpenAI` client talks HTTP to it, first for the reply, then for the memory extraction.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.llm_server import ChatServer, error, extraction, reply
from tests.test_process import assert_one_clean_line, clean_env, facts_of

USER = 42
FACT = "Writes Go microservices"
REPLY = "Nice to meet you! Go is a great fit for microservices."
MESSAGE = "Hi! I write Go microservices at work."


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "cwd").mkdir()
    return tmp_path / "cwd"


Console = Callable[..., "subprocess.Popen[str]"]


@pytest.fixture
def console(workdir: Path, chat_server: ChatServer) -> Iterator[Console]:
    """Starts `python -m bot console --user-id 42 [args]`; none outlives its test."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        env = clean_env(OPENAI_BASE_URL=chat_server.base_url, DATA_DIR=str(workdir / "data"), CHAT_MODEL="chat-model")
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "console", "--user-id", str(USER), *args],
            cwd=workdir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def script(server: ChatServer) -> None:
    server.enqueue(reply(REPLY), extraction(work="Backend developer", facts=[(FACT, "knowledge")]))


def test_chat_flush_show_quit(workdir: Path, chat_server: ChatServer, console: Console) -> None:
    script(chat_server)
    process = console("--name", "Ana")
    out, err = process.communicate(f"{MESSAGE}\n/flush\n/show\n/quit\n", timeout=60)
    assert process.returncode == 0, err
    assert f"bot> {REPLY}" in out
    assert "(memory updated)" in out
    shown = json.loads(out[out.index("{") : out.rindex("}") + 1])  # /show prints the memory file
    assert [fact["content"] for fact in shown["facts"]] == [FACT]
    assert facts_of(workdir / "data", USER) == [FACT]
    assert "Traceback" not in err

    chat, extract = chat_server.requests
    assert chat["body"]["model"] == "chat-model"
    assert chat["body"]["messages"][-1] == {"role": "user", "content": f"Ana: {MESSAGE}"}
    assert extract["body"].get("response_format") == {"type": "json_object"}
    assert MESSAGE in json.dumps(extract["body"]["messages"])


def test_memory_is_used_in_the_next_session_and_end_of_input_saves(
    workdir: Path, chat_server: ChatServer, console: Console
) -> None:
    script(chat_server)
    first = console()
    first.communicate(f"{MESSAGE}\n/quit\n", timeout=60)  # /quit saves what is pending
    assert first.returncode == 0
    assert facts_of(workdir / "data", USER) == [FACT]

    chat_server.clear()
    chat_server.enqueue(
        error(400, message="model not found"),
        reply("Sure."),
        extraction(facts=[("Prefers short answers", "preference")]),
    )
    second = console()
    out, err = second.communicate("Which language next?\nKeep it short, I prefer short answers.\n", timeout=60)
    assert second.returncode == 0, err  # ended by end of input (Ctrl-D), which saves too
    assert "(the model could not answer: BadRequestError" in out, "an LLM error is reported and the chat goes on"
    assert "bot> Sure." in out
    system = chat_server.requests[1]["body"]["messages"][0]["content"]
    assert FACT in system and "Backend developer" in system, "last session's memory is in the prompt"
    assert facts_of(workdir / "data", USER) == [FACT, "Prefers short answers"]


def test_ctrl_c_with_input_still_open_saves_and_exits(
    workdir: Path, chat_server: ChatServer, console: Console
) -> None:
    """A read blocked on the terminal must not keep the process alive after Ctrl-C."""
    script(chat_server)
    process = console()
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(MESSAGE + "\n")
    process.stdin.flush()
    while f"bot> {REPLY}" not in (line := process.stdout.readline()):
        assert line, "the console ended before answering"
    process.send_signal(signal.SIGINT)  # stdin stays open: the reader thread is blocked in input()
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Saving what I learned" in out
    assert facts_of(workdir / "data", USER) == [FACT]
    assert "Traceback" not in err


def test_a_bad_user_id_is_refused(workdir: Path, chat_server: ChatServer) -> None:
    for bad in ("0", "-5", "../../etc", "1e9"):
        result = subprocess.run(
            [sys.executable, "-m", "bot", "console", "--user-id", bad],
            cwd=workdir,
            env=clean_env(OPENAI_BASE_URL=chat_server.base_url, DATA_DIR=str(workdir / "data")),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, bad
        assert "Traceback" not in result.stderr
        assert_one_clean_line(result.stderr.splitlines()[-1], "--user-id")
    assert not (workdir / "data").exists()
