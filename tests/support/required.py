"""A server the tests need (PostgreSQL, the embedding model): opened, or skipped on request, or failed in one line.

CI must never skip such tests silently: without the server, a test that needs it fails with one line saying what
to install, unless the environment variable named for it is 1 (a local run on a machine without it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import pytest

S = TypeVar("S")


def required_server(
    open_server: Callable[[], S], *, unavailable: type[Exception], skip_variable: str, what: str
) -> S:
    """`open_server()`, or a skip when `skip_variable` is 1, or one failure line when it raises `unavailable`."""
    if os.environ.get(skip_variable) == "1":
        pytest.skip(f"{skip_variable}=1: {what} skipped")
    try:
        return open_server()
    except unavailable as error:
        problem = str(error)
    # Failed outside the except block, so the report is this one line, not a chain.
    pytest.fail(f"{problem} (or set {skip_variable}=1 to skip the {what})", pytrace=False)
