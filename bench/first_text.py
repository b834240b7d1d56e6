"""Time to first visible text, and reasoning shown on screen: a plain model, a model that streams its reasoning as
plain text ending in a lone `</think>`, and a model's very first reply.

    .venv/bin/python -m bench.first_text [--runs 2] [--smoke]

Real code path: the real `MemoryBot` (cogs loaded, real resources, the one `AsyncOpenAI` client) gets a DM through
`bot.dispatch("message", ...)` as the gateway delivers it; Discord is the spec'd fake of the tests (it records when
each message is posted and edited); the model is `tests.support.llm_server` answering like a large model: first token after
0.5 s, the whole answer (about 3,000 characters) after 10 s; the reasoning model spends about the first quarter of
that on reasoning text (about 1,000 characters), then `</think>`, then the same answer.

Each scenario is run three ways, interleaved (same machine load): ours (the reveal rules: a model known to stream
plainly streams from its first words, one known to send lone closers shows nothing before the closer, an unknown
model's first reply is posted whole); today's rule (every stream shown from its first words, the rules switched off);
and whole replies (`STREAM_REPLIES=false`). Measured from dispatch: the first post, the first time the answer's own
words are on screen, the final text, and how many characters of reasoning were ever on screen (every post and edit).
Targets: a plain model's first words within the first token's time + 300 ms; no reasoning character ever shown.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import Table, exit_code, header, parser
from bot.chat.thinking import ThinkingHabit
from tests.helpers import ScriptedLLM, build_harness, dispatch, make_user
from tests.support.llm_server import ChatServer, reply

FIRST_TOKEN_S = 0.5
ANSWER_S = 10.0
TARGET_SLACK_S = 0.3
EDIT_SECONDS = 1.0
REASONING_MARK = "Reasoning step"
ANSWER_MARK = "Step 0: a careful"
SCENARIOS = ("plain model", "lone-closer model", "first reply of a new model")
WAYS = ("ours", "today's rule", "whole replies")


def answer_text() -> str:
    return "\n\n".join(
        f"Step {n}: " + "a careful, detailed explanation that takes a large model a while to write. " * 4
        for n in range(10)
    )


def reasoning_text() -> str:
    return " ".join(f"{REASONING_MARK} {n}: the memory says the user is being treated for depression." for n in
                    range(12))


@dataclass
class Result:
    first_post: float
    first_answer: float
    done: float
    reasoning_chars: int


async def one_reply(llm: ScriptedLLM, root: Path, *, scenario: str, way: str, first_token: float, total: float,
                    run: int) -> Result:
    h = await build_harness(llm, root / f"{scenario}-{way}-{run}".replace(" ", "_"), stream_replies=way != WAYS[2],
                            stream_edit_seconds=EDIT_SECONDS)
    try:
        chat = h.resources.chat
        assert chat.thinking is not None
        if scenario == SCENARIOS[0]:
            await chat.thinking.traits.record(chat.model, ThinkingHabit.PLAIN)
        elif scenario == SCENARIOS[1]:
            await chat.thinking.traits.record(chat.model, ThinkingHabit.LONE_CLOSER)
        if way == WAYS[1]:
            chat.thinking = None  # today's rule: every stream is shown from its first words
        user = make_user(name="Bench")
        dm = h.discord.dm(user)
        content = answer_text()
        if scenario == SCENARIOS[1]:
            content = reasoning_text() + "</think>" + content
        llm.say(reply(content, first_token_seconds=first_token, stream_seconds=total - first_token, chunks=200))
        message = h.discord.message(dm, user, "explain it step by step, please")
        started = time.monotonic()
        await dispatch(h.bot, "message", message)
        records = h.discord.replies_to(message)
        shown = [(r.posted_at, r.posted_content) for r in records] + [(e.at, e.content) for r in records
                                                                       for e in r.edits]
        shown.sort(key=lambda item: item[0])
        reasoning = reasoning_text()
        leaked = max((len(_common_reasoning(text, reasoning)) for _, text in shown), default=0)
        return Result(
            first_post=shown[0][0] - started,
            first_answer=next((at for at, text in shown if ANSWER_MARK in text and REASONING_MARK not in text),
                              shown[-1][0]) - started,
            done=shown[-1][0] - started,
            reasoning_chars=leaked,
        )
    finally:
        await h.close()


def _common_reasoning(text: str, reasoning: str) -> str:
    """The part of the reasoning that `text` shows (it is shown from its start, cut where the display was)."""
    if REASONING_MARK not in text:
        return ""
    start = text.index(REASONING_MARK)
    length = 0
    while start + length < len(text) and length < len(reasoning) and text[start + length] == reasoning[length]:
        length += 1
    return reasoning[:length]


async def run(runs: int, first_token: float, total: float) -> list[Table]:
    results: dict[tuple[str, str], list[Result]] = {(s, w): [] for s in SCENARIOS for w in WAYS}
    with ChatServer() as server, tempfile.TemporaryDirectory() as folder:
        llm = ScriptedLLM(server)
        for n in range(runs):
            for scenario in SCENARIOS:
                for way in WAYS:  # interleaved: every way sees the same machine load
                    results[scenario, way].append(await one_reply(
                        llm, Path(folder), scenario=scenario, way=way, first_token=first_token, total=total, run=n,
                    ))
    tables = []
    for scenario in SCENARIOS:
        def med(way: str, attr: str, scenario: str = scenario) -> float:
            return float(statistics.median(getattr(r, attr) for r in results[scenario, way]))

        ours, today, whole = (f"{WAYS[0]}", f"{WAYS[1]}", f"{WAYS[2]}")
        table = Table(f"{scenario}: first token {first_token:g} s, whole answer {total:g} s")
        target = first_token + TARGET_SLACK_S
        for label, attr in (("first post, median", "first_post"), ("answer's first words on screen, median",
                                                                     "first_answer"),
                            ("final text, median", "done")):
            row = [label, f"{med(ours, attr):.3f} s", f"{med(today, attr):.3f} s / {med(whole, attr):.3f} s", "", ""]
            if scenario == SCENARIOS[0] and attr == "first_answer":
                table.add(*row[:4], f"<= {target:.1f} s", med(ours, attr) <= target)
            else:
                table.add(*row)
        leaked_ours = max(r.reasoning_chars for r in results[scenario, ours])
        leaked_today = max(r.reasoning_chars for r in results[scenario, today])
        table.add("reasoning characters ever on screen, max", str(leaked_ours), f"{leaked_today} / 0", "", "0",
                  leaked_ours == 0, hard=True)
        table.note(f"{runs} replies each way; baseline column: today's rule (every stream shown from its first "
                   f"words) / whole replies (STREAM_REPLIES=false); STREAM_EDIT_SECONDS={EDIT_SECONDS:g}")
        tables.append(table)
    return tables


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--runs", type=int, default=2)
    args = p.parse_args(argv)
    header("first visible text and reasoning on screen", args.smoke)
    runs, first_token, total = (1, 0.2, 1.5) if args.smoke else (args.runs, FIRST_TOKEN_S, ANSWER_S)
    tables = asyncio.run(run(runs, first_token, total))
    for table in tables:
        table.print()
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
