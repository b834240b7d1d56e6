"""The command line behind `python -m bot`: runs the Discord bot, `console` to chat in the terminal, `migrate`
and `import-files` to prepare a PostgreSQL database, or `encrypt-existing` and `rotate-key` to encrypt memory at
rest and change its key (`bot.ops.database_commands`).

Start-up failures an admin can fix (missing or malformed settings, shards split over processes without a shared
database, an unusable DATA_DIR or one another process holds) print one line naming the problem and exit with status
2, without a traceback and without ever printing a secret. The bot and the console hold DATA_DIR for as long as they
run (`bot.storage.folder_lock`), so a second process on the same folder is refused instead of rewriting its files.
SIGTERM and SIGINT stop intake, flush pending memory updates through the extractor and the store (bounded by
SHUTDOWN_TIMEOUT_SECONDS), close cleanly and exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import Settings, SettingsError, deprecation_lines, describe_endpoint, load_settings

if TYPE_CHECKING:  # imported in run_bot: a settings or DATA_DIR error is reported before the heavy imports
    from bot.app import Resources
    from bot.client.memory_bot import MemoryBot
    from bot.storage.folder_lock import FolderLock

log = logging.getLogger("bot")

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_CONFIG = 2
EXIT_INTERRUPTED = 130

_data_dir_lock: FolderLock | None = None  # DATA_DIR, held by the bot or the console while the process lives

Connect = Callable[["MemoryBot"], Coroutine[Any, Any, object]]
"""How the bot reaches Discord: logs in and runs until closed (tests pass one that never touches the network)."""


def _fail(message: str, status: int = EXIT_CONFIG) -> int:
    print(f"memory-bot: {message}", file=sys.stderr)
    return status


def check_data_dir(data_dir: Path) -> str | None:
    """One line saying why DATA_DIR cannot hold memory, or None when it can.

    Checked before the heavy imports (discord.py, openai, scikit-learn take seconds on a small VPS), so an admin
    who points DATA_DIR at the wrong place hears about it at once. The store checks again when it starts.
    """
    from bot.storage.atomic import ensure_writable_folder

    try:
        ensure_writable_folder(data_dir)  # the journal, pause list and heartbeat
        ensure_writable_folder(data_dir / "memory")
    except OSError as error:
        return data_dir_problem(data_dir, error)
    return None


def data_dir_problem(data_dir: Path, error: OSError) -> str:
    """One line for a DATA_DIR the bot cannot use: a file where a folder belongs is named as such (the system's
    own words for it, "File exists" or "Not a directory", do not say which path is the file)."""
    for path in (data_dir / "memory", data_dir, *data_dir.parents):
        if path.exists() and not path.is_dir():
            which = "is a file" if path == data_dir else f"cannot be created: {path} is a file"
            return f"DATA_DIR {data_dir} {which}, not a folder; point DATA_DIR at a folder (it is created if missing)"
    return f"DATA_DIR {data_dir} is not usable: {error.strerror or type(error).__name__}"


def shard_storage_problem(settings: Settings) -> str | None:
    """One line when this process runs only some of the shards while memory is in files, else None.

    A user's DMs arrive on shard 0 and their servers on other shards: processes running different shards must share
    one memory, or a user has two memories and a forget in a DM reaches only one of them. Files serve one process,
    so shards split over processes need DATABASE_URL. (All shards in one process is fine on files.)"""
    ids, count = settings.shard_ids, settings.shard_count
    if settings.database_url is not None or ids is None or count is None or set(ids) == set(range(count)):
        return None
    listed = ",".join(str(shard) for shard in ids)
    return (
        f"SHARD_IDS={listed} runs only part of the SHARD_COUNT={count} shards, so other processes run the rest and "
        "must share this one's memory: set DATABASE_URL to one PostgreSQL database for all of them "
        "(memory in files in DATA_DIR serves a single process)"
    )


def env_file_warning(path: Path = Path(".env")) -> str | None:
    """A line asking to `chmod 600` a `.env` that other users of the machine can read (it holds the secrets)."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        return None
    if not mode & 0o077:
        return None
    return f"{path} is readable by other users of this machine (mode {mode:o}); run: chmod 600 {path}"


def _user_id(text: str) -> int:
    """A Discord user id (a positive decimal snowflake): memory files are named after it."""
    if not text.isdecimal() or not 0 < int(text) < 2**64:
        raise argparse.ArgumentTypeError(f"{text!r} is not a Discord user id (a positive whole number)")
    return int(text)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bot", description="A Discord bot with long-term memory.")
    parser.add_argument(
        "--sync-commands", action="store_true", help="sync slash commands now, even if unchanged"
    )
    sub = parser.add_subparsers(dest="command")
    console = sub.add_parser("console", help="chat in the terminal through the same memory pipeline")
    console.add_argument("--user-id", type=_user_id, required=True, help="the Discord user id whose memory to use")
    console.add_argument("--name", default="you", help="the display name to use for you")
    sub.add_parser("healthcheck", help="exit 0 when the running bot's heartbeat is fresh and connected")
    sub.add_parser("migrate", help="create or upgrade the PostgreSQL schema (DATABASE_URL)")
    importer = sub.add_parser("import-files", help="copy a data folder's memory into PostgreSQL (DATABASE_URL)")
    importer.add_argument(
        "folder", type=Path, metavar="DIR", help="the data folder (DATA_DIR) to import; it is left unchanged"
    )
    importer.add_argument(
        "--force", action="store_true",
        help="import into a database bots have used (users forgotten there are still never brought back)",
    )
    sub.add_parser(
        "encrypt-existing", help="encrypt the memory already stored with MEMORY_ENCRYPTION_KEY (stop the bot first)"
    )
    sub.add_parser(
        "rotate-key",
        help="re-wrap every user's key with a new master key, read from standard input (stop the bot first)",
    )
    return parser.parse_args(argv)


def read_new_key() -> str:
    """The new master key for `rotate-key`: typed without echo at a terminal, else the first line of stdin (never
    from the command line, where other users of the machine could see it)."""
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass("new MEMORY_ENCRYPTION_KEY: ")
    return sys.stdin.readline()


def run_key_command(args: argparse.Namespace) -> int:
    """`encrypt-existing` and `rotate-key`: they need MEMORY_ENCRYPTION_KEY and the storage settings only."""
    from bot.config import load_storage_settings
    from bot.ops.database_commands import CommandFailed, encrypt_existing_command, rotate_key_command

    try:
        settings = load_storage_settings()
    except SettingsError as error:
        return _fail(str(error))
    try:
        if args.command == "encrypt-existing":
            return encrypt_existing_command(settings)
        return rotate_key_command(settings, read_new_key())
    except CommandFailed as error:
        return _fail(str(error), EXIT_RUNTIME)
    except KeyboardInterrupt:
        return _fail("interrupted; it is safe to run the command again to finish", EXIT_INTERRUPTED)


def run_database_command(args: argparse.Namespace) -> int:
    """`migrate` and `import-files`: they need DATABASE_URL, not the Discord token or the LLM settings."""
    from bot.config import load_database_settings
    from bot.ops.database_commands import CommandFailed, import_files_command, migrate_command

    try:
        settings = load_database_settings()
    except SettingsError as error:
        return _fail(str(error))
    try:
        if args.command == "migrate":
            return migrate_command(settings)
        return import_files_command(settings, args.folder, force=args.force)
    except CommandFailed as error:
        return _fail(str(error), EXIT_RUNTIME)
    except KeyboardInterrupt:
        return _fail("interrupted; it is safe to run the command again to finish", EXIT_INTERRUPTED)


def _install_stop_handlers(stop: asyncio.Event) -> None:
    """SIGTERM (docker stop) and SIGINT (Ctrl-C) both ask for a clean, flushing shutdown."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)


async def connect_to_discord(bot: MemoryBot) -> None:
    await bot.start(bot.resources.settings.discord_token.get_secret_value())


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def recall_words(settings: Settings) -> str:
    """How facts are picked for replies, for the start-up line: by meaning too when EMBEDDING_MODEL is set."""
    if settings.embedding_model is None:
        return ""
    where = describe_endpoint(settings.effective_embedding_base_url)
    return f", recall by meaning with {settings.embedding_model} at {where}"


async def run_bot(settings: Settings, *, force_sync: bool, connect: Connect = connect_to_discord) -> int:
    import aiohttp
    import discord

    from bot.app import DataDirError, build_resources, start_memory
    from bot.client.memory_bot import MemoryBot, quiet_voice_warnings

    quiet_voice_warnings()
    resources = build_resources(settings)
    try:
        resumed = await start_memory(resources)
    except DataDirError as error:
        await resources.aclose()
        return _fail(str(error))
    stop = asyncio.Event()
    _install_stop_handlers(stop)
    bot = MemoryBot(resources, force_sync=force_sync)
    # Everything imported so far (discord, openai, sklearn, pydantic) lives as long as the process: freezing it
    # keeps full garbage collections from walking it again and again, each of which would stall the event loop.
    gc.collect()
    gc.freeze()
    log.info(
        "starting: chat model %s, memory model %s at %s, memory in %s, %d journaled turns resumed, %s%s",
        settings.chat_model, settings.effective_memory_model, describe_endpoint(settings.openai_base_url),
        resources.memory.ops.where, resumed, bot.shard_plan(), recall_words(settings),
    )
    checker = asyncio.create_task(warn_about_unknown_models(resources))  # never delays the start
    runner: asyncio.Task[object] = asyncio.create_task(connect(bot))
    stopper = asyncio.create_task(stop.wait())
    await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)

    status = EXIT_OK
    if runner.done():
        failure = None if runner.cancelled() else runner.exception()
        if isinstance(failure, discord.LoginFailure):
            status = _fail("Discord rejected DISCORD_TOKEN; check the bot token in the Developer Portal", EXIT_RUNTIME)
        elif isinstance(failure, discord.PrivilegedIntentsRequired):
            status = _fail(
                "the Message Content intent is not enabled: Developer Portal > Bot > Privileged Gateway Intents",
                EXIT_RUNTIME,
            )
        elif isinstance(failure, OSError | TimeoutError | aiohttp.ClientError | discord.GatewayNotFound):
            # No network, DNS failing, a firewall: one line, as for a bad token (aiohttp's connection errors are
            # OSErrors too); after login, discord.py itself keeps reconnecting.
            status = _fail(f"cannot reach Discord ({_one_line(failure)}); check this machine's network", EXIT_RUNTIME)
        elif failure is not None:
            log.error("the Discord connection failed: %s", type(failure).__name__, exc_info=failure)
            status = EXIT_RUNTIME
    else:
        log.info("stop requested; flushing pending memory updates")
    checker.cancel()
    await shutdown(bot, resources, settings.shutdown_timeout_seconds)
    stopper.cancel()
    runner.cancel()
    return status


async def warn_about_unknown_models(resources: Resources) -> None:
    """One WARNING line per configured model the endpoint does not list, with what it offers."""
    from bot.chat.catalog import configured_models, start_check

    settings = resources.settings
    wanted = configured_models(settings.chat_model, settings.memory_model)
    for line in await start_check(resources.client, wanted, describe_endpoint(settings.openai_base_url)):
        log.warning("%s", line)


async def shutdown(bot: MemoryBot, resources: Resources, timeout: float) -> None:
    """Stop intake, flush memory (most of the grace period), then close Discord and the HTTP client.

    All of it, and the interpreter's own exit after it (about a second on a busy small VPS), fits in `timeout`
    (SHUTDOWN_TIMEOUT_SECONDS), so a container's stop grace period above it is never reached: what the flush could
    not finish in its share stays journaled for the next start.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout - min(1.0, 0.2 * timeout)  # the rest is for the process to exit
    bot.accepting = False
    flush_budget = max(timeout - 3.0, timeout * 0.65)
    flushed = await resources.memory.ops.shutdown(flush_budget)
    try:
        await asyncio.wait_for(bot.close(), timeout=max(0.1, min(2.0, deadline - loop.time() - 0.2)))
    except TimeoutError:
        log.warning("closing the Discord connection timed out")
    try:
        await asyncio.wait_for(resources.aclose(), timeout=max(0.1, deadline - loop.time()))
    except TimeoutError:
        log.warning("closing the LLM client timed out")
    log.info("shut down cleanly%s", "" if flushed else " (some updates stay journaled for the next start)")


def _run_healthcheck(_args: argparse.Namespace) -> int:
    """`healthcheck`: it reads its own two settings (`bot.ops.health`), none of the bot's."""
    from bot.ops.health import healthcheck_main

    return healthcheck_main()


_SELF_CONFIGURED: dict[str | None, Callable[[argparse.Namespace], int]] = {
    "healthcheck": _run_healthcheck,
    "migrate": run_database_command,
    "import-files": run_database_command,
    "encrypt-existing": run_key_command,
    "rotate-key": run_key_command,
}
"""The commands that load only the settings they need (a missing DISCORD_TOKEN or LLM setting does not stop them)."""


def _hold_data_dir(data_dir: Path) -> str | None:
    """Lock DATA_DIR for this process, or say in one line why it cannot be held."""
    from bot.storage.folder_lock import FolderInUse, lock_folder

    global _data_dir_lock  # held for the process's life: the OS releases it when the process ends
    try:
        _data_dir_lock = lock_folder(data_dir)  # the console too: it writes the same files as the bot
    except FolderInUse as error:
        return str(error)
    except OSError as error:
        return data_dir_problem(data_dir, error)
    return None


def _start_problem(settings: Settings, *, bot: bool) -> str | None:
    """One line saying why the bot (`bot`) or the console cannot start with these settings, or None once
    DATA_DIR is usable and held by this process."""
    if bot and (problem := shard_storage_problem(settings)) is not None:
        return problem
    problem = check_data_dir(settings.data_dir)
    if problem is not None:
        return problem
    return _hold_data_dir(settings.data_dir)


def _log_secrets(settings: Settings, *, console: bool) -> list[str]:
    """Every secret this process holds, for the logs to mask (the console holds no Discord token)."""
    secrets = [settings.discord_token.get_secret_value()] if not console else []
    if settings.openai_api_key is not None:
        secrets.append(settings.openai_api_key.get_secret_value())
    if settings.memory_encryption_key is not None:
        secrets.append(settings.memory_encryption_key.get_secret_value())
    if settings.database_url is not None:
        from bot.storage.pg.database import database_secrets

        secrets.extend(database_secrets(settings.database_url.get_secret_value()))
    return secrets


def _start_logging(settings: Settings, *, console: bool) -> None:
    """Configure logging with the secrets masked (the console logs to a file in DATA_DIR, off its screen), then
    warn about a `.env` others can read."""
    from bot.logging_setup import configure_logging

    secrets = _log_secrets(settings, console=console)
    log_file = None
    if console:
        from bot.console.session import LOG_FILE

        log_file = settings.data_dir / LOG_FILE
    configure_logging(settings.log_level, secrets=secrets, log_prompts=settings.log_prompts, log_file=log_file)
    if (warning := env_file_warning()) is not None:
        log.warning("%s", warning)
    for line in deprecation_lines(settings):
        log.warning("%s", line)


def _run(args: argparse.Namespace, settings: Settings, connect: Connect) -> int:
    """Run the console or the bot until it ends, with its exit status (0 when a KeyboardInterrupt ends it)."""
    try:
        if args.command == "console":
            from bot.console.session import run_console

            return asyncio.run(run_console(settings, user_id=args.user_id, name=args.name))
        return asyncio.run(run_bot(settings, force_sync=args.sync_commands, connect=connect))
    except KeyboardInterrupt:
        return EXIT_OK


def main(argv: Sequence[str] | None = None, *, connect: Connect = connect_to_discord) -> int:
    """Run what the arguments ask for; `connect` is how the bot reaches Discord (a seam for tests)."""
    args = parse_args(argv)
    command = _SELF_CONFIGURED.get(args.command)
    if command is not None:
        return command(args)
    console = args.command == "console"
    try:
        settings = load_settings(discord=not console)  # the console never connects to Discord
    except SettingsError as error:
        return _fail(str(error))
    problem = _start_problem(settings, bot=args.command is None)
    if problem is not None:
        return _fail(problem)
    _start_logging(settings, console=console)
    return _run(args, settings, connect)


if __name__ == "__main__":
    sys.exit(main())
