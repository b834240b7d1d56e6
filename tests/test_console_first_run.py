# ruff: noqa: F811  (the fixtures imported from tests.test_console are parameters here)
"""A newcomer's first console session, as a subprocess against the local Chat Completions server: replies stream
when the endpoint streams (and are whole, with one note, when it does not), `/export` writes under DATA_DIR and says
where, leaving with Ctrl-D says what it saved, and git never picks up an export or the data folder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bot.console.session import UNREADABLE_NOTICE
from bot.console.streaming import NOT_STREAMING_NOTE
from tests.support.llm_server import ChatServer, RejectFeatures, extraction, reply
from tests.test_console import (  # noqa: F401 (fixtures)
    FACT,
    MESSAGE,
    REPLY,
    USER,
    Console,
    console,
    script,
    workdir,
)

REPO = Path(__file__).resolve().parent.parent


def test_replies_stream_from_an_endpoint_that_streams(chat_server: ChatServer, console: Console) -> None:
    chat_server.enqueue(reply(REPLY, chunks=6), reply("Again.", chunks=2), extraction())
    out, err = console().communicate(f"{MESSAGE}\nonce more\n", timeout=60)
    assert f"bot> {REPLY}\n" in out and "bot> Again.\n" in out, err
    chats = [request["body"] for request in chat_server.requests if "response_format" not in request["body"]]
    assert [body.get("stream") for body in chats] == [True, True], "the console asked for a stream"
    assert NOT_STREAMING_NOTE not in out
    held, live = (line for line in out.splitlines() if line.startswith("(streamed"))  # then no more
    assert "shown when complete: a model's first answer here shows whether it streams its reasoning" in held
    assert live.startswith("(streamed: first words after ") and live.endswith(" s)"), out
    assert out.index(f"bot> {REPLY}") < out.index(held) < out.index("bot> Again.") < out.index(live)


def test_an_endpoint_that_refuses_streaming_gets_whole_answers_and_one_note(
    chat_server: ChatServer, console: Console
) -> None:
    whole = RejectFeatures(reply(REPLY), ("stream",))
    chat_server.enqueue(whole, whole, RejectFeatures(reply("Second answer."), ("stream",)), extraction())
    out, err = console().communicate(f"{MESSAGE}\nAnd another thing.\n", timeout=60)
    assert out.count(NOT_STREAMING_NOTE) == 1, out
    assert "(streamed:" not in out
    assert f"bot> {REPLY}\n" in out and "bot> Second answer.\n" in out, err
    chats = [request["body"] for request in chat_server.requests if "response_format" not in request["body"]]
    assert [body.get("stream") is True for body in chats] == [True, False, False], "asked once, then never again"


def test_stream_replies_false_asks_for_whole_answers(chat_server: ChatServer, console: Console) -> None:
    chat_server.enqueue(reply(REPLY), extraction())
    out, _ = console(STREAM_REPLIES="false").communicate(f"{MESSAGE}\n", timeout=60)
    assert f"bot> {REPLY}\n" in out
    assert chat_server.requests[0]["body"].get("stream") is not True


def test_export_writes_under_data_dir_and_prints_the_path(workdir: Path, console: Console) -> None:
    out, err = console().communicate("/remember I drink green tea\n/export\n", timeout=60)
    exports = sorted((workdir / "data" / "exports").iterdir())
    assert len(exports) == 1, err
    path = exports[0]
    assert path.name.startswith(f"memory-{USER}-") and path.suffix == ".json"
    assert f"(your memory is in {path.resolve()}, " in out
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert [fact["content"] for fact in json.loads(path.read_bytes())["facts"]] == ["I drink green tea"]
    assert not list(workdir.glob("memory-*.json")), "nothing lands in the working directory"


def test_git_ignores_the_data_folder_and_exports() -> None:
    paths = ["data/memory/42.json", "data/exports/memory-42-20261201T000000Z.json", "memory-42.json", "exports/a.json"]
    result = subprocess.run(["git", "check-ignore", *paths], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.stdout.split() == paths


def test_ctrl_d_says_what_it_saved(workdir: Path, chat_server: ChatServer, console: Console) -> None:
    script(chat_server)
    out, err = console().communicate(f"{MESSAGE}\n", timeout=60)  # then end of input: Ctrl-D
    saved = out[out.index("Saving what I learned…"):]
    assert "(+1 fact; 1 summary updated)" in saved, out + err
    stored = json.loads((workdir / "data" / "memory" / f"{USER}.json").read_bytes())
    assert f"  + {stored['facts'][0]['id']}  {FACT}" in saved
    assert f"(memory kept in files in {workdir / 'data'}" in saved


def test_leaving_with_nothing_pending_says_so(console: Console) -> None:
    out, _ = console().communicate("/quit\n", timeout=60)
    assert "(nothing new to learn: your memory is as it was)" in out


def test_a_damaged_memory_is_told_of_once_at_the_start(
    workdir: Path, chat_server: ChatServer, console: Console
) -> None:
    memory = workdir / "data" / "memory"
    memory.mkdir(parents=True)
    (memory / f"{USER}.json").write_bytes(b'{"version": "2.0", "facts": [')
    chat_server.enqueue(reply(REPLY), extraction())
    out, err = console().communicate(f"{MESSAGE}\n/show\n", timeout=60)
    assert out.count(UNREADABLE_NOTICE) == 1, out + err
    assert out.index(UNREADABLE_NOTICE) < out.index(f"bot> {REPLY}"), "before the first message, not after it"
    assert [copy.read_bytes() for copy in memory.glob(f"{USER}.json.corrupt-*")] == [b'{"version": "2.0", "facts": [']
