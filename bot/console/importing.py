"""The console's `/import FILE`: the same preview as Discord's `/memory import`, then one typed answer in place of
its three buttons (`import`, `sensitive` for "Import including sensitive", anything else cancels)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from bot.memory.doors import MAX_IMPORT_BYTES, ImportPreview, UserDoor
from bot.memory.errors import InvalidRequest

Ask = Callable[[str], Awaitable[str | None]]
Say = Callable[[str], None]
LISTED = 20


def _section(heading: str, lines: list[str]) -> list[str]:
    if not lines:
        return []
    more = [f"  ... and {len(lines) - LISTED} more"] if len(lines) > LISTED else []
    return [f"{heading} ({len(lines)}):", *(f"  - {line}" for line in lines[:LISTED]), *more]


def preview_lines(preview: ImportPreview) -> list[str]:
    return [
        *_section("will be added", list(preview.adding)),
        *_section("sensitive, added only if you answer 'sensitive'", [f"{t} ({k})" for t, k in preview.sensitive]),
        *_section("already known, skipped", list(preview.known)),
        *_section("refused", [str(line) for line in preview.refused]),
    ]


def _read(path: Path) -> tuple[bytes | None, int]:
    """The file's bytes (None when over the limit: not read) and its size; `InvalidRequest` when unreadable."""
    try:
        size = path.stat().st_size
        return (path.read_bytes() if size <= MAX_IMPORT_BYTES else None), size
    except OSError as error:
        raise InvalidRequest(
            "cannot read {path}: {reason}", path=str(path), reason=error.strerror or type(error).__name__
        ) from None


async def run_import(mine: UserDoor, path: Path, *, ask: Ask, say: Say) -> None:
    """Preview `path`, ask, and import or cancel; bad input raises `InvalidRequest` with one line."""
    data, size = _read(path)
    preview = await mine.import_preview(data, size=size)
    say("\n".join(preview_lines(preview)) or "(nothing in that file)")
    if not preview.adding and not preview.sensitive:
        say("(nothing new to import)")
        return
    answer = (await ask("Type import, sensitive (import including sensitive) or anything else to cancel: ")) or ""
    choice = answer.strip().lower()
    if choice not in {"import", "sensitive"}:
        await mine.import_cancel(preview.token)
        say("(cancelled: nothing was imported)")
        return
    done = await mine.import_confirm(preview.token, sensitive=choice == "sensitive")
    left = f"; {done.sensitive_left_out} sensitive ones left out" if done.sensitive_left_out else ""
    say(f"(imported {len(done.fact_ids)} memories as your own words{left})")
