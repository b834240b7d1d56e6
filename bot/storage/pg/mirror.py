"""Small tables read on the hot path, mirrored in each process's RAM and kept in step across processes.

Pauses, privacy modes and the admins' memory switches are read for every message, so reads must not wait for
the database. Each such registry keeps a mirror of its table: loaded at `open()`, written through on every change
(the database first, then the mirror, so a change that failed to commit is never believed), and refreshed when
another process changes something:

- every change sends `NOTIFY <channel>, '<key>'` in its own transaction (delivered at commit), and one dedicated
  `LISTEN` connection per process (`Notifications`, shared by every mirror of a `Database`) re-reads that key;
- a periodic full reload (`refresh_seconds`) catches anything a notification missed, and a dropped listening
  connection is reconnected with backoff, then followed by a full reload (notifications sent meanwhile are lost).

All reloads of one mirror run one at a time, and a reload started before this process's own change to a key never
overwrites that key in the mirror: a read cannot move the mirror back behind a change it made itself.
"""

from __future__ import annotations

import asyncio
import logging
import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

import asyncpg

from bot.storage.errors import StorageUnavailable
from bot.storage.pg.database import TRANSIENT_ERRORS, Database, reason_of

log = logging.getLogger(__name__)
_ERRORS: tuple[type[BaseException], ...] = (asyncpg.PostgresError, *TRANSIENT_ERRORS)

REFRESH_SECONDS = 30.0
RECONNECT_MAX_SECONDS = 30.0

K = TypeVar("K")
V = TypeVar("V")


class Mirror(ABC, Generic[K, V]):
    """A table's rows in RAM, as `key -> value`, for one registry. Subclasses say how rows are read."""

    channel: str  # the NOTIFY channel of the table

    def __init__(self, database: Database) -> None:
        self.database = database
        self._rows: dict[K, V] = {}
        self._reload_lock = asyncio.Lock()
        self._writes = 0  # this process's committed changes, numbered
        self._written: dict[K, int] = {}  # key -> number of this process's latest change to it
        self._subscribed = False
        self._reloaded = asyncio.Condition()

    # --- for subclasses ------------------------------------------------------------------------------------

    @abstractmethod
    async def _fetch(self, conn: asyncpg.Connection, keys: list[K] | None) -> Mapping[K, V]:
        """The rows of `keys` (every row when None); a key without a row is absent from the answer."""

    @abstractmethod
    def _key_of(self, payload: str) -> K | None:
        """The key a notification names, or None when the payload is not one of ours."""

    @abstractmethod
    def _payload_of(self, key: K) -> str: ...

    async def _change(self, key: K, work: Callable[[asyncpg.Connection], Awaitable[V | None]]) -> V | None:
        """Run `work` (returning the key's new value, None for no row) in one transaction that also notifies the
        other processes, then put the value in the mirror. Raises `StorageUnavailable` with the mirror unchanged."""

        async def transaction(conn: asyncpg.Connection) -> V | None:
            value = await work(conn)
            await conn.execute("SELECT pg_notify($1, $2)", self.channel, self._payload_of(key))
            return value

        value = await self.database.run(transaction)
        self._writes += 1
        self._written[key] = self._writes
        self._put(key, value)
        return value

    def _put(self, key: K, value: V | None) -> None:
        if value is None:
            self._rows.pop(key, None)
        else:
            self._rows[key] = value

    # --- lifecycle -----------------------------------------------------------------------------------------

    async def open(self) -> None:
        """Start listening (so no change made from now on is missed), then load every row."""
        if not self._subscribed:
            await notifications_of(self.database).subscribe(self)
            self._subscribed = True
        await self.reload()

    async def close(self) -> None:
        """Stop following other processes' changes (the mirror keeps what it holds)."""
        if self._subscribed:
            notifications_of(self.database).unsubscribe(self)
            self._subscribed = False

    # --- refreshing ----------------------------------------------------------------------------------------

    async def reload(self, keys: Iterable[K] | None = None) -> None:
        """Re-read `keys` (every row when None) into the mirror, except keys this process changed meanwhile."""
        wanted = None if keys is None else list(dict.fromkeys(keys))
        async with self._reload_lock:
            started = self._writes
            rows = await self.database.run(lambda conn: self._fetch(conn, wanted), transaction=False)
            targets = set(self._rows) | set(rows) if wanted is None else set(wanted)
            for key in targets:
                if self._written.get(key, 0) > started:
                    continue  # changed here after the read began: the mirror already holds something newer
                self._put(key, rows.get(key))
            self._written = {key: n for key, n in self._written.items() if n > started}
        async with self._reloaded:
            self._reloaded.notify_all()

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Return once `predicate()` holds, checking it after every reload (callers bound the wait)."""
        async with self._reloaded:
            await self._reloaded.wait_for(predicate)

    def notified(self, payload: str) -> K | None:
        return self._key_of(payload)


class Notifications:
    """One `LISTEN` connection per process for every mirror of a `Database`, and their periodic full reload.

    One task does all the work, so the reloads of a mirror never race each other."""

    def __init__(self, database: Database, *, refresh_seconds: float = REFRESH_SECONDS) -> None:
        self.database = database
        self.refresh_seconds = refresh_seconds
        self._mirrors: dict[str, list[Mirror[Any, Any]]] = {}
        self._dirty: dict[Mirror[Any, Any], set[Any]] = {}
        self._wake = asyncio.Event()
        self._conn: asyncpg.Connection | None = None
        self._lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.reconnects = 0

    # --- subscribing ---------------------------------------------------------------------------------------

    async def subscribe(self, mirror: Mirror[Any, Any]) -> None:
        """Follow `mirror.channel` from now on (connecting first if needed; `StorageUnavailable` when that fails)."""
        first = mirror.channel not in self._mirrors
        self._mirrors.setdefault(mirror.channel, []).append(mirror)
        if self._conn is None:
            try:
                await self._connect()
            except BaseException:
                self.unsubscribe(mirror)
                raise
        elif first:
            try:
                await self._conn.add_listener(mirror.channel, self._on_notify)
            except _ERRORS:
                self._lost.set()  # reconnecting listens on every channel, this one included
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="pg-notifications")

    def unsubscribe(self, mirror: Mirror[Any, Any]) -> None:
        followers = self._mirrors.get(mirror.channel, [])
        if mirror in followers:
            followers.remove(mirror)
        if not followers:
            self._mirrors.pop(mirror.channel, None)
        self._dirty.pop(mirror, None)

    async def close(self) -> None:
        self._closed = True
        task, self._task = self._task, None
        while task is not None and not task.done():  # again if a library swallowed the cancellation
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)
        await self._disconnect()
        self._mirrors.clear()

    # --- the connection ------------------------------------------------------------------------------------

    async def _connect(self) -> None:
        try:
            conn = await asyncpg.connect(
                self.database.url,
                timeout=self.database.statement_timeout,
                server_settings={"application_name": f"{self.database.application_name}-listen"},
            )
        except _ERRORS as error:
            raise StorageUnavailable(f"cannot listen for changes: {reason_of(error)}") from error
        try:
            for channel in self._mirrors:
                await conn.add_listener(channel, self._on_notify)
        except _ERRORS as error:
            conn.terminate()
            raise StorageUnavailable(f"cannot listen for changes: {reason_of(error)}") from error
        conn.add_termination_listener(lambda _conn: self._lost.set())
        self._lost.clear()
        self._conn = conn

    async def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            try:
                await asyncio.wait_for(conn.close(), timeout=5)
            except _ERRORS:
                conn.terminate()

    def _on_notify(self, _conn: object, _pid: int, channel: str, payload: str) -> None:
        for mirror in self._mirrors.get(channel, []):
            key = mirror.notified(payload)
            if key is not None:
                self._dirty.setdefault(mirror, set()).add(key)
                self._wake.set()

    # --- the work ------------------------------------------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        next_refresh = loop.time() + self.refresh_seconds
        while not self._closed:
            try:
                if self._lost.is_set() or self._conn is None or self._conn.is_closed():
                    await self._reconnect()
                    next_refresh = loop.time()  # what was sent while we were away is lost: read everything
                await self._woken(timeout=max(0.0, next_refresh - loop.time()))
                self._wake.clear()
                dirty, self._dirty = self._dirty, {}
                if loop.time() >= next_refresh:
                    next_refresh = loop.time() + self.refresh_seconds
                    await self._reload_all()
                else:
                    for mirror, keys in dirty.items():
                        await self._reload(mirror, keys)
            except Exception:  # the mirrors must keep following: log, pause, go on
                log.exception("database: following changes failed; retrying")
                await asyncio.sleep(1.0)

    async def _woken(self, *, timeout: float) -> None:
        """Return when a notification arrived, the connection was lost, or `timeout` passed. (`asyncio.wait`, not
        `wait_for`: on Python 3.11 `wait_for` can swallow a cancellation that races its timeout, and `close`
        would wait for this task forever.)"""
        lost = asyncio.ensure_future(self._lost.wait())
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({lost, woken}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            woken.cancel()

    async def _reload_all(self) -> None:
        for followers in list(self._mirrors.values()):
            for mirror in list(followers):
                await self._reload(mirror, None)

    async def _reload(self, mirror: Mirror[Any, Any], keys: set[Any] | None) -> None:
        try:
            await mirror.reload(keys)
        except StorageUnavailable as error:
            log.warning("%s: could not refresh from the database (%s); will retry", mirror.channel, error)

    async def _reconnect(self) -> None:
        await self._disconnect()
        delay = 0.2
        while True:
            try:
                await self._connect()
            except StorageUnavailable as error:
                log.warning("database: %s; reconnecting in %.1fs", error, delay)
                await asyncio.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, RECONNECT_MAX_SECONDS)
                continue
            self.reconnects += 1
            log.info("database: listening for changes again")
            return


_listeners: WeakKeyDictionary[Database, Notifications] = WeakKeyDictionary()


def notifications_of(database: Database) -> Notifications:
    """The process's one `LISTEN` connection for `database`, shared by every mirrored table (made on first use and
    closed with the database, before its pool)."""
    found = _listeners.get(database)
    if found is None:
        found = _listeners[database] = Notifications(database)
        database.on_close(found.close)
    return found
