"""A stand-in for the models people run, written to break the memory engine's promises the way real models do.

`HostileModel` answers both kinds of request the bot sends, as `tests.helpers.ScriptedLLM` responders::

    model = HostileModel(seed=3)
    llm.extract = model.extract    # memory extraction requests
    llm.chat_reply = model.chat    # chat replies

Every answer is a function of the seed and the request alone (never of the order requests arrive in, nor of the
random fact ids a request carries), so with a fixed clock a run is reproducible even while extractions of several
users run at once. `model.stats` counts what it did, so a test can assert that each behaviour really happened,
and `answer(body)` gives the unwrapped JSON an extraction request gets (what a held answer would write).

Extraction answers (`extract`), made from the request's `currentMemory` and `newTurns`:

- **New facts** from each user turn: `facts_of(text, name)`, by default one long sentence carrying the turn's
  words (topic words drawn per turn keep two such facts from reading as duplicates of each other).
- **Restated facts with a detail**: shown facts come back as "<old fact text> while <detail>", the detail taken
  from a new user turn (`detail_of(text)`, by default its identifiers, else its text). The wording is close enough
  to the old fact that a near-duplicate merge reads it as the same fact with more detail. Whenever there are new
  user turns and shown facts, at least one fact is restated.
- **Every shown fact repeated**, verbatim, and some reworded ("They mentioned that ...").
- **The assistant's words and other people**: facts about what the assistant's turns said ("Heard about ...
  together with Bob"), naming the people the turns mention, although the prompt says not to.
- **Every summary** in `summary_sections` rewritten with everything it saw: the new turns first, then what the
  assistant said, the shown facts and the shown summaries (the engine cuts long summaries, so the newest words
  come first).
- **No notion of forgetting**: whatever its request showed (a fact, a summary) comes back in its answer, however
  long the answer is held back before it arrives.
- **Removals** now and then (`remove_chance`): the id of a shown fact, and an id that does not exist.
- **Wrapping**: plain JSON; JSON after a `<think>` block; JSON after reasoning ended by a lone `</think>` (the
  opener stripped by the server's chat template, as llama.cpp, vLLM and Ollama do); or JSON in a code fence
  after prose. The reasoning holds a draft answer containing `REASONING_MARK`, which must never be stored.

Chat answers (`chat`):

- **Reasoning aloud first**, ended by a lone `</think>` (the opener stripped): `REASONING_MARK`, the speaker, the
  other people in the history and some of what it was shown. Never to be shown to anyone or learned.
- **Then the answer**: addressed to the speaker, it repeats every distinct word of the memory blocks (their quoted
  values, wherever the prompt puts them) and of the conversation (history, reply chain and the message), and names
  the other people it saw.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tests.support.llm_server import Response, extraction_payload, reply

REASONING_MARK = "ponder-ponder-draft"
SECTIONS = ("workContext", "personalContext", "topOfMind", "recentMonths", "earlierContext", "longTermBackground")
_WORD = re.compile(r"[\w][\w'’-]*")
_IDENTIFIER = re.compile(r"\b[\w-]*\d[\w-]*\b")  # words with a digit in them: codes, numbers, ids
_QUOTED_VALUE = re.compile(r'"(?:[^"\\]|\\.)*"\s*$')
_SPEAKER = re.compile(r"^([^:\n]{1,80}): ")
_BLOCK = re.compile(r"<user_memory\b[^>]*>.*?</user_memory>", re.DOTALL)
_FILLER = frozenset({"remember", "please", "the", "a", "an", "and", "i", "my", "me", "to", "of", "is"})
# Topic words for the default facts: plain nouns, nothing the poisoning guard could take for an order or a claim.
_TOPICS = (
    "garden", "choir", "allotment", "harbour", "market", "bakery", "ferry", "orchard", "library", "bicycle",
    "kayak", "pottery", "violin", "lantern", "meadow", "glacier", "quarry", "vineyard", "lighthouse", "canal",
    "museum", "festival", "recipe", "novel", "telescope", "greenhouse", "workshop", "village", "bridge", "island",
)

FactsOf = Callable[[str, str], list[str]]
DetailOf = Callable[[str], str]


def words(text: str) -> list[str]:
    """The distinct words of `text`, in order of first appearance."""
    return list(dict.fromkeys(_WORD.findall(text)))


def reworded(content: str) -> str:
    """How the model rewords a fact it was shown (so a test can tell a rewording from a fact that came back)."""
    return f"They mentioned that {_lower_first(content)}"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


class HostileModel:
    """See the module docstring. `facts_of` and `detail_of` say what a turn is about (a test's own story);
    `summary_sections` are the summaries every extraction rewrites; `restate_chance` is how often a shown fact is
    restated with a detail (at least one always is); `remove_chance` how often it asks to remove a shown fact."""

    def __init__(
        self,
        seed: int,
        *,
        facts_of: FactsOf | None = None,
        detail_of: DetailOf | None = None,
        summary_sections: Iterable[str] = SECTIONS,
        restate_chance: float = 0.5,
        remove_chance: float = 0.2,
    ) -> None:
        self.seed = seed
        self.facts_of = facts_of or self._default_facts
        self.detail_of = detail_of or _default_detail
        self.summary_sections = tuple(summary_sections)
        unknown = set(self.summary_sections) - set(SECTIONS)
        if unknown:
            raise ValueError(f"unknown summaries {sorted(unknown)}")
        self.restate_chance = restate_chance
        self.remove_chance = remove_chance
        self.stats: Counter[str] = Counter()
        self._lock = threading.Lock()

    def _count(self, **counts: int) -> None:
        with self._lock:
            self.stats.update(counts)

    def _rng(self, *parts: object) -> random.Random:
        digest = hashlib.sha256(json.dumps([self.seed, *parts], sort_keys=True, default=str).encode()).hexdigest()
        return random.Random(digest)

    # --- extraction ---------------------------------------------------------------------------------------

    def extract(self, body: dict[str, Any]) -> Response:
        answer = self.answer(body)
        return reply(self._wrapped(answer, self._rng("wrap", _without_ids(answer))))

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The extraction JSON `extract` sends for this request, unwrapped (a test can tell what a held answer
        would write)."""
        payload = _extraction_payload(body)
        # Fact ids are random per run: the answer depends on what the request says, not on them.
        rng = self._rng("extract", _without_ids(payload))
        memory = payload.get("currentMemory") or {}
        shown_facts: list[dict[str, Any]] = list(memory.get("facts") or [])
        shown_summaries: dict[str, str] = {k: v for k, v in (memory.get("summaries") or {}).items() if v}
        turns: list[dict[str, Any]] = list(payload.get("newTurns") or [])
        said = [turn for turn in turns if turn.get("speaker") == "user"]
        assistant = [turn for turn in turns if turn.get("speaker") == "assistant"]
        name = str(said[0].get("name") or "They") if said else "They"

        facts: list[tuple[str, str, float]] = []
        for turn in said:
            facts += [(content, "context", 0.9) for content in self.facts_of(str(turn["text"]), name)]
        facts += self._restated(shown_facts, said, rng)
        for fact in shown_facts:
            facts.append((str(fact["content"]), str(fact.get("category") or "context"), 0.9))
            self._count(repeated=1)
            if rng.random() < 0.5:
                facts.append((reworded(str(fact["content"])), "context", 0.85))
                self._count(reworded=1)
        others = self._others(turns, name)
        heard = list(dict.fromkeys(w for turn in assistant for w in _IDENTIFIER.findall(str(turn["text"]))))
        heard = rng.sample(heard, min(len(heard), 12))  # a few of them, as a model picks what stands out
        for start in range(0, len(heard), 4):
            company = f" together with {_join(others)}" if others else ""
            facts.append((f"Heard about {_join(heard[start:start + 4])}{company}", "relationship", 0.8))
            self._count(heard_from_assistant=1)
        if others:
            facts.append((f"Knows {_join(others)} from the conversations here", "relationship", 0.9))
            self._count(named_others=1)
        rng.shuffle(facts)

        summaries = self._summaries(said, assistant, shown_facts, shown_summaries, others, name)
        remove: list[str] = []
        if shown_facts and rng.random() < self.remove_chance:
            remove.append(str(rng.choice(shown_facts)["id"]))
            self._count(removed=1)
        if rng.random() < self.remove_chance:
            remove.append("fact_0badc0de")
        return extraction_payload(facts=facts, remove=remove, **summaries)

    @staticmethod
    def _others(turns: Sequence[dict[str, Any]], name: str) -> list[str]:
        """People the turns name, other than the user: `@Name` mentions and `Name:` speakers in quoted history,
        and the names the assistant's turns list as having been around."""
        found: list[str] = []
        for turn in turns:
            text = str(turn.get("text") or "")
            found += re.findall(r"@([A-Z][\w-]*)", text)
            found += re.findall(r"(?m)^([A-Z][\w-]*): ", text)
            for group in re.findall(r"\bI also saw ([\w ,-]+?) here\b", text):
                found += re.split(r", | and ", group)
        return [other for other in dict.fromkeys(found) if other and other != name]

    def _restated(
        self, shown: Sequence[dict[str, Any]], said: Sequence[dict[str, Any]], rng: random.Random
    ) -> list[tuple[str, str, float]]:
        if not shown or not said:
            return []
        chosen = [fact for fact in shown if rng.random() < self.restate_chance] or [rng.choice(list(shown))]
        restated = []
        for fact in chosen:
            detail = self.detail_of(str(rng.choice(list(said))["text"]))
            if detail:
                restated.append((f"{fact['content']} while {detail}", str(fact.get("category") or "context"), 0.9))
        self._count(restated=len(restated))
        return restated

    def _summaries(
        self,
        said: Sequence[dict[str, Any]],
        assistant: Sequence[dict[str, Any]],
        shown_facts: Sequence[dict[str, Any]],
        shown_summaries: dict[str, str],
        others: Sequence[str],
        name: str,
    ) -> dict[str, str]:
        if not said:
            return {}
        parts = [f"Lately {name} said: " + " ".join(str(turn["text"]) for turn in said) + "."]
        if assistant:
            parts.append("They heard: " + " ".join(words(" ".join(str(t["text"]) for t in assistant))) + ".")
        if others:
            parts.append(f"They talk with {_join(list(others))}.")
        if shown_facts:
            parts.append("Known: " + " ".join(str(fact["content"]) for fact in shown_facts) + ".")
        keys = {"workContext": "work", "personalContext": "personal", "topOfMind": "top", "recentMonths": "recent",
                "earlierContext": "earlier", "longTermBackground": "background"}
        result = {}
        for section in self.summary_sections:
            before = [shown_summaries[section]] if section in shown_summaries else []
            rest = [text for key, text in shown_summaries.items() if key != section]
            result[keys[section]] = " ".join([*parts, *("Before: " + text for text in before), *rest])
        self._count(summaries_rewritten=len(result))
        return result

    def _wrapped(self, answer: dict[str, Any], rng: random.Random) -> str:
        text = json.dumps(answer, ensure_ascii=False)
        draft = json.dumps(
            {"newFacts": [{"content": f"{REASONING_MARK}: maybe they like secrets", "category": "context",
                           "confidence": 0.99}], "factsToRemove": []}
        )
        style = rng.choice(("plain", "think", "lone_close", "fence"))
        self._count(**{f"wrap_{style}": 1})
        if style == "think":
            return f"<think>Let me work out what to keep. {REASONING_MARK}. A first try: {draft}</think>\n{text}"
        if style == "lone_close":
            return f"Let me work out what to keep. {REASONING_MARK}. A first try: {draft}\n</think>\n\n{text}"
        if style == "fence":
            return f"Here is the memory update you asked for:\n```json\n{text}\n```\nHope this helps!"
        return text

    def _default_facts(self, text: str, name: str) -> list[str]:
        said = [w for w in words(text) if w.lower() not in _FILLER]
        if not said:
            return []
        topics = self._rng("topics", text).sample(_TOPICS, 6)
        return [
            f"{name} talked about {' '.join(said)} over the {topics[0]} and the {topics[1]}, near the {topics[2]} "
            f"{topics[3]}, after a visit to the {topics[4]} by the {topics[5]}"
        ]

    # --- chat -------------------------------------------------------------------------------------------------

    def chat(self, body: dict[str, Any]) -> Response:
        messages: list[dict[str, Any]] = list(body.get("messages") or [])
        memory = [value for block in memory_blocks(messages) for value in _quoted_values(block)]
        conversation: list[str] = []
        people: list[str] = []
        for message in messages[1:]:
            text = without_memory(_text(message.get("content")))
            speaker = _SPEAKER.match(text) if message.get("role") == "user" else None
            if speaker is not None:
                people.append(speaker.group(1))
                text = text[speaker.end():]
            conversation.append(text)
        speaker_name = people[-1] if people else "friend"
        others = [person for person in dict.fromkeys(people) if person != speaker_name]
        said = words(" ".join([*memory, *conversation]))
        rng = self._rng("chat", messages)
        glimpse = " ".join(rng.sample(said, min(5, len(said))))
        reasoning = (
            f"{REASONING_MARK}: {speaker_name} wrote to me"
            + (f"; I can see {_join(others)} here too" if others else "")
            + f". What I was shown includes {glimpse or 'nothing'}. I should answer warmly.\n</think>\n\n"
        )
        answer = f"{speaker_name}, here is everything I was given: {' '.join(said) or 'nothing'}."
        if others:
            answer += f" I also saw {_join(others)} here."
            self._count(chat_named_others=1)
        self._count(chat=1)
        return reply(reasoning + answer)


def _without_ids(value: Any) -> Any:
    """`value` with every fact id left out (they are random per run)."""
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items() if k not in ("id", "factsToRemove")}
    if isinstance(value, list):
        return [_without_ids(item) for item in value]
    return value


def _default_detail(text: str) -> str:
    codes = _IDENTIFIER.findall(text)
    return " ".join(dict.fromkeys(codes)) if codes else _lower_first(text.strip().rstrip("."))


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def memory_blocks(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The memory blocks a chat request carries, wherever the prompt puts them (`<user_memory ...>` to
    `</user_memory>`: the bot disarms the tag in anything people wrote, so only its own blocks match)."""
    return [block for message in messages for block in _BLOCK.findall(_text(message.get("content")))]


def without_memory(text: str) -> str:
    """`text` without its memory blocks: the conversation alone."""
    return _BLOCK.sub("", text)


def _quoted_values(block: str) -> list[str]:
    """The quoted values of a memory block (its `- Label: "value"` lines)."""
    values = []
    for line in block.splitlines():
        found = _QUOTED_VALUE.search(line) if line.startswith("- ") else None
        if found is not None:
            values.append(str(json.loads(found.group(0))))
    return values


def _extraction_payload(body: dict[str, Any]) -> dict[str, Any]:
    content = _text(body["messages"][-1]["content"])
    return dict(json.loads(content[content.index("{"):]))
