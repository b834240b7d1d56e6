"""Logging: one readable line per event on stderr, level from LOG_LEVEL, secrets redacted, no message text.

Library loggers that print request URLs or payload details at INFO (httpx, discord's gateway chatter) are kept at
WARNING unless LOG_LEVEL is DEBUG, so INFO stays a log of ids and counts. At DEBUG the libraries that log whole
payloads (the OpenAI SDK's request options hold the prompt: message text and memory; discord.py's HTTP and
gateway debug lines hold messages) stay at INFO unless LOG_PROMPTS=true asks for them too, so DEBUG alone never
puts conversation text in the log. Every formatted line (tracebacks included) passes through a redactor that
replaces the token and API key values, whatever logged them; warnings and uncaught exceptions (main thread or any
other) are logged too, so they cannot print around it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import TextIO

_NOISY = ("httpx", "httpcore", "openai", "discord.gateway", "discord.client", "discord.http", "aiohttp")
PAYLOAD_LOGGERS = ("openai", "httpcore", "discord.gateway", "discord.http", "discord.webhook", "discord.state")
"""Loggers whose DEBUG lines carry message text or prompts."""
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


def _private_file(path: Path) -> TextIO:
    """Open `path` for appending, created readable by the owner only (the log may name users by id)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return open(descriptor, "a", encoding="utf-8", errors="replace", buffering=1)


def configure_logging(
    level: str, *, secrets: Iterable[str] = (), log_prompts: bool = False, log_file: Path | None = None
) -> None:
    """Route everything that can print (log records, warnings, uncaught exceptions) through the redactor.

    With `log_file` (the terminal console) the log goes there and only CRITICAL lines (an uncaught exception)
    reach stderr, so nothing lands in the middle of what the person is typing.
    """
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught("the main thread")
    threading.excepthook = _log_uncaught_in_thread
    formatter = RedactingFormatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S", secrets)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    handlers: list[logging.Handler] = [handler]
    if log_file is not None:
        handler.setLevel(logging.CRITICAL)
        to_file = logging.StreamHandler(_private_file(log_file))
        to_file.setFormatter(formatter)
        handlers.append(to_file)
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level)
    debug = level == "DEBUG"
    for name in _NOISY:
        logging.getLogger(name).setLevel(logging.DEBUG if debug else logging.WARNING)
    for name in PAYLOAD_LOGGERS:
        if debug and not log_prompts:
            logging.getLogger(name).setLevel(logging.INFO)
        elif name not in _NOISY:
            logging.getLogger(name).setLevel(logging.NOTSET)
