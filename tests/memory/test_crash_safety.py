"""Crash safety of memory files with a real process and real SIGKILLs.

`crash_writer.py` updates one user's memory in a loop through `MemoryStore.edit`, printing each generation once it
is durably committed. We kill it with SIGKILL at random moments, `KILLS` times, restarting it on the same folder,
and after every kill check that the file parses, holds exactly one generation (never a mix), that generation is
the last one committed or the one being written, and no file was ever kept aside as corrupt.

The kill lands at a random point of the writer's loop: the writer runs ahead of what we have read from its pipe,
so after reading a random 0-3 lines we do not know where it is; after the kill the rest of its output is read to
learn the last generation it committed. Soak: `RUN_SOAK=1 SOAK_KILLS=2000 pytest -m soak tests/memory`.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.memory.models import MemoryFile
from tests.memory.crash_writer import WriterPool, check_consistent, finish, read_line

KILLS = 100
SOAK_KILLS = int(os.environ.get("SOAK_KILLS", "2000"))
SEED = 20240501
UID = 424242424242424242
TEMP_NAME = re.compile(rf"\.{UID}\.json\.[0-9a-f]{{8}}\.tmp")


@dataclass
class KillStats:
    kills: int = 0
    committed: int = 0  # generations acknowledged in total
    found_new: int = 0  # kill landed after the rename, before the print: the file holds the next generation
    temp_left: int = 0  # kill landed mid-write: a temp file was left (the next start sweeps it)
    generations: list[int] = field(default_factory=list)


def check_folder(folder: Path, last_committed: int, stats: KillStats) -> int:
    """Everything that must hold right after a kill; returns the generation on disk."""
    names = sorted(p.name for p in folder.iterdir())
    assert not [n for n in names if "corrupt" in n], f"a file was kept aside as corrupt: {names}"
    temps = [n for n in names if TEMP_NAME.fullmatch(n)]
    assert len(temps) <= 1, f"more than the one in-flight temp file: {temps}"  # start-up sweeps the others
    assert set(names) - set(temps) <= {f"{UID}.json"}, f"unexpected files: {names}"
    stats.temp_left += len(temps)
    path = folder / f"{UID}.json"
    if not path.exists():
        assert last_committed == 0, "the file vanished after a committed write"
        return 0
    memory = MemoryFile.model_validate_json(path.read_bytes())  # always parses, always the right shape
    generation = check_consistent(memory)  # never a mix of two writes
    assert generation in (last_committed, last_committed + 1), (
        f"file holds generation {generation}, last committed {last_committed}"
    )
    stats.found_new += generation == last_committed + 1
    return generation


def kill_loop(folder: Path, kills: int, seed: int) -> KillStats:
    rng = random.Random(seed)
    stats = KillStats()
    on_disk = 0
    with WriterPool(lambda _: [str(folder), str(UID)]) as writers:
        for _ in range(kills):
            on_disk = one_kill(writers.start(), folder, on_disk, rng, stats)
    return stats


def one_kill(
    proc: subprocess.Popen[bytes], folder: Path, on_disk: int, rng: random.Random, stats: KillStats
) -> int:
    """Let a fresh writer run a random while, SIGKILL it, check the folder; returns the generation on disk."""
    try:
        ready = read_line(proc).split()
        assert ready[0] == b"ready" and int(ready[1]) == on_disk, (ready, on_disk)  # it read what we checked
        last_committed = on_disk
        for _ in range(rng.randint(0, 3)):
            generation = int(read_line(proc))
            assert generation == last_committed + 1, "a generation was skipped or repeated"
            last_committed = generation
    finally:
        proc.send_signal(signal.SIGKILL)
        rest, err = finish(proc)
    assert proc.returncode == -signal.SIGKILL, f"writer was not killed: rc={proc.returncode} {err!r}"
    for line in rest.split():  # what it committed between our last read and the kill
        assert int(line) == last_committed + 1
        last_committed += 1
    stats.committed += last_committed - on_disk
    generation = check_folder(folder, last_committed, stats)
    stats.kills += 1
    stats.generations.append(generation)
    return generation


@pytest.mark.timeout(300)  # normally well under a minute; generous for a loaded CI box
def test_sigkill_never_leaves_a_torn_memory_file(tmp_path: Path) -> None:
    stats = kill_loop(tmp_path / "memory", KILLS, SEED)
    print(f"\ncrash safety: {stats.kills} kills, {stats.committed} committed writes, {stats.found_new} kills after "
          f"the rename, {stats.temp_left} mid-write")
    assert stats.kills == KILLS
    assert stats.committed > 0
    assert stats.generations == sorted(stats.generations), "a committed generation was lost"


@pytest.mark.soak
@pytest.mark.timeout(0)  # as long as SOAK_KILLS takes
@pytest.mark.skipif(os.environ.get("RUN_SOAK") != "1", reason="soak: set RUN_SOAK=1")
def test_sigkill_soak(tmp_path: Path) -> None:
    stats = kill_loop(tmp_path / "memory", SOAK_KILLS, SEED + 1)
    print(f"\ncrash soak: {stats.kills} kills, {stats.committed} committed, {stats.found_new} after the rename, "
          f"{stats.temp_left} mid-write")
    assert stats.kills == SOAK_KILLS
