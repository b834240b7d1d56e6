"""The versions we ship and test: pyproject's floors are the ones CI installs (constraints-min.txt), the lock file
the Dockerfile installs satisfies pyproject, and the image installs from it; an install carries the message catalogs,
and the image keeps the locale data the bot's languages need."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def runtime_requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    requirements = [Requirement(line) for line in project["dependencies"]]
    return {canonicalize_name(r.name): r for r in requirements}


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text("utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not pinned with =="
            found[canonicalize_name(name)] = version.strip()
    return found


def floor(requirement: Requirement) -> str:
    floors = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    assert len(floors) == 1, f"{requirement} needs exactly one >= floor"
    return floors[0]


def test_every_runtime_dependency_has_a_floor_that_ci_installs() -> None:
    minimum = pins(ROOT / "constraints-min.txt")
    floors = {name: floor(requirement) for name, requirement in runtime_requirements().items()}
    assert minimum == floors


def test_the_lock_file_pins_every_runtime_dependency_within_pyproject() -> None:
    locked = pins(ROOT / "requirements.lock")
    for name, requirement in runtime_requirements().items():
        assert name in locked, f"{name} is missing from requirements.lock (run scripts/lock-requirements)"
        assert requirement.specifier.contains(locked[name]), f"requirements.lock has {name}=={locked[name]}"


def test_the_image_installs_the_lock_file() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text("utf-8")
    assert re.search(r"pip install .*-r requirements\.lock", dockerfile)
    assert "COPY requirements.lock" in dockerfile


def test_an_install_carries_the_message_catalogs() -> None:
    """The catalogs are package data of `bot` (no build step compiles them: the `.mo` files are committed)."""
    from bot.i18n.catalogs import catalog_path
    from bot.i18n.languages import LANGUAGES

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-data"]["bot"]
    carried = {path for pattern in patterns for path in (ROOT / "bot").glob(pattern)}
    for language in LANGUAGES:
        assert catalog_path(language) in carried and catalog_path(language, ".po") in carried, language


def test_the_image_keeps_the_locale_data_each_language_needs() -> None:
    """The Dockerfile deletes Babel's CLDR data but for a list of locales: it must hold every one Babel reads to
    write numbers, dates and durations in the bot's languages (found in a fresh interpreter: Babel keeps the data of
    a locale it has read once)."""
    dockerfile = (ROOT / "Dockerfile").read_text("utf-8")
    kept = set(re.findall(r"! -name ([\w]+)\.dat", dockerfile))
    probe = (
        "import json, babel.localedata as data\n"
        "read, load = set(), data.load\n"
        "def spy(name, merge_inherited=True):\n"
        "    read.add(name)\n"
        "    return load(name, merge_inherited)\n"
        "data.load = spy\n"
        "from bot.i18n.languages import LANGUAGES\n"
        "from bot.i18n.speech import Speech\n"
        "for language in LANGUAGES:\n"
        "    s = Speech(language)\n"
        "    s.number(1234.5), s.percent(0.9), s.date('2024-06-14'), s.date('2024-06')\n"
        "    s.duration(5, 'minute'), s.duration(2, 'hour', long=True)\n"
        "print(json.dumps(sorted(read)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    read = set(json.loads(result.stdout))
    assert {"root", "en", "zh_Hans_CN", "ja", "ko", "es_ES", "pt_BR", "fr", "de"} <= read  # each one was read
    assert read <= kept, sorted(read - kept)
