"""The file format of the trained readers' shipped weights: gzipped UTF-8 text, a header line then one row per
feature, fields separated by tabs. Written with a fixed gzip time, so the same rows always give the same bytes, and
read one line at a time, so a reader builds its tables without a second copy of the file in memory."""

from __future__ import annotations

import gzip
import io
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


def dumps_rows(header: Sequence[str], rows: Iterable[Sequence[str]]) -> bytes:
    lines = []
    for fields in (header, *rows):
        if any("\t" in field or "\n" in field for field in fields):  # the readers' features hold neither
            raise ValueError("a field of a weights file holds a tab or a newline")
        lines.append("\t".join(fields))
    return gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), mtime=0)


def read_rows(data: bytes) -> tuple[list[str], Iterator[list[str]]]:
    """The header's fields, and the rows' fields as they are read."""
    lines = io.TextIOWrapper(gzip.GzipFile(fileobj=io.BytesIO(data)), encoding="utf-8")
    header = lines.readline().rstrip("\n").split("\t")
    return header, (line.rstrip("\n").split("\t") for line in lines)


class Loaded(Generic[T]):
    """A reader built from its shipped file on first use, once, however many threads ask at the same time."""

    def __init__(self, path: Path, build: Callable[[bytes], T]) -> None:
        self._path, self._build = path, build
        self._lock = threading.Lock()
        self._value: T | None = None

    def get(self) -> T:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._build(self._path.read_bytes())
        return self._value
