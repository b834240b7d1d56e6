"""The update suite's lifetimes part: do time-boxed facts end on time, and do their durable look-alikes never end?

    .venv/bin/python -m bench.update_lifetimes [--smoke]      (also run by `python -m bench.update_suite`)

`bench/corpora/lifetimes.json` holds 87 time-boxed statements ("this week I'm in Rome", "周五考驾照", "日曜日まで
リスボンにいる") in English, Chinese and Japanese, each said on one of three days, with the last day its words give it
(labelled by hand-written calendar rules: a week ends on Sunday, "on Friday" is the next Friday, "for the next two
weeks" ends 13 days on), and 60 durable look-alikes whose time words bound nothing ("works weekends", "moved to Rome
this week", "birthday is in May", "每周五去攀岩", "今週ローマに引っ越した"). Each statement is one user: its line goes
through the real path (`remember`, the pending turns, the debouncer, the extractor over HTTP to a scripted model,
apply, the write gate, the atomic file), extracted an hour after the message. Then, on the service's clock:

- expired on time: time-boxed facts whose lifetime ends on the labelled day: used in a reply's prompt at noon of their
  last day, absent from it from the next midnight on, and shown as history by `/memory show` then;
- durable expired: look-alike facts with a lifetime, or missing from a reply's prompt 400 days later;
- expired injected: facts in a reply's prompt (for the statement's own words, the query most likely to pull them
  back) after their last day.

Dialects of the scripted model: "full" adds the optional fields (`when`, and `validUntil` for time-boxed facts: a
careful model's date), "documented" writes only content, category and confidence, so the code reads the lifetime
from the words alone.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from bench.common import Table, exit_code, header, parser
from bot.memory.models import ConversationKey, Location, Place, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from tests.support.engine import close_service, file_service, learn, wait_idle
from tests.support.llm_server import ChatServer, Response, extraction

CORPUS = Path(__file__).resolve().parent / "corpora" / "lifetimes.json"
EXTRACTION_DELAY = timedelta(hours=1)
DURABLE_HORIZON = timedelta(days=400)
DIALECTS = ("full", "documented")
TARGET_ON_TIME = 0.95
FIRST_USER = 3 * 10**17


def load_cases(smoke: bool) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))["cases"]
    if smoke:  # one day's statements, a few of each kind and language
        cases = [case for case in cases if case["at"].startswith("2024-06-12")]
        cases = [case for i, case in enumerate(cases) if i % 3 == 0]
    return cases


@dataclass
class ScriptedModel:
    """Writes each statement's fact as a careful model would, in one of the two dialects."""

    cases: list[dict[str, Any]]
    dialect: str

    def __post_init__(self) -> None:
        self.by_turn = {(case["text"], case["at"][:10]): case for case in self.cases}  # a line is said on 3 days

    def __call__(self, body: dict[str, Any]) -> Response:
        content = str(body["messages"][-1]["content"])
        sent = json.loads(content[content.index("{") :])
        said = [(turn["text"], turn["at"][:10]) for turn in sent["newTurns"] if turn["speaker"] == "user"]
        found = [self.by_turn[key] for key in said if key in self.by_turn]
        if not found:
            return extraction()
        case = found[0]
        fact: dict[str, Any] = {"content": case["fact"], "category": "context", "confidence": 0.95}
        if self.dialect == "full":
            if case.get("when"):
                fact["when"] = case["when"]
            if case["kind"] == "timeboxed":
                fact["validUntil"] = case["last"]
        return extraction(facts=[fact])


@dataclass
class Clock:
    now: datetime = datetime(2024, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Outcome:
    timeboxed: int = 0
    on_time: int = 0
    durable: int = 0
    durable_expired: int = 0
    expired_injected: int = 0
    late_prompts: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    wrong: list[str] = field(default_factory=list)
    seconds: float = 0.0


async def used_ids(service: MemoryService, user: int, text: str) -> tuple[str, ...]:
    prompt = await service.recall.prompt(user, [text], user_label="user", where=Location.dm(user % 1_000_000))
    return tuple(prompt.fact_ids)


async def run_case(service: MemoryService, clock: Clock, user: int, case: dict[str, Any], outcome: Outcome) -> None:
    at = datetime.fromisoformat(case["at"].replace("Z", "+00:00"))
    clock.now = at
    key = ConversationKey(user % 1_000_000, user, Place.dm())
    await learn(service, key, [Turn("user", user, "user", case["text"], at, f"{user}-1")])
    clock.now = at + EXTRACTION_DELAY
    await wait_idle(service)
    facts = (await service.user(user).show()).facts
    outcome.languages[case["lang"]] = outcome.languages.get(case["lang"], 0) + 1
    if case["kind"] == "durable":
        outcome.durable += 1
        clock.now = at + DURABLE_HORIZON
        used = await used_ids(service, user, case["text"])
        kept = len(facts) == 1 and not facts[0].validUntil and facts[0].id in used
        outcome.durable_expired += not kept
        if not kept:
            outcome.wrong.append(f"durable {case['lang']} {case['at'][:10]} {case['fact']}")
        return
    outcome.timeboxed += 1
    last = date.fromisoformat(case["last"])
    clock.now = datetime.combine(last, datetime.min.time(), tzinfo=UTC) + timedelta(hours=12)
    during = await used_ids(service, user, case["text"])
    clock.now = datetime.combine(last + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    after = await used_ids(service, user, case["text"])
    shown = (await service.user(user).show()).facts
    outcome.late_prompts += 1
    ids = {fact.id for fact in facts}
    outcome.expired_injected += sum(1 for fid in after if fid in ids)
    right = len(facts) == 1 and facts[0].id in during and not after and all(fact.closed for fact in shown)
    outcome.on_time += right
    if not right:
        got = facts[0].validUntil if facts else "no fact"
        outcome.wrong.append(f"time-boxed {case['lang']} {case['at'][:10]} {case['fact']} (got {got or 'none'})")


async def run_dialect(cases: Sequence[dict[str, Any]], dialect: str) -> Outcome:
    outcome = Outcome()
    clock = Clock()
    started = time.perf_counter()
    with ChatServer() as server, tempfile.TemporaryDirectory(prefix="bench-lifetimes-") as folder:
        server.responder = ScriptedModel(list(cases), dialect)
        client = AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0, timeout=30)
        service = file_service(
            Path(folder),
            MemoryExtractor(client, model="memory-model", max_retries=2),
            MemoryPolicy(debounce_seconds=0.01, max_wait_seconds=5, max_concurrent_extractions=1),
            clock=clock,
            durable=False,
        )
        await service.ops.open()
        try:
            for index, case in enumerate(cases):
                await run_case(service, clock, FIRST_USER + index, case, outcome)
        finally:
            await close_service(service)
            await client.close()
    outcome.seconds = time.perf_counter() - started
    return outcome


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "n/a"


def table(dialect: str, outcome: Outcome) -> Table:
    label = {"full": "optional fields", "documented": "documented fields only"}[dialect]
    languages = ", ".join(f"{lang} {count}" for lang, count in sorted(outcome.languages.items()))
    result = Table(f"update suite, lifetimes: scripted model, {label} ({outcome.timeboxed} time-boxed, "
                   f"{outcome.durable} durable; {languages})")
    on_time_ok = outcome.on_time >= TARGET_ON_TIME * outcome.timeboxed
    result.add("time-boxed facts expired on time", share(outcome.on_time, outcome.timeboxed), "", "", ">= 95%",
               passed=on_time_ok)
    result.add("durable look-alikes expired", share(outcome.durable_expired, outcome.durable), "", "", "0",
               passed=outcome.durable_expired == 0)
    result.add("expired facts injected", f"{outcome.expired_injected} in {outcome.late_prompts} prompts", "", "",
               "0", passed=outcome.expired_injected == 0)
    result.note(f"{outcome.seconds:.1f} s")
    if outcome.wrong:
        result.note("not right: " + "; ".join(outcome.wrong[:12]) + (" ..." if len(outcome.wrong) > 12 else ""))
    return result


def tables(smoke: bool) -> list[Table]:
    cases = load_cases(smoke)
    return [table(dialect, asyncio.run(run_dialect(cases, dialect))) for dialect in DIALECTS]


def main(argv: Sequence[str] | None = None) -> int:
    args = parser(__doc__).parse_args(argv)
    header("update suite: lifetimes of time-boxed facts", args.smoke)
    found = tables(args.smoke)
    for item in found:
        item.print()
    return exit_code(found, smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
