"""Files written by earlier versions, converted once when the storage opens.

- `paused.json` (`{"users": [ids]}`) and `modes.json` (`{"users": {id: {"incognitoUntil", "freshUntil"}}}`)
  become one privacy record per user in `privacy.json`. A damaged old file, or a damaged copy of one already kept
  aside, fails closed the way the new table does: its bytes are kept aside as `privacy.json.corrupt-<time>`, so
  nobody is learned from until an operator has looked.
- `memory-switches.json` in its old shape (`{"guilds": {...}, "channels": {...}}`) is rewritten as records
  (`{"records": {"guild:<id>": ..., "channel:<id>": ...}}`); an unreadable one is left for the switch table to
  refuse, as before.
The old files are removed only after the new one is durably written, so a crash during the conversion leaves
either the old files or the new one to start from.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from bot.storage.atomic import json_bytes, replace_file_sync
from bot.storage.quarantine import copies_of, copy_aside

log = logging.getLogger(__name__)

PAUSES_FILE = "paused.json"
MODES_FILE = "modes.json"


def convert_privacy(folder: Path, target: Path) -> bool:
    """Fold `paused.json` and `modes.json` into `target` (a records file) when it does not exist yet; True when
    anything was converted."""
    old = [folder / PAUSES_FILE, folder / MODES_FILE]
    old_copies = [copy for path in old for copy in copies_of(path)]
    if target.exists() or not (any(path.exists() for path in old) or old_copies):
        return False
    records: dict[str, dict[str, Any]] = {}
    damaged = False
    for path, read in ((old[0], _read_pauses), (old[1], _read_modes)):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        try:
            for uid, fields in read(json.loads(raw)).items():
                records.setdefault(uid, {}).update(fields)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            copy_aside(target, raw)
            damaged = True
    for copy in old_copies:  # an operator had not looked at these yet: still held, now under the new name
        copy_aside(target, copy.read_bytes())
        copy.unlink()
        damaged = True
    replace_file_sync(target, json_bytes({"records": dict(sorted(records.items()))}, indent=1))
    for path in old:
        path.unlink(missing_ok=True)
    log.info(
        "privacy: converted %d users' pauses and modes to %s%s",
        len(records), target.name, " (a damaged old file is kept aside)" if damaged else "",
    )
    return True


def _read_pauses(data: Any) -> dict[str, dict[str, Any]]:
    users = data["users"]
    if not isinstance(users, list):
        raise TypeError("users is not a list")
    return {str(int(uid)): {"paused": True} for uid in users}


def _read_modes(data: Any) -> dict[str, dict[str, Any]]:
    users = data["users"]
    if not isinstance(users, dict):
        raise TypeError("users is not an object")
    found: dict[str, dict[str, Any]] = {}
    for uid, entry in users.items():
        fields = {name: entry[name] for name in ("incognitoUntil", "freshUntil") if isinstance(entry.get(name), str)}
        if fields:
            found[str(int(uid))] = fields
    return found


def convert_switches(path: Path) -> bool:
    """Rewrite an old-shape switches file as records; True when it did. Unreadable files are left alone."""
    try:
        data = json.loads(path.read_bytes())
    except (FileNotFoundError, ValueError, RecursionError):
        return False
    if not isinstance(data, dict) or "records" in data or not ({"guilds", "channels"} & set(data)):
        return False
    try:
        records = {
            **{f"guild:{int(gid)}": {"learning": bool(v["learning"]), "recall": bool(v["recall"])}
               for gid, v in data.get("guilds", {}).items()},
            **{f"channel:{int(cid)}": {"learning": bool(v["learning"])} for cid, v in data.get("channels", {}).items()},
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    replace_file_sync(path, json_bytes({"records": records}, indent=1))
    return True
