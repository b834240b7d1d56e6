"""The update suite: does memory follow a user whose life changes, and keep what no longer holds as history?

    .venv/bin/python -m bench.update_suite [--smoke] [--baseline-ref main] [--real]

`bench/corpora/updates.json` holds pairs of an earlier and a later statement by one user, as chat lines with the
time they were sent: 60 where the later one makes the earlier fact no longer true (a move, a new job, a pet that
died, a count that changed) and 49 look-alikes where both hold (a second job, a second pet, a visit rather than a
move, an interview rather than a new job). 66 statements carry relative time words ("next Friday", "last month",
"下周五"). Each pair is one user: the earlier line goes through the real path (`remember`, the pending turns, the
debouncer, the extractor over HTTP, apply, the write gate, the atomic file), its extraction running a day and seven
hours after the message; then the later line the same way. Then:

- current-state accuracy: pairs whose open facts are right: the earlier fact closed (or gone) and the later one
  open for a replacement, both open for a look-alike (a later fact whose own last day has passed by then, "flies
  to Tokyo tomorrow", counts as right when its own lifetime closed it: `ended_on_time`);
- history kept: of the earlier facts no longer open, the share kept as history (closed, pointing at what replaced
  them) rather than deleted;
- superseded facts injected: closed facts in the reply prompt built for the earlier line itself (the query most
  likely to pull them back), over every replacement pair; "outdated facts injected" counts the earlier facts of
  replacement pairs in those prompts whether closed or wrongly left open;
- relative dates resolved: statements whose fact carries the hand-written date (`eventDate`);
- said at the message's time: facts whose `observedAt` is the message's time, not the extraction's.

The lifetimes of time-boxed facts and their durable look-alikes are the suite's second part (`bench.update_lifetimes`,
its own corpus, run after the pairs).

Models: the scripted stand-in (`tests.support.llm_server`) answers every extraction as a careful model would, in two
dialects: "full" uses the optional fields (`replaces`, `when`, `eventDate`), "documented" only the documented shape
(content, category, confidence, factsToRemove), which leaves linking and dating to the code. `--real` also runs a
real endpoint named by OPENAI_BASE_URL, OPENAI_API_KEY and MEMORY_MODEL (or CHAT_MODEL), with the bot's own
extraction prompt. The baseline is the same suite run, in the same run, on the code of `--baseline-ref` (default
`main`; a smoke run skips it unless given): a checkout of that commit in a temporary folder, with this file and its
corpus copied in, in a child interpreter.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from bench.common import PROJECT_ROOT, Table, exit_code, header, parser
from bot.memory.models import ConversationKey, Location, Place, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.service import MemoryPolicy, MemoryService
from tests.support.engine import close_service, file_service, learn, wait_idle
from tests.support.llm_server import ChatServer, Response, extraction

CORPUS = Path(__file__).resolve().parent / "corpora" / "updates.json"
EXTRACTION_DELAY = timedelta(days=1, hours=7)  # the batch waited (an outage, a restart): dates count from the message
SCRIPTED = ("full", "documented")
TARGETS = {"current": 0.95, "history": 1.0, "dates": 0.95}
FIRST_USER = 10**17


def load_pairs(smoke: bool) -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))["pairs"]
    if smoke:  # a few of each kind, with dates
        replace = [p for p in pairs if p["kind"] == "replace"][:8]
        keep = [p for p in pairs if p["kind"] == "keep"][:6]
        pairs = replace + keep
    return pairs


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="seconds")


# --- the scripted model ------------------------------------------------------------------------------------------


@dataclass
class ScriptedModel:
    """Answers an extraction as a careful model would: it recognises the statement, writes its fact, and for a
    replacement names every fact the memory holds (the pair's earlier fact) as replaced."""

    pairs: list[dict[str, Any]]
    dialect: str

    def __post_init__(self) -> None:
        self.by_text = {}
        for pair in self.pairs:
            for which in ("earlier", "later"):
                self.by_text[pair[which]["text"]] = (pair, which)

    def __call__(self, body: dict[str, Any]) -> Response:
        content = str(body["messages"][-1]["content"])
        sent = json.loads(content[content.index("{") :])
        said = [turn["text"] for turn in sent["newTurns"] if turn["speaker"] == "user"]
        found = [self.by_text[text] for text in said if text in self.by_text]
        if not found:
            return extraction()
        pair, which = found[0]
        statement = pair[which]
        fact: dict[str, Any] = {"content": statement["fact"], "category": statement["category"], "confidence": 0.95}
        replaced = [item["id"] for item in sent["currentMemory"]["facts"]]
        replaces = which == "later" and pair["kind"] == "replace"
        if self.dialect == "full":
            if "when" in statement:
                fact["when"] = statement["when"]
                fact["eventDate"] = statement["date"]
            if replaces:
                fact["replaces"] = replaced
        return extraction(facts=[fact], remove=replaced if replaces else [])


# --- one run -----------------------------------------------------------------------------------------------------


@dataclass
class Clock:
    now: datetime = datetime(2024, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Outcome:
    pairs: int = 0
    current_ok: int = 0
    replaced: int = 0  # earlier facts no longer open in replacement pairs
    kept_as_history: int = 0
    superseded_injected: int = 0
    outdated_injected: int = 0
    prompts: int = 0
    dated: int = 0
    dated_ok: int = 0
    facts: int = 0
    said_at_message: int = 0
    seconds: float = 0.0
    wrong: list[str] = field(default_factory=list)
    bot_file: str = ""


def closed(fact: dict[str, Any]) -> bool:
    return bool(fact.get("validTo") or fact.get("supersededBy"))


def ended_on_time(fact: dict[str, Any]) -> bool:
    """History because its own last day passed ("flies to Tokyo tomorrow", extracted 31 hours later), not because
    something replaced it: what the words said, so it counts as the later state, not as a lost fact."""
    return bool(fact.get("validUntil") and fact.get("validTo")) and not fact.get("supersededBy")


async def run_suite(pairs: Sequence[dict[str, Any]], client: AsyncOpenAI, model: str) -> Outcome:
    """Every pair through the real service (files in a temporary folder); see the module for the figures."""
    import bot

    outcome = Outcome(bot_file=str(Path(bot.__file__).resolve()))
    clock = Clock()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-updates-") as folder:
        service = file_service(
            Path(folder),
            MemoryExtractor(client, model=model, max_retries=2),
            MemoryPolicy(debounce_seconds=0.01, max_wait_seconds=5, max_concurrent_extractions=1),
            clock=clock,
            durable=False,
        )
        await service.ops.open()
        try:
            for index, pair in enumerate(pairs):
                await run_pair(service, clock, FIRST_USER + index, pair, outcome)
        finally:
            await close_service(service)
    outcome.seconds = time.perf_counter() - started
    return outcome


async def say(service: MemoryService, clock: Clock, user: int, statement: dict[str, Any], turn_id: str) -> None:
    at = moment(statement["at"])
    clock.now = at
    key = ConversationKey(user % 1_000_000, user, Place.dm())
    await learn(service, key, [Turn("user", user, "user", statement["text"], at, turn_id)])
    clock.now = at + EXTRACTION_DELAY
    await wait_idle(service)


async def facts_of(service: MemoryService, user: int) -> dict[str, dict[str, Any]]:
    memory = await service.user(user).show()
    return {fact.id: fact.model_dump(mode="json") for fact in memory.facts}


async def run_pair(service: MemoryService, clock: Clock, user: int, pair: dict[str, Any], outcome: Outcome) -> None:
    earlier, later = pair["earlier"], pair["later"]
    await say(service, clock, user, earlier, f"{user}-1")
    first = await facts_of(service, user)
    await say(service, clock, user, later, f"{user}-2")
    facts = await facts_of(service, user)
    old = [facts[fid] for fid in first if fid in facts]
    new = [fact for fid, fact in facts.items() if fid not in first]
    gone = len(first) - len(old)  # deleted outright
    outcome.pairs += 1
    old_open = [fact for fact in old if not closed(fact)]
    new_open = [fact for fact in new if not closed(fact) or ended_on_time(fact)]
    if pair["kind"] == "replace":
        right = bool(first) and not old_open and bool(new_open)
        outcome.replaced += gone + len(old) - len(old_open)
        outcome.kept_as_history += sum(1 for fact in old if closed(fact) and fact.get("supersededBy") in facts)
        used = await prompt_fact_ids(service, user, earlier["text"])
        if used is not None:
            outcome.prompts += 1
            outcome.superseded_injected += sum(1 for fid in used if fid in facts and closed(facts[fid]))
            outcome.outdated_injected += sum(1 for fid in used if fid in first)
    else:
        right = bool(first) and len(old_open) == len(first) and bool(new_open)
    outcome.current_ok += right
    if not right:
        outcome.wrong.append(pair["id"])
    for statement, made in ((earlier, list(first.values())), (later, new)):
        if "date" in statement:
            outcome.dated += 1
            outcome.dated_ok += any(fact.get("eventDate") == statement["date"] for fact in made)
        outcome.facts += len(made)
        outcome.said_at_message += sum(1 for fact in made if fact.get("observedAt") == iso(moment(statement["at"])))


async def prompt_fact_ids(service: MemoryService, user: int, text: str) -> tuple[str, ...] | None:
    """The fact ids a reply to `text` in a DM would carry, or None when the code has no such call."""
    try:
        prompt = await service.recall.prompt(
            user, [text], user_label="user", where=Location.dm(user % 1_000_000)
        )
    except TypeError:  # another version's signature
        return None
    return tuple(prompt.fact_ids)


# --- the runs: scripted dialects, a real endpoint, and the baseline's code -------------------------------------


async def scripted(pairs: list[dict[str, Any]], dialect: str) -> Outcome:
    with ChatServer() as server:
        server.responder = ScriptedModel(pairs, dialect)
        client = AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0, timeout=30)
        try:
            return await run_suite(pairs, client, "memory-model")
        finally:
            await client.close()


def real_endpoint() -> tuple[str, str, str] | None:
    url, key = os.environ.get("OPENAI_BASE_URL", ""), os.environ.get("OPENAI_API_KEY", "")
    model = os.environ.get("MEMORY_MODEL") or os.environ.get("CHAT_MODEL", "")
    return (url, key, model) if url and key and model else None


async def real(pairs: list[dict[str, Any]]) -> Outcome:
    endpoint = real_endpoint()
    assert endpoint is not None
    url, key, model = endpoint
    client = AsyncOpenAI(base_url=url, api_key=key, max_retries=2, timeout=120)
    try:
        return await run_suite(pairs, client, model)
    finally:
        await client.close()


def run_variant(variant: str, smoke: bool) -> Outcome:
    pairs = load_pairs(smoke)
    return asyncio.run(real(pairs) if variant == "real" else scripted(pairs, variant))


def baseline_outcomes(ref: str, variants: list[str], smoke: bool) -> dict[str, Outcome] | str:
    """The suite on the code of `ref`, in a child interpreter over a checkout of it; a reason string on failure."""
    with tempfile.TemporaryDirectory(prefix="bench-updates-base-") as folder:
        root = Path(folder)
        archive = subprocess.run(["git", "-C", str(PROJECT_ROOT), "archive", ref], capture_output=True, check=False)
        if archive.returncode != 0:
            return f"no checkout of {ref!r}: {archive.stderr.decode(errors='replace').strip()[:200]}"
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
        (root / "bench" / "corpora").mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(__file__), root / "bench" / "update_suite.py")
        shutil.copy2(CORPUS, root / "bench" / "corpora" / "updates.json")
        env = {**os.environ, "PYTHONPATH": str(root)}
        found: dict[str, Outcome] = {}
        for variant in variants:
            argv = [sys.executable, "-m", "bench.update_suite", "--worker", variant, *(["--smoke"] if smoke else [])]
            child = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=3600)
            if child.returncode != 0:
                return f"the suite failed on {ref!r}: {child.stderr.strip().splitlines()[-1:] or child.returncode}"
            outcome = Outcome(**json.loads(child.stdout.strip().splitlines()[-1]))
            if not outcome.bot_file.startswith(str(root.resolve())):
                return f"the child ran {outcome.bot_file}, not the checkout of {ref!r}"
            found[variant] = outcome
        return found


# --- the report --------------------------------------------------------------------------------------------------


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "n/a"


def figures(outcome: Outcome) -> dict[str, str]:
    return {
        "current": share(outcome.current_ok, outcome.pairs),
        "history": share(outcome.kept_as_history, outcome.replaced),
        "superseded": f"{outcome.superseded_injected} in {outcome.prompts} prompts" if outcome.prompts else "n/a",
        "outdated": f"{outcome.outdated_injected} in {outcome.prompts} prompts" if outcome.prompts else "n/a",
        "dates": share(outcome.dated_ok, outcome.dated),
        "said": share(outcome.said_at_message, outcome.facts),
    }


def passed(outcome: Outcome) -> dict[str, bool]:
    return {
        "current": outcome.current_ok >= TARGETS["current"] * outcome.pairs,
        "history": outcome.kept_as_history >= TARGETS["history"] * outcome.replaced,
        "superseded": outcome.superseded_injected == 0,
        "dates": outcome.dated_ok >= TARGETS["dates"] * outcome.dated,
    }


ROWS = (
    ("current", "current-state accuracy", ">= 95%"),
    ("history", "history kept", "100%"),
    ("superseded", "superseded facts injected", "0"),
    ("outdated", "outdated facts injected (open or closed)", ""),
    ("dates", "relative dates resolved", ">= 95%"),
    ("said", "facts dated by the message, not the extraction", ""),
)


def table(variant: str, ours: Outcome, base: Outcome | None, ref: str, *, targets: bool) -> Table:
    label = {"full": "scripted model, optional fields", "documented": "scripted model, documented fields only",
             "real": "real model"}[variant]
    result = Table(f"update suite: {label} ({ours.pairs} pairs)")
    mine, theirs, ok = figures(ours), figures(base) if base else {}, passed(ours)
    for key, measure, target in ROWS:
        result.add(measure, mine[key], theirs.get(key, ""), "", target if targets else "",
                   passed=ok.get(key) if targets and target else None)
    result.note(f"baseline: the same suite on the code of {ref} in this run" if base else "baseline: not run")
    result.note(f"{ours.seconds:.1f} s for ours" + (f", {base.seconds:.1f} s for the baseline" if base else ""))
    if ours.wrong:
        result.note("pairs not right now: " + ", ".join(ours.wrong))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--baseline-ref", default=None, help="git ref whose code is the baseline (default: main; none in "
                   "a smoke run); '' for none")
    p.add_argument("--real", action="store_true", help="also run the real endpoint (OPENAI_BASE_URL, "
                   "OPENAI_API_KEY, MEMORY_MODEL)")
    p.add_argument("--worker", choices=[*SCRIPTED, "real"], help="internal: one run, printed as JSON")
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(asdict(run_variant(args.worker, args.smoke))), flush=True)
        return 0
    header("update suite: contradictions, history and dates", args.smoke)
    variants = list(SCRIPTED)
    if args.real and real_endpoint() is None:
        print("real model: not run (set OPENAI_BASE_URL, OPENAI_API_KEY and MEMORY_MODEL)\n", flush=True)
    elif args.real:
        variants.append("real")
    elif real_endpoint() is not None:
        print("real model: an endpoint is configured; pass --real to run it\n", flush=True)
    ref = args.baseline_ref if args.baseline_ref is not None else ("" if args.smoke else "main")
    base: dict[str, Outcome] | str = baseline_outcomes(ref, variants, args.smoke) if ref else "not asked"
    if isinstance(base, str):
        print(f"baseline: {base}\n", flush=True)
    tables = []
    for variant in variants:
        ours = run_variant(variant, args.smoke)
        theirs = base.get(variant) if isinstance(base, dict) else None
        tables.append(table(variant, ours, theirs, ref, targets=variant == "full"))
        tables[-1].print()
    from bench import update_lifetimes  # here, not at the top: the baseline's checkout runs this file without it

    for lifetimes in update_lifetimes.tables(args.smoke):
        lifetimes.print()
        tables.append(lifetimes)
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
