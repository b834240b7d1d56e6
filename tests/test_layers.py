"""The layers hold: cogs → bot → memory → storage, imports going down only, and the engine has one lobby of doors.

A static check over the source (AST, no imports executed), beside strict mypy, which holds every caller to the
verbs of the door's Protocol:
- outside `bot/memory/`, code imports from the engine only what the allow-list names (the lobby, its doors and the
  values they carry, its plain data, its errors, its labels), so a new engine module is private without anyone
  editing this test; the composition root and the database commands may also import what they build or run;
- outside code reaches the engine only through the lobby's public names (an allow-list read from the lobby
  itself), so a part added behind it is out of reach without anyone editing this test;
- the lobby has about a dozen public names, and each door is typed by a Protocol of `bot.memory.doors`;
- the engine never imports discord, nor anything of `bot/` above it; the storage plumbing imports nothing above it;
- no import circle anywhere in `bot/` or `cogs/`, not between modules and not between the folders of one layer,
  and only cogs live in `cogs/`.
Size is held by a per-function complexity limit (ruff's C901, PLR0912, PLR0915 in pyproject.toml), checked here too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "bot" / "memory"
PLUMBING = ROOT / "bot" / "storage"
LOBBY = ENGINE / "service.py"

# What any code outside the engine may import from it: the lobby, its doors (with the values they carry), its plain
# data, its errors, its labels, and the text helper that strips a model's reasoning (the chat needs the same rule as
# extraction).
PUBLIC = frozenset(
    {
        "bot.memory.service", "bot.memory.doors", "bot.memory.models", "bot.memory.errors",
        "bot.memory.pipeline.render", "bot.memory.pipeline.parsing",
    }
)
# What the few modules that assemble or administer the engine may import besides.
BUILDERS = {
    ROOT / "bot" / "app.py": frozenset(
        {
            "bot.memory.pipeline.extractor", "bot.memory.pipeline.selector", "bot.memory.pipeline.embeddings",
            "bot.memory.drivers.bundle",
        }
    ),
    ROOT / "bot" / "ops" / "database_commands.py": frozenset(
        {"bot.memory.drivers.import_files", "bot.memory.drivers.pg.schema", "bot.memory.drivers.encryption"}
    ),
}
# Expressions that name the lobby: `service`, `engine`, and any attribute called so (`self.memory`,
# `resources.memory`). A bare local `memory` is most often a memory document (`MemoryFile`), so it is left to mypy,
# which holds every use of a `MemoryService` to its doors.
ENGINE_NAMES = frozenset({"service", "engine", "_service"})
ENGINE_ATTRIBUTES = frozenset({"memory", "service", "engine", "_memory", "_service"})
MAX_LOBBY_NAMES = 12


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


def lobby_names(source: str | None = None) -> set[str]:
    """The public names the lobby class defines: its doors, `user`, and anything else it makes public."""
    tree = ast.parse(source if source is not None else LOBBY.read_text(encoding="utf-8"))
    lobby = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "MemoryService")
    return {
        node.name
        for node in lobby.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_")
    }


def violations(source: str, path: Path, known: set[str], doors: set[str] | None = None) -> list[str]:
    """`file:line what` for each engine import outside the allow-list and each reach past the lobby's doors."""
    tree = ast.parse(source)
    allowed = PUBLIC | BUILDERS.get(path, frozenset())
    public = lobby_names() if doors is None else doors
    where = path.relative_to(ROOT) if path.is_absolute() else path
    found = []
    for line, name in imported_modules(tree):
        module = engine_module(name, known)
        if module is not None and module not in allowed and module != "bot.memory":
            found.append(f"{where}:{line} imports {module}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _names_the_engine(node.value) and node.attr not in public:
            found.append(f"{where}:{node.lineno} reaches past the lobby: .{node.attr}")
    return sorted(set(found))


def _names_the_engine(node: ast.expr) -> bool:
    """`self.memory`, `resources.memory`, `service`...: an expression naming the engine's lobby."""
    if isinstance(node, ast.Name):
        return node.id in ENGINE_NAMES
    return isinstance(node, ast.Attribute) and node.attr in ENGINE_ATTRIBUTES


def known_modules() -> set[str]:
    return {module_name(path) for path in sources()}


def test_outside_code_uses_only_the_lobby() -> None:
    known = known_modules()
    outside = [path for path in sources() if ENGINE not in path.parents]
    assert ROOT / "cogs" / "memory" / "commands.py" in outside and ROOT / "bot" / "console" / "session.py" in outside
    found = [line for path in outside for line in violations(path.read_text(encoding="utf-8"), path, known)]
    assert found == []


def test_the_lobby_has_about_a_dozen_names_and_each_door_is_a_protocol() -> None:
    names = lobby_names()
    assert {"learning", "recall", "events", "switches", "community", "budgets", "ops", "user"} <= names
    assert len(names) <= MAX_LOBBY_NAMES, sorted(names)
    doors = ast.parse((ENGINE / "doors.py").read_text(encoding="utf-8"))
    protocols = {
        node.name
        for node in doors.body
        if isinstance(node, ast.ClassDef) and any(getattr(base, "id", "") == "Protocol" for base in node.bases)
    }
    lobby = next(
        node for node in ast.parse(LOBBY.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ClassDef) and node.name == "MemoryService"
    )
    door_types = {
        node.name: ast.unparse(node.returns)
        for node in lobby.body
        if isinstance(node, ast.FunctionDef) and node.name in names and node.returns is not None
        and node.name != "clock"
    }
    assert door_types and all(kind in protocols for kind in door_types.values()), door_types


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


def folder_graph(graph: dict[str, set[str]], folder: str) -> dict[str, set[str]]:
    """The imports between the direct children (modules and subfolders) of one package, as a graph of children."""

    def child(module: str) -> str | None:
        if not module.startswith(folder + "."):
            return None
        return module[len(folder) + 1 :].split(".")[0]

    children: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = child(module)
        if source is None:
            continue
        children.setdefault(source, set())
        for target in targets:
            goal = child(target)
            if goal is not None and goal != source:
                children[source].add(goal)
    return children


def test_there_is_no_import_circle() -> None:
    assert cycles(import_graph()) == []


@pytest.mark.parametrize("folder", ["bot", "bot.memory", "bot.memory.drivers", "bot.storage", "cogs"])
def test_the_folders_of_a_layer_import_each_other_one_way(folder: str) -> None:
    """Seen from a package, its modules and subfolders import each other without a circle: each folder is a layer
    whose parts only ever look down."""
    assert cycles(folder_graph(import_graph(), folder)) == []


def test_only_cogs_live_in_cogs() -> None:
    """Every module directly in `cogs/` (and every package there) is an extension: it has a `setup()`."""
    extensions = [path for path in sorted((ROOT / "cogs").iterdir()) if path.name != "__init__.py"]
    extensions = [path / "__init__.py" if path.is_dir() else path for path in extensions if path.suffix == ".py"
                  or (path / "__init__.py").exists()]
    without = [
        str(path.relative_to(ROOT)) for path in extensions
        if not any(
            isinstance(node, ast.AsyncFunctionDef) and node.name == "setup"
            for node in ast.parse(path.read_text(encoding="utf-8")).body
        )
    ]
    assert extensions and without == []


def test_no_function_is_more_complex_than_the_limit() -> None:
    """The shape rule: ruff's complexity checks (McCabe, branches, statements; limits in pyproject.toml)."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "C901,PLR0912,PLR0915", "--output-format", "concise",
         "bot", "cogs"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- the checks themselves can fail -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "from bot.memory.drivers.bundle import build_file_storage\n",
        "import bot.memory.pipeline.debouncer\n",
        "from bot.memory.parts import learning\n",
        "from bot.memory.rules.write_gate import admit\n",
        "from bot.memory.brand_new_module import Thing\n",
        "async def f(cog):\n    await cog.memory._parts.storage.memories.export_bytes(1)\n",
        "async def f(service):\n    await service.storage.memories.export_bytes(1)\n",
        "def f(service):\n    return service.writer\n",
        "def f(self):\n    return self.memory.brand_new_part\n",
    ],
)
def test_the_check_catches_a_reach_into_the_engine(source: str) -> None:
    known = known_modules() | {"bot.memory.brand_new_module"}
    assert violations(source, ROOT / "cogs" / "probe.py", known) != []


def test_the_check_allows_the_lobby() -> None:
    source = (
        "from bot.memory.service import MemoryService\nfrom bot.memory.doors import ForgetFact\n"
        "async def f(self):\n    await self.memory.user(1).forget(ForgetFact('x'))\n"
        "    self.memory.learning.ticket(1)\n"
    )
    assert violations(source, ROOT / "cogs" / "probe.py", known_modules()) == []


def test_the_lobby_reader_sees_a_new_public_name() -> None:
    source = "class MemoryService:\n    def learning(self): ...\n    def parts(self): ...\n    def _hidden(self): ...\n"
    assert lobby_names(source) == {"learning", "parts"}


def test_the_cycle_finders_find_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = {"p.x.one": {"p.y.two"}, "p.y.two": {"p.x.three"}, "p.x.three": set()}
    assert cycles(folder_graph(graph, "p")) == [["x", "y"]]
