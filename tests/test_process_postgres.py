"""The real entry point on PostgreSQL, as processes: an unreachable database is one line without the password; a
SIGTERM flushes turns a dead process left in the database into it, and the rows are gone after."""

from __future__ import annotations

import asyncio
import signal
from datetime import UTC, datetime
from pathlib import Path

import asyncpg

from bot.memory.drivers.pg.schema import migrate
from bot.memory.drivers.pg.turns import PostgresTurnQueue
from bot.memory.models import ConversationKey, Turn
from bot.storage.pg.database import Database
from tests.support.llm_server import extraction
from tests.test_process import (  # noqa: F401 (fixtures)
    ALICE,
    API_KEY,
    FACT,
    TOKEN,
    Spawn,
    assert_one_clean_line,
    llm_server,
    run_bot_command,
    spawn,
    standin_env,
    workdir,
)

PASSWORD = "s3cr3t-Db-pass-9f8e7d"


def test_an_unreachable_database_exits_2_with_one_line_and_never_the_password(workdir: Path) -> None:  # noqa: F811
    env = standin_env(
        workdir / "data", "http://127.0.0.1:9/v1", DATABASE_URL=f"postgresql://bot:{PASSWORD}@127.0.0.1:9/memory"
    )
    result = run_bot_command([], workdir, env)
    assert result.returncode == 2, result.stderr
    assert_one_clean_line(result.stderr, "cannot connect to PostgreSQL at 127.0.0.1:9/memory")
    everything = result.stderr + result.stdout
    assert PASSWORD not in everything and TOKEN not in everything and API_KEY not in everything


def test_sigterm_flushes_turns_a_dead_process_left_in_the_database(
    workdir: Path, spawn: Spawn, postgres_url: str  # noqa: F811
) -> None:
    async def leave_a_turn() -> None:
        database = Database(postgres_url)
        await database.open()
        await database.run(migrate, transaction=False)
        dead = PostgresTurnQueue(database, lease_seconds=600, orphan_seconds=0)  # its hold has already run out
        turn = Turn("user", ALICE, "alice", "I write Go microservices at work.", datetime.now(UTC), "turn-1")
        await dead.add(ConversationKey(42, ALICE), [turn])
        await database.close()

    asyncio.run(leave_a_turn())
    data_dir = workdir / "data"
    with llm_server(workdir, [extraction(work=FACT, facts=[(FACT, "knowledge")])]) as server:
        bot = spawn(data_dir, standin_env(data_dir, server.base_url, DATABASE_URL=postgres_url))
        bot.wait_ready()
        elapsed = bot.stop(signal.SIGTERM)
    output = bot.output()
    assert bot.returncode == 0, output
    assert elapsed < 15
    assert server.served == 1

    async def stored() -> tuple[list[str], int]:
        conn = await asyncpg.connect(postgres_url)
        try:
            docs = [row["doc"] for row in await conn.fetch("SELECT doc::text AS doc FROM memories")]
            return docs, int(await conn.fetchval("SELECT count(*) FROM pending_turns"))
        finally:
            await conn.close()

    docs, pending = asyncio.run(stored())
    assert len(docs) == 1 and FACT in docs[0]
    assert pending == 0
    assert "I write Go microservices" not in output  # contents never logged at INFO
    assert "resumed 1 turns" in output
    assert not (data_dir / "memory").exists() or not any((data_dir / "memory").iterdir())
