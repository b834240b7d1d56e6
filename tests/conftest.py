"""Shared fixtures. The Chat Completions test server lives in `tests/llm_server.py`, the PostgreSQL one in
`tests/postgres.py`."""

pytest_plugins = ["tests.conftest_llm", "tests.conftest_postgres", "tests.conftest_state"]
