"""Pytest fixture for the fake OpenAI server; tests/conftest.py pulls it in (``pytest_plugins``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.llm_server import ChatServer


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A started ChatServer, fresh per test so no scripted answer or record leaks between tests."""
    with ChatServer() as server:
        yield server
