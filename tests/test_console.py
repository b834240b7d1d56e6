"""`python -m bot console`: a terminal chat through the real pipeline, as a subprocess with piped stdin.

The LLM is a real Chat Completions server on 127.0.0.1 (the `chat_server` fixture): the console's own
`AsyncOpenAI` client talks HTTP to it, first for the reply, then for the memory extraction.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.console import FLUSH_WAIT_SECONDS, flush_summary
from bot.memory.service import FlushReport
from tests.helpers import memory_text
from tests.llm_server import ChatServer, error, extraction, raw_body, reply, stall
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
    assert "(+1 fact)" in out
    stored = json.loads((workdir / "data" / "memory" / f"{USER}.json").read_bytes())
    fact_id = stored["facts"][0]["id"]
    assert f"  {fact_id}  {FACT}  (knowledge, 90%)" in out.splitlines()  # /show: readable, with the fact's id
    assert "Work:" in out and "  Backend developer" in out
    assert "{" not in out, "no raw JSON"
    assert facts_of(workdir / "data", USER) == [FACT]
    assert "Traceback" not in err
    assert "INFO" not in out + err, "the log goes to DATA_DIR/console.log, not the terminal"
    assert "memory updated" in (workdir / "data" / "console.log").read_text()
    assert (workdir / "data" / "console.log").stat().st_mode & 0o777 == 0o600

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
    prompt = memory_text(chat_server.requests[1]["body"])
    assert FACT in prompt and "Backend developer" in prompt, "last session's memory is in the prompt"
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


# --- what /flush, /help and unknown commands say ------------------------------------------------------------


def test_flush_says_nothing_pending_and_help_stays_local(chat_server: ChatServer, console: Console) -> None:
    out, err = console().communicate("/flush\n/help\n/shwo\n/quit\n", timeout=60)
    assert "(nothing pending)" in out
    assert "/forget" in out and "learn from the conversation now" in out  # the /help text
    assert "(unknown command /shwo; /help lists them)" in out
    assert chat_server.requests == [], "neither /help nor a typo reached the model"
    assert "Traceback" not in err


def test_flush_reports_an_unusable_answer_as_a_failure(
    workdir: Path, chat_server: ChatServer, console: Console
) -> None:
    chat_server.enqueue(reply(REPLY), raw_body("<html><body>502 Bad Gateway</body></html>", content_type="text/html"))
    out, _ = console().communicate(f"{MESSAGE}\n/flush\n/quit\n", timeout=60)
    flushed = [line for line in out.splitlines() if line.startswith("(") and "fail" in line]
    assert len(flushed) == 1, out
    assert flushed[0].startswith("(failed: unusable answer") and "stay journaled" in flushed[0]
    assert "(memory updated)" not in out and "+1 fact" not in out
    assert facts_of(workdir / "data", USER) == []


def test_flush_against_a_hanging_endpoint_gives_up_waiting(
    workdir: Path, chat_server: ChatServer, console: Console
) -> None:
    """The endpoint accepts the request and never answers: /flush says so after FLUSH_WAIT_SECONDS instead of
    blocking for the SDK timeout times the retries (minutes)."""
    chat_server.enqueue(reply(REPLY), *[stall(120)] * 4)
    process = console()
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"{MESSAGE}\n/flush\n")
    process.stdin.flush()
    started = None
    while "still trying" not in (line := process.stdout.readline()):
        assert line, "the console ended"
        if "learning from what is pending" in line:
            started = time.monotonic()
    assert started is not None
    assert time.monotonic() - started < FLUSH_WAIT_SECONDS + 10
    assert "goes on in the background" in line
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)


def test_flush_summary_lines() -> None:
    assert flush_summary(FlushReport(finished=True, batches_pending=0)) == "(nothing pending)"
    assert flush_summary(FlushReport(True, 1, batches_saved=1, facts_added=1)) == "(+1 fact)"
    assert flush_summary(FlushReport(True, 2, batches_saved=2, facts_added=0)) == "(+0 facts)"
    failed = flush_summary(FlushReport(True, 1, batches_failed=1, problems=("unusable answer: not JSON",)))
    assert failed == "(failed: unusable answer: not JSON; the turns stay journaled for the next start)"
    slow = flush_summary(FlushReport(False, 1, problems=("APITimeoutError after 2 attempts",)))
    assert slow.startswith("(still trying after 20s (APITimeoutError after 2 attempts)")


# --- the terminal: readline, prompt on stdout, long lines, bytes that are not UTF-8 ------------------------


class Terminal:
    """The console on a real pseudo-terminal (stdin and stdout), stderr on a pipe, output read continuously."""

    def __init__(self, workdir: Path, base_url: str) -> None:
        self.master, slave = pty.openpty()
        env = clean_env(
            OPENAI_BASE_URL=base_url, DATA_DIR=str(workdir / "data"), CHAT_MODEL="chat-model", MEMORY_MODEL="memory"
        )
        env["TERM"] = "xterm"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot", "console", "--user-id", str(USER), "--name", "Ana"],
            cwd=workdir, env=env, stdin=slave, stdout=slave, stderr=subprocess.PIPE, close_fds=True,
        )
        os.close(slave)
        self.output = bytearray()
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                chunk = b""
            with self._changed:
                self.output += chunk
                self._changed.notify_all()
            if not chunk:
                return

    def wait_for(self, needle: bytes, start: int = 0, timeout: float = 60) -> int:
        """Until `needle` appears in the output after `start`; returns the offset just past it."""
        with self._changed:
            found = self._changed.wait_for(lambda: needle in self.output[start:], timeout=timeout)
            assert found, f"{needle!r} never appeared in {bytes(self.output[-2000:])!r}"
            return self.output.index(needle, start) + len(needle)

    def type(self, data: bytes) -> None:
        for index in range(0, len(data), 512):  # as a person (or a paste) would: the reader keeps up
            os.write(self.master, data[index : index + 512])

    def close(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        _, err = self.process.communicate(timeout=30)
        os.close(self.master)
        return err.decode("utf-8", "replace")


def test_on_a_terminal_the_prompt_is_on_stdout_and_lines_are_edited_long_and_not_utf8(
    workdir: Path, chat_server: ChatServer
) -> None:
    long_text = "".join(f"word{n} " for n in range(1200)).strip()  # ~8,900 characters: over the tty's 4,095
    chat_server.enqueue(reply("One."), reply("Two."), reply("Three."))
    terminal = Terminal(workdir, chat_server.base_url)
    try:
        at = terminal.wait_for(b"Ana> ")  # the prompt arrives on the terminal, i.e. on stdout
        terminal.type(b"helo\x1b[Dl\r")  # type "helo", Left arrow, "l": readline makes it "hello"
        at = terminal.wait_for(b"bot> One.", at)
        at = terminal.wait_for(b"Ana> ", at)
        terminal.type(long_text.encode() + b"\r")
        at = terminal.wait_for(b"bot> Two.", at)
        at = terminal.wait_for(b"Ana> ", at)
        terminal.type(b"caf\xe9 latte\r")  # Latin-1, not UTF-8
        at = terminal.wait_for(b"bot> Three.", at)
        at = terminal.wait_for(b"Ana> ", at)
        terminal.type(b"/quit\r")
        terminal.process.wait(timeout=60)
    finally:
        err = terminal.close()
    assert terminal.process.returncode == 0, err
    assert "Traceback" not in err and "Ana>" not in err
    sent = [r["body"]["messages"][-1]["content"] for r in chat_server.requests if r["body"]["model"] == "chat-model"]
    assert sent[:2] == ["Ana: hello", f"Ana: {long_text}"]
    assert sent[2] in ("Ana: caf\ufffd latte", "Ana: caf latte")  # readline may drop the stray byte itself


def test_piped_input_that_is_not_utf8_is_read_with_replacement_characters(
    workdir: Path, chat_server: ChatServer
) -> None:
    chat_server.enqueue(reply("Noted."))
    env = clean_env(OPENAI_BASE_URL=chat_server.base_url, DATA_DIR=str(workdir / "data"), CHAT_MODEL="chat-model")
    result = subprocess.run(
        [sys.executable, "-m", "bot", "console", "--user-id", str(USER)],
        cwd=workdir, env=env, input=b"caf\xe9 latte\n/quit\n", capture_output=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr and b"bot> Noted." in result.stdout
    assert chat_server.requests[0]["body"]["messages"][-1]["content"] == "you: caf\ufffd latte"
