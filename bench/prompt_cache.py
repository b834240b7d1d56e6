"""Prompt caching: the share of each reply prompt an endpoint's prefix cache can reuse, replaying a LoCoMo chat.

    .venv/bin/python -m bench.prompt_cache [DATA_DIR_OF_LOCOMO] [--conversation 26] [--sessions N] [--smoke]

One LoCoMo-10 conversation is replayed as a DM through the real bot: `MemoryBot` with its cogs and real resources,
messages delivered by `bot.dispatch("message", ...)` to the spec'd Discord fake of the tests, the model being
`tests.support.llm_server` (which reports `usage.prompt_tokens_details.cached_tokens` as OpenAI does: the prefix an earlier
request of the same model began with, in 128-token blocks, none under 1,024 tokens). The first speaker is the user;
the second speaker's lines are the bot's answers. Memory grows as it would: at the end of each session the
extraction (scripted) saves that session's LoCoMo observations of the user as facts and the session summary as the
"top of mind" summary (the previous one moves to "recent months"). Default settings: 20 history messages, 8,000
characters, 15 facts, a 1,000-token memory budget.

Measured for the layout of `bot.chat.conversation` (ours: the profile in the system message, history trimmed in chunks
by `HistoryTrimmer`, the facts ending the newest message) and, in the same run, the previous layout
(`bench.baselines.legacy_build_prompt`: one memory block with the summaries and the facts in the system message,
history trimmed one message at a time; its facts are those the service selected for ours, so both carry the same):
- reusable share: for each reply prompt, the longest prefix (estimated tokens) it shares with any earlier prompt,
  summed over all prompts and divided by all their tokens: what a prefix cache without a minimum could reuse;
- the same as OpenAI's cache reports it (none under 1,024 tokens, whole 128-token blocks): cached tokens / prompt
  tokens, which is what `memorybot_llm_cached_prompt_tokens_total / memorybot_llm_prompt_tokens_total` shows, read
  from the bot's own counters too;
- prompt tokens per reply.
Target: the reusable share of ours >= 0.55.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.baselines import legacy_build_prompt
from bench.chat_set import as_extractor_fact, confidence_of
from bench.common import DEFAULT_LOCOMO, LOCOMO_HINT, Table, exit_code, header, parser
from bot.chat.conversation import HistoryTrimmer
from tests.helpers import CHAT_MODEL, ScriptedLLM, build_harness, dispatch, make_user
from tests.support.llm_server import ChatServer, PrefixCache, extraction, prompt_text, reply

TARGET = 0.55
_DIA = re.compile(r"D(\d+):(\d+)")


@dataclass(slots=True)
class Session:
    exchanges: list[tuple[str, str]]  # (the user's message, the bot's answer)
    facts: list[tuple[str, str, float]]  # what the extraction learns at the end: (content, category, confidence)
    summary: str


def load_conversation(data_dir: Path, name: str) -> tuple[str, list[Session]]:
    path = data_dir / f"{name}.json"
    if not path.exists():
        raise SystemExit(f"no LoCoMo conversation {path}: {LOCOMO_HINT}")
    data = json.loads(path.read_text(encoding="utf-8"))
    user = data["speaker_a"]
    sessions = []
    number = 1
    while f"session_{number}" in data:
        turns = data[f"session_{number}"]
        exchanges: list[tuple[str, str]] = []
        said: list[str] = []
        answer: list[str] = []
        for turn in turns:
            if turn["speaker"] == user:
                if answer and said:
                    exchanges.append((" ".join(said), " ".join(answer)))
                    said, answer = [], []
                said.append(str(turn["text"]))
            elif said:
                answer.append(str(turn["text"]))
        if said and answer:
            exchanges.append((" ".join(said), " ".join(answer)))
        observations = data.get(f"session_{number}_observation", {}).get(user, [])
        facts = [(as_extractor_fact(str(text), user), "context", confidence_of(str(text)))
                 for text, _ in observations]
        sessions.append(Session(exchanges, facts, str(data.get(f"session_{number}_summary", ""))))
        number += 1
    return user, sessions


@dataclass(slots=True)
class Replay:
    prompt_tokens: list[int]
    cached_tokens: list[int]
    ideal_prefix_tokens: list[int]
    metric_prompt: int
    metric_cached: int

    @property
    def reported_share(self) -> float:
        return sum(self.cached_tokens) / max(sum(self.prompt_tokens), 1)

    @property
    def mean_share(self) -> float:
        return sum(c / p for c, p in zip(self.cached_tokens, self.prompt_tokens, strict=True)) / max(
            len(self.prompt_tokens), 1)

    @property
    def ideal_share(self) -> float:
        return sum(self.ideal_prefix_tokens) / max(sum(self.prompt_tokens), 1)


async def replay(name: str, sessions: Sequence[Session], root: Path, *, legacy: bool) -> Replay:
    server = ChatServer().start()
    llm = ScriptedLLM(server)
    h = await build_harness(llm, root, stream_replies=False, memory_debounce_seconds=3600.0,
                            memory_max_wait_seconds=7200.0)
    try:
        if legacy:
            h.chat.build_prompt = types.MethodType(legacy_build_prompt, h.chat)  # type: ignore[method-assign]
            h.chat.history_trimmer = HistoryTrimmer(chunk=1)  # history trimmed one message at a time
        user = make_user(name=name)
        dm = h.discord.dm(user)
        recent = ""
        for session in sessions:
            for said, answer in session.exchanges:
                llm.say(reply(answer))
                await dispatch(h.bot, "message", h.discord.message(dm, user, said))
            top = session.summary or None
            llm.extract = lambda body, s=session, t=top, r=recent or None: extraction(facts=s.facts, top=t, recent=r)
            await h.memory.ops.flush(60)
            recent = session.summary
        requests = llm.requests(CHAT_MODEL)
        ideal = PrefixCache(block_chars=1)
        prefixes = [ideal.match(CHAT_MODEL, prompt_text(r["body"])) // 4 for r in requests]
        usage = h.resources.metrics.chat_usage
        return Replay([r["prompt_tokens"] for r in requests], [r["cached_tokens"] for r in requests],
                      [min(p, r["prompt_tokens"]) for p, r in zip(prefixes, requests, strict=True)],
                      usage.prompt_tokens, usage.cached_tokens)
    finally:
        await h.close()
        server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    p = parser(__doc__)
    p.add_argument("data_dir", nargs="?", type=Path, default=DEFAULT_LOCOMO, help="the LoCoMo-10 folder")
    p.add_argument("--conversation", default="26", help="which conversation file (its number)")
    p.add_argument("--sessions", type=int, default=0, help="replay only the first N sessions (0: all)")
    args = p.parse_args(argv)
    header("prompt caching: reusable share of each reply prompt, a LoCoMo chat replayed as a DM", args.smoke)
    name, sessions = load_conversation(args.data_dir, args.conversation)
    limit = 2 if args.smoke else args.sessions
    if limit:
        sessions = sessions[:limit]
    if args.smoke:
        sessions = [Session(s.exchanges[:4], s.facts, s.summary) for s in sessions]

    async def both() -> tuple[Replay, Replay]:
        with tempfile.TemporaryDirectory() as tmp:
            ours = await replay(name, sessions, Path(tmp) / "ours", legacy=False)
            previous = await replay(name, sessions, Path(tmp) / "previous", legacy=True)
            return ours, previous

    ours, previous = asyncio.run(both())
    replies = len(ours.prompt_tokens)
    table = Table(f"conversation {args.conversation}: {len(sessions)} sessions, {replies} replies to {name} in a DM")
    table.add("reusable share (longest prefix shared with an earlier prompt)", f"{ours.ideal_share:.3f}",
              f"previous {previous.ideal_share:.3f}", f"{ours.ideal_share - previous.ideal_share:+.3f}",
              f">= {TARGET:.2f}", ours.ideal_share >= TARGET)
    table.add("as OpenAI's cache reports it (>= 1,024 tokens, 128-token blocks)", f"{ours.reported_share:.3f}",
              f"previous {previous.reported_share:.3f}", f"{ours.reported_share - previous.reported_share:+.3f}")
    table.add("  the same from the bot's metric counters", f"{ours.metric_cached / max(ours.metric_prompt, 1):.3f}",
              f"previous {previous.metric_cached / max(previous.metric_prompt, 1):.3f}")
    table.add("  mean over prompts of cached / prompt tokens", f"{ours.mean_share:.3f}",
              f"previous {previous.mean_share:.3f}")
    table.add("prompt tokens per reply (mean)", f"{sum(ours.prompt_tokens) / max(replies, 1):.0f}",
              f"previous {sum(previous.prompt_tokens) / max(len(previous.prompt_tokens), 1):.0f}")
    table.add("prompts of 1,024 tokens or more (cacheable by OpenAI at all)",
              f"{sum(t >= 1024 for t in ours.prompt_tokens)} of {replies}",
              f"previous {sum(t >= 1024 for t in previous.prompt_tokens)} of {len(previous.prompt_tokens)}")
    table.note("tokens are the test server's estimate (4 characters a token, 4 per message); endpoints tokenise "
               "differently, so the shares, not the counts, carry over")
    table.note("memory: each session's LoCoMo observations of the user saved as facts at its end (cap 100), the "
               "session summary as 'top of mind'; selection and rendering are the engine's")
    table.print()
    return exit_code([table], smoke=args.smoke)


if __name__ == "__main__":
    sys.exit(main())
