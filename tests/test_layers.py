"""The engine has one front door: cogs, the console and the rest of `bot/` call `MemoryService`, never its parts.

A static check over the source (AST, no imports executed): outside `bot/memory/`, no module imports the store,
debouncer, journal, extractor, selector, pause registry or apply step, and no code reaches for those parts as
attributes (`memory.store`, `service.debouncer`, ...). The one exception is the composition root, `bot/app.py`,
which builds the parts once and hands them to the service. And the engine never imports discord.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE_PARTS = frozenset(
    {
        "bot.memory.store",
        "bot.memory.debouncer",
        "bot.memory.journal",
        "bot.memory.extractor",
        "bot.memory.selector",
        "bot.memory.pauses",
        "bot.memory.apply",
    }
)
PART_ATTRIBUTES = frozenset(
    {"store", "debouncer", "journal", "extractor", "selector", "pauses"}
    | {"_store", "_debouncer", "_journal", "_extractor", "_selector", "_pauses"}
)
COMPOSITION_ROOT = ROOT / "bot" / "app.py"


def _callers() -> list[Path]:
    """Every module that must use the front door: cogs/ and bot/ outside the engine."""
    files = sorted((ROOT / "cogs").rglob("*.py")) + sorted((ROOT / "bot").rglob("*.py"))
    engine = ROOT / "bot" / "memory"
    return [path for path in files if engine not in path.parents]


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def violations(source: str, name: str, *, builds_the_parts: bool = False) -> list[str]:
    """`file:line what` for each import of an engine part and each reach into the service's parts."""
    tree = ast.parse(source, filename=name)
    found: list[str] = []
    if not builds_the_parts:
        for line, module in _imported_modules(tree):
            if module in ENGINE_PARTS:
                found.append(f"{name}:{line} imports {module}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PART_ATTRIBUTES:
            found.append(f"{name}:{node.lineno} reaches into .{node.attr}")
    return found


def test_callers_use_only_the_service() -> None:
    callers = _callers()
    assert ROOT / "cogs" / "memory.py" in callers and ROOT / "bot" / "console.py" in callers
    found = [
        line
        for path in callers
        for line in violations(
            path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), builds_the_parts=path == COMPOSITION_ROOT
        )
    ]
    assert found == []


def test_the_engine_never_imports_discord() -> None:
    found = []
    for path in sorted((ROOT / "bot" / "memory").rglob("*.py")):
        for line, module in _imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            if module == "discord" or module.startswith("discord."):
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        "from bot.memory.store import MemoryStore\n",
        "import bot.memory.debouncer\n",
        "from bot.memory import journal\n",
        "async def f(cog):\n    await cog.memory.store.export_bytes(1)\n",
        "async def f(memory):\n    await memory.debouncer.flush()\n",
        "def f(service):\n    return service._selector\n",
    ],
)
def test_the_check_catches_a_reach_into_the_engine(source: str) -> None:
    """The check itself can fail: each of these, in a cog, is reported."""
    assert violations(source, "cogs/probe.py") != []
