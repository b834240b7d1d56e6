"""What a reader of a fresh clone meets: no path into folders the clone does not have, and no internal tracker
words in the documents' headings. Everything a reader needs is in the repository or fetched by a documented command
(the LoCoMo data: scripts/fetch_locomo.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("../" + "shared", "/work/" + "shared", "shared" + "/benchmarks", "shared" + "/tools")  # not spelled out
OUTSIDE = re.compile("|".join(re.escape(folder) for folder in FOLDERS))
DOCUMENTS = (
    "README.md", "BENCHMARKS.md", "SECURITY.md", "docs/architecture.md", "docs/deploy.md", "docs/privacy.md",
    "docs/commands.md", "docs/configuration.md", "docs/operations.md",
)


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = [ROOT / name for name in listed.decode().split("\0") if name]
    return [path for path in files if path.is_file() and b"\0" not in path.read_bytes()[:4096]]


def test_nothing_points_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in tracked_text_files()
        for number, line in enumerate(path.read_text("utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE.search(line) and path.name != "test_docs.py"  # that test's own pattern names the folder
    ]
    assert offenders == []


def test_document_headings_carry_no_tracker_references() -> None:
    offenders = [
        f"{name}: {line}"
        for name in DOCUMENTS
        for line in (ROOT / name).read_text("utf-8").splitlines()
        if line.startswith("#") and re.search(r"\bissues?\s+#?\d|\bseed\b", line, re.IGNORECASE)
    ]
    assert offenders == []


def test_the_benchmark_data_is_fetched_by_a_documented_command() -> None:
    for name in ("README.md", "BENCHMARKS.md"):
        assert "python scripts/fetch_locomo.py" in (ROOT / name).read_text("utf-8"), name
    assert (ROOT / "scripts" / "fetch_locomo.py").stat().st_mode & 0o111, "the script is executable"
    assert "bench/data/" in (ROOT / ".gitignore").read_text("utf-8").splitlines(), "the fetched data is never committed"
