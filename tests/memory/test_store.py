"""MemoryStore: ids, caching, atomic read-modify-write under a per-user lock, corrupt files kept aside."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.memory.drivers.files.memories import MemoryStore
from bot.memory.errors import Stale
from bot.memory.models import Fact, MemoryFile
from bot.storage.atomic import AtomicWriter
from bot.storage.errors import InvalidUserId
from bot.storage.ids import validate_user_id
from tests.support.engine import save_memory

UID = 123456789012345678
SECRET = "s3cr3t-contents-never-logged"
CORRUPT_NAME = re.compile(r"(?P<uid>\d+)\.json\.corrupt-\d{8}T\d{12}Z(?:-\d+)?")


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory_store = MemoryStore(tmp_path / "memory")
    memory_store.prepare()
    return memory_store


def _fact(n: int | str, content: str | None = None) -> Fact:
    return Fact(id=f"fact_{n}", content=content or f"fact number {n}", confidence=0.9)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _stamp(path: Path) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_ino, stat.st_mtime_ns


# --- user ids ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        (1, "1"),
        ("1", "1"),
        (UID, str(UID)),
        (str(UID), str(UID)),
        (2**64 - 1, str(2**64 - 1)),
        ("18446744073709551615", "18446744073709551615"),
    ],
)
def test_valid_user_ids(raw: int | str, canonical: str) -> None:
    assert validate_user_id(raw) == canonical


@pytest.mark.parametrize(
    "raw",
    ["../x", "1/2", "abc", "", "-1", "0", 0, -1, 2**64, str(2**64), " 12", "12 ", "１２", "12\n", "\n12", "1e3",
     "+12", "0x1f", "1_000", True, False, 1.0, None, b"12", "٣"],
)
def test_invalid_user_ids_are_refused(raw: Any, store: MemoryStore) -> None:
    with pytest.raises(InvalidUserId):
        validate_user_id(raw)
    with pytest.raises(InvalidUserId):
        store.path_for(raw)


@given(st.one_of(st.text(max_size=30), st.integers(), st.from_regex(r"\A[0-9]{1,22}\Z")))
@settings(max_examples=300, deadline=None)
def test_path_for_never_leaves_the_folder(raw: int | str) -> None:
    folder = Path("/srv/data/memory")
    memory_store = MemoryStore(folder)
    try:
        path = memory_store.path_for(raw)
    except InvalidUserId:
        return
    assert path.parent == folder
    assert re.fullmatch(r"[1-9][0-9]{0,19}\.json", path.name)
    assert 0 < int(path.stem) < 2**64


# --- load, edit, save, delete ---------------------------------------------------------------------------------


async def test_missing_user_loads_empty(store: MemoryStore) -> None:
    memory = await store.load(UID)
    assert memory == MemoryFile()
    assert memory.is_empty()
    assert not store.path_for(UID).exists()  # loading never creates a file


async def test_edit_saves_to_disk(store: MemoryStore) -> None:
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1, "Writes Go microservices"))
        memory.user.workContext.summary = "Backend developer."
    on_disk = json.loads(store.path_for(UID).read_bytes())
    assert on_disk["facts"][0]["content"] == "Writes Go microservices"
    assert on_disk["user"]["workContext"]["summary"] == "Backend developer."
    assert on_disk["version"] == "2.0"
    fresh = MemoryStore(store.folder)  # a new process sees the same
    assert (await fresh.load(UID)).facts[0].id == "fact_1"


async def test_edit_body_that_raises_saves_nothing(store: MemoryStore) -> None:
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1))
    before = store.path_for(UID).read_bytes()
    stamp = _stamp(store.path_for(UID))

    with pytest.raises(RuntimeError, match="boom"):
        async with store.edit(UID) as memory:
            memory.facts.append(_fact(2))
            memory.user.topOfMind.summary = "half-done change"
            raise RuntimeError("boom")

    assert store.path_for(UID).read_bytes() == before
    assert _stamp(store.path_for(UID)) == stamp
    loaded = await store.load(UID)
    assert [f.id for f in loaded.facts] == ["fact_1"]
    assert loaded.user.topOfMind.summary == ""


async def test_edit_body_that_raises_on_new_user_creates_no_file(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="nope"):
        async with store.edit(UID) as memory:
            memory.facts.append(_fact(1))
            raise ValueError("nope")
    assert _names(store.folder) == []


async def test_edit_that_changes_nothing_does_not_rewrite(store: MemoryStore) -> None:
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1))
    stamp = _stamp(store.path_for(UID))
    async with store.edit(UID) as memory:
        memory.facts[0].content = memory.facts[0].content  # touched, but equal
    assert _stamp(store.path_for(UID)) == stamp
    async with store.edit(UID + 1):
        pass
    assert not store.path_for(UID + 1).exists()


async def test_edit_yields_a_private_copy(store: MemoryStore) -> None:
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1))
    shared = await store.load(UID)
    with pytest.raises(LookupError):
        async with store.edit(UID) as draft:
            draft.facts.clear()
            assert shared.facts, "the cached memory changed before the edit was saved"
            raise LookupError
    assert [f.id for f in (await store.load(UID)).facts] == ["fact_1"]


async def test_delete(store: MemoryStore) -> None:
    assert await store.delete(UID) is False
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1))
    assert store.path_for(UID).exists()

    assert await store.delete(str(UID)) is True
    assert not store.path_for(UID).exists()
    assert (await store.load(UID)).is_empty()
    assert await store.delete(UID) is False


async def test_an_edit_under_an_older_forget_generation_writes_nothing(store: MemoryStore) -> None:
    async with store.edit(UID, generation=0) as memory:
        memory.facts.append(_fact(1))
    await store.generations.bump(UID)
    with pytest.raises(Stale):
        async with store.edit(UID, generation=0) as memory:
            memory.facts.append(_fact(2))
    # a forget that begins while the body runs (it bumps first, then waits for the lock) wins too
    with pytest.raises(Stale):
        async with store.edit(UID, generation=1) as memory:
            memory.facts.append(_fact(3))
            await store.generations.bump(UID)
    assert [f.id for f in (await store.load(UID)).facts] == ["fact_1"]
    async with store.edit(UID, generation=2) as memory:
        memory.facts.append(_fact(4))
    assert [f.id for f in (await store.load(UID)).facts] == ["fact_1", "fact_4"]


async def test_delete_also_removes_kept_aside_copies_of_that_user_only(store: MemoryStore) -> None:
    other = UID + 1
    for uid in (UID, other):
        store.path_for(uid).write_bytes(f"garbage {SECRET}".encode())
        await store.load(uid)  # kept aside
    (store.folder / f".{UID}.json.0a1b2c3d.tmp").write_bytes(b"stray temp of a crashed write")
    assert await store.delete(UID) is True
    left = _names(store.folder)
    assert all(not name.startswith(f"{UID}.") and str(UID) not in name for name in left)
    assert len([n for n in left if n.startswith(f"{other}.json.corrupt-")]) == 1


async def test_unknown_fields_survive_an_edit_round_trip(store: MemoryStore) -> None:
    original = {
        "version": "1.0",
        "futureTopLevel": {"nested": [1, 2, {"x": None}]},
        "user": {"workContext": {"summary": "Dev.", "updatedAt": "", "mood": "busy"}, "extraSection": "keep"},
        "history": {"recentMonths": {"summary": "", "updatedAt": ""}},
        "facts": [{"id": "fact_a", "content": "Likes tea", "confidence": 0.9, "provenance": {"msg": 42}}],
    }
    store.path_for(UID).write_text(json.dumps(original))
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(2, "Likes hiking"))
    saved = json.loads(store.path_for(UID).read_bytes())
    assert saved["futureTopLevel"] == {"nested": [1, 2, {"x": None}]}
    assert saved["user"]["workContext"]["mood"] == "busy"
    assert saved["user"]["extraSection"] == "keep"
    assert saved["facts"][0]["provenance"] == {"msg": 42}
    assert [f["content"] for f in saved["facts"]] == ["Likes tea", "Likes hiking"]


async def test_a_whole_memory_written_through_edit_is_not_the_callers_object(store: MemoryStore) -> None:
    memory = MemoryFile(facts=[_fact(7)])
    await save_memory(store, UID, memory)
    memory.facts.clear()  # the caller's object is not the cached one
    assert [f.id for f in (await store.load(UID)).facts] == ["fact_7"]


async def test_lone_surrogate_in_a_loaded_file_can_still_be_saved(store: MemoryStore) -> None:
    # Valid JSON may carry "\ud800", which Python reads into a string UTF-8 cannot encode.
    store.path_for(UID).write_bytes(b'{"facts": [{"id": "fact_s", "content": "half an emoji \\ud83d"}]}')
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(2))
    reloaded = await MemoryStore(store.folder).load(UID)
    assert [f.id for f in reloaded.facts] == ["fact_s", "fact_2"]
    assert reloaded.facts[0].content == "half an emoji \ud83d"
    assert not [n for n in _names(store.folder) if "corrupt" in n]
    assert json.loads(await store.export_bytes(UID))["facts"][1]["id"] == "fact_2"


# --- cache ----------------------------------------------------------------------------------------------------


async def test_second_load_is_served_from_cache(store: MemoryStore) -> None:
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1))
    first, revision = await store.load_with_revision(UID)
    second, revision2 = await store.load_with_revision(UID)
    assert second is first
    assert revision2 == revision
    # A fresh store has to read the file: a different object with equal content.
    other = await MemoryStore(store.folder).load(UID)
    assert other is not first and other == first


async def test_external_change_of_content_and_size_is_picked_up(store: MemoryStore) -> None:
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1))
    _, revision = await store.load_with_revision(UID)
    store.path_for(UID).write_text(json.dumps({"facts": [{"id": "fact_ext", "content": "edited by hand, longer"}]}))
    second, revision2 = await store.load_with_revision(UID)
    assert [f.id for f in second.facts] == ["fact_ext"]
    assert revision2 != revision


async def test_external_change_same_size_new_mtime_is_picked_up(store: MemoryStore) -> None:
    path = store.path_for(UID)
    path.write_text(json.dumps({"facts": [{"id": "fact_a", "content": "AAAA"}]}))
    assert (await store.load(UID)).facts[0].content == "AAAA"
    before = os.stat(path)
    with open(path, "r+b") as handle:  # same inode, same size, new bytes
        handle.write(path.read_bytes().replace(b"AAAA", b"BBBB"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert os.stat(path).st_size == before.st_size
    assert (await store.load(UID)).facts[0].content == "BBBB"


async def test_external_replacement_same_size_same_mtime_is_picked_up(store: MemoryStore) -> None:
    # Timestamps are only as fine as the kernel's clock tick: two writes in one tick can share an mtime.
    # A replacement (what every atomic writer does) always has a new inode.
    path = store.path_for(UID)
    path.write_text(json.dumps({"facts": [{"id": "fact_a", "content": "AAAA"}]}))
    assert (await store.load(UID)).facts[0].content == "AAAA"
    before = os.stat(path)
    other = store.folder / "replacement"
    other.write_bytes(path.read_bytes().replace(b"AAAA", b"CCCC"))
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(other, path)
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert (await store.load(UID)).facts[0].content == "CCCC"


async def test_external_delete_is_picked_up(store: MemoryStore) -> None:
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1))
    assert (await store.load(UID)).facts
    store.path_for(UID).unlink()
    assert (await store.load(UID)).is_empty()


async def test_cache_is_bounded(tmp_path: Path) -> None:
    small = MemoryStore(tmp_path, cache_size=3)
    small.prepare()
    for uid in range(1, 6):
        await save_memory(small, uid, MemoryFile(facts=[_fact(uid)]))
    first = await small.load(5)
    assert await small.load(5) is first  # recent: cached
    oldest = await small.load(1)  # evicted: read again
    assert [f.id for f in oldest.facts] == ["fact_1"]
    assert len(small._cache) == 3


# --- corrupt files ----------------------------------------------------------------------------------------


CORRUPT_CASES = {
    "garbage": b"\x00\x01garbage " + SECRET.encode() + b" \xff\xfe",
    "list": json.dumps([SECRET, 1, 2]).encode(),
    "wrong_field_type": json.dumps({"facts": SECRET}).encode(),
    "truncated": json.dumps({"facts": [{"id": "fact_1", "content": SECRET}]}).encode()[:-7],
    "invalid_utf8": b'{"facts": [{"id": "fact_1", "content": "' + SECRET.encode() + b'\xc3\x28"}]}',
    "null": b"null",
    "empty": b"",
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "bad_confidence": json.dumps({"facts": [{"id": "f", "content": SECRET, "confidence": 7}]}).encode(),
}


@pytest.mark.parametrize("raw", CORRUPT_CASES.values(), ids=CORRUPT_CASES.keys())
async def test_corrupt_file_is_kept_aside(
    raw: bytes, store: MemoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    path = store.path_for(UID)
    path.write_bytes(raw)
    caplog.set_level(logging.WARNING, logger="bot.memory.drivers.files.memories")

    memory = await store.load(UID)

    assert memory.is_empty()
    corrupt = [name for name in _names(store.folder) if name != path.name]
    assert len(corrupt) == 1
    assert CORRUPT_NAME.fullmatch(corrupt[0]) and corrupt[0].startswith(f"{UID}.json.corrupt-")
    kept = store.folder / corrupt[0]
    assert kept.read_bytes() == raw
    assert not path.exists()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert str(UID) in warnings[0].getMessage()
    assert SECRET not in caplog.text

    kept_stamp = _stamp(kept)
    async with store.edit(UID) as draft:
        draft.facts.append(_fact(1, "fresh start"))
    assert [f["content"] for f in json.loads(path.read_bytes())["facts"]] == ["fresh start"]
    assert kept.read_bytes() == raw
    assert _stamp(kept) == kept_stamp
    assert sorted(_names(store.folder)) == sorted([path.name, kept.name])


async def test_two_corruptions_keep_both_copies(store: MemoryStore) -> None:
    path = store.path_for(UID)
    path.write_bytes(b"first garbage")
    await store.load(UID)
    path.write_bytes(b"second garbage")
    await store.load(UID)
    kept = sorted((store.folder / n).read_bytes() for n in _names(store.folder) if "corrupt" in n)
    assert kept == [b"first garbage", b"second garbage"]


async def test_corrupt_file_seen_by_edit_is_never_overwritten(store: MemoryStore) -> None:
    path = store.path_for(UID)
    path.write_bytes(b"{not json")
    async with store.edit(UID) as draft:  # the edit itself meets the corrupt file
        assert draft.is_empty()
        draft.facts.append(_fact(1))
    kept = [n for n in _names(store.folder) if "corrupt" in n]
    assert len(kept) == 1 and (store.folder / kept[0]).read_bytes() == b"{not json"
    assert json.loads(path.read_bytes())["facts"][0]["id"] == "fact_1"


# --- concurrency ------------------------------------------------------------------------------------------


async def test_100_concurrent_edits_on_one_user_lose_nothing(store: MemoryStore) -> None:
    async def add(n: int) -> None:
        async with store.edit(UID) as memory:
            await asyncio.sleep(0)  # yield inside the critical section: a lost update would show
            memory.facts.append(_fact(n))

    await asyncio.gather(*(add(n) for n in range(100)))

    on_disk = MemoryFile.model_validate_json(store.path_for(UID).read_bytes())
    assert sorted(int(f.id.removeprefix("fact_")) for f in on_disk.facts) == list(range(100))
    assert [n for n in _names(store.folder) if n.endswith(".tmp")] == []


async def test_edits_of_different_users_do_not_wait_for_each_other(store: MemoryStore) -> None:
    inside_a = asyncio.Event()
    release_a = asyncio.Event()

    async def slow_a() -> None:
        async with store.edit(1) as memory:
            inside_a.set()
            await release_a.wait()
            memory.facts.append(_fact("a"))

    task = asyncio.create_task(slow_a())
    await inside_a.wait()
    async with store.edit(2) as memory:  # would deadlock (and time out) behind a global lock
        memory.facts.append(_fact("b"))
    assert store.path_for(2).exists() and not store.path_for(1).exists()
    assert not task.done()
    release_a.set()
    await task
    assert (await store.load(1)).facts[0].id == "fact_a"


async def test_same_user_edit_waits_for_the_lock(store: MemoryStore) -> None:
    inside = asyncio.Event()
    release = asyncio.Event()
    order: list[str] = []

    async def first() -> None:
        async with store.edit(UID) as memory:
            inside.set()
            await release.wait()
            memory.facts.append(_fact(1))
            order.append("first")

    async def second() -> None:
        async with store.edit(UID) as memory:
            order.append("second")
            memory.facts.append(_fact(2))

    one = asyncio.create_task(first())
    await inside.wait()
    two = asyncio.create_task(second())
    for _ in range(10):
        await asyncio.sleep(0)
    assert order == []  # second is blocked on the user's lock
    release.set()
    await asyncio.gather(one, two)
    assert order == ["first", "second"]
    assert [f.id for f in (await store.load(UID)).facts] == ["fact_1", "fact_2"]


# --- disk faults ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO], ids=["ENOSPC", "EIO"])
async def test_failing_write_keeps_old_file_and_cache(tmp_path: Path, code: int) -> None:
    failing = {"on": False}

    def fsync(fd: int) -> None:
        if failing["on"]:
            raise OSError(code, os.strerror(code))
        os.fsync(fd)

    store = MemoryStore(tmp_path, writer=AtomicWriter(fsync=fsync))
    store.prepare()
    async with store.edit(UID) as memory:
        memory.facts.append(_fact(1, "old fact"))
    before_bytes = store.path_for(UID).read_bytes()
    cached, revision = await store.load_with_revision(UID)

    failing["on"] = True
    with pytest.raises(OSError) as caught:
        async with store.edit(UID) as memory:
            memory.facts = [_fact(2, "new fact")]
    assert caught.value.errno == code

    assert store.path_for(UID).read_bytes() == before_bytes
    after, revision_after = await store.load_with_revision(UID)
    assert after is cached and revision_after == revision
    assert [f.content for f in after.facts] == ["old fact"]
    assert _names(tmp_path) == [f"{UID}.json"]

    failing["on"] = False  # the disk recovers: the same update now lands
    async with store.edit(UID) as memory:
        memory.facts = [_fact(2, "new fact")]
    assert [f.content for f in (await MemoryStore(tmp_path).load(UID)).facts] == ["new fact"]


async def test_prepare_sweeps_temp_files_and_creates_folder(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "memory"
    MemoryStore(folder).prepare()
    assert folder.is_dir()
    (folder / f".{UID}.json.deadbeef.tmp").write_bytes(b"half-written")
    (folder / f"{UID}.json").write_bytes(b"{}")
    MemoryStore(folder).prepare()
    assert _names(folder) == [f"{UID}.json"]


# --- property: any bytes ----------------------------------------------------------------------------------


def _check_load_of(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        path = folder / f"{UID}.json"
        path.write_bytes(raw)

        async def scenario() -> None:
            store = MemoryStore(folder, writer=AtomicWriter(durable=False))
            try:
                expected: MemoryFile | None = MemoryFile.model_validate(json.loads(raw))
            except (ValueError, RecursionError):
                expected = None
            memory = await store.load(UID)
            assert isinstance(memory, MemoryFile)
            MemoryFile.model_validate(memory.model_dump())  # still a valid memory
            corrupt = [p for p in folder.iterdir() if "corrupt" in p.name]
            if expected is None:
                assert memory.is_empty()
                assert len(corrupt) == 1 and corrupt[0].read_bytes() == raw
                assert not path.exists()
            else:
                assert memory == expected
                assert corrupt == [] and path.read_bytes() == raw
            # And the user can always be written afterwards, to a file that reads back.
            async with store.edit(UID) as draft:
                draft.facts.append(Fact(id="fact_new", content="after fuzz"))
            again = await MemoryStore(folder).load(UID)
            assert again.facts[-1].id == "fact_new"
            assert [p.read_bytes() for p in folder.iterdir() if "corrupt" in p.name] == [
                p.read_bytes() for p in corrupt
            ]

        asyncio.run(scenario())


@given(st.binary(max_size=2000))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_bytes_never_break_load(raw: bytes) -> None:
    _check_load_of(raw)


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10), st.sampled_from(["\ud800", "a\udfffb", "1.0", ""]),
)
_json = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_fact_like = st.fixed_dictionaries(
    {"id": st.text(max_size=10), "content": st.one_of(st.text(max_size=20), _scalars)},
    optional={"confidence": _scalars, "category": _scalars, "createdAt": _scalars, "extra": _json},
)
_memory_like = st.fixed_dictionaries(
    {},
    optional={
        "version": st.one_of(st.just("1.0"), _scalars),
        "facts": st.one_of(st.lists(_fact_like, max_size=4), _json),
        "user": st.one_of(
            st.fixed_dictionaries({}, optional={"workContext": st.fixed_dictionaries(
                {}, optional={"summary": st.one_of(st.text(), _scalars), "updatedAt": _scalars})}),
            _json,
        ),
        "appliedTurnIds": st.one_of(st.lists(st.text(max_size=5), max_size=3), _json),
        "unknown": _json,
    },
)


@given(st.one_of(_json, _memory_like))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_json_never_breaks_load_or_the_next_save(value: Any) -> None:
    raw = json.dumps(value).encode()  # ASCII-escaped: lone surrogates, NaN and Infinity all included
    _check_load_of(raw)
