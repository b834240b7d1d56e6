"""Reply latency under a burst: 200 messages from 50 users at once in one server, with and without the cap on
concurrent replies (CHAT_CONCURRENCY, CHAT_CONCURRENCY_PER_GUILD).

    .venv/bin/python -m bench.chat_burst [--messages 200] [--users 50] [--smoke]

Real code path: the real `MemoryBot` (cogs loaded, real resources, the one `AsyncOpenAI` client) gets every message
through `bot.dispatch("message", ...)` at once, each handler its own task as the gateway runs them, in an auto-reply
channel; Discord is the spec'd fake of the tests. The endpoint is `tests.support.llm_server` with a model of one GPU: it
works through a fixed number of characters per second shared equally by every request in progress (processor
sharing, as a batching server does once it is compute-bound), each request costing its prompt (a fixed prefill) and
its answer. Measured per message, from dispatch: the final text on screen (latency), and whether it was answered or
told that the bot is busy; and the most model requests in progress at once.

Ways, one after the other on the same server: no cap (today: every message opens its stream at once; the caps set
far above the burst), the cap with a line long enough for the whole burst (CHAT_CONCURRENCY=8,
CHAT_CONCURRENCY_PER_GUILD=4, CHAT_QUEUE_LIMIT=200, CHAT_QUEUE_SECONDS=600), and the defaults (8, 4, a line of 50,
60 s), where the overflow hears at once that the bot is busy.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from bench.common import Table, exit_code, header, p50, p95, parser
from bot.chat.thinking import ThinkingHabit
from cogs.chat import BUSY_REPLY
from tests.helpers import ScriptedLLM, build_harness, make_guild, make_member, make_user
from tests.inflight import Meter, Metered
from tests.support.llm_server import ChatServer, Response, _Exchange

CAPACITY = 2400.0  # characters per second the endpoint works through, shared by everything in progress
PREFILL = 60  # the prompt's cost, in the same units
ANSWER = "Sure, here is what I think about that question, in a few friendly sentences. " * 4  # ~300 characters
TICK = 0.05


@dataclass(eq=False)
class SharedEndpoint:
    """Processor sharing: `capacity` units per second split equally among the requests in progress."""

    capacity: float
    active: set[object] = field(default_factory=set)


@dataclass(frozen=True)
class SharedReply(Response):
    content: str
    endpoint: SharedEndpoint

    async def render(self, ex: _Exchange) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(ex.request)
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"

        async def send(delta: dict[str, Any], finish: str | None = None) -> None:
            chunk = {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()),
                     "model": ex.model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())

        await send({"role": "assistant", "content": ""})
        token = object()
        self.endpoint.active.add(token)
        try:
            done, sent = 0.0, 0
            work = PREFILL + len(self.content)
            last = time.monotonic()
            while done < work:
                await asyncio.sleep(TICK)
                now = time.monotonic()
                done += (now - last) * self.endpoint.capacity / max(1, len(self.endpoint.active))
                last = now
                ready = int(min(work, done)) - PREFILL
                if ready > sent:
                    await send({"content": self.content[sent:ready]})
                    sent = ready
        finally:
            self.endpoint.active.discard(token)
        await send({}, "stop")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "shared_reply", "content": self.content}


@dataclass
class Outcome:
    latencies: list[float]
    busy: int
    unanswered: int
    peak: int
    seconds: float


async def burst(llm: ScriptedLLM, root: Path, *, messages: int, users: int, capacity: float,
                **caps: Any) -> Outcome:
    guild = make_guild()
    channel_id = 55_000_000_000_000_001
    h = await build_harness(llm, root, auto_reply_channel_ids=frozenset({channel_id}), history_messages=5,
                            memory_debounce_seconds=600, memory_max_wait_seconds=600, **caps)
    try:
        chat = h.resources.chat
        assert chat.thinking is not None
        await chat.thinking.traits.record(chat.model, ThinkingHabit.PLAIN)  # it has answered before
        endpoint, meter = SharedEndpoint(capacity), Meter()
        llm.chat_reply = lambda body: Metered(SharedReply(ANSWER, endpoint), meter)
        channel = h.discord.text_channel(guild, channel_id=channel_id)
        people = [make_member(make_user(name=f"user{n}"), guild) for n in range(users)]
        sent = [h.discord.message(channel, people[n % users], f"question {n} about the raid") for n in range(messages)]
        started = time.monotonic()
        before = asyncio.all_tasks()
        for message in sent:
            h.bot.dispatch("message", message)
        await asyncio.gather(*(t for t in asyncio.all_tasks() - before if t.get_name().startswith("discord.py:")))
        seconds = time.monotonic() - started
        latencies, busy, unanswered = [], 0, 0
        for message in sent:
            records = h.discord.replies_to(message)
            text = "\n".join(r.content for r in records)
            if text == BUSY_REPLY:
                busy += 1
            elif not text:
                unanswered += 1  # told once already (one busy notice per user per minute)
            else:
                latencies.append(max([r.posted_at for r in records] + [e.at for r in records for e in r.edits])
                                 - started)
        return Outcome(latencies, busy, unanswered, meter.peak, seconds)
    finally:
        await h.close()


async def run(messages: int, users: int, capacity: float) -> list[Table]:
    ways = {
        "no cap (today)": {"chat_concurrency": 100_000, "chat_concurrency_per_guild": 100_000},
        "cap 8 / 4 per server, line for all": {"chat_concurrency": 8, "chat_concurrency_per_guild": 4,
                                                 "chat_queue_limit": messages, "chat_queue_seconds": 600},
        "defaults (8 / 4, line of 50, 60 s)": {},
    }
    outcomes: dict[str, Outcome] = {}
    with ChatServer() as server, tempfile.TemporaryDirectory() as folder:
        llm = ScriptedLLM(server)
        for n, (name, caps) in enumerate(ways.items()):
            outcomes[name] = await burst(llm, Path(folder) / str(n), messages=messages, users=users,
                                         capacity=capacity, **caps)
    base = outcomes["no cap (today)"]
    table = Table(f"reply latency: {messages} messages from {users} users at once in one server")
    for name, outcome in outcomes.items():
        if outcome is base:
            continue
        table.add(f"{name}: answered", f"{len(outcome.latencies)}", f"{len(base.latencies)}", "", "")
        table.add(f"{name}: told busy (+ not told again)", f"{outcome.busy} (+{outcome.unanswered})",
                  f"{base.busy} (+{base.unanswered})", "", "")
        table.add(f"{name}: latency p50", f"{p50(outcome.latencies):.2f} s", f"{p50(base.latencies):.2f} s",
                  f"{100 * p50(outcome.latencies) / p50(base.latencies):.0f}%", "")
        table.add(f"{name}: latency p95", f"{p95(outcome.latencies):.2f} s", f"{p95(base.latencies):.2f} s",
                  f"{100 * p95(outcome.latencies) / p95(base.latencies):.0f}%", "")
        table.add(f"{name}: fastest reply", f"{min(outcome.latencies):.2f} s", f"{min(base.latencies):.2f} s", "", "")
        table.add(f"{name}: model requests at once, peak", str(outcome.peak), str(base.peak), "", "<= 4",
                  outcome.peak <= 4, hard=True)
    table.note(f"endpoint: {capacity:g} characters per second shared by all requests in progress; each request "
               f"costs {PREFILL} for its prompt plus its answer ({len(ANSWER)} characters): one reply alone takes "
               f"{(PREFILL + len(ANSWER)) / capacity:.2f} s")
    table.note("baseline column: no cap (today's behaviour); latency counts answered messages only, from dispatch "
               "to the final text")
    return [table]


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("--messages", type=int, default=200)
    p.add_argument("--users", type=int, default=50)
    args = p.parse_args(argv)
    header("reply latency under a burst (concurrency cap)", args.smoke)
    messages, users, capacity = (24, 6, 4800.0) if args.smoke else (args.messages, args.users, CAPACITY)
    tables = asyncio.run(run(messages, users, capacity))
    for table in tables:
        table.print()
    return exit_code(tables, smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
