"""A full disk on files, through the bot's real dispatch: DATA_DIR is a small tmpfs this test mounts (as root; the
test is skipped cleanly where mounting is not permitted) and fills to the last byte.

While it is full: every message is answered, no memory file is torn or truncated, the turns are kept, `/health`
says degraded and the log says so once, not once per message. When space returns the turns are learned without a
restart, each once."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.memory.doors import ForgetEverything
from bot.ops.metrics import health
from tests.cogs.conftest import ALICE_ID, MakeHarness, make_scene
from tests.helpers import dispatch, extraction_input
from tests.support.engine import parts, wait_debouncer
from tests.support.hostile import HostileModel
from tests.support.llm_server import Response, extraction

TMPFS_BYTES = 4 * 1024 * 1024
SAID = [
    "I moved to Porto last spring and I work on tram signalling for the city's transport company these days.",
    "My sister runs a small ceramics studio near the river and I help her glaze pots on Sunday afternoons.",
    "I am training for the Douro half marathon this autumn, running four mornings a week before work starts.",
    "I keep a sourdough starter called Fernando alive in the fridge and bake two loaves every Friday night.",
    "My flat is on the fourth floor of an old azulejo building with no lift, so groceries are a workout too.",
    "I play bass in a covers band with three colleagues; we rehearse in a garage in Gaia on Wednesday nights.",
    "I am learning Japanese with an evening class because we plan a long trip to Kyoto and Osaka one of these days.",
    "I grew up in a village near Braga where my parents still keep chickens, goats and a small vineyard plot.",
    "My partner designs board games for a small studio, so our living room table is always covered in prototypes.",
    "I restore old film cameras as a hobby and my favourite is a Pentax from the seventies with a cracked strap.",
    "I cycle to the depot along the river path every morning unless the rain comes in hard from the Atlantic.",
    "I collect vinyl records of Portuguese fado singers and hunt for first pressings at the flea market in Vandoma.",
]


@pytest.fixture
def full_disk_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh tmpfs of TMPFS_BYTES mounted at tmp_path/data; skipped where mounting is not permitted."""
    folder = tmp_path / "data"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES},mode=0700", "tmpfs", str(folder)],
        capture_output=True, text=True, check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def fill(folder: Path) -> Path:
    """Write a filler file until the file system refuses one more byte; returns it."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1024 * 1024, 4096, 1):  # unbuffered: what the kernel refused is all that is missing
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, bytes(size))
    finally:
        os.close(fd)
    with pytest.raises(OSError) as refused:
        (folder / "one-more").write_bytes(b"x" * 4096)
    assert refused.value.errno == errno.ENOSPC
    return filler


def each_said(body: dict[str, Any]) -> Response:
    """The extraction a well-behaved model makes: one fact per user line, in that line's words."""
    turns = extraction_input(body)["newTurns"]
    return extraction(facts=[(t["text"], "personal") for t in turns if t["speaker"] == "user"])


def facts_on_disk(path: Path) -> list[str]:
    return [fact["content"] for fact in json.loads(path.read_bytes())["facts"]]


async def test_a_full_disk_keeps_every_turn_and_learns_it_once_space_returns(
    full_disk_dir: Path, make_harness: MakeHarness, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(data_dir=full_disk_dir)
    scene = make_scene(h)
    h.llm.extract = each_said
    outage = parts(h.memory).learning.outage
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, SAID[0]))
    await h.settle()
    assert facts_on_disk(h.memory_path(ALICE_ID)) == [SAID[0]]
    before = h.memory_path(ALICE_ID).read_bytes()

    filler = fill(full_disk_dir)
    caplog.set_level(logging.INFO)
    sent = len(h.discord.sent)
    for text in SAID[1:]:
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, text))
        await wait_debouncer(h.memory)  # each batch fails to save and waits for the storage
    assert len(h.discord.sent) == sent + len(SAID) - 1  # every message answered
    assert outage.down and outage.state().turns_unstored > 0  # the journal could not take the later ones either
    assert health(h.memory.ops.snapshot())["status"] == "degraded"
    assert h.memory_path(ALICE_ID).read_bytes() == before  # not torn, not truncated, not changed
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("bot.")]
    assert sum("storage unreachable" in line for line in warnings) == 1, warnings  # once per outage
    assert len(warnings) == len(set(warnings)) < 4, warnings  # housekeeping says it once too: never per message
    assert not any(r.levelno >= logging.ERROR for r in caplog.records)  # nothing given up
    assert not any(any(word in r.getMessage() for word in ("Porto", "ceramics", "sourdough")) for r in caplog.records)

    filler.unlink()  # space returns; no restart
    await outage.wait_up()
    await h.settle()
    assert facts_on_disk(h.memory_path(ALICE_ID)) == SAID  # each learned, once
    assert health(h.memory.ops.snapshot()) == {"status": "ok"}
    assert sum("reachable again" in r.getMessage() for r in caplog.records) == 1
    assert not list((full_disk_dir / "memory").glob(".*.tmp"))
    await h.memory.ops.flush(10)
    assert facts_on_disk(h.memory_path(ALICE_ID)) == SAID  # nothing learned twice by a late replay


async def test_a_forget_during_a_full_disk_is_final_when_space_returns_whatever_the_model_repeats(
    full_disk_dir: Path, make_harness: MakeHarness
) -> None:
    h = await make_harness(data_dir=full_disk_dir)
    scene = make_scene(h)
    model = HostileModel(seed=33)  # repeats whatever it is shown, restates it, knows no forgetting
    h.llm.extract = model.extract
    h.llm.chat_reply = model.chat
    outage = parts(h.memory).learning.outage
    await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, SAID[0]))
    await h.settle()
    filler = fill(full_disk_dir)
    for text in SAID[1:5]:
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, text))
    await wait_debouncer(h.memory)
    assert outage.down

    forgotten = await h.memory.user(ALICE_ID).forget(ForgetEverything())  # unlinking needs no space
    assert forgotten.facts == 1
    filler.unlink()
    await outage.wait_up()
    await h.settle()
    await h.memory.ops.flush(10)
    stored = b"".join(p.read_bytes() for p in full_disk_dir.rglob("*") if p.is_file())
    for word in (b"Porto", b"ceramics", b"marathon", b"sourdough", b"azulejo"):  # one of each message
        assert word not in stored, word  # nothing of before the forget came back, nor was kept anywhere
    assert (await h.memory.user(ALICE_ID).show()).is_empty()


async def test_a_shutdown_while_the_disk_is_still_full_says_what_it_could_not_store(
    full_disk_dir: Path, make_harness: MakeHarness, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make_harness(data_dir=full_disk_dir)
    scene = make_scene(h)
    h.llm.extract = each_said
    fill(full_disk_dir)
    for text in SAID:
        await dispatch(h.bot, "message", h.discord.message(scene.alice_dm, scene.alice_user, text))
    await wait_debouncer(h.memory)
    unstored = parts(h.memory).learning.outage.state().turns_unstored
    assert unstored > 0
    caplog.set_level(logging.INFO)
    await h.memory.ops.shutdown(5)  # the flush ends; the storage still refuses
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("bot.")]
    assert any(f"{unstored} turns taken while the storage was unreachable were never stored" in e for e in errors)
    assert not any("Porto" in r.getMessage() for r in caplog.records)
