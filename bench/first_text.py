"""Time to first visible text: a streamed reply against the same reply sent whole.

    .venv/bin/python -m bench.first_text [--runs 3] [--smoke]

Real code path: the real `MemoryBot` (cogs loaded, real resources, the one `AsyncOpenAI` client) gets a DM through
`bot.dispatch("message", ...)` as the gateway delivers it; Discord is the spec'd fake of the tests (it records when
each message is posted and edited); the model is `tests.llm_server` answering like a large model: first token after
0.5 s, the whole answer (about 3,000 characters) after 10 s. Measured: from dispatch to the first post, and to the
final text. Baseline in the same run: `STREAM_REPLIES=false` (the reply appears when the whole answer is done).
Target: first text within the first token's time + 300 ms.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.common import Table, exit_code, header, parser
from tests.helpers import ScriptedLLM, build_harness, dispatch, make_user
from tests.llm_server import ChatServer, reply

FIRST_TOKEN_S = 0.5
ANSWER_S = 10.0
TARGET_SLACK_S = 0.3
EDIT_SECONDS = 1.0


def answer_text() -> str:
    return "\n\n".join(
        f"Step {n}: " + "a careful, detailed explanation that takes a large model a while to write. " * 4
        for n in range(10)
    )


async def one_reply(llm: ScriptedLLM, root: Path, *, stream: bool, first_token: float, total: float,
                    run: int) -> tuple[float, float, int, float]:
    """Seconds from dispatch to the first post and to the final text, the number of edits, and the shortest time
    between two changes (post or edit) of one message."""
    h = await build_harness(llm, root / f"{'stream' if stream else 'whole'}-{run}", stream_replies=stream,
                            stream_edit_seconds=EDIT_SECONDS)
    try:
        user = make_user(name="Bench")
        dm = h.discord.dm(user)
        llm.say(reply(answer_text(), first_token_seconds=first_token, stream_seconds=total - first_token,
                      chunks=200))
        message = h.discord.message(dm, user, "explain it step by step, please")
        started = time.monotonic()
        await dispatch(h.bot, "message", message)
        records = h.discord.replies_to(message)
        first = min(r.posted_at for r in records) - started
        done = max([r.posted_at for r in records] + [e.at for r in records for e in r.edits]) - started
        gaps = [later - earlier for r in records
                for earlier, later in itertools.pairwise([r.posted_at, *(e.at for e in r.edits)])]
        return first, done, sum(len(r.edits) for r in records), min(gaps, default=math.inf)
    finally:
        await h.close()


async def run(runs: int, first_token: float, total: float) -> list[Table]:
    with ChatServer() as server, tempfile.TemporaryDirectory() as folder:
        llm = ScriptedLLM(server)
        results: dict[bool, list[tuple[float, float, int, float]]] = {True: [], False: []}
        for n in range(runs):
            for stream in (True, False):  # interleaved: both see the same machine load
                results[stream].append(await one_reply(llm, Path(folder), stream=stream, first_token=first_token,
                                                       total=total, run=n))
    streamed_first = statistics.median(r[0] for r in results[True])
    whole_first = statistics.median(r[0] for r in results[False])
    streamed_done = statistics.median(r[1] for r in results[True])
    whole_done = statistics.median(r[1] for r in results[False])
    edits = statistics.median(r[2] for r in results[True])
    shortest = min(r[3] for r in results[True])
    target = first_token + TARGET_SLACK_S
    table = Table(f"time to first visible text (first token {first_token:g} s, whole answer {total:g} s)")
    table.add("first text, median", f"{streamed_first:.3f} s", f"{whole_first:.3f} s",
              f"{100 * streamed_first / whole_first:.1f}%", f"<= {target:.1f} s", streamed_first <= target)
    table.add("final text, median", f"{streamed_done:.3f} s", f"{whole_done:.3f} s",
              f"{100 * streamed_done / whole_done:.1f}%", "")
    table.add("edits per reply, median", f"{edits:g}", "0", "", "")
    table.add("shortest time between two changes of a message", f"{shortest:.3f} s", "", "",
              f">= {EDIT_SECONDS:g} s", shortest >= EDIT_SECONDS, hard=True)
    table.note(f"{runs} replies each way, interleaved; ours: STREAM_REPLIES=true, STREAM_EDIT_SECONDS={EDIT_SECONDS:g}; "
               "baseline: STREAM_REPLIES=false")
    table.note("the final text of a streamed reply waits for the last edit interval to pass, so it can end up to "
               "one interval after the answer")
    return [table]


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args(argv)
    header("first visible text (streamed vs whole replies)", args.smoke)
    runs, first_token, total = (1, 0.2, 1.5) if args.smoke else (args.runs, FIRST_TOKEN_S, ANSWER_S)
    tables = asyncio.run(run(runs, first_token, total))
    for table in tables:
        table.print()
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
