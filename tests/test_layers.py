"""The layers hold: cogs → bot → memory → storage, imports going down only, and the engine has one front door.

A static check over the source (AST, no imports executed):
- outside `bot/memory/`, code imports from the engine only what the allow-list names (the facade, its plain data,
  its errors, its labels), so a new engine module is private without anyone editing this test; the composition
  root and the database commands may also import what they build or run;
- nothing outside the engine reaches behind the facade (`memory.storage`, `service.learning`, ...);
- the engine never imports discord, nor anything of `bot/` above it; the storage plumbing imports nothing above it;
- no import circle anywhere in `bot/` or `cogs/`, and no engine module longer than 450 lines.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "bot" / "memory"
PLUMBING = ROOT / "bot" / "storage"

# What any code outside the engine may import from it: the facade, its plain data, its errors, its labels, and
# the text helper that strips a model's reasoning (the chat needs the same rule as extraction).
PUBLIC = frozenset(
    {
        "bot.memory.service", "bot.memory.models", "bot.memory.errors", "bot.memory.pipeline.render",
        "bot.memory.pipeline.parsing",
    }
)
# What the few modules that assemble or administer the engine may import besides.
BUILDERS = {
    ROOT / "bot" / "app.py": frozenset(
        {"bot.memory.pipeline.extractor", "bot.memory.pipeline.selector", "bot.memory.drivers.bundle"}
    ),
    ROOT / "bot" / "ops" / "database_commands.py": frozenset(
        {"bot.memory.drivers.pg.importer", "bot.memory.drivers.pg.schema", "bot.memory.drivers.encryption"}
    ),
}
# The facade's parts: reaching for them from outside (through a name for the engine) is reaching behind the door.
PART_ATTRIBUTES = frozenset(
    {"storage", "learning", "recall", "controls", "writer", "store", "debouncer", "journal", "extractor", "selector"}
)
ENGINE_NAMES = frozenset({"memory", "service", "engine", "_memory", "_service"})
MAX_ENGINE_LINES = 450


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> list[Path]:
    return sorted((ROOT / "bot").rglob("*.py")) + sorted((ROOT / "cogs").rglob("*.py"))


def imported_modules(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every module an import statement names (for `from a import b`: `a`, and `a.b` in case b is a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module
            yield from ((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)


def engine_module(name: str, known: set[str]) -> str | None:
    """The engine module an imported name refers to (a module, or a name inside one), else None."""
    if not name.startswith("bot.memory"):
        return None
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def violations(source: str, path: Path, known: set[str]) -> list[str]:
    """`file:line what` for each engine import outside the allow-list and each reach behind the facade."""
    tree = ast.parse(source)
    allowed = PUBLIC | BUILDERS.get(path, frozenset())
    where = path.relative_to(ROOT) if path.is_absolute() else path
    found = []
    for line, name in imported_modules(tree):
        module = engine_module(name, known)
        if module is not None and module not in allowed and module != "bot.memory":
            found.append(f"{where}:{line} imports {module}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PART_ATTRIBUTES and _names_the_engine(node.value):
            found.append(f"{where}:{node.lineno} reaches into .{node.attr}")
    return sorted(set(found))


def _names_the_engine(node: ast.expr) -> bool:
    """`memory`, `self.memory`, `resources.memory`, `service`...: an expression naming the engine's front door."""
    if isinstance(node, ast.Name):
        return node.id in ENGINE_NAMES
    return isinstance(node, ast.Attribute) and node.attr in ENGINE_NAMES


def known_modules() -> set[str]:
    return {module_name(path) for path in sources()}


def test_outside_code_uses_only_the_front_door() -> None:
    known = known_modules()
    outside = [path for path in sources() if ENGINE not in path.parents]
    assert ROOT / "cogs" / "memory.py" in outside and ROOT / "bot" / "console" / "session.py" in outside
    found = [line for path in outside for line in violations(path.read_text(encoding="utf-8"), path, known)]
    assert found == []


def test_the_engine_imports_nothing_above_it_and_never_discord() -> None:
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        for line, name in imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            top = name.split(".")[0]
            above = name.startswith("bot.") and not name.startswith(("bot.memory", "bot.storage"))
            if top in ("discord", "cogs") or above:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert found == []


def test_the_storage_plumbing_imports_nothing_above_it() -> None:
    found = []
    for path in sorted(PLUMBING.rglob("*.py")):
        for line, name in imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            above = name.startswith("bot.") and not name.startswith("bot.storage")
            if name.split(".")[0] in ("discord", "cogs") or above:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert found == []


def import_graph() -> dict[str, set[str]]:
    known = known_modules()
    graph: dict[str, set[str]] = {}
    for path in sources():
        name = module_name(path)
        targets = set()
        for _, imported in imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            while imported and imported not in known:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_there_is_no_import_circle() -> None:
    assert cycles(import_graph()) == []


def test_no_engine_module_is_longer_than_the_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(ENGINE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_ENGINE_LINES
    }
    assert long == {}


# --- the checks themselves can fail -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "from bot.memory.drivers.bundle import build_file_storage\n",
        "import bot.memory.pipeline.debouncer\n",
        "from bot.memory.parts import learning\n",
        "from bot.memory.rules.write_gate import admit\n",
        "from bot.memory.brand_new_module import Thing\n",
        "async def f(cog):\n    await cog.memory.storage.memories.export_bytes(1)\n",
        "async def f(memory):\n    await memory.learning.debouncer.flush()\n",
        "def f(service):\n    return service.recall\n",
    ],
)
def test_the_check_catches_a_reach_into_the_engine(source: str) -> None:
    known = known_modules() | {"bot.memory.brand_new_module"}
    assert violations(source, ROOT / "cogs" / "probe.py", known) != []


def test_the_check_allows_the_front_door() -> None:
    source = "from bot.memory.service import MemoryService\nfrom bot.memory.models import Place\n"
    assert violations(source, ROOT / "cogs" / "probe.py", known_modules()) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
