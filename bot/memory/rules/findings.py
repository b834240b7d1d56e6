"""What the credential rules report: a `Finding` (the kind of secret and its span), the kinds' names, and how
overlapping findings join. Shared by the single-text rules and the rules that read messages together."""

from __future__ import annotations

from dataclasses import dataclass

from bot.memory.phrases import Phrase

API_KEY = "API key"
TOKEN = "token"  # noqa: S105 -- a kind's name
PASSWORD = "password"  # noqa: S105 -- a kind's name
CARD = "card number"
IBAN = "IBAN"
PRIVATE_KEY = "private key"
_NAMED = {
    API_KEY: Phrase("an API key"), TOKEN: Phrase("a token"), PASSWORD: Phrase("a password"),
    CARD: Phrase("a card number"), IBAN: Phrase("an IBAN"), PRIVATE_KEY: Phrase("a private key"),
}


def named_kind(kind: str) -> Phrase:
    """A kind of secret as a user reads it: "a password", "an API key"."""
    return _NAMED.get(kind) or Phrase(kind)


@dataclass(frozen=True, slots=True)
class Finding:
    """One credential: what kind, and where (`text[start:end]` is the secret itself)."""

    kind: str
    start: int
    end: int


def merged(findings: list[Finding]) -> list[Finding]:
    """Sorted, overlapping spans joined (the earlier finding's kind wins)."""
    joined: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if joined and finding.start < joined[-1].end:
            last = joined[-1]
            joined[-1] = Finding(last.kind, last.start, max(last.end, finding.end))
        else:
            joined.append(finding)
    return joined
