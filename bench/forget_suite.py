"""The forget/correct suite: does what a user takes back stay gone, from the facts, the summaries and every byte?

    .venv/bin/python -m bench.forget_suite [--smoke] [--baseline-ref main] [--set development|held-out]

Two sets of cases in one format, each run and reported on its own (both unless `--set` names one): the
development set, `bench/corpora/forget.json` (100 cases written for this suite), `bench/corpora/forget_fresh.json`
(44 cases written later) and `bench/corpora/forget_unseen.json` (64 cases), whose misses the matching rules were
adjusted for, and the held-out set, `bench/corpora/forget_sealed.json` (64 cases written by someone who had read
neither the rules nor any other case, before the rules were changed for the unseen cases' misses; never tuned
on). A case is a fact a user tells the bot, once
forgotten (`/memory forget fact:`) or corrected (`/memory edit`, to a value the case gives), with two ways a model
paraphrases the fact and the user's own words saying it again. Each case is one user on the real path
(`remember`, the pending turns, the debouncer, the extractor over HTTP, apply, the write gate, the atomic file): the
statement is learned, and the model also writes it into two summaries; a second batch keeps it in the summaries'
earlier values. Then the fact is taken back, and the model tries three times to bring it back:

- the bot's restatement: a batch whose bot reply repeats the statement, the model writing its first paraphrase as a
  fact and a summary sentence;
- a paraphrasing model: an unrelated message, the model writing its second paraphrase;
- a replayed history: the original message sent again with its original time, the model writing the fact again.

Then the user tells the bot something else (another case's statement, its fact written by the model): it must be
learned, so a fingerprint that refuses what merely shares a word with it shows. Finally the user says it again in a
new message. Figures: forgotten words (the case's markers, less those the
correction keeps) in any prompt built for the user (its memory blocks) or in any stored byte (every file under the
data folder, after the pending turns are compacted), after the take-back and after the three attempts (target 0);
the share of the attempts blocked, each judged by its words in the stored memory (target at least 95 %); the cases
whose saying it again was not learned (target 0); the other statements refused (unrelated facts blocked by
mistake). The baseline is the same suite on the code of `--baseline-ref`
(default `main`; none in a smoke run), as the update suite runs it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from bench.common import PROJECT_ROOT, Table, exit_code, header, parser
from bot.memory.doors import ForgetFact
from bot.memory.models import ConversationKey, Location, Place, Turn
from bot.memory.pipeline.extractor import MemoryExtractor
from bot.memory.rules import sensitive
from bot.memory.rules.forgotten import words_of
from bot.memory.rules.withhold import credentials_together
from bot.memory.service import MemoryPolicy, MemoryService
from tests.support.engine import close_service, file_service, learn, parts, wait_idle
from tests.support.llm_server import ChatServer, Response, extraction

_FOLDER = Path(__file__).resolve().parent / "corpora"
CORPORA = {
    "development": (_FOLDER / "forget.json", _FOLDER / "forget_fresh.json", _FOLDER / "forget_unseen.json"),
    "held-out": (_FOLDER / "forget_sealed.json",),
}
FIRST_USER = 10**17
START = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
OTHER = "Enjoys quiet evenings at home"  # what each user's summaries also hold, and must keep
TARGETS = {"blocked": 0.95}


def load_cases(name: str, smoke: bool) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = [
        case for path in CORPORA[name] for case in json.loads(path.read_text(encoding="utf-8"))["cases"]
    ]
    return cases[:12] if smoke else cases


def markers(case: dict[str, Any]) -> list[str]:
    """The words that must be gone: the fact's markers, less those a correction keeps."""
    kept = case.get("corrected", "").casefold()
    return [word for word in case["markers"] if word.casefold() not in kept]


# --- the scripted model ------------------------------------------------------------------------------------------


@dataclass
class ScriptedModel:
    """Answers each batch by what its user turn is: the statement (its fact, written into two summaries too), a
    filler (the summaries again), an attempt (a paraphrase, as a fact and a summary sentence), or saying it again."""

    answers: dict[str, Response] = field(default_factory=dict)
    sent: list[str] = field(default_factory=list)  # every user turn the model was shown, as it was shown

    def plan(self, text: str, fact: str | None, summary: str) -> None:
        facts = [(fact, "context", 0.95)] if fact else []
        self.answers[text] = extraction(facts=facts, work=summary, top=summary)

    def __call__(self, body: dict[str, Any]) -> Response:
        content = str(body["messages"][-1]["content"])
        sent = json.loads(content[content.index("{") :])
        said = [turn["text"] for turn in sent["newTurns"] if turn["speaker"] == "user"]
        self.sent += said
        return next((self.answers[text] for text in said if text in self.answers), extraction())


# --- one run -----------------------------------------------------------------------------------------------------


@dataclass
class Clock:
    now: datetime = START

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Outcome:
    cases: int = 0
    leaks_after_take_back: int = 0  # cases with a forgotten word in a prompt or a stored byte right after
    leaks_after_attempts: int = 0  # ... after the three attempts to bring it back
    prompt_leaks: int = 0
    byte_leaks: int = 0
    attempts: int = 0
    blocked: int = 0
    said_again: int = 0
    said_again_blocked: int = 0
    bystanders: int = 0
    bystanders_refused: int = 0
    others_kept: int = 0  # cases whose summaries still hold what else they said
    withheld_first: int = 0  # statements the gates withheld when first said: nothing to take back
    seconds: float = 0.0
    leaked: list[str] = field(default_factory=list)
    let_through: list[str] = field(default_factory=list)
    refused_again: list[str] = field(default_factory=list)
    refused_bystanders: list[str] = field(default_factory=list)
    withheld: dict[str, str] = field(default_factory=dict)  # case id -> the gate that withheld its statement
    bot_file: str = ""


_ids = itertools.count(10**15)


async def say(
    service: MemoryService, user: int, texts: Sequence[tuple[str, str]], at: datetime
) -> None:
    key = ConversationKey(user % 1_000_000, user, Place.dm())
    turns = [Turn(role, user, "user" if role == "user" else "assistant", text, at, str(next(_ids)))  # type: ignore[arg-type]
             for role, text in texts]
    await learn(service, key, turns)
    await wait_idle(service)


_HEX_RUN = re.compile(r"[0-9a-f]{16,}")


def stored_bytes(folder: Path) -> str:
    """Every stored byte as text, runs of 16 hex digits or more blanked: the installation's key and the
    fingerprints are hex, and a marker of the letters a-f ("bee") would otherwise be found in one by chance."""
    text = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.rglob("*")) if p.is_file())
    return _HEX_RUN.sub("#", text)


async def prompt_text(service: MemoryService, user: int, queries: Sequence[str]) -> str:
    texts = []
    for query in queries:
        prompt = await service.recall.prompt(user, [query], user_label="user", where=Location.dm(user % 1_000_000))
        texts.append(f"{prompt.profile}\n{prompt.facts}")
    return "\n".join(texts)


# Words the engine replaces with a date ("last year" -> "in 2025", "next June" -> "in June 2026").
_RELATIVE_TIME = frozenset(words_of("last next ago past coming previous tonight earlier later this that"))


def is_learned(written: str, stored: str) -> bool:
    """The stored fact is the one the model wrote: the engine may add a date or put one for "next June"."""
    if stored.startswith(written):
        return True
    words = words_of(written) - _RELATIVE_TIME
    return bool(words) and words <= words_of(stored)


def found(words: Sequence[str], text: str) -> bool:
    return any(re.search(re.escape(word), text, re.IGNORECASE) for word in words)


async def leaks(service: MemoryService, folder: Path, user: int, case: dict[str, Any], outcome: Outcome) -> bool:
    await parts(service).storage.turns.compact()
    words = markers(case)
    in_prompt = found(words, await prompt_text(service, user, [case["said"], *case["paraphrases"]]))
    in_bytes = found(words, stored_bytes(folder))
    outcome.prompt_leaks += in_prompt
    outcome.byte_leaks += in_bytes
    return in_prompt or in_bytes


def withheld_by(case: dict[str, Any], sent: list[str]) -> str:
    """Which gate held back a statement, given the user turns the model was `sent`: the credential gate cuts a word
    of the message before the model reads it (so the scripted model, which answers the message as written, writes
    nothing) or refuses the fact; the sensitive backstop refuses the fact."""
    if case["said"] not in sent:
        if any("removed]" in text for text in sent[-2:]):
            return "the credential gate, on arrival"
        return "a change to the message before the model read it"
    if any(credentials_together([case["said"]])) or any(credentials_together([case["fact"]])):
        return "the credential gate"  # read as arrival and the write gate read a batch, here of one text
    if sensitive.categories_in(case["fact"]):
        return "the sensitive backstop"
    return "neither gate, reading the statement as written (the engine may have reworded it, as a date)"


async def memory_text(service: MemoryService, user: int) -> str:
    return (await service.user(user).show()).model_dump_json()


async def run_case(
    service: MemoryService, model: ScriptedModel, folder: Path, clock: Clock, user: int, case: dict[str, Any],
    bystander: dict[str, Any], outcome: Outcome,
) -> None:
    n = user - FIRST_USER
    start = clock.now = START + timedelta(hours=n)
    filler = f"Good morning, that is all for case {n}."
    model.plan(case["said"], case["fact"], f"{case['fact']}. {OTHER}.")
    model.plan(filler, None, f"{OTHER}. {case['fact']}.")
    await say(service, user, [("user", case["said"])], start)
    clock.now += timedelta(minutes=2)
    await say(service, user, [("user", filler)], clock.now)
    memory = await service.user(user).show()
    fact = next((f for f in memory.facts if is_learned(case["fact"], f.content)), None)
    if fact is None:  # withheld by a gate as it was first said: counted, and nothing to take back
        outcome.withheld_first += 1
        outcome.withheld[case["id"]] = withheld_by(case, model.sent)
        return
    clock.now += timedelta(minutes=2)
    if case["kind"] == "forget":
        await service.user(user).forget(ForgetFact(fact.id))
    else:
        await service.user(user).edit(fact.id, case["corrected"])
    outcome.cases += 1
    if await leaks(service, folder, user, case, outcome):
        outcome.leaks_after_take_back += 1
        outcome.leaked.append(case["id"])
    words = markers(case)
    thanks, aside = f"Thanks, noted for case {n}.", f"What a day it was, case {n}."
    model.plan(thanks, case["paraphrases"][0], f"{case['paraphrases'][0]}.")
    model.plan(aside, case["paraphrases"][1], f"{case['paraphrases'][1]}.")
    attempts = [
        ([("user", thanks), ("assistant", f"You told me before: {case['said']}")], None),
        ([("user", aside)], None),
        ([("user", case["said"])], start),  # the original message, replayed with its original time
    ]
    for number, (texts, at) in enumerate(attempts, start=1):
        clock.now += timedelta(minutes=2)
        await say(service, user, texts, at or clock.now)
        outcome.attempts += 1
        if found(words, await memory_text(service, user)):
            outcome.let_through.append(f"{case['id']} #{number}")
        else:
            outcome.blocked += 1
    if await leaks(service, folder, user, case, outcome):
        outcome.leaks_after_attempts += 1
    summaries = (await service.user(user).show()).user.workContext
    outcome.others_kept += OTHER in summaries.summary or any(OTHER in old.summary for old in summaries.previous)
    clock.now += timedelta(minutes=2)
    model.plan(bystander["said"], bystander["fact"], f"{bystander['fact']}.")
    await say(service, user, [("user", bystander["said"])], clock.now)
    outcome.bystanders += 1
    if not any(is_learned(bystander["fact"], f.content) for f in (await service.user(user).show()).facts):
        outcome.bystanders_refused += 1
        outcome.refused_bystanders.append(f"{case['id']} <- {bystander['id']}")
    clock.now += timedelta(minutes=2)
    model.plan(case["again"], case["againFact"], f"{case['againFact']}.")
    await say(service, user, [("user", case["again"])], clock.now)
    outcome.said_again += 1
    facts = [f.content for f in (await service.user(user).show()).facts]
    if not any(is_learned(case["againFact"], content) for content in facts):
        outcome.said_again_blocked += 1
        outcome.refused_again.append(case["id"])


def bystander_of(cases: Sequence[dict[str, Any]], index: int) -> dict[str, Any]:
    """Another case's statement for case `index` (half the set away, past any that says the same or shares a
    marker): something else the user tells the bot."""
    case = cases[index]
    for step in range(len(cases) // 2, len(cases) + len(cases) // 2):
        other = cases[(index + step) % len(cases)]
        if other["said"] != case["said"] and not found(case["markers"], other["fact"]):
            return other
    raise ValueError(f"{case['id']}: no other statement in the set")


async def run_suite(cases: Sequence[dict[str, Any]]) -> Outcome:
    """Every case through the real service, each user in a data folder of their own (so a byte scan reads only
    theirs)."""
    import bot

    outcome = Outcome(bot_file=str(Path(bot.__file__).resolve()))
    clock = Clock()
    model = ScriptedModel()
    started = time.perf_counter()
    with ChatServer() as server:
        server.responder = model
        client = AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0, timeout=30)
        try:
            for index, case in enumerate(cases):
                with tempfile.TemporaryDirectory(prefix="bench-forget-") as folder:
                    service = file_service(
                        Path(folder),
                        MemoryExtractor(client, model="memory-model", max_retries=2),
                        MemoryPolicy(debounce_seconds=0.01, max_wait_seconds=5, max_concurrent_extractions=1),
                        clock=clock,
                        durable=False,
                    )
                    await service.ops.open()
                    try:
                        await run_case(service, model, Path(folder), clock, FIRST_USER + index, case,
                                       bystander_of(cases, index), outcome)
                    finally:
                        await close_service(service)
        finally:
            await client.close()
    outcome.seconds = time.perf_counter() - started
    return outcome


def baseline_outcome(ref: str, name: str, smoke: bool) -> Outcome | str:
    """The suite's set `name` on the code of `ref`, in a child interpreter over a checkout of it; a reason string on
    failure."""
    with tempfile.TemporaryDirectory(prefix="bench-forget-base-") as folder:
        root = Path(folder)
        archive = subprocess.run(["git", "-C", str(PROJECT_ROOT), "archive", ref], capture_output=True, check=False)
        if archive.returncode != 0:
            return f"no checkout of {ref!r}: {archive.stderr.decode(errors='replace').strip()[:200]}"
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
        (root / "bench" / "corpora").mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(__file__), root / "bench" / "forget_suite.py")
        for corpus in (path for paths in CORPORA.values() for path in paths):
            shutil.copy2(corpus, root / "bench" / "corpora" / corpus.name)
        env = {**os.environ, "PYTHONPATH": str(root)}
        argv = [sys.executable, "-m", "bench.forget_suite", "--worker", "--set", name, *(["--smoke"] if smoke else [])]
        child = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=3600)
        if child.returncode != 0:
            return f"the suite failed on {ref!r}: {child.stderr.strip().splitlines()[-1:] or child.returncode}"
        outcome = Outcome(**json.loads(child.stdout.strip().splitlines()[-1]))
        if not outcome.bot_file.startswith(str(root.resolve())):
            return f"the child ran {outcome.bot_file}, not the checkout of {ref!r}"
        return outcome


# --- the report --------------------------------------------------------------------------------------------------


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "n/a"


def figures(o: Outcome) -> dict[str, str]:
    return {
        "leak_now": f"{o.leaks_after_take_back} of {o.cases}",
        "leak_later": f"{o.leaks_after_attempts} of {o.cases}",
        "where": f"{o.prompt_leaks} prompts, {o.byte_leaks} byte scans",
        "blocked": share(o.blocked, o.attempts),
        "again": f"{o.said_again_blocked} of {o.said_again}",
        "others": share(o.others_kept, o.cases),
        "bystanders": f"{o.bystanders_refused} of {o.bystanders}",
        "withheld": f"{o.withheld_first} of {o.cases + o.withheld_first}",
    }


def passed(o: Outcome) -> dict[str, bool]:
    return {
        "leak_now": o.leaks_after_take_back == 0,
        "leak_later": o.leaks_after_attempts == 0,
        "blocked": o.blocked >= TARGETS["blocked"] * o.attempts,
        "again": o.said_again_blocked == 0,
    }


ROWS = (
    ("leak_now", "cases with forgotten words in a prompt or stored byte, right after", "0"),
    ("leak_later", "... after the three attempts to bring them back", "0"),
    ("where", "where they were found (prompt checks, byte scans)", ""),
    ("blocked", "attempts blocked (restatement, paraphrase, replay)", ">= 95%"),
    ("again", "cases where the user saying it again was not learned", "0"),
    ("others", "cases whose summaries keep what else was said", ""),
    ("bystanders", "other statements of the user refused (shared words blocked by mistake)", ""),
    ("withheld", "statements withheld by the gates when first said (not in the cases above)", ""),
)


def table(name: str, ours: Outcome, base: Outcome | None, ref: str) -> Table:
    result = Table(f"forget/correct suite, {name} set: {ours.cases} cases, {ours.attempts} attempts to bring a fact "
                   "back")
    mine, theirs, ok = figures(ours), figures(base) if base else {}, passed(ours)
    for key, measure, target in ROWS:
        # Only "gone right after the take-back" is a promise of the code; what a paraphrasing model brings back
        # later, and the user's own words said again, are rates the rules reach, measured against targets.
        result.add(measure, mine[key], theirs.get(key, ""), "", target, passed=ok.get(key) if target else None,
                   hard=key == "leak_now")
    result.note(f"baseline: the same suite on the code of {ref} in this run" if base else "baseline: not run")
    result.note(f"{ours.seconds:.1f} s for ours" + (f", {base.seconds:.1f} s for the baseline" if base else ""))
    if name == "held-out":
        gates = ", ".join(f"{count} by {gate}" for gate, count in sorted(Counter(ours.withheld.values()).items()))
        result.note("held-out: totals only, no case is named" + (f"; withheld when first said: {gates}" if gates
                                                                   else ""))
        return result
    if ours.withheld:
        result.note("withheld when first said: " + ", ".join(f"{id_} ({gate})" for id_, gate in ours.withheld.items()))
    if ours.leaked:
        result.note("leaked right after: " + ", ".join(ours.leaked))
    if ours.refused_again:
        result.note("saying it again not learned: " + ", ".join(ours.refused_again))
    if ours.refused_bystanders:
        result.note("other statements refused: " + ", ".join(ours.refused_bystanders))
    if ours.let_through:
        result.note("attempts let through (#1 restatement, #2 paraphrase, #3 replay): " + ", ".join(ours.let_through))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--baseline-ref", default=None, help="git ref whose code is the baseline (default: main; none in "
                   "a smoke run); '' for none")
    p.add_argument("--worker", action="store_true", help="internal: one run, printed as JSON")
    p.add_argument("--set", choices=sorted(CORPORA), help="run one set (default: both)")
    args = p.parse_args(argv)
    names = [args.set] if args.set else list(CORPORA)
    if args.worker:
        print(json.dumps(asdict(asyncio.run(run_suite(load_cases(names[0], args.smoke))))), flush=True)
        return 0
    header("forget/correct suite: taken back from facts, summaries and every byte", args.smoke)
    ref = args.baseline_ref if args.baseline_ref is not None else ("" if args.smoke else "main")
    results = []
    for name in names:
        base = baseline_outcome(ref, name, args.smoke) if ref else "not asked"
        if isinstance(base, str):
            print(f"baseline ({name} set): {base}\n", flush=True)
        result = table(name, asyncio.run(run_suite(load_cases(name, args.smoke))),
                       base if isinstance(base, Outcome) else None, ref)
        result.print()
        results.append(result)
    return exit_code(results, smoke=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
