"""The README and the documents stay true: a newcomer's first screen says what the bot is and how to try it, the
console try runs verbatim against a local Chat Completions server, and every link, path, command and setting they
name exists (links and their anchors, files of the repository, `python -m bot` subcommands with their options,
benchmark modules and scripts, settings)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import parse_args
from bot.config import Settings
from tests.support.llm_server import ChatServer, extraction, reply
from tests.test_process import clean_env

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = sorted(
    [ROOT / "README.md", ROOT / "SECURITY.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").glob("*.md")]
)
FRONT = ROOT / "README.md"
REFERENCE = [FRONT, *(ROOT / "docs").glob("*.md")]
LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"```(?:bash|sh)?\n(.*?)```", re.DOTALL)
SETTING = re.compile(r"^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=\S*)?$")
REPO_PATH = re.compile(r"^(?:bot|cogs|tests|bench|scripts|docs)/[\w./-]*$|^[\w.-]+\.(?:md|toml|yaml|lock|txt|example)$")
NOT_SETTINGS = {  # environment names the documents mention that are not the bot's settings
    "MEMORY_BOT_NO_POSTGRES", "MEMORY_BOT_POSTGRES_BINARIES", "POSTGRES_PASSWORD", "POSTGRES_USER", "POSTGRES_DB",
    "MEMORY_BOT_NO_EMBEDDINGS",
    "PIP_NO_CACHE_DIR", "NO_PROXY", "HTTPS_PROXY", "HTTP_PROXY", "LOG_FILE", "MAX_USER_FACT_CHARS",
    "OLLAMA_HOST", "APP_ID",  # Ollama's own setting; the application id in Discord's invite URL
    "STALE_FLOOR", "USER_ORIGINS",  # constants of the code the architecture names
}
RUNTIME_PATHS = ("bench/data/", "bench/results/")  # fetched or written by a command, never committed
SETTINGS = {name.upper() for name in Settings.model_fields}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text("utf-8"))
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def prose(path: Path) -> str:
    return path.read_text("utf-8")


def test_the_first_screen_says_what_it_is_and_how_to_try_it() -> None:
    text = prose(FRONT)
    first_screen = "\n".join(text.splitlines()[:12])
    assert "A Discord bot" in first_screen and "remembers" in first_screen
    assert "(#try-it-in-a-minute)" in first_screen
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:4] == ["## What it does", "## Why this one", "## What it looks like", "## Try it in a minute"]
    assert len(text.splitlines()) < 200, "a product page: the reference lives in docs/"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_and_anchor_exists(document: Path) -> None:
    broken = []
    for target in LINK.findall(FENCE.sub("", prose(document))):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file_part, _, anchor = target.partition("#")
        destination = (document.parent / file_part).resolve() if file_part else document
        exists = destination.exists()
        if not exists or (anchor and destination.suffix == ".md" and anchor not in anchors(destination)):
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("document", REFERENCE, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_repository_path_named_exists(document: Path) -> None:
    named = {code for code in CODE.findall(prose(document)) if REPO_PATH.match(code)}
    missing = [
        path for path in sorted(named)
        if not path.startswith(RUNTIME_PATHS) and not (ROOT / path.rstrip("/")).exists()
    ]
    assert missing == []


@pytest.mark.parametrize("document", REFERENCE, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_setting_named_exists(document: Path) -> None:
    named = {match.group(1) for code in CODE.findall(prose(document)) if (match := SETTING.match(code.strip()))}
    assert sorted(named - SETTINGS - NOT_SETTINGS) == []


def commands(text: str) -> list[list[str]]:
    """Every command line in the shell blocks and inline code, as words (environment assignments dropped)."""
    lines = [line for block in FENCE.findall(text) for line in block.splitlines()] + CODE.findall(text)
    found = []
    for line in lines:
        for part in re.split(r"&&|;|\|\|", line.split("  #")[0]):
            try:
                words = shlex.split(part.replace("<", " ").replace("{", " ").replace("}", " "))
            except ValueError:
                continue
            while words and re.match(r"^[A-Z_]+=", words[0]):
                words.pop(0)
            if words:
                found.append(words)
    return found


def bot_arguments(words: list[str]) -> list[str] | None:
    """The arguments given to the bot's command line, or None when `words` does not run it."""
    if words[:3] == ["python", "-m", "bot"] or words[:3] == ["python3", "-m", "bot"]:
        return words[3:]
    if words[:4] == ["docker", "compose", "run", "--rm"] and "bot" in words:
        return words[words.index("bot") + 1:]
    return None


@pytest.mark.parametrize("document", REFERENCE, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_bot_command_named_parses(document: Path) -> None:
    for words in commands(prose(document)):
        arguments = bot_arguments(words)
        if arguments is None:
            continue
        arguments = [word for word in arguments if not word.startswith("new-key")]  # `rotate-key < new-key.txt`
        try:
            parse_args(arguments)
        except SystemExit:
            pytest.fail(f"{document.name}: `{' '.join(words)}` is not a command line the bot accepts")


@pytest.mark.parametrize("document", REFERENCE, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_script_and_benchmark_named_exists(document: Path) -> None:
    for words in commands(prose(document)):
        if words[:1] in (["python"], ["python3"]) and len(words) > 1 and words[1].startswith("scripts/"):
            assert (ROOT / words[1]).is_file(), words
        if words[:2] in (["python", "-m"], ["python3", "-m"]) and len(words) > 2 and words[2].startswith("bench."):
            assert (ROOT / "bench" / f"{words[2].removeprefix('bench.')}.py").is_file(), words


def console_try_line() -> str:
    lines = [line for block in FENCE.findall(prose(FRONT)) for line in block.splitlines()]
    local = [line for line in lines if "python -m bot console" in line and "OPENAI_BASE_URL=http://localhost" in line]
    assert len(local) == 1, local
    return local[0]


def test_the_console_try_works_verbatim_against_a_local_server(tmp_path: Path, chat_server: ChatServer) -> None:
    """The README's line, with the local server's address in place of Ollama's and this interpreter for `python`."""
    line = console_try_line()
    words = shlex.split(line)
    settings = dict(word.split("=", 1) for word in words if re.match(r"^[A-Z_]+=", word))
    command = [word for word in words if not re.match(r"^[A-Z_]+=", word)]
    assert command[:3] == ["python", "-m", "bot"]
    settings["OPENAI_BASE_URL"] = chat_server.base_url
    chat_server.offered_models = [settings["CHAT_MODEL"], "nomic-embed-text"]  # what `ollama list` might show
    chat_server.enqueue(
        reply("Hi Sam! Tomatoes love sun."), extraction(personal="Grows tomatoes", facts=[("Grows tomatoes", "hobby")])
    )
    process = subprocess.run(
        [sys.executable, *command[1:]], cwd=tmp_path, env=clean_env(**settings), capture_output=True, text=True,
        input="Hi! I'm Sam and I grow tomatoes.\n/flush\n/show\n", timeout=120, check=False,
    )
    assert process.returncode == 0, process.stderr
    assert "bot> Hi Sam! Tomatoes love sun." in process.stdout
    assert "(+1 fact; 1 summary updated)" in process.stdout and "Grows tomatoes" in process.stdout
    assert "is not offered" not in process.stdout, "the README's model is one the server lists"
    assert "Saving what I learned" in process.stdout
    assert (tmp_path / "data" / "memory" / "1.json").exists(), "memory goes to ./data, which git ignores"
    assert "Traceback" not in process.stderr


def test_local_model_users_are_told_to_set_chat_model() -> None:
    """The default is an OpenAI model name, which a local server answers with 404."""
    local_try = console_try_line()
    assert "CHAT_MODEL=" in local_try
    example = (ROOT / ".env.example").read_text("utf-8")
    comment = example[: example.index("\nCHAT_MODEL=")].rsplit("\n# Model for replies.", 1)[1]
    assert "local server" in comment and "404" in comment
    assert "set `CHAT_MODEL` to a model it serves" in prose(ROOT / "docs" / "configuration.md")
