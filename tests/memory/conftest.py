"""Fixtures of the storage contract tests: `url` (the database of the `backend` under test, None for files) and
`storage` (that backend, opened by its one builder)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.memory.storage_backends import Storage, open_storage


@pytest.fixture
def url(backend: str, request: pytest.FixtureRequest) -> str | None:
    return str(request.getfixturevalue("postgres_url")) if backend == "postgres" else None


@pytest.fixture
async def storage(backend: str, url: str | None, tmp_path: Path) -> AsyncIterator[Storage]:
    async with open_storage(backend, tmp_path, url) as opened:
        yield opened
