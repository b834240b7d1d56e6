"""A second evaluation set for fact selection: facts as the extractor writes them, chat turns as queries.

LoCoMo-10's own question set (`bench.selection_quality`) scores dialogue turns as facts, all at confidence 1.0,
against one question each, so it cannot show how similarity and confidence trade off, nor how a three-turn chat
query behaves. This set is built deterministically from the same files:
- facts: each speaker's observations (the data set's third-person statements about a speaker, each naming the
  dialogue turn it came from), rewritten the way our extractor writes facts: the speaker's name dropped from the
  start ("Caroline attended a support group" -> "Attended a support group"), other mentions of it made
  "they"/"their"; confidence spread over 0.70-1.00 by a hash of the text (the extractor's 0.7-1.0 band). One
  memory per speaker (about 127 facts on average: past the default cap of 100, as a talkative user's is).
- queries: for each fact, the three dialogue turns that follow the turn it was learned from, in the same session
  (both speakers, as the last three turns of a chat): the conversation still going on about that topic, without
  the sentence the fact came from. A query is a hit when one of the facts learned from that turn is in the top 15.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from bot.memory.models import Fact

QUERY_TURNS = 3
_DIA = re.compile(r"D(\d+):(\d+)")


@dataclass(slots=True)
class ChatQuery:
    turns: list[str]
    relevant: frozenset[int]  # indexes into the speaker's facts


@dataclass(slots=True)
class SpeakerMemory:
    name: str
    facts: list[Fact]
    queries: list[ChatQuery]


def as_extractor_fact(statement: str, name: str) -> str:
    """'Caroline attended ...' -> 'Attended ...'; other mentions of the name -> they / their."""
    text = " ".join(statement.split())
    if text.startswith(f"{name}'s "):
        text = "Their " + text[len(name) + 3 :]
    elif text.startswith(f"{name} "):
        rest = text[len(name) + 1 :]
        text = rest[:1].upper() + rest[1:]
    text = re.sub(rf"\b{re.escape(name)}'s\b", "their", text)
    return re.sub(rf"\b{re.escape(name)}\b", "they", text)


def confidence_of(text: str) -> float:
    return round(0.70 + 0.30 * (zlib.crc32(text.encode()) % 1000) / 999, 2)


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
            source: list[tuple[int, int]] = []
            for key in sorted((k for k in data if k.endswith("_observation")), key=lambda k: int(k.split("_")[1])):
                for statement, evidence in data[key].get(name, []):
                    match = _DIA.search(str(evidence))
                    if match is None:
                        continue
                    text = as_extractor_fact(str(statement), name)
                    facts.append(Fact(id=f"fact_{len(facts):08x}", content=text, category="context",
                                      confidence=confidence_of(text)))
                    source.append((int(match.group(1)), int(match.group(2))))
            by_turn: dict[tuple[int, int], set[int]] = {}
            for index, turn in enumerate(source):
                by_turn.setdefault(turn, set()).add(index)
            queries = []
            for (session, turn), relevant in by_turn.items():
                dialogue = sessions.get(session, [])
                position = next((i for i, t in enumerate(dialogue) if t["dia_id"] == f"D{session}:{turn}"), None)
                if position is None or position + QUERY_TURNS >= len(dialogue):
                    continue
                window = [str(t["text"]) for t in dialogue[position + 1 : position + 1 + QUERY_TURNS]]
                queries.append(ChatQuery(window, frozenset(relevant)))
            memories.append(SpeakerMemory(f"{path.stem}:{name}", facts, queries))
    return memories
