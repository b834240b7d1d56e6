"""`python -m bench --smoke` says what it is, a check that every benchmark runs at tiny sizes, and prints no
PASS/MISS against targets that tiny sizes cannot meet; correctness checks keep their verdict. The benchmark tables
name their one baseline one way."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.common import SMOKE_NOTE, SMOKE_RUN, Table, header

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def smoke_mode() -> Iterator[None]:
    before = SMOKE_RUN.on
    yield
    SMOKE_RUN.on = before


def test_a_smoke_run_says_it_checks_that_benchmarks_run_without_miss_noise() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--only", "debounce_savings"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert SMOKE_NOTE in result.stdout.splitlines()[0]
    assert "MISS" not in result.stdout and "informational" not in result.stdout
    assert "| PASS |" in result.stdout, "correctness checks keep their verdict"


def test_only_correctness_checks_have_a_verdict_in_a_smoke_run(
    smoke_mode: None, capsys: pytest.CaptureFixture[str]
) -> None:
    table = Table("t")
    table.add("p50 latency", "9 ms", target="<= 1 ms", passed=False)
    table.add("lost updates", "1", target="0", passed=False, hard=True)
    header("x", smoke=True)
    assert SMOKE_NOTE in capsys.readouterr().out
    smoke = table.render()
    assert smoke.count("MISS") == 1 and "lost updates" in next(line for line in smoke.splitlines() if "MISS" in line)
    assert table.failed(smoke=True)
    header("x", smoke=False)
    assert table.render().count("MISS") == 2


def test_the_baseline_has_one_name_in_the_documents() -> None:
    for name in ("README.md", "BENCHMARKS.md"):
        text = (ROOT / name).read_text("utf-8")
        assert not re.search(r"\bseed\b(?! phrases)|seed's|[Oo]riginal design", text), name
    assert '"DeerFlow design" in the tables is the memory design this project started from' in (
        ROOT / "BENCHMARKS.md"
    ).read_text("utf-8")
