"""A fact's vector: the meaning of its words as numbers, kept with the fact (`Fact.vector`, `Fact.vectorModel`).

Kept with the fact, a vector goes wherever the fact goes and nowhere else: it is learned in the fact's place, sealed
with the memory under `MEMORY_ENCRYPTION_KEY`, removed by every forget, delete and retention path that removes the
fact, and never exported or shown. Compact: each component scaled so the largest is 127 and stored as int8, base64
in the JSON (384 dimensions take 512 characters); cosine similarity does not depend on scale, so none is kept.

A vector belongs to the words it was computed from (`keep_true`, applied by the write gate): a new fact, or one whose
words changed, has none, whoever wrote it, until the vector keeper (`bot.memory.parts.vector_keeper`) computes it. So a
vector can never describe words the fact no longer holds, nor ride along into a copy the place rule made.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from bot.memory.models import VECTOR_FIELDS, Fact, MemoryFile

INT8_MAX = 127
VectorLike = NDArray[np.floating] | NDArray[np.int8] | Sequence[float]


def as_int8(vector: VectorLike) -> NDArray[np.int8]:
    """A vector's components scaled so the largest is 127, as int8 (an int8 vector is returned as it is; a zero
    or non-finite one as zeros)."""
    array = np.asarray(vector)
    if array.dtype == np.int8:
        same: NDArray[np.int8] = array.ravel()
        return same
    values = array.astype(np.float32).ravel()
    peak = float(np.max(np.abs(values))) if values.size else 0.0
    if peak <= 0 or not np.isfinite(peak):
        return np.zeros(values.shape, dtype=np.int8)
    scaled: NDArray[np.int8] = np.rint(values / peak * INT8_MAX).astype(np.int8)
    return scaled


def encode(vector: VectorLike) -> str:
    """`vector` as stored: int8 scaled to its largest component, base64."""
    return base64.b64encode(as_int8(vector).tobytes()).decode("ascii")


def decode(text: str) -> NDArray[np.int8] | None:
    """The stored vector's components, or None when there is none or it does not decode."""
    if not text:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return np.frombuffer(raw, dtype=np.int8) if raw else None


def dimensions_of(text: str) -> int:
    """How many components a stored vector holds (0 for none), from its length alone."""
    if not text:
        return 0
    return len(text) * 3 // 4 - text[-2:].count("=")


def is_current(fact: Fact, model: str, dimensions: int | None) -> bool:
    """The fact holds a vector of `model` (with `dimensions` components, when known)."""
    if not fact.vector or fact.vectorModel != model:
        return False
    return dimensions is None or dimensions_of(fact.vector) == dimensions


def needing(memory: MemoryFile, model: str, dimensions: int | None) -> list[Fact]:
    """The facts a reply may use (open ones) that lack a current vector of `model`."""
    return [fact for fact in memory.facts if not fact.closed and not is_current(fact, model, dimensions)]


def attach(fact: Fact, model: str, vector: VectorLike) -> None:
    fact.vector = encode(vector)
    fact.vectorModel = model


def clear(fact: Fact) -> None:
    fact.vector = ""
    fact.vectorModel = ""


def strip(fact: dict[str, object]) -> None:
    """Remove the vector fields from a fact as JSON (an export carries the user's words, not derived numbers)."""
    for name in VECTOR_FIELDS:
        fact.pop(name, None)


def keep_true(before: MemoryFile, after: MemoryFile) -> int:
    """Clear every vector in `after` that is not the one the same fact held, with the same words, in `before`;
    returns how many were cleared. Applied to every change but the vector keeper's own."""
    held = {fact.id: fact for fact in before.facts}
    cleared = 0
    for fact in after.facts:
        if not fact.vector and not fact.vectorModel:
            continue
        old = held.get(fact.id)
        if old is None or (old.content, old.vector, old.vectorModel) != (fact.content, fact.vector, fact.vectorModel):
            clear(fact)
            cleared += 1
    return cleared


def only_vectors(before: MemoryFile, after: MemoryFile) -> None:
    """Make `after` equal to `before` except for vectors set on facts whose words did not change: what the
    vector keeper may do, and all it may do."""
    changed = {fact.id: fact for fact in after.facts}
    restored = before.model_copy(deep=True)
    for fact in restored.facts:
        new = changed.get(fact.id)
        if new is not None and new.content == fact.content and new.vector and new.vectorModel:
            fact.vector, fact.vectorModel = new.vector, new.vectorModel
    for name in type(after).model_fields:
        setattr(after, name, getattr(restored, name))
