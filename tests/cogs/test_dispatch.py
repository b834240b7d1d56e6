"""The bot through discord.py's own dispatch: gateway events into `bot.dispatch`, slash commands into the command
tree, button presses into the view, as a real session would deliver them. The log of a normal session holds no
ERROR and no traceback; a failing command or button still answers; the heartbeat follows the gateway."""

from __future__ import annotations

import errno
import json
import logging
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.client.interactions import APOLOGY
from bot.logging_setup import _NOISY, PAYLOAD_LOGGERS, configure_logging
from bot.memory.parts.user_memory import UserMemory
from bot.ops.health import check_heartbeat
from tests.cogs.conftest import ALICE_ID, Scene
from tests.gateway import bind_shards, shard_connection_lost, shard_ready, shard_resumed
from tests.helpers import (
    Harness,
    calls,
    dispatch,
    make_interaction,
    press_through_discord,
    run_slash,
    seed_memory,
)
from tests.support.llm_server import extraction, reply

FACT = "Writes Go microservices for a logistics company and prefers short answers with code."


def problems(caplog: pytest.LogCaptureFixture, stderr: str) -> list[str]:
    found = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]
    found += [f"traceback in {r.name}: {r.getMessage()}" for r in caplog.records if r.exc_info]
    if "Traceback" in stderr:
        found.append(stderr)
    return found


def answered_privately(interaction: Any) -> list[str]:
    made = calls(interaction)
    assert made, "the interaction was never answered"
    assert all(c.kwargs.get("ephemeral") is True for c in made if c.name != "edit_original_response"), made
    return [c.content for c in made]


async def test_a_normal_session_logs_no_error_and_no_traceback(
    scene: Scene, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    h, bot = scene.h, scene.h.bot
    h.llm.extract = lambda body: extraction(work="Go services", facts=[(FACT, "work")])
    await dispatch(bot, "ready")

    # A DM, a server message starting with the bot's mention (today's trigger for "Command 'FACT:' not found"),
    # and a reply to the bot's answer.
    await dispatch(bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, "hello! I write Go."))
    await dispatch(bot, "message", h.discord.mention_bot(scene.general, scene.alice, "FACT: I write Go services"))
    answer = h.discord.bot_messages(scene.general)[-1].message
    await dispatch(bot, "message", h.discord.reply_to(scene.general, scene.alice, answer, "and Rust on weekends"))
    assert len(h.discord.sent) == 3
    await h.settle()
    stored = h.memory_on_disk(ALICE_ID)
    # Learned in the DM, and again (its own copy) in the server's public channel: what a DM taught stays there.
    assert stored is not None and [(f["content"], f["place"]) for f in stored["facts"]] == [
        (FACT, "dm"), (FACT, f"guild:{scene.guild.id}")
    ]
    fact_id = stored["facts"][0]["id"]

    # Every /memory command, through the tree.
    for path, options in [
        ("memory show", {}),
        ("memory export", {}),
        ("memory pause", {}),
        ("memory resume", {}),
        ("memory forget", {"fact": fact_id}),
        ("memory forget", {"fact": "fact_doesnotexist"}),
    ]:
        interaction = await run_slash(bot, make_interaction(scene.alice_user), path, **options)
        texts = answered_privately(interaction)
        assert not any(APOLOGY in text for text in texts), (path, texts)
        assert not interaction.command_failed, path

    # `/memory forget` with its confirm button: cancelled once, confirmed once.
    for button in ("cancel", "confirm"):
        await seed_memory(h.memory, ALICE_ID, [FACT])
        asked = await run_slash(bot, make_interaction(scene.alice_user), "memory forget")
        view = calls(asked)[0].kwargs["view"]
        press = make_interaction(scene.alice_user)
        assert await press_through_discord(view, getattr(view, button), press)
        assert calls(press), f"the {button} press was not answered"
        assert (h.memory_on_disk(ALICE_ID) is None) == (button == "confirm")

    await dispatch(bot, "disconnect")
    await dispatch(bot, "resumed")
    assert problems(caplog, capsys.readouterr().err) == []
    info = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)
    assert "FACT:" not in info and "Go" not in info, "message or memory text in the log at INFO"


async def test_a_mention_is_not_parsed_as_a_prefix_command(
    scene: Scene, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    scene.h.llm.say(reply("Hi Alice!"))
    await dispatch(scene.h.bot, "message", scene.h.discord.mention_bot(scene.general, scene.alice, "hello there"))
    assert [s.content for s in scene.h.discord.bot_messages(scene.general)] == ["Hi Alice!"]
    info = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert not any("hello" in line or "not found" in line for line in info), info
    assert not any(r.name.startswith("discord.ext.commands") for r in caplog.records)


# --- item 2: every failure answers ---------------------------------------------------------------------------


async def test_a_command_failing_after_defer_gets_an_apology_and_one_log_line(
    harness: Harness, scene: Scene, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_memory(harness.memory, ALICE_ID, [FACT])

    async def broken_show(self: UserMemory) -> Any:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(UserMemory, "show", broken_show)
    caplog.set_level(logging.INFO)
    interaction = await run_slash(harness.bot, make_interaction(scene.alice_user), "memory show")
    names = [c.name for c in calls(interaction)]
    assert names == ["defer", "followup.send"], names
    assert calls(interaction)[-1].content == APOLOGY
    assert calls(interaction)[-1].kwargs["ephemeral"] is True
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    line = lines[0].getMessage()
    assert "/memory show" in line and str(ALICE_ID) in line and "OSError: Input/output error" in line
    assert "(at tests/cogs/test_dispatch.py:" in line  # where it happened (here: the stand-in), in one line
    assert lines[0].exc_info is None and FACT not in caplog.text


async def test_a_command_failing_before_answering_gets_an_apology(
    harness: Harness, scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: UserMemory, mode: object) -> bool:
        raise RuntimeError("bug")

    monkeypatch.setattr(UserMemory, "set_mode", broken)
    interaction = await run_slash(harness.bot, make_interaction(scene.alice_user), "memory pause")
    assert calls(interaction)[-1].content == APOLOGY


async def test_an_unknown_command_says_it_is_out_of_date(harness: Harness, scene: Scene) -> None:
    interaction = await run_slash(harness.bot, make_interaction(scene.alice_user), "memory vanished")
    assert [c.name for c in calls(interaction)] == ["send_message"]
    assert "changed since" in calls(interaction)[0].content


async def test_a_failing_confirm_button_apologises_and_takes_the_buttons_away(
    harness: Harness, scene: Scene, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_memory(harness.memory, ALICE_ID, [FACT])

    async def broken_forget(self: UserMemory, what: object) -> bool:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(UserMemory, "forget", broken_forget)
    asked = await run_slash(harness.bot, make_interaction(scene.alice_user), "memory forget")
    view = calls(asked)[0].kwargs["view"]
    press = make_interaction(scene.alice_user)
    assert await press_through_discord(view, view.confirm, press)
    final = calls(press)[-1]
    assert final.name == "edit_original_response" and final.kwargs == {"content": APOLOGY, "view": None}
    assert "No space left on device" in caplog.text
    assert not await press_through_discord(view, view.confirm, make_interaction(scene.alice_user))


# --- item 3: the heartbeat follows the gateway ---------------------------------------------------------------


def heartbeat(h: Harness) -> dict[str, Any]:
    return dict(json.loads((h.settings.data_dir / "heartbeat.json").read_bytes()))


async def test_the_heartbeat_follows_ready_disconnect_and_resume(harness: Harness) -> None:
    """One shard (an unsharded-size bot), its events produced by discord.py's own gateway code."""
    bot = harness.bot
    data_dir = harness.settings.data_dir
    bot.shard_count = 1  # what discord.py learns from Discord's recommendation when it connects
    bind_shards(bot)
    await shard_ready(bot, 0)
    assert bot.is_ready()
    assert heartbeat(harness)["connected"] is True
    assert check_heartbeat(data_dir, max_age_seconds=90)[0]

    await shard_connection_lost(bot, 0)
    assert bot.is_ready(), "discord.py still says ready: the reason is_ready() cannot be the health signal"
    assert heartbeat(harness)["connected"] is False
    assert check_heartbeat(data_dir, max_age_seconds=90) == (False, "unhealthy: not connected to Discord")
    await bot._write_heartbeat()  # the periodic beat keeps saying so
    assert heartbeat(harness)["connected"] is False

    await shard_resumed(bot, 0)
    assert heartbeat(harness)["connected"] is True
    assert datetime.fromisoformat(heartbeat(harness)["updatedAt"]) <= datetime.now(UTC)


# --- LOG_LEVEL=DEBUG keeps conversation text out of the log unless LOG_PROMPTS=true ---------------------------


@pytest.fixture
def debug_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    names = _NOISY + PAYLOAD_LOGGERS
    levels = {name: logging.getLogger(name).level for name in names}
    hooks = sys.excepthook, threading.excepthook
    yield
    root.handlers[:], root.level = saved
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    sys.excepthook, threading.excepthook = hooks
    logging.captureWarnings(False)


@pytest.mark.parametrize("log_prompts", [False, True])
async def test_debug_logs_hold_no_message_text_unless_log_prompts(
    scene: Scene, capsys: pytest.CaptureFixture[str], debug_logging: None, log_prompts: bool
) -> None:
    secret_words = "my-private-diary-entry-about-tuesday"
    await seed_memory(scene.h.memory, ALICE_ID, [FACT])
    configure_logging("DEBUG", log_prompts=log_prompts)
    scene.h.llm.say(reply("Noted, Alice."))
    await dispatch(scene.h.bot, "message", scene.h.discord.message(scene.alice_dm, scene.alice_user, secret_words))
    await scene.h.settle()
    err = capsys.readouterr().err
    assert "Sending HTTP Request: POST" in err or "HTTP Request: POST" in err, "DEBUG is on"
    assert (secret_words in err) == log_prompts
    assert (FACT in err) == log_prompts
