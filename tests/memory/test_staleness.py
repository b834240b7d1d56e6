"""Staleness (`bot.memory.pipeline.staleness`): a bounded factor on the selector's score for facts nobody restated or
confirmed for `stale_days`; facts the user wrote, corrected or imported never age, and age never deletes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.memory.models import Fact
from bot.memory.pipeline.selector import FactSelector
from bot.memory.pipeline.staleness import STALE_FLOOR, stale_factor

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def said(days_ago: float, content: str = "Plays tennis on Saturdays at the club", **fields: str) -> Fact:
    stamp = (NOW - timedelta(days=days_ago)).isoformat(timespec="seconds")
    return Fact(id=f"fact_{abs(hash((content, days_ago))) % 16**8:08x}", content=content, confidence=0.9,
                createdAt=stamp, observedAt=stamp, lastConfirmedAt=stamp, **fields)


def test_the_factor_is_one_until_stale_then_falls_linearly_to_its_floor_and_no_lower() -> None:
    assert stale_factor(said(179), NOW, 180) == 1.0
    assert stale_factor(said(270), NOW, 180) == pytest.approx(1 - (1 - STALE_FLOOR) / 2)
    assert stale_factor(said(360), NOW, 180) == pytest.approx(STALE_FLOOR)
    assert stale_factor(said(5000), NOW, 180) == pytest.approx(STALE_FLOOR)
    assert stale_factor(said(5000), NOW, 0) == 1.0  # switched off


@pytest.mark.parametrize("origin", ["user", "corrected", "imported"])
def test_what_the_user_wrote_corrected_or_imported_never_ages(origin: str) -> None:
    assert stale_factor(said(5000, origin=origin), NOW, 180) == 1.0


def test_a_confirmation_makes_an_old_fact_fresh_again() -> None:
    fact = said(900)
    fact.lastConfirmedAt = (NOW - timedelta(days=3)).isoformat()
    assert stale_factor(fact, NOW, 180) == 1.0


def test_a_stale_fact_loses_a_tie_but_wins_when_the_talk_is_about_it() -> None:
    old = said(400, "Plays tennis on Saturdays at the club")
    new = said(2, "Plays padel on Saturdays at the club")
    selector = FactSelector(top_k=1, stale_days=180)
    facts = [old, new]
    assert selector.select("u", 1, facts, ["what shall I do on Saturdays at the club?"], now=NOW) == [new]
    assert selector.select("u", 1, facts, ["how is my tennis?"], now=NOW) == [old]
    # Without a clock (or with staleness off) the older one wins the tie, as it always did: ties go newest first.
    unaged = FactSelector(top_k=1, stale_days=0)
    assert unaged.select("u", 1, [new, old], ["what shall I do on Saturdays at the club?"], now=NOW) == [old]
