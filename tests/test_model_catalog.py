# ruff: noqa: F811  (the fixtures imported from tests.test_console and tests.test_process are parameters here)
"""A model the endpoint does not know (the default `gpt-4o-mini` on a local server) is named in one line with what
`GET /v1/models` offers: at the console's start, after a 404 in the console, and in the bot's log at start. The
real `openai` client against the local Chat Completions server, whose model list is set like a local server's."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from bot.chat.catalog import configured_models, missing_models, unknown_model_line
from tests.support.llm_server import ChatServer, error, extraction, reply
from tests.test_console import MESSAGE, REPLY, Console, console, workdir  # noqa: F401 (fixtures)
from tests.test_process import API_KEY, Spawn, spawn, standin_env  # noqa: F401 (fixtures)

OFFERED = ["llama3.2:3b", "qwen3:8b"]


def test_the_console_names_an_unknown_model_with_what_the_endpoint_offers(
    chat_server: ChatServer, console: Console
) -> None:
    chat_server.offered_models = OFFERED
    chat_server.enqueue(error(404, message="model 'chat-model' not found"), reply(REPLY), extraction())
    out, err = console().communicate(f"{MESSAGE}\nagain\n", timeout=60)
    line = f"(CHAT_MODEL=chat-model is not offered by {chat_server.base_url}; it offers: llama3.2:3b, qwen3:8b. "
    assert out.count(line) == 2, out + err  # at start, and after the 404
    assert "answered 404" in out
    assert f"bot> {REPLY}" in out, "the chat goes on"
    assert "Traceback" not in err


def test_a_model_the_endpoint_lists_gives_no_line(chat_server: ChatServer, console: Console) -> None:
    chat_server.offered_models = ["chat-model", *OFFERED]
    out, _ = console().communicate("/quit\n", timeout=60)
    assert "is not offered by" not in out


def test_an_endpoint_without_a_model_list_gives_no_line_at_start(chat_server: ChatServer, console: Console) -> None:
    chat_server.offered_models = []
    out, _ = console().communicate("/quit\n", timeout=60)
    assert "is not offered by" not in out and "models" not in out


def test_the_lines_name_the_setting_and_cut_a_long_list() -> None:
    many = [f"model-{n}" for n in range(40)]
    line = unknown_model_line("MEMORY_MODEL", "gpt-4o-mini", "http://127.0.0.1:11434/v1", many)
    assert line.startswith("MEMORY_MODEL=gpt-4o-mini is not offered by http://127.0.0.1:11434/v1; it offers: model-0")
    assert "model-14 and 25 more. Set MEMORY_MODEL to one" in line and "model-15" not in line
    assert "does not list its models" in unknown_model_line("CHAT_MODEL", "x", "http://h/v1", None)
    assert configured_models("a", None) == {"CHAT_MODEL": "a"}
    assert configured_models("a", "b") == {"CHAT_MODEL": "a", "MEMORY_MODEL": "b"}
    assert missing_models({"CHAT_MODEL": "a", "MEMORY_MODEL": "b"}, ["b"]) == {"CHAT_MODEL": "a"}
    assert missing_models({"CHAT_MODEL": "a"}, None) == {}


def test_the_bot_logs_one_line_at_start(workdir: Path, chat_server: ChatServer, spawn: Spawn) -> None:
    chat_server.offered_models = OFFERED
    data_dir = workdir / "data"
    bot = spawn(data_dir, standin_env(data_dir, chat_server.base_url, OPENAI_API_KEY=API_KEY))
    bot.wait_ready()
    wanted = f"CHAT_MODEL=gpt-4o-mini is not offered by {chat_server.base_url}; it offers: llama3.2:3b, qwen3:8b"
    deadline = time.monotonic() + 30
    while wanted not in bot.output():  # logged once the list arrives, without holding up the start
        if time.monotonic() > deadline:
            pytest.fail(f"no line naming the offered models:\n{bot.output()}")
        time.sleep(0.05)
    bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    lines = [line for line in output.splitlines() if wanted in line]
    assert len(lines) == 1 and "WARNING" in lines[0]
    assert API_KEY not in output
