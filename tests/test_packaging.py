"""The versions we ship and test: pyproject's floors are the ones CI installs (constraints-min.txt), the lock file
the Dockerfile installs satisfies pyproject, and the image installs from it."""

from __future__ import annotations

import re
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
