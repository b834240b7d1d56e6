"""The test PostgreSQL server (tests/postgres.py): real, isolated per test, not root, gone when stopped."""

from __future__ import annotations

import os
from pathlib import Path

import asyncpg
import pytest

from tests.postgres import PostgresServer, PostgresUnavailable, find_bin_dir, require_bin_dir


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
    assert find_bin_dir(search_path=str(empty), lib_root=tmp_path / "nowhere") is None
    with pytest.raises(PostgresUnavailable, match="install Debian's postgresql package"):
        require_bin_dir(search_path=str(empty), lib_root=tmp_path / "nowhere")
    lib_root = tmp_path / "postgresql"
    (lib_root / "17" / "bin").mkdir(parents=True)  # an empty bin folder is no server
    for version in ("9.6", "14", "16"):
        folder = lib_root / version / "bin"
        folder.mkdir(parents=True)
        for tool in ("initdb", "pg_ctl", "postgres"):
            (folder / tool).write_text("#!/bin/sh\n")
            (folder / tool).chmod(0o755)
    assert find_bin_dir(search_path=str(empty), lib_root=lib_root) == lib_root / "16" / "bin"
    (empty / "initdb").symlink_to(lib_root / "14" / "bin" / "initdb")
    assert find_bin_dir(search_path=str(empty), lib_root=lib_root) == lib_root / "14" / "bin", "PATH comes first"
