"""A real, throwaway PostgreSQL server for tests and benchmarks.

The PostgreSQL backend is tested against the real server, not a mock: SQL, transactions, locking and connection
pools only show their bugs there. ``PostgresServer`` runs Debian's server binaries (``initdb``, ``pg_ctl``,
``postgres``: the ``postgresql`` package) in a temporary folder, on a free port of 127.0.0.1, with durability
switched off for speed. Each test gets its own database from ``create_database``::

    with PostgresServer() as server:
        url = server.create_database("test_one")     # postgresql://postgres@127.0.0.1:PORT/test_one
        ...
        server.drop_database("test_one")

Several servers (parallel pytest runs, pytest-xdist workers) run side by side: each has its own folder and port.
PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` system user. A watchdog process
stops the server and removes its folder when the owner exits, even when the owner is killed, so no server outlives
the test run that started it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import asyncpg

LIB_ROOT = Path("/usr/lib/postgresql")
TOOLS = ("initdb", "pg_ctl", "postgres")
SERVER_USER = "postgres"
"""The system user the server runs as when the tests run as root (Debian's package creates it)."""
SUPERUSER = "postgres"
"""The database superuser initdb creates; authentication is ``trust`` on 127.0.0.1 only."""
INSTALL_HINT = "install Debian's postgresql package (apt-get install postgresql; .ci/run does this)"
NAME_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,62}")
START_ATTEMPTS = 5
"""Another process may take the free port between our probe and the server's bind; then we try another one."""

SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "max_connections": "200",  # tests open many pools, and a pool holds several connections
    "shared_buffers": "32MB",  # several servers share small test machines
    "fsync": "off",  # the data is thrown away: durability only costs time
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "log_min_messages": "warning",
}

T = TypeVar("T")


class PostgresUnavailable(RuntimeError):
    """The server cannot be started here: no binaries, or root without a ``postgres`` user. One clear line."""


def find_bin_dir(search_path: str | None = None, lib_root: Path = LIB_ROOT) -> Path | None:
    """The folder holding initdb, pg_ctl and postgres: initdb's on PATH if the other two sit beside it, else the
    newest ``/usr/lib/postgresql/<version>/bin`` (Debian keeps them off PATH). None if there is none."""
    on_path = shutil.which("initdb", path=search_path)
    if on_path is not None:
        folder = Path(on_path).resolve().parent
        if all((folder / tool).is_file() for tool in TOOLS):
            return folder
    versions = []
    if lib_root.is_dir():
        for entry in lib_root.iterdir():
            folder = entry / "bin"
            if entry.name.replace(".", "").isdigit() and all((folder / tool).is_file() for tool in TOOLS):
                versions.append((tuple(int(part) for part in entry.name.split(".")), folder))
    return max(versions)[1] if versions else None


def require_bin_dir(search_path: str | None = None, lib_root: Path = LIB_ROOT) -> Path:
    """``find_bin_dir``, or PostgresUnavailable saying what to install."""
    found = find_bin_dir(search_path, lib_root)
    if found is None:
        raise PostgresUnavailable(
            f"PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or under {lib_root}/*/bin: "
            + INSTALL_HINT
        )
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _conf_value(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def _run_on_fresh_loop(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine on its own event loop in a worker thread: callable from sync code and from a running loop."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


class PostgresServer:
    """One PostgreSQL server in a temporary folder; ``start()``/``stop()`` or use it as a context manager.

    ``url(dbname)`` is the connection URL of a database (the ``postgres`` database always exists);
    ``create_database(name)`` makes a fresh, empty one and returns its URL. Names are plain lower-case identifiers.
    """

    def __init__(self, bin_dir: Path | None = None) -> None:
        self.bin_dir = bin_dir if bin_dir is not None else require_bin_dir()
        self.run_as = self._server_user()
        self.folder: Path | None = None
        self.port: int | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None

    @staticmethod
    def _server_user() -> pwd.struct_passwd | None:
        if os.geteuid() != 0:
            return None
        try:
            return pwd.getpwnam(SERVER_USER)
        except KeyError:
            raise PostgresUnavailable(
                f"PostgreSQL refuses to run as root and there is no {SERVER_USER!r} system user to run it as: "
                f"{INSTALL_HINT}, or run the tests as another user"
            ) from None

    @property
    def data_dir(self) -> Path:
        assert self.folder is not None, "the server is not started"
        return self.folder / "data"

    @property
    def log_file(self) -> Path:
        assert self.folder is not None, "the server is not started"
        return self.folder / "server.log"

    def _tool(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run one of the server's tools, as the server's user; the folder is the working directory (as the
        ``postgres`` user, root's working directory may be unreadable)."""
        assert self.folder is not None
        identity: dict[str, Any] = {}
        if self.run_as is not None:
            identity = {"user": self.run_as.pw_uid, "group": self.run_as.pw_gid, "extra_groups": []}
        return subprocess.run(
            [str(self.bin_dir / name), *args],
            cwd=self.folder,
            capture_output=True,
            text=True,
            check=False,
            **identity,
        )

    def start(self) -> PostgresServer:
        """initdb a new cluster and start the server; returns once it accepts connections (``pg_ctl -w``)."""
        if self.folder is not None:
            raise RuntimeError("the server is already started")
        self.folder = Path(tempfile.mkdtemp(prefix="memory-bot-pg-"))
        try:
            if self.run_as is not None:
                os.chown(self.folder, self.run_as.pw_uid, self.run_as.pw_gid)
            self._watch()
            self._initdb()
            self._start_on_a_free_port()
        except BaseException:
            self.stop()
            raise
        return self

    def _watch(self) -> None:
        """Start the watchdog: it waits for its stdin to close (our exit, however it happens, or ``stop()``), then
        stops the server and removes the folder. Its own session keeps it out of signals sent to our group."""
        assert self.folder is not None
        user = "" if self.run_as is None else self.run_as.pw_name
        self._watchdog = subprocess.Popen(
            [sys.executable, __file__, "--watch", str(self.bin_dir / "pg_ctl"), str(self.folder), user],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )

    def _initdb(self) -> None:
        result = self._tool(
            "initdb",
            *("-D", str(self.data_dir), "-A", "trust", "-U", SUPERUSER, "-E", "UTF8", "--locale=C", "--no-sync"),
        )
        if result.returncode != 0:
            raise RuntimeError(f"initdb failed ({result.returncode}): {result.stderr.strip() or result.stdout}")
        assert self.folder is not None
        settings = {**SETTINGS, "unix_socket_directories": str(self.folder)}
        lines = [f"{name} = {_conf_value(value)}" for name, value in settings.items()]
        with (self.data_dir / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\n# tests/postgres.py\n" + "\n".join(lines) + "\n")

    def _start_on_a_free_port(self) -> None:
        failure = ""
        for _ in range(START_ATTEMPTS):
            port = _free_port()
            result = self._tool(
                "pg_ctl", "start", "-w", "-t", "120", "-D", str(self.data_dir), "-l", str(self.log_file),
                "-o", f"-p {port}",
            )  # fmt: skip
            if result.returncode == 0:
                self.port = port
                return
            log = self.log_file.read_text("utf-8", errors="replace") if self.log_file.exists() else ""
            failure = f"pg_ctl start failed ({result.returncode}): {result.stderr.strip()}\n{log[-2000:]}"
            if "could not bind" not in log and "already in use" not in log:
                break
        raise RuntimeError(failure)

    def stop(self) -> None:
        """Stop the server (``pg_ctl stop -m immediate``: nothing is kept) and remove its folder. Idempotent."""
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:
            assert watchdog.stdin is not None
            watchdog.stdin.close()
            watchdog.wait()
        elif self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None
        self.port = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def url(self, dbname: str = "postgres") -> str:
        """The connection URL of ``dbname`` on this server (TCP on 127.0.0.1, the superuser, no password)."""
        if self.port is None:
            raise RuntimeError("the server is not started")
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str) -> str:
        """Create the empty database ``name`` and return its URL. Callable from sync code and from a running loop
        (it blocks briefly on a loop of its own)."""
        self._check_name(name)
        _run_on_fresh_loop(lambda: self._execute(f'CREATE DATABASE "{name}"'))
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name``, disconnecting whoever is still connected (a test's leftover pool must not keep it)."""
        self._check_name(name)
        _run_on_fresh_loop(lambda: self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    @staticmethod
    def _check_name(name: str) -> None:
        if NAME_PATTERN.fullmatch(name) is None:
            raise ValueError(f"database name {name!r} is not a plain identifier ([a-z_][a-z0-9_]*, at most 63)")

    async def _execute(self, statement: str) -> None:
        connection = await asyncpg.connect(self.url("postgres"))
        try:
            await connection.execute(statement)
        finally:
            await connection.close()


async def run_as_admin(url: str, *statements: str) -> None:
    """Run statements on the server of `url`, connected to its `postgres` database (ALTER DATABASE, terminating
    another database's connections: what a test does to the database under test)."""
    conn = await asyncpg.connect(url.rsplit("/", 1)[0] + "/postgres")
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


def _watchdog_main(pg_ctl: str, folder: str, user: str) -> None:
    """Wait for stdin to close, then stop the server immediately and remove its folder."""
    sys.stdin.buffer.read()
    data_dir = Path(folder) / "data"
    if (data_dir / "postmaster.pid").exists():
        identity: dict[str, Any] = {}
        if user:
            entry = pwd.getpwnam(user)
            identity = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        subprocess.run(
            [pg_ctl, "stop", "-w", "-m", "immediate", "-D", str(data_dir)],
            cwd=folder,
            capture_output=True,
            check=False,
            **identity,
        )
    shutil.rmtree(folder, ignore_errors=True)


def main(argv: Sequence[str]) -> int:
    if len(argv) == 4 and argv[0] == "--watch":
        _watchdog_main(argv[1], argv[2], argv[3])
        return 0
    print("usage: python tests/postgres.py --watch PG_CTL FOLDER USER (started by PostgresServer)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
