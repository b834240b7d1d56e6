"""The versions we ship and test: pyproject's floors are the ones CI installs (constraints-min.txt), the lock file
the Dockerfile installs satisfies pyproject, and the image installs from it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

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
    write numbers, dates and durations in the bot's languages."""
    import babel.localedata

    from bot.i18n.languages import LANGUAGES
    from bot.i18n.speech import Speech

    dockerfile = (ROOT / "Dockerfile").read_text("utf-8")
    kept = set(re.findall(r"! -name ([\w]+)\.dat", dockerfile))
    read: set[str] = set()
    original = babel.localedata.load

    def load(name: str, merge_inherited: bool = True) -> Any:
        read.add(name)
        return original(name, merge_inherited)

    babel.localedata.load = load  # type: ignore[assignment]
    try:
        babel.localedata._cache.clear()  # type: ignore[attr-defined]
        for language in LANGUAGES:
            speech = Speech(language)  # a fresh Locale, not the cached one
            speech.number(1234.5), speech.percent(0.9), speech.date("2024-06-14"), speech.date("2024-06")
            speech.duration(5, "minute"), speech.duration(2, "hour", long=True)
    finally:
        babel.localedata.load = original  # type: ignore[assignment]
    assert {"root", "en", "zh_Hans_CN", "ja", "ko", "es_ES", "pt_BR", "fr", "de"} <= read  # each one was read
    assert read <= kept, sorted(read - kept)
