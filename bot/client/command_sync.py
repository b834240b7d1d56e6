"""Syncing slash commands only when their definitions or their target changed, and never leaving two copies.

Discord allows only a limited number of command creations per day, and a global sync on every start is the classic
way to hit it. We hash the commands' JSON definitions as the sync sends them (with the tree's translator: their
names and descriptions in every language, so a changed catalog syncs again), remember the hash and the target of the
last successful sync in `DATA_DIR/command-sync.json`, and sync only when either differs (or when an admin forces it).

The target is global, or one server (`COMMAND_SYNC_GUILD_ID`: "this one server only"). A server sees a global
command and a server copy of it side by side, so moving the target also empties the old one:
- global -> server G: the commands go to G, then the global list is emptied (other servers lose them, as asked);
- server G -> global: the commands go global, then G's copy is emptied;
- server G -> server H: the commands go to H, then G's copy is emptied.
A state file from before the target was recorded (or a missing one) counts as "unknown": a server sync then also
empties the global list, which costs one request and removes any duplicate left behind. Emptying the old target is
best effort (the bot may have left that server): a failure there is a warning. The state file is written
atomically, and failing to write it is a warning too: the next start just syncs again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
from discord import Object, app_commands

from bot.storage.atomic import replace_file_sync

log = logging.getLogger(__name__)

STATE_FILE = "command-sync.json"
STATE_VERSION = 2
UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class SyncState:
    """Where the last sync went (None = global, a server id, or UNKNOWN) and what it sent."""

    target: int | str | None
    fingerprint: str


async def command_payloads(tree: app_commands.CommandTree[Any], guild_id: int | None = None) -> list[dict[str, Any]]:
    """Every command definition the tree would send to that target, as `CommandTree.sync` builds it: translated
    (`name_localizations`, `description_localizations`) when the tree has a translator."""
    guild = Object(guild_id) if guild_id else None
    translator = tree.translator
    payloads = []
    for command in tree.get_commands(guild=guild):
        if translator is not None:
            payloads.append(await command.get_translated_payload(tree, translator))
        else:
            payloads.append(command.to_dict(tree))
    return payloads


async def commands_fingerprint(tree: app_commands.CommandTree[Any], guild_id: int | None = None) -> str:
    """A stable hash of every command definition the tree would send to that target, localizations included."""
    payload = sorted(await command_payloads(tree, guild_id), key=lambda c: (c.get("type", 1), c["name"]))
    digest = hashlib.sha256(json.dumps({"guild": guild_id, "commands": payload}, sort_keys=True).encode())
    return digest.hexdigest()


def read_state(path: Path) -> SyncState | None:
    """The last sync, or None when there is no readable record of one."""
    try:
        data = json.loads(path.read_text("utf-8"))
        fingerprint = str(data["fingerprint"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    target = data.get("target", UNKNOWN) if data.get("version") == STATE_VERSION else UNKNOWN
    if target is not None and not isinstance(target, int):
        target = UNKNOWN
    return SyncState(target, fingerprint)


def write_state(path: Path, state: SyncState) -> None:
    payload = {"version": STATE_VERSION, "target": state.target, "fingerprint": state.fingerprint}
    replace_file_sync(path, json.dumps(payload).encode("utf-8"), mode=0o600)


async def empty_remote(tree: app_commands.CommandTree[Any], guild_id: int | None) -> None:
    """Sync an empty command list to one target, leaving the tree's own commands as they were."""
    guild = Object(guild_id) if guild_id else None
    kept = tree.get_commands(guild=guild)
    tree.clear_commands(guild=guild)
    try:
        await tree.sync(guild=guild)
    finally:
        for command in kept:
            tree.add_command(command, guild=guild)


def _name(target: int | str | None) -> str:
    return "globally" if target is None else f"to guild {target}"


async def sync_if_changed(
    tree: app_commands.CommandTree[Any],
    data_dir: Path,
    *,
    force: bool = False,
    guild_id: int | None = None,
) -> bool:
    """Sync when the definitions or the target changed since the last sync, or when forced; returns whether it
    synced. Raises discord.py's errors when the sync itself fails (the caller logs it; the next start retries)."""
    target = guild_id or None
    if target is not None:
        tree.copy_global_to(guild=Object(target))
    fingerprint = await commands_fingerprint(tree, target)
    state_path = data_dir / STATE_FILE
    previous = read_state(state_path)
    if not force and previous == SyncState(target, fingerprint):
        log.info("slash commands unchanged since the last sync; not syncing")
        return False
    synced = await tree.sync(guild=Object(target) if target is not None else None)
    log.info("synced %d slash commands %s", len(synced), _name(target))

    stale: list[int | None] = []
    if previous is None or previous.target == UNKNOWN:
        stale = [None] if target is not None else []  # a server sync empties an unknown global list
    elif previous.target != target and not isinstance(previous.target, str):
        stale = [previous.target]
    for old in stale:
        try:
            await empty_remote(tree, old)
            log.info("removed the slash commands synced %s before, so they do not show twice", _name(old))
        except discord.HTTPException as error:
            log.warning("could not remove the slash commands synced %s before (HTTP %s)", _name(old), error.status)

    try:
        await asyncio.to_thread(write_state, state_path, SyncState(target, fingerprint))
    except OSError as error:
        log.warning(
            "could not record the command sync in %s (%s); the next start syncs again",
            state_path, error.strerror or type(error).__name__,
        )
    return True
