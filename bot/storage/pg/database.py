"""One bounded asyncpg pool per process, with server-side statement timeouts and retries across reconnects.

- The pool never holds more than `size` connections, so many processes stay within the server's limit. Waiting
  for a free connection is bounded too (`acquire_timeout`, the statement timeout unless told): a pool that stays
  exhausted costs the work waiting for it (`StorageUnavailable`), never the process. No unit of work holds one
  pooled connection while it waits for a second, so even a pool of one cannot deadlock.
- Every statement runs under `statement_timeout` (set by the server per connection), and a transaction left
  idle is ended by `idle_in_transaction_session_timeout`, so a stuck process cannot hold a user's lock forever.
- A connection the server or the network dropped is replaced by the pool on the next acquire; `run` retries a
  whole unit of work on such errors (a transaction either committed or did not, so retrying it is safe).
- Errors reach callers as `StorageUnavailable`, an `OSError`, so the engine treats a lost database like a full
  disk: the turn stays pending and is tried again later. Messages never contain the URL (it may hold a password).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import asyncpg

from bot.storage.errors import StorageUnavailable

log = logging.getLogger(__name__)

PAGE_ROWS = 5_000  # rows per page of a whole-table read (`fetch_pages`)
_T = TypeVar("_T")

RETRY_ATTEMPTS = 4
CONNECT_TIMEOUT_SECONDS = 10.0
RETRY_BASE_SECONDS = 0.2

# Errors after which the same work may succeed on a fresh connection.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.TooManyConnectionsError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    ConnectionError,
    OSError,
    TimeoutError,
)
_DATABASE_ERRORS: tuple[type[BaseException], ...] = (asyncpg.PostgresError, *TRANSIENT_ERRORS)


async def _keep_session(conn: asyncpg.Connection) -> None:
    """What the pool does to a connection it gets back, beyond ending any open transaction (which it always does):
    nothing. asyncpg's default resets the session (unlisten, unlock advisory locks, RESET ALL), one more round trip
    per unit of work; this code leaves no session state behind (its locks end with their transaction, the migration
    lock is released explicitly, and notifications are listened for on a connection of their own)."""


class _Transaction(AsyncExitStack):
    """A pooled connection and its open transaction, unwound together."""

    connection: asyncpg.Connection


def describe_url(url: str) -> str:
    """`host:port/database` of a URL, for messages: never the user name or password."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a malformed host or port: say nothing more of it
        return "(an unparsable DATABASE_URL)"
    return f"{host}{port}{parts.path or '/'}"


def database_secrets(url: str) -> list[str]:
    """What of DATABASE_URL must never reach a log: the whole URL and its password (as written and decoded)."""
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    return [url] + ([password, unquote(password)] if password else [])


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


# What an operator should hear for the errors a wrong URL or an unready server gives (PostgreSQL's own messages
# could quote data, so only these fixed phrases are used).
_SQLSTATE_REASONS = {
    "22P05": "text PostgreSQL cannot store (a NUL character)",
    "28P01": "password authentication failed",
    "28000": "the role does not exist or may not connect",
    "3D000": "the database does not exist",
    "42501": "permission denied",
    "53300": "too many connections",
    "57P03": "the server is starting up or shutting down",
}


def reason_of(error: BaseException) -> str:
    """A short, secret-free description of a database error."""
    if isinstance(error, asyncpg.PostgresError):
        sqlstate = getattr(error, "sqlstate", "?")
        phrase = _SQLSTATE_REASONS.get(sqlstate, type(error).__name__)
        return f"{phrase} ({sqlstate})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return type(error).__name__


class Database:
    """The process's pool. `open()` connects (raising `StorageUnavailable` with one line), `close()` waits for
    connections to be returned."""

    def __init__(
        self,
        url: str,
        *,
        size: int = 10,
        statement_timeout: float = 10.0,
        acquire_timeout: float | None = None,
        application_name: str = "memory-bot",
    ) -> None:
        self.url = url
        self.size = size
        self.statement_timeout = statement_timeout
        self.acquire_timeout = acquire_timeout if acquire_timeout is not None else statement_timeout
        self.application_name = application_name
        self._pool: asyncpg.Pool | None = None
        self._closers: list[Callable[[], Awaitable[None]]] = []

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Run `closer` first when the database closes (what holds connections of its own, such as the process's
        listening connection, goes before the pool)."""
        self._closers.append(closer)

    @property
    def where(self) -> str:
        return describe_url(self.url)

    async def open(self) -> None:
        if self._pool is not None:
            return
        timeout_ms = str(int(self.statement_timeout * 1000))
        try:
            self._pool = await asyncpg.create_pool(
                self.url,
                min_size=1,
                max_size=self.size,
                # The client gives up a little after the server would have: the server's timeout is the rule.
                command_timeout=self.statement_timeout + 5,
                max_inactive_connection_lifetime=300,
                timeout=CONNECT_TIMEOUT_SECONDS,  # a host that drops packets fails at start, not a minute later
                reset=_keep_session,
                server_settings={
                    "application_name": self.application_name,
                    "statement_timeout": timeout_ms,
                    "lock_timeout": timeout_ms,
                    "idle_in_transaction_session_timeout": str(int(self.statement_timeout * 3000)),
                },
            )
        except _DATABASE_ERRORS as error:
            raise StorageUnavailable(f"cannot connect to PostgreSQL at {self.where}: {reason_of(error)}") from None
        except (ValueError, OverflowError) as error:  # a malformed URL (a port past 65535 is an OverflowError)
            raise StorageUnavailable(f"DATABASE_URL is not a valid PostgreSQL URL ({type(error).__name__})") from None

    async def close(self) -> None:
        closers, self._closers = self._closers, []
        for closer in closers:
            await closer()
        pool, self._pool = self._pool, None
        if pool is not None:
            try:
                await asyncio.wait_for(pool.close(), timeout=10)
            except TRANSIENT_ERRORS:
                pool.terminate()

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StorageUnavailable("the database is not open")
        return self._pool

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncpg.Connection]:
        """A pooled connection, waited for at most `acquire_timeout`: `StorageUnavailable` when none came free (the
        pool is exhausted, or a new connection could not be made in time)."""
        try:
            acquired = await self.pool.acquire(timeout=self.acquire_timeout)
        except TimeoutError:
            raise StorageUnavailable(
                f"no database connection free within {self.acquire_timeout:g}s (a pool of {self.size})"
            ) from None
        try:
            yield acquired
        finally:
            await self.pool.release(acquired)

    @asynccontextmanager
    async def transaction(
        self, prepare: Callable[[asyncpg.Connection], Awaitable[object]] | None = None
    ) -> AsyncIterator[asyncpg.Connection]:
        """A pooled connection inside one transaction, committed when the body returns, rolled back when it raises.

        Getting there (acquiring, BEGIN, then `prepare`, e.g. taking a lock) is retried like `run` when the
        connection turns out dead, which the pool only finds out by using it; the body itself runs once.
        """
        stack = await self._begin(prepare)
        try:
            async with stack:
                yield stack.connection
        except StorageUnavailable:
            raise
        except _DATABASE_ERRORS as error:
            raise StorageUnavailable(f"database error: {reason_of(error)}") from error

    async def _begin(self, prepare: Callable[[asyncpg.Connection], Awaitable[object]] | None) -> _Transaction:
        for attempt in range(RETRY_ATTEMPTS):
            stack = _Transaction()
            try:
                conn = await stack.enter_async_context(self.connection())
                await stack.enter_async_context(conn.transaction())
                if prepare is not None:
                    await prepare(conn)
            except StorageUnavailable:  # no connection came free in time: waiting again would only wait longer
                await stack.aclose()
                raise
            except TRANSIENT_ERRORS as error:
                with contextlib.suppress(*_DATABASE_ERRORS):
                    await stack.aclose()
                if attempt + 1 == RETRY_ATTEMPTS:
                    raise StorageUnavailable(f"database unreachable: {reason_of(error)}") from error
                await self._backoff(attempt, error)
                continue
            except asyncpg.PostgresError as error:
                with contextlib.suppress(*_DATABASE_ERRORS):
                    await stack.aclose()
                raise StorageUnavailable(f"database error: {reason_of(error)}") from error
            except BaseException:
                await stack.aclose()
                raise
            stack.connection = conn
            return stack
        raise AssertionError("unreachable")

    @staticmethod
    async def _backoff(attempt: int, error: BaseException) -> None:
        delay = RETRY_BASE_SECONDS * 2**attempt * (0.5 + random.random())
        log.warning("database: %s; retrying in %.1fs", reason_of(error), delay)
        await asyncio.sleep(delay)

    async def run(
        self, work: Callable[[asyncpg.Connection], Awaitable[_T]], *, transaction: bool = True
    ) -> _T:
        """Run `work` on a pooled connection (in a transaction unless told otherwise), retried a few times with
        jittered backoff when the connection fails; other errors are raised at once."""
        for attempt in range(RETRY_ATTEMPTS):
            try:
                async with self.connection() as conn:
                    if not transaction:
                        return await work(conn)
                    async with conn.transaction():
                        return await work(conn)
            except StorageUnavailable:
                raise
            except TRANSIENT_ERRORS as error:
                if attempt + 1 == RETRY_ATTEMPTS:
                    raise StorageUnavailable(f"database unreachable: {reason_of(error)}") from error
                await self._backoff(attempt, error)
            except asyncpg.PostgresError as error:
                raise StorageUnavailable(f"database error: {reason_of(error)}") from error
        raise AssertionError("unreachable")

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        return await self.run(lambda conn: conn.fetch(query, *args), transaction=False)

    async def fetch_pages(self, query: str, *, page: int | None = None) -> AsyncIterator[list[asyncpg.Record]]:
        """Every row of a whole-table `query`, one page per statement, yielding to the loop between pages, so a
        million rows never hold the loop (or one connection) for the whole read. `query` takes `$1`, the first
        column of the last row seen (NULL at first), and `$2`, the page size, and orders by that column: keyset
        paging, `WHERE $1::bigint IS NULL OR id > $1 ORDER BY id LIMIT $2`."""
        last: Any = None
        size = page or PAGE_ROWS
        while True:
            rows = await self.fetch(query, last, size)
            yield rows
            if len(rows) < size:
                return
            last = rows[-1][0]
            await asyncio.sleep(0)

    async def fetchval(self, query: str, *args: Any) -> Any:
        return await self.run(lambda conn: conn.fetchval(query, *args), transaction=False)

    async def execute(self, query: str, *args: Any) -> str:
        return await self.run(lambda conn: conn.execute(query, *args), transaction=False)
