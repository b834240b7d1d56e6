"""compose.yaml as an operator follows it: the header's commands make a `.env` the bot does not warn about, and
every checkout (Compose project) keeps its own memory instead of sharing volumes named globally."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from bot.cli import env_file_warning

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = (ROOT / "compose.yaml").read_text("utf-8")


def block(text: str, path: list[str]) -> list[str]:
    """The lines under a key, found by indentation (`["services", "bot"]`), without comments or blank lines."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for key in path:
        depth = len(lines[0]) - len(lines[0].lstrip())  # the depth of this level's keys
        starts = [i for i, line in enumerate(lines) if line == " " * depth + f"{key}:"]
        assert starts, f"no {key}: in {path}"
        tail = lines[starts[0] + 1 :]
        end = next((i for i, rest in enumerate(tail) if len(rest) - len(rest.lstrip()) <= depth), len(tail))
        lines = tail[:end]
    return lines


def test_volumes_and_the_image_are_named_per_project() -> None:
    volumes = block(COMPOSE, ["volumes"])
    assert {line.strip().rstrip(":") for line in volumes if line.startswith("  ") and not line.startswith("   ")} == {
        "memory-data",
        "memory-keys",  # MEMORY_ENCRYPTION_KEY's key store, backed up apart from memory-data
        "postgres-data",
    }
    assert not [line for line in volumes if re.match(r"\s+name:", line)], "a fixed name is shared by every checkout"
    assert not [line for line in block(COMPOSE, ["services", "bot"]) if re.match(r"\s+image:", line)]


def test_the_header_makes_an_env_file_the_bot_does_not_warn_about(tmp_path: Path) -> None:
    commands = [line.lstrip("# ").split("  #")[0] for line in COMPOSE.splitlines() if ".env.example .env" in line]
    assert len(commands) == 1, commands
    shutil.copy(ROOT / ".env.example", tmp_path / ".env.example")
    subprocess.run(["bash", "-c", f"umask 022 && {commands[0]}"], cwd=tmp_path, check=True)
    dotenv = tmp_path / ".env"
    assert dotenv.read_bytes() == (ROOT / ".env.example").read_bytes()
    assert env_file_warning(dotenv) is None, "the bot warns at start about a .env others can read"
