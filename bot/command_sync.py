"""Syncing slash commands only when their definitions changed.

Discord allows only a limited number of command creations per day, and a global sync on every start is the classic
way to hit it. We hash the commands' JSON definitions, remember the hash of the last successful sync in
`DATA_DIR/command-sync.json`, and sync only when it differs (or when an admin forces it).
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from discord import Object, app_commands

log = logging.getLogger(__name__)

STATE_FILE = "command-sync.json"


def commands_fingerprint(tree: app_commands.CommandTree[Any], guild_id: int | None = None) -> str:
    """A stable hash of every command definition the tree would send."""
    guild = Object(guild_id) if guild_id else None
    payload = sorted((command.to_dict(tree) for command in tree.get_commands(guild=guild)), key=lambda c: c["name"])
    digest = hashlib.sha256(json.dumps({"guild": guild_id, "commands": payload}, sort_keys=True).encode())
    return digest.hexdigest()


def _read_state(path: Path) -> str:
    try:
        return str(json.loads(path.read_text("utf-8")).get("fingerprint", ""))
    except (OSError, ValueError, AttributeError):
        return ""


async def sync_if_changed(
    tree: app_commands.CommandTree[Any],
    data_dir: Path,
    *,
    force: bool = False,
    guild_id: int | None = None,
) -> bool:
    """Sync when the definitions changed since the last sync, or when forced; returns whether it synced."""
    if guild_id:
        tree.copy_global_to(guild=Object(guild_id))
    fingerprint = commands_fingerprint(tree, guild_id)
    state_path = data_dir / STATE_FILE
    if not force and _read_state(state_path) == fingerprint:
        log.info("slash commands unchanged since the last sync; not syncing")
        return False
    synced = await tree.sync(guild=Object(guild_id) if guild_id else None)
    state_path.write_text(json.dumps({"fingerprint": fingerprint}), "utf-8")
    log.info("synced %d slash commands%s", len(synced), f" to guild {guild_id}" if guild_id else " globally")
    return True
