"""Shared fixtures. The Chat Completions test server lives in `tests/support/llm_server.py`, the PostgreSQL one in
`tests/support/postgres.py`."""

pytest_plugins = ["tests.conftest_llm", "tests.conftest_postgres", "tests.conftest_state", "tests.conftest_embeddings"]
