"""Sealing at rest, the plumbing (bot/storage/sealing.py, bot/storage/file_codec.py): a blob opens only for its
user, purpose and live key; a master key wraps and names data keys without revealing itself; the start check
refuses a missing or wrong key, a missing key store and an unfinished conversion with one line; the file codec seals
JSON values, keeps plain ones as they are, and after a forget cannot open what it sealed before."""

from __future__ import annotations

import base64
import json
import re
import secrets
from pathlib import Path

import pytest

from bot.storage.errors import EncryptionRefused, KeyDestroyed, KeyUnusable, SealedDamaged
from bot.storage.file_codec import MARK_FILE, FileCodec, is_sealed_json, read_mark
from bot.storage.sealing import (
    DataKey,
    MasterKey,
    StoreMark,
    decode_master_key,
    is_sealed,
    new_master_key_text,
    start_decision,
)

ALICE = 100000000000000001
BOB = 100000000000000002
WORDS = b"my axolotl is called zebra-violet-4711"


def test_a_blob_opens_for_its_user_and_purpose_only() -> None:
    key = DataKey.new()
    blob = key.seal(ALICE, "memory", WORDS)
    assert is_sealed(blob) and WORDS not in blob
    assert key.open(ALICE, "memory", blob) == WORDS
    with pytest.raises(SealedDamaged):
        key.open(BOB, "memory", blob)  # moved onto another user's record
    with pytest.raises(SealedDamaged):
        key.open(ALICE, "turn", blob)  # moved into another field
    tampered = bytearray(blob)
    tampered[-1] ^= 1
    with pytest.raises(SealedDamaged):
        key.open(ALICE, "memory", bytes(tampered))
    with pytest.raises(KeyDestroyed):
        DataKey.new().open(ALICE, "memory", blob)  # a later key of the same user (after a forget)
    assert key.seal(ALICE, "memory", WORDS) != blob  # a fresh nonce each time


def test_a_master_key_wraps_data_keys_and_names_itself_without_revealing_itself() -> None:
    text = new_master_key_text()
    master, other = MasterKey.parse(text), MasterKey.parse(new_master_key_text())
    key = DataKey.new()
    wrapped = master.wrap(ALICE, key)
    assert key.secret not in wrapped
    assert master.unwrap(ALICE, key.ref, wrapped).open(ALICE, "turn", key.seal(ALICE, "turn", WORDS)) == WORDS
    with pytest.raises(KeyUnusable):
        other.unwrap(ALICE, key.ref, wrapped)
    with pytest.raises(KeyUnusable):
        master.unwrap(BOB, key.ref, wrapped)  # bound to its user
    assert master.fingerprint == MasterKey.parse(text).fingerprint != other.fingerprint
    assert master.fingerprint not in text and text not in repr(master)


@pytest.mark.parametrize(
    "text",
    [
        base64.b64encode(b"k" * 32).decode(),
        base64.urlsafe_b64encode(b"\xfb" * 32).decode().rstrip("="),  # URL-safe, no padding
        "  " + base64.b64encode(b"k" * 32).decode() + "\n",
    ],
)
def test_key_text_in_the_usual_base64_shapes(text: str) -> None:
    assert len(decode_master_key(text)) == 32


@pytest.mark.parametrize("text", ["", "not base64 !!", base64.b64encode(b"short").decode(), "a" * 60])
def test_a_malformed_key_says_what_is_expected_without_echoing_it(text: str) -> None:
    with pytest.raises(ValueError, match="32 random bytes in base64") as caught:
        decode_master_key(text)
    assert not text or text not in str(caught.value)


# --- the start check -------------------------------------------------------------------------------------------


def decide(key: MasterKey | None, mark: StoreMark | None, *, store: str | None = "s1", used: bool = True,
           data: bool = True) -> str:
    return start_decision(
        where="files in /data", keys_where="/data/keys", key=key, mark=mark, key_store=store, key_store_used=used,
        has_data=data,
    )


def test_the_start_check_decides_or_says_why_not_in_one_line() -> None:
    key, other = MasterKey(b"a" * 32), MasterKey(b"b" * 32)
    mark = StoreMark("s1", key.fingerprint)
    assert decide(None, None) == "plain"
    assert decide(key, None, store=None, used=False, data=False) == "new"
    assert decide(key, mark) == "sealed"
    refusals = {
        "is encrypted: set MEMORY_ENCRYPTION_KEY": lambda: decide(None, mark),
        "is not the key": lambda: decide(other, mark),
        "not encrypted yet": lambda: decide(key, None, store=None, used=False),
        "key store (/data/keys) is missing": lambda: decide(key, mark, store=None),
        "belongs to another memory store": lambda: decide(key, mark, store="s2"),
        "holds keys of memory that is not": lambda: decide(key, None, data=False),
        "encrypt-existing` did not finish": lambda: decide(key, StoreMark("s1", key.fingerprint, "converting")),
        "rotate-key` did not finish": lambda: decide(
            key, StoreMark("s1", key.fingerprint, "rotating", other.fingerprint)
        ),
    }
    for words, call in refusals.items():
        with pytest.raises(EncryptionRefused, match=re.escape(words)) as caught:
            call()
        assert "\n" not in str(caught.value)


# --- the file codec ------------------------------------------------------------------------------------------


def codec_in(data: Path, key: MasterKey | None) -> FileCodec:
    codec = FileCodec(data, key, durable=False, data=(data / "memory", data / "pending.jsonl"))
    codec.check()
    return codec


def test_the_file_codec_seals_json_values_and_reads_plain_ones_as_they_are(tmp_path: Path) -> None:
    key = MasterKey(secrets.token_bytes(32))
    codec = codec_in(tmp_path, key)
    mark = read_mark(tmp_path / MARK_FILE)
    assert mark is not None and mark.master == key.fingerprint and mark.state == "on"
    sealed = codec.seal_json(ALICE, "memory", {"facts": [WORDS.decode()]})
    assert is_sealed_json(sealed) and WORDS not in json.dumps(sealed).encode()
    assert codec.open_json(ALICE, "memory", sealed) == {"facts": [WORDS.decode()]}
    assert codec.open_json(ALICE, "memory", {"facts": []}) == {"facts": []}  # plain: as it is
    assert (tmp_path / "keys" / f"{ALICE}.key").is_file()
    assert WORDS not in (tmp_path / "keys" / f"{ALICE}.key").read_bytes()

    plain = codec_in(tmp_path / "elsewhere", None)
    assert plain.seal_json(ALICE, "memory", {"a": 1}) == {"a": 1}
    with pytest.raises(KeyUnusable, match="MEMORY_ENCRYPTION_KEY is needed"):
        plain.open_json(ALICE, "memory", sealed)  # never taken for an empty record


async def test_after_a_forget_what_was_sealed_before_does_not_open(tmp_path: Path) -> None:
    key = MasterKey(secrets.token_bytes(32))
    codec = codec_in(tmp_path, key)
    before = codec.seal_json(ALICE, "turn", {"text": WORDS.decode()})
    bob = codec.seal_json(BOB, "turn", {"text": "bob's"})
    await codec.forget_user(ALICE)
    assert not (tmp_path / "keys" / f"{ALICE}.key").exists()
    with pytest.raises(KeyDestroyed):
        codec.open_json(ALICE, "turn", before)
    restarted = codec_in(tmp_path, key)  # nothing cached: the key store alone decides
    with pytest.raises(KeyDestroyed):
        restarted.open_json(ALICE, "turn", before)
    assert restarted.open_json(BOB, "turn", bob) == {"text": "bob's"}
    await restarted.ready(ALICE)  # Alice talks again: a new key, which opens nothing from before
    assert restarted.open_json(ALICE, "turn", restarted.seal_json(ALICE, "turn", 1)) == 1
    with pytest.raises(KeyDestroyed):
        restarted.open_json(ALICE, "turn", before)


def test_rotation_rewraps_every_key_and_resumes(tmp_path: Path) -> None:
    old, new = MasterKey(secrets.token_bytes(32)), MasterKey(secrets.token_bytes(32))
    codec = codec_in(tmp_path, old)
    sealed = {user: codec.seal_json(user, "memory", user) for user in (ALICE, BOB)}
    assert codec.rotate(old, new) == (2, 0)
    assert codec.rotate(old, new) == (0, 2)  # already done: nothing to do
    with pytest.raises(EncryptionRefused, match="is not the key"):
        codec_in(tmp_path, old)
    rotated = codec_in(tmp_path, new)
    opened = {user: rotated.open_json(user, "memory", value) for user, value in sealed.items()}
    assert opened == {ALICE: ALICE, BOB: BOB}
