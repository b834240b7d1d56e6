"""Shared fixtures. The Chat Completions test server lives in `tests/llm_server.py`."""

pytest_plugins = ["tests.conftest_llm"]
