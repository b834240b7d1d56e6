"""LLM faults through the whole MemoryService, table-driven: whatever the memory model does, memory is never
corrupted; transient faults followed by success end with the update applied; permanent ones give exactly one ERROR
line and keep the batch in the journal, without retrying forever. A summary of the faults injected, by kind, is
printed at the end of the module (`pytest -s`)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from bot.memory.models import ConversationKey, Fact, MemoryFile
from bot.memory.parts.learning import MAX_REQUEUES
from tests.memory.test_service import ALICE, CHANNEL, Attempts, Engine, make_engine, turn
from tests.support.engine import learn, save_memory
from tests.support.llm_server import (
    ChatServer,
    Response,
    Stall,
    drop,
    error,
    extraction,
    extraction_payload,
    huge,
    json_reply,
    junk,
    reply,
    stall,
    truncated,
)

Outcome = Literal["applied", "ignored", "failed"]
RETRIES = 2
TIMEOUT = 1.0  # the client's timeout where a fault stalls; stalls last far longer
ANSWER_TIMEOUT = 30.0  # where nothing stalls: an answer slowed by a loaded machine must not count as a timeout
BASELINE = MemoryFile(facts=[Fact(id="fact_0000aaaa", content="Likes tea", category="preference", confidence=0.9)])
NEW_FACT = "Lives in Lisbon"
SUCCESS = extraction(top="They just moved to Lisbon.", facts=[(NEW_FACT, "context", 0.95)])
INJECTED: Counter[str] = Counter()
CASES_RUN: Counter[Outcome] = Counter()


def _fact_answer(**fact: object) -> Response:
    return json_reply(extraction_payload(facts=[{"content": NEW_FACT, "category": "context", **fact}]))


@dataclass(frozen=True)
class Fault:
    kind: str  # the summary's bucket
    script: tuple[Response, ...] = ()  # the answers, in order; then the server's default (SUCCESS)
    outcome: Outcome = "applied"
    transient: bool = False  # retried by the SDK with backoff (until the retries run out)
    refused: int = 0  # connection refused: attempts made while nothing listens (-1: it never comes back)
    waits: tuple[float, ...] | None = None  # least gaps between attempts, when the server dictates them
    check: Callable[[MemoryFile], None] | None = field(default=None, compare=False)


def _confidence_is(value: float) -> Callable[[MemoryFile], None]:
    def check(memory: MemoryFile) -> None:
        (fact,) = [f for f in memory.facts if f.content == NEW_FACT]
        assert fact.confidence == pytest.approx(value)

    return check


def _baseline_kept(memory: MemoryFile) -> None:
    assert memory.fact_by_id("fact_0000aaaa") is not None


FAULTS: dict[str, Fault] = {
    # transient, then success
    "500 twice": Fault("HTTP 500", (error(500), error(500))),
    "502 then 503": Fault("HTTP 5xx", (error(502), error(503, retry_after=0.2))),
    "429 with Retry-After": Fault("HTTP 429 + Retry-After", (error(429, retry_after=1.5),), waits=(1.5,)),
    "stall past the timeout": Fault("stall past client timeout", (stall(30),)),
    "dropped connection": Fault("dropped connection", (drop(),)),
    "connection refused, then back": Fault("connection refused", refused=1),
    # transient past the extractor's retries: the batch is re-queued after another quiet period, then applied
    "500 past the retries": Fault("HTTP 500", (error(500),) * (RETRIES + 1), transient=True),
    "429 past the retries": Fault(
        "HTTP 429 + Retry-After", (error(429, retry_after=0.2),) * (RETRIES + 1), transient=True
    ),
    "stall past the retries": Fault("stall past client timeout", (stall(30),) * (RETRIES + 1), transient=True),
    # transient for good: re-queued a bounded number of times, then given up with one ERROR, still journaled
    "connection refused for good": Fault("connection refused", refused=-1, outcome="failed", transient=True),
    # permanent: a bad answer
    "truncated JSON": Fault("truncated JSON", (truncated(),), "failed"),
    "truncated JSON, cut early": Fault("truncated JSON", (truncated(keep=0.1),), "failed"),
    "wrong shape: newFacts an object": Fault(
        "valid JSON, wrong shape", (json_reply({"newFacts": {"a": 1}}),), "failed"
    ),
    "wrong shape: facts not objects": Fault("valid JSON, wrong shape", (json_reply({"newFacts": [1, "x"]}),), "failed"),
    "wrong shape: a list": Fault("valid JSON, wrong shape", (json_reply([1, 2, 3]),), "failed"),
    "10 MB answer": Fault("10 MB answer", (huge(10_000_000),), "failed"),
    "prose instead of JSON": Fault("junk answer", (reply("Sure! Here is what I remember about them."),), "failed"),
    "HTML page with status 200": Fault("junk answer", (junk(),), "failed"),
    "HTTP 400": Fault("HTTP 4xx", (error(400), error(400)), "failed"),
    "HTTP 401": Fault("HTTP 4xx", (error(401),), "failed"),
    # odd but usable answers
    "confidence as a string": Fault("confidence string/null", (_fact_answer(confidence="0.95"),),
                                    check=_confidence_is(0.95)),
    "confidence as a word": Fault("confidence string/null", (_fact_answer(confidence="high"),),
                                  check=_confidence_is(0.9)),
    "confidence null": Fault("confidence string/null", (_fact_answer(confidence=None),), "ignored"),
    "confidence missing": Fault("confidence string/null", (_fact_answer(),), "ignored"),
    "ids that do not exist": Fault(
        "unknown ids in factsToRemove",
        (extraction(facts=[(NEW_FACT, "context", 0.95)], remove=["fact_deadbeef", "fact_0000AAAA", "../etc"]),),
        check=_baseline_kept,
    ),
}


@pytest.fixture(scope="module", autouse=True)
def fault_summary() -> Iterator[None]:
    yield
    kinds = ", ".join(f"{kind}={count}" for kind, count in sorted(INJECTED.items()))
    print(
        f"\nLLM faults injected: {sum(INJECTED.values())} in {sum(CASES_RUN.values())} batches ({kinds}); "
        f"outcomes: {dict(CASES_RUN)}; memory files corrupted: 0"
    )


def assert_valid(engine: Engine) -> MemoryFile:
    """The file parses and validates, facts are sane, and nothing was put aside as corrupt."""
    memory = MemoryFile.model_validate(json.loads(engine.file(ALICE).read_bytes()))
    ids = [fact.id for fact in memory.facts]
    assert len(ids) == len(set(ids))
    for fact in memory.facts:
        assert fact.content.strip()
        assert 0.0 <= fact.confidence <= 1.0
    assert not list(engine.file(ALICE).parent.glob("*.corrupt*"))
    return memory


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
async def test_llm_fault(
    fault: Fault, tmp_path: Path, chat_server: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    chat_server.default = SUCCESS
    chat_server.enqueue(*fault.script)
    attempts = Attempts()
    target = chat_server
    refused_server: ChatServer | None = None
    if fault.refused:
        refused_server = ChatServer().start()
        refused_server.default = SUCCESS
        refused_server.stop()  # the port is closed: connections are refused
        target = refused_server
        if fault.refused > 0:

            async def back_after_refusals(attempt: int) -> None:
                if attempt == fault.refused + 1:  # this attempt finds the server back on the same port
                    assert refused_server is not None
                    await asyncio.to_thread(refused_server.start)

            attempts.before_attempt = back_after_refusals

    stalls = any(isinstance(response, Stall) for response in fault.script)
    timeout = TIMEOUT if stalls else ANSWER_TIMEOUT
    engine = make_engine(tmp_path, target.base_url, timeout=timeout, retries=RETRIES, attempts=attempts)
    await engine.service.ops.open()
    try:
        await save_memory(engine.store, ALICE, BASELINE)
        before = engine.file(ALICE).read_bytes()
        texts = ["I just moved to Lisbon", "the weather is great"]
        with caplog.at_level(logging.INFO):
            await learn(engine.service, ConversationKey(CHANNEL, ALICE), [turn(ALICE, t) for t in texts])
            await engine.settle()
    finally:
        await engine.aclose()
        if refused_server is not None:
            refused_server.stop()

    rounds = 1 + sum("trying again later" in record.getMessage() for record in caplog.records)  # re-queued rounds
    if fault.refused:
        INJECTED[fault.kind] += attempts.count - len(target.requests)  # attempts that found nothing listening
    else:
        INJECTED[fault.kind] += len(fault.script) - chat_server.queued  # scripted faults actually served
    CASES_RUN[fault.outcome] += 1

    memory = assert_valid(engine)
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    if fault.outcome == "failed":
        assert len(errors) == 1, [record.getMessage() for record in errors]
        assert engine.file(ALICE).read_bytes() == before
        assert engine.journaled() == texts
        # bounded, never retried forever: a transient fault gets the SDK's retries in each of a few rounds
        assert rounds == (MAX_REQUEUES + 1 if fault.transient else 1)
        # (a permanent fault is one call; a 400 in JSON mode is asked once more without it)
        assert attempts.count == (rounds * (RETRIES + 1) if fault.transient else len(fault.script))
    else:
        assert errors == []
        assert engine.journaled() == []
        assert chat_server.queued == 0  # every scripted fault was met on the way
        contents = [fact.content for fact in memory.facts]
        if fault.outcome == "applied":
            assert contents == ["Likes tea", NEW_FACT]
        else:
            assert contents == ["Likes tea"]
    if fault.waits is not None:  # the SDK honoured the server's Retry-After
        gaps = attempts.gaps()
        assert len(gaps) == len(fault.waits)
        assert all(gap >= wait for gap, wait in zip(gaps, fault.waits, strict=True)), gaps
    if fault.check is not None:
        fault.check(memory)
