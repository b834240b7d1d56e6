"""A held-out fact-selection set: the conversation leading up to a topic, not the conversation after it.

`bench.chat_set` asks for a fact with the three turns that follow the turn it was learned from; the selector's
constants and its fusion weights were chosen looking at that set and at LoCoMo's question set
(`bench.selection_quality`). This set was built after those choices and used for no tuning: the same memories
(each speaker's LoCoMo observations rewritten the way the extractor writes facts, `bench.chat_set`), but each query
is the three turns *before* the turn a fact was learned from, in the same session: the chat as it reaches the topic,
the newest turn nearest to it (the moment a reply would want the fact). A query is a hit when one of the facts
learned from that turn is among the top 15. Turns with fewer than three earlier turns in their session are skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench.chat_set import QUERY_TURNS, ChatQuery, SpeakerMemory, as_extractor_fact, confidence_of
from bot.memory.models import Fact

_DIA = re.compile(r"D(\d+):(\d+)")


def load(data_dir: Path) -> list[SpeakerMemory]:
    memories = []
    for path in sorted(data_dir.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        sessions: dict[int, list[dict[str, object]]] = {}
        number = 1
        while f"session_{number}" in data:
            sessions[number] = data[f"session_{number}"]
            number += 1
        for name in (data["speaker_a"], data["speaker_b"]):
            facts: list[Fact] = []
            by_turn: dict[tuple[int, int], set[int]] = {}
            for key in sorted((k for k in data if k.endswith("_observation")), key=lambda k: int(k.split("_")[1])):
                for statement, evidence in data[key].get(name, []):
                    match = _DIA.search(str(evidence))
                    if match is None:
                        continue
                    text = as_extractor_fact(str(statement), name)
                    by_turn.setdefault((int(match.group(1)), int(match.group(2))), set()).add(len(facts))
                    facts.append(Fact(id=f"fact_{len(facts):08x}", content=text, category="context",
                                      confidence=confidence_of(text)))
            queries: list[ChatQuery] = []
            for (session, turn), relevant in by_turn.items():
                dialogue = sessions.get(session, [])
                position = next((i for i, t in enumerate(dialogue) if t["dia_id"] == f"D{session}:{turn}"), None)
                if position is None or position < QUERY_TURNS:
                    continue
                window = [str(t["text"]) for t in dialogue[position - QUERY_TURNS : position]]
                queries.append(ChatQuery(window, frozenset(relevant)))
            memories.append(SpeakerMemory(f"{path.stem}:{name}", facts, queries))
    return memories
