"""Pytest fixtures for the real PostgreSQL server; tests/conftest.py pulls them in (``pytest_plugins``).

Without the server binaries, a test that needs them fails with one line saying what to install: CI must never
skip them silently. ``MEMORY_BOT_NO_POSTGRES=1`` skips them instead, for a local run without PostgreSQL.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator

import pytest

from tests.postgres import PostgresServer, PostgresUnavailable

SKIP_VARIABLE = "MEMORY_BOT_NO_POSTGRES"
_database_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One started server per test session (per pytest-xdist worker); stopped and removed at the end."""
    if os.environ.get(SKIP_VARIABLE) == "1":
        pytest.skip(f"{SKIP_VARIABLE}=1: PostgreSQL tests skipped")
    try:
        server = PostgresServer()
    except PostgresUnavailable as error:
        unavailable = str(error)
    else:
        unavailable = ""
    if unavailable:  # failed outside the except block, so the report is this one line, not a chain
        pytest.fail(f"{unavailable} (or set {SKIP_VARIABLE}=1 to skip the PostgreSQL tests)", pytrace=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(request: pytest.FixtureRequest, postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a fresh, empty database for this test alone; dropped afterwards (with any connection left)."""
    slug = re.sub(r"[^a-z0-9_]+", "_", request.node.name.lower()).strip("_")
    name = f"t{next(_database_numbers)}_{slug}"[:63]
    url = postgres_server.create_database(name)
    yield url
    postgres_server.drop_database(name)
