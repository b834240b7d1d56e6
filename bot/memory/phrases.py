"""Words the engine says to a user, kept translatable: an English template with named placeholders, and its values.

The engine never translates (it knows no languages and no Discord); it says what it means as a `Phrase`, and
`str(phrase)` is the English line. The application translates a phrase for its reader: the template is the message
id of its catalogs, and a value that is itself a `Phrase` (a kind of file, a kind of secret) is translated the same
way. Numbers stay numbers, so the application can write them the reader's way. A template never holds user text:
what the user wrote is a value, so it can never be read as a template.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


class Phrase:
    """`Phrase("You have no fact with the id `{fact_id}`.", fact_id="fact_1a2b")`: immutable, compared by value."""

    __slots__ = ("template", "values")

    template: str
    values: Mapping[str, str | int | float | Phrase]

    def __init__(self, template: str, /, **values: str | int | float | Phrase) -> None:
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "values", MappingProxyType(dict(values)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a Phrase is immutable")

    def __str__(self) -> str:
        """The English line."""
        return self.template.format_map({name: str(value) for name, value in self.values.items()})

    def __repr__(self) -> str:
        return f"Phrase({self.template!r}, {dict(self.values)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Phrase):
            return NotImplemented
        return self.template == other.template and dict(self.values) == dict(other.values)

    def __hash__(self) -> int:
        return hash((self.template, tuple(sorted(self.values.items(), key=lambda item: item[0]))))
