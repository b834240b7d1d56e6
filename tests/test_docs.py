"""The code points only at documents inside the repository (docs/architecture.md), never at design files that are
not shipped with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(r"DESIGN\.md|seeds/|/work/shared")


def test_no_module_cites_a_file_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("bot", "cogs", "tests", "bench")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if OUTSIDE.search(line) and path.name != "test_docs.py"
    ]
    assert offenders == []


def test_the_architecture_document_the_code_points_at_exists() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    assert "## The design the engine relies on" in text
    assert '"factsToRemove"' in text  # the extraction answer's shape, which the extractor's docstring refers to
