"""What is withheld from memory: credentials always, sensitive categories unless the user asked to keep them.

The policy every write to memory applies (pure functions; `bot.memory.rules.credentials`,
`bot.memory.rules.credential_batch` and `bot.memory.rules.sensitive` do the finding):
- a new fact holding a credential is not stored, alone or read with the other new facts of the write (a password
  named in one and given in the next); a pending turn is cut read with the user's other turns of its batch;
  a sensitive fact (marked by the model or caught by the backstop)
  is stored only when the user asked, in the same batch, to remember it;
- a pending turn is written down (the queue on disk or in the database) without a message of the user's that is
  nothing but one password-like word (a value whose name may come next), while the turn in RAM keeps it for the
  extraction, which reads the batch whole;
- a summary loses each sentence that holds a credential, or sensitive data the user did not ask to keep in this
  batch and that no stored fact already holds;
- text the user typed (`/memory remember`, `/memory edit`) is theirs to keep, sensitive or not, but a credential in
  it is refused with one line that never repeats it.

A request covers only its own batch. "Remember that I have diabetes" keeps that batch's health facts and the facts
that share its words; something sensitive said in a later batch needs its own request. Asking is explicit: "remember
that ...", "don't forget ...", "keep in mind ...", "note that ..." (and the German, French, Spanish, Portuguese,
Italian, Dutch, Chinese and Japanese forms) at the start of a sentence or after "please" / "can you"; not "I
remember", "do you remember", "remember when ...", or "don't remember this".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.memory.models import Turn
from bot.memory.phrases import Phrase
from bot.memory.rules.credential_batch import FOLLOWING, batch_findings, held_back
from bot.memory.rules.credentials import credential_kind, cut, redact, without_credential_sentences
from bot.memory.rules.findings import named_kind
from bot.memory.rules.sensitive import SENSITIVE_UNSPECIFIED, categories_in

_LEAD = (
    r"(?:^|(?<=[.!?\n;:,])\s*|(?<=[.!?\n;:,])\s*(?:also|and|but|oh|so|ok(?:ay)?|btw|hey|hi|pls|plz|please)\b[\s,]*"
    r"|^(?:also|and|oh|so|ok(?:ay)?|btw|hey|hi|pls|plz|please)\b[\s,]*)"
)
_POLITE = (
    r"(?:(?:please|pls|plz|kindly)\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?|i\s+(?:want|need)\s+you\s+to\s+"
    r"|i(?:'d| would)\s+like\s+you\s+to\s+|make\s+sure\s+(?:you\s+|to\s+)|try\s+to\s+|(?:you\s+)?(?:should|must)\s+)?"
)
_ASK = (
    r"(?:remember|memori[sz]e|keep\s+in\s+mind|don'?t\s+forget|do\s+not\s+forget|never\s+forget|make\s+a\s+note"
    r"|take\s+note|note\s+down|note|write\s+down|save|store|keep)"
)
_REQUEST = re.compile(
    rf"{_LEAD}{_POLITE}{_ASK}\b(?:\s+(?:that|this|it|for\s+later|for\s+me|for\s+next\s+time|about\s+me))*"
    r"\s*[:,-]?\s*(?P<what>[^.!?\n]*)",
    re.IGNORECASE,
)
_FOREIGN_REQUEST = re.compile(
    r"(?:^|(?<=[.!?\n]))\s*(?:bitte\s+)?(?:merk\s+dir|merken\s+sie\s+sich|vergiss\s+nicht|souviens-toi|rappelle-toi"
    r"|retiens|n'oublie\s+pas|recuerda|acu[ée]rdate|no\s+olvides|lembra|lembre-se|n[ãa]o\s+esque[çc]a|ricorda(?:ti)?"
    r"|non\s+dimenticare|onthoud|vergeet\s+niet)\b[\s,]*(?:dass|que|de\s+que|che|dat|de|di)?\s*(?P<what>[^.!?\n]*)",
    re.IGNORECASE,
)
_CJK_REQUEST = re.compile(r"[^。！？!?\n]*(?:记住|記住|请记得|請記得|覚えておいて|覚えといて|覚えてて)[^。！？!?\n]*")
_REMINISCING = re.compile(r"^(?:when|how|the\s+time|last\s+time|what|who|where|if|whether)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_STOP_WORDS = (
    """the and that this with for from have has had are was were they them their you your about into been being
    very really just also some when what which who will would could should does did not but like more most much
    user users said says told tell remember forget keep mind note please that's it's i'm i've"""
)
_STOP = frozenset(_STOP_WORDS.split())


def asked_to_remember(text: str) -> list[str]:
    """What the user asks to be remembered in one message of theirs: the words after each request (empty for
    "remember when ...", which recalls rather than asks)."""
    found: list[str] = []
    for pattern in (_REQUEST, _FOREIGN_REQUEST):
        for match in pattern.finditer(text):
            what = match.group("what").strip()
            if what and not _REMINISCING.match(what):
                found.append(what)
    found += [match.group(0).strip() for match in _CJK_REQUEST.finditer(text)]
    return found


def _words(text: str) -> set[str]:
    return {word for word in (w.lower() for w in _WORD.findall(text)) if word not in _STOP}


_QUOTED_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_MIN_QUOTE = 4  # words: a shorter run shared with the user's message is a phrase, not a quote


def _quoted_runs(text: str, said: str) -> list[str]:
    """The runs of at least `_MIN_QUOTE` words that `text` repeats from `said`, longest first, each as `said`'s
    words joined by spaces."""
    mine = [word.lower() for word in _QUOTED_WORD.findall(text)]
    theirs = _QUOTED_WORD.findall(said)
    lowered = [word.lower() for word in theirs]
    runs: dict[tuple[int, int], None] = {}
    for i in range(len(mine)):
        for j in range(len(lowered)):
            if mine[i] != lowered[j] or (i and j and mine[i - 1] == lowered[j - 1]):
                continue  # not the start of a run
            length = 0
            while i + length < len(mine) and j + length < len(lowered) and mine[i + length] == lowered[j + length]:
                length += 1
            if length >= _MIN_QUOTE:
                runs[(j, j + length)] = None
    return [" ".join(theirs[start:end]) for start, end in sorted(runs, key=lambda run: run[0] - run[1])]


@dataclass(frozen=True, slots=True)
class Requests:
    """The sensitive data one write may keep: `asked`, what the user asked in this batch to remember (covers facts
    of the same category or sharing its words); `known`, what memory already holds with the user's leave (covers
    summary sentences sharing its words, so a summary may restate a kept fact). `withheld_said`: what the user said
    in this batch that reads as sensitive and was not asked to be kept; a summary sentence that quotes a sensitive
    run of it is dropped however the rest of the sentence reads ("They heard: <a reply echoing it>")."""

    asked: tuple[str, ...] = ()
    known: tuple[str, ...] = ()
    withheld_said: tuple[str, ...] = ()

    def quotes_withheld(self, text: str) -> bool:
        """Whether `text` repeats, word for word, a part of a withheld message that reads as sensitive on its own."""
        return any(
            not self.covers_all(run, categories_in(run))  # an ordinary run states no category: covered
            for said in self.withheld_said
            for run in _quoted_runs(text, said)
        )

    def covers(self, text: str, category: str) -> bool:
        """May `text`, which states `category`, be kept?"""
        words = _words(text)
        for request in self.asked:
            # a category the patterns name: "remember that I have diabetes" keeps that batch's health facts; a request
            # only the trained reader finds ("remember I got a hardship fund grant") keeps what shares its words
            requested = categories_in(request) - {SENSITIVE_UNSPECIFIED}
            if requested:
                if category in requested or category == SENSITIVE_UNSPECIFIED:
                    return True
            elif words & _words(request):  # "remember I'm seeing Dr. Patel": what shares its words
                return True
        return any(  # shared words first: classifying every stored fact is the costly part
            words & _words(known) and (category == SENSITIVE_UNSPECIFIED or category in categories_in(known))
            for known in self.known
        )

    def covers_all(self, text: str, categories: Iterable[str]) -> bool:
        return all(self.covers(text, category) for category in categories)

    def knowing(self, texts: Iterable[str]) -> Requests:
        """These requests, plus stored texts a summary may restate (each licenses only the categories it states
        itself, so an ordinary stored fact licenses nothing)."""
        return Requests(self.asked, self.known + tuple(texts), self.withheld_said)


NO_REQUESTS = Requests()


def requests_in(turns: Sequence[Turn], user_id: int) -> Requests:
    """The requests to remember in the user's own turns of one batch (never the bot's or another person's), and
    those of the user's turns that read as sensitive without such a request."""
    own = [turn.text for turn in turns if turn.role == "user" and turn.author_id == user_id]
    asked = Requests(tuple(what for text in own for what in asked_to_remember(text)))
    withheld = tuple(text for text in own if not asked.covers_all(text, categories_in(text)))
    return dataclasses.replace(asked, withheld_said=withheld)


def fact_withheld(content: str, marked: str | None, requests: Requests) -> str | None:
    """Why a fact the model proposes must not be stored ("API key", "health", ...), or None to store it.

    `marked` is the model's own mark (`sensitive.marked_category`); the backstop classifies what it left
    unmarked."""
    kind = credential_kind(content)
    if kind is not None:
        return kind
    categories = categories_in(content) | ({marked} if marked else set())
    missing = sorted(category for category in categories if not requests.covers(content, category))
    return missing[0] if missing else None


_SENTENCE = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+|$)")


def summary_kept(text: str, requests: Requests) -> str:
    """`text` without its sentences that hold a credential or sensitive data the requests do not cover."""
    text = without_credential_sentences(text)
    sentences = [match.group(0).strip() for match in _SENTENCE.finditer(text) if match.group(0).strip()]
    together = credentials_together(sentences)  # "Changed the wifi password. It is now sunflower42."
    return " ".join(
        sentence for sentence, held in zip(sentences, together, strict=True)
        if not held and requests.covers_all(sentence, categories_in(sentence))
        and not requests.quotes_withheld(sentence)
    )


def credentials_together(texts: Sequence[str]) -> list[bool]:
    """For each of `texts` (the new facts of one write, or a summary's sentences), whether it holds a credential
    alone or read with the others: a model may split one over two facts as a person splits it over messages."""
    return [bool(found) for found in batch_findings(texts)]


def credential_refusal(text: str) -> Phrase | None:
    """One line refusing text the user typed that holds a credential (naming its kind, never the value), or
    None when it holds none."""
    kind = credential_kind(text)
    if kind is None:
        return None
    return Phrase(
        "I can't store that: it looks like it contains {kind}, and I never keep passwords, keys, tokens, card or "
        "bank account numbers. Leave the secret out and try again.",
        kind=named_kind(kind),
    )


def redacted_together(
    waiting: Sequence[Turn], turns: Sequence[Turn], user_id: int, *, shown: Sequence[str] = ()
) -> list[Turn]:
    """`turns` with each credential cut out, reading the user's own words of `waiting` (their turns of the same
    conversation not extracted yet) and of `turns` as one batch: a password named in one message and given in the
    next is cut from the one that holds it. A value cut from the user's words is cut from the other turns too (a
    reply that repeats it), and so is one found in `shown`, the earlier messages the reply was written from (read
    as a batch of their own): a reply quoting a secret from the channel's history never reaches the queue."""
    def mine(items: Sequence[Turn]) -> list[Turn]:
        return [turn for turn in items if turn.role == "user" and turn.author_id == user_id]

    # Only the last few waiting turns can name what a new one gives, so a long burst costs each arrival the same.
    own = [*mine(waiting)[-FOLLOWING:], *mine(turns)]
    texts = [turn.text for turn in own]
    found = dict(zip((id(turn) for turn in own), batch_findings(texts), strict=True))
    values = {turn.text[f.start : f.end]: f.kind for turn in own for f in found[id(turn)]}
    earlier = list(shown)
    quoted = {
        text[f.start : f.end]: f.kind
        for text, findings in zip(earlier, batch_findings(earlier) if earlier else [], strict=True)
        for f in findings
    }
    result: list[Turn] = []
    for turn in turns:
        if id(turn) in found:  # the user's own words: what they give is cut where it stands, what was quoted too
            text = _without(cut(turn.text, found[id(turn)]), quoted)
        else:
            text = _without(redact(turn.text), values | quoted)
        result.append(turn if text == turn.text else dataclasses.replace(turn, text=text))
    return result


_EDGE_PUNCTUATION = "!?.,;:'\"`*~()[]{}<>"
_SHORTEST_BODY = 4  # a shorter body ("abc" of "abc!") is too likely an ordinary word to cut from every turn


def _not_in_run(char: str, *, ahead: bool) -> str:
    """A lookaround that no digit (after a digit `char`) or letter (after a letter) stands beside; else nothing."""
    run = r"\d" if char.isdigit() else r"[^\W\d_]" if char.isalpha() else ""
    return "" if not run else rf"(?!{run})" if ahead else rf"(?<!{run})"


def _without(text: str, values: dict[str, str]) -> str:
    """`text` with each of these values replaced by its marker, the longest first, but not out of a longer run of
    digits or letters ("tag-4" stays in "tag-46"); glued to another kind of character it is cut ("hunter2s"). A
    value's body without the punctuation at its ends is cut too: a model that repeats "Walrus741y!" may drop the
    "!"."""
    bodies = {value.strip(_EDGE_PUNCTUATION): kind for value, kind in values.items()}
    values = {**{body: kind for body, kind in bodies.items() if len(body) >= _SHORTEST_BODY}, **values}
    for value in sorted(values, key=len, reverse=True):
        before, after = _not_in_run(value[:1], ahead=False), _not_in_run(value[-1:], ahead=True)
        marker = f"[{values[value]} removed]"  # kinds are plain words: nothing a template would expand
        text = re.sub(before + re.escape(value) + after, marker, text)
    return text


def for_the_queue(turns: Sequence[Turn], user_id: int) -> list[Turn]:
    """`turns`, already cut by `redacted_together`, as the queue of pending turns keeps them: a message of the
    user's that is nothing but one password-like word is cut there too, and that word from the other turns (a
    reply that repeats it). The turns kept in RAM hold it for the extraction, which reads the batch whole and cuts
    it if a later message named it; after a restart it comes back cut."""
    values = {
        turn.text[f.start : f.end]: f.kind
        for turn in turns
        if turn.role == "user" and turn.author_id == user_id
        for f in held_back(turn.text)
    }
    if not values:
        return list(turns)
    result: list[Turn] = []
    for turn in turns:
        text = _without(turn.text, values)
        result.append(turn if text == turn.text else dataclasses.replace(turn, text=text))
    return result
