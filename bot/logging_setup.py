"""Logging: one readable line per event on stderr, level from LOG_LEVEL, secrets redacted.

Library loggers that print request URLs or payload details at INFO (httpx, discord's gateway chatter) are kept at
WARNING unless LOG_LEVEL is DEBUG, so INFO stays a log of ids and counts. Every formatted line (tracebacks
included) passes through a redactor that replaces the token and API key values, whatever logged them; warnings
and uncaught exceptions (main thread or any other) are logged too, so they cannot print around it.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterable
from types import TracebackType

_NOISY = ("httpx", "httpcore", "openai", "discord.gateway", "discord.client", "discord.http", "aiohttp")
REDACTED = "[redacted]"


class RedactingFormatter(logging.Formatter):
    """Formats as usual, then blanks out any secret value that made it into the text."""

    def __init__(self, fmt: str, datefmt: str, secrets: Iterable[str]) -> None:
        super().__init__(fmt, datefmt)
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text


def _log_uncaught(kind: str) -> Callable[..., None]:
    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None, *_: object) -> None:
        logging.getLogger("bot").critical("uncaught exception in %s", kind, exc_info=(exc_type, exc, tb))

    return hook


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is not None:
        name = args.thread.name if args.thread is not None else "a thread"
        _log_uncaught(f"thread {name}")(args.exc_type, args.exc_value, args.exc_traceback)


def configure_logging(level: str, *, secrets: Iterable[str] = ()) -> None:
    """Route everything that can print (log records, warnings, uncaught exceptions) through the redactor."""
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught("the main thread")
    threading.excepthook = _log_uncaught_in_thread
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        RedactingFormatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S", secrets)
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in _NOISY:
        logging.getLogger(name).setLevel(logging.DEBUG if level == "DEBUG" else logging.WARNING)
