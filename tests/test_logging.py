"""Logging set-up (bot/logging_setup.py): secrets redacted everywhere, noisy libraries quiet at INFO."""

from __future__ import annotations

import io
import logging
import sys
import threading
import warnings
from collections.abc import Iterator

import pytest

from bot.logging_setup import _NOISY, PAYLOAD_LOGGERS, REDACTED, RedactingFormatter, configure_logging

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
API_KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in _NOISY + PAYLOAD_LOGGERS}
    hooks = sys.excepthook, threading.excepthook
    yield
    root.handlers[:], root.level = saved[0], saved[1]
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    sys.excepthook, threading.excepthook = hooks
    logging.captureWarnings(False)


def capture(name: str) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(RedactingFormatter("%(levelname)s %(name)s: %(message)s", "%H:%M:%S", [TOKEN, API_KEY]))
    logger = logging.getLogger(name)
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_secrets_are_removed_from_messages_and_arguments() -> None:
    log, out = capture("test.redact.messages")
    log.info("token is %s", TOKEN)
    log.warning(f"headers: Authorization: Bearer {API_KEY}; Bot {TOKEN}")
    log.debug("request %r", {"api_key": API_KEY, "nested": [TOKEN]})
    text = out.getvalue()
    assert TOKEN not in text and API_KEY not in text
    assert text.count(REDACTED) == 5
    assert "Authorization: Bearer [redacted]" in text


def test_secrets_are_removed_from_tracebacks() -> None:
    log, out = capture("test.redact.traceback")

    def login(token: str) -> None:
        raise PermissionError(f"401 Unauthorized for token {token}")

    try:
        try:
            login(TOKEN)
        except PermissionError as error:
            raise RuntimeError(f"while using key {API_KEY}") from error
    except RuntimeError:
        log.exception("start-up failed")
    text = out.getvalue()
    assert "Traceback (most recent call last)" in text and "PermissionError" in text
    assert TOKEN not in text and API_KEY not in text
    assert text.count(REDACTED) == 2


def test_stack_info_is_redacted_too() -> None:
    log, out = capture("test.redact.stack")
    log.info("where: %s", API_KEY, stack_info=True)
    assert "Stack (most recent call last)" in out.getvalue()
    assert API_KEY not in out.getvalue()


def test_short_or_empty_secrets_do_not_redact_everything() -> None:
    formatter = RedactingFormatter("%(message)s", "%H:%M:%S", ["", "abc", TOKEN])
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "abc def", None, None)
    assert formatter.format(record) == "abc def"


def test_a_secret_inside_a_longer_one_is_fully_redacted() -> None:
    inner = API_KEY[:20]
    formatter = RedactingFormatter("%(message)s", "%H:%M:%S", [inner, API_KEY])
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "k=%s", (API_KEY,), None)
    assert formatter.format(record) == f"k={REDACTED}"


def test_configure_logging_redacts_whatever_logs(restore_logging: None, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", secrets=[TOKEN, API_KEY])
    logging.getLogger("some.library").error("connect failed with %s", TOKEN)
    logging.getLogger("bot").info("key %s", API_KEY)
    err = capsys.readouterr().err
    assert err.count(REDACTED) == 2
    assert TOKEN not in err and API_KEY not in err
    assert len(logging.getLogger().handlers) == 1


def test_noisy_loggers_are_quiet_at_info(restore_logging: None, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO")
    for name in ("httpx", "httpcore", "openai", "discord.gateway", "discord.http", "discord.client"):
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING, name
    logging.getLogger("httpx").info('HTTP Request: POST https://api.openai.com/v1/chat/completions "200 OK"')
    logging.getLogger("bot").info("ours")
    err = capsys.readouterr().err
    assert "HTTP Request" not in err and "ours" in err


def test_debug_keeps_payload_loggers_at_info_unless_prompts_are_asked_for(restore_logging: None) -> None:
    configure_logging("DEBUG")
    assert logging.getLogger().level == logging.DEBUG
    for name in _NOISY:
        expected = logging.INFO if name in PAYLOAD_LOGGERS else logging.DEBUG
        assert logging.getLogger(name).getEffectiveLevel() == expected, name
    assert logging.getLogger("bot").getEffectiveLevel() == logging.DEBUG
    configure_logging("DEBUG", log_prompts=True)
    assert all(logging.getLogger(name).getEffectiveLevel() == logging.DEBUG for name in _NOISY + PAYLOAD_LOGGERS)
    configure_logging("INFO", log_prompts=True)  # LOG_PROMPTS alone changes nothing
    assert all(logging.getLogger(name).getEffectiveLevel() >= logging.INFO for name in _NOISY + PAYLOAD_LOGGERS)


def test_warnings_and_uncaught_exceptions_cannot_print_around_the_redactor(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("INFO", secrets=[TOKEN, API_KEY])
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(f"deprecated call with key {API_KEY}", UserWarning, stacklevel=1)

    def crash() -> None:
        raise RuntimeError(f"worker died holding {TOKEN}")

    worker = threading.Thread(target=crash, name="worker")
    worker.start()
    worker.join()
    try:
        raise ValueError(f"bad key {API_KEY}")
    except ValueError:
        sys.excepthook(*sys.exc_info())
    err = capsys.readouterr().err
    assert "deprecated call" in err and "uncaught exception in thread worker" in err
    assert "uncaught exception in the main thread" in err and "ValueError" in err
    assert TOKEN not in err and API_KEY not in err
    assert err.count(REDACTED) == 3
