"""Users' data sealed at rest: AES-256-GCM under a data key per user, each data key wrapped by the operator's
master key (MEMORY_ENCRYPTION_KEY). Plumbing: bytes and user ids in, bytes out; nothing here knows what memory is.

- The master key (32 random bytes, base64) is never used as it is: HKDF-SHA256 derives from it the key that wraps
  data keys and a fingerprint that names it in the stores without revealing it.
- A data key is 32 random bytes with a random 8-byte reference. It is kept only wrapped (AES-GCM under the
  wrapping key, bound to the user id and the reference), in a key store kept apart from the data: destroying a
  user's wrapped key (forgetting them) leaves every copy of their data, backups included, with nothing to open it.
- A sealed blob is `MAGIC | key reference | nonce | ciphertext and tag`; the additional data binds the user id and
  the purpose ("memory", "turn"), so a blob copied onto another user or into another field does not open.
  `MAGIC` starts with a NUL byte, which no JSON text does, so sealed and plain data are told apart safely.
- Nonces are random (96 bits): one user's key seals a few thousand blobs in its life, far below the point where
  random nonces could repeat.
- Each store marks, next to its data, that its data is sealed (`StoreMark`): which key store it belongs to and
  the master key's fingerprint. `start_decision` turns the mark, the key and the key store into "start" or one
  line saying why not, so a wrong or missing key never reads sealed data as empty.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from bot.storage.errors import EncryptionRefused, KeyDestroyed, KeyUnusable, SealedDamaged

MAGIC = b"\x00MBS1"
REF_BYTES = 8
NONCE_BYTES = 12
KEY_BYTES = 32
_HEADER = len(MAGIC) + REF_BYTES + NONCE_BYTES
KEY_ADVICE = "32 random bytes in base64 (make one with: openssl rand -base64 32)"

MarkState = Literal["on", "converting", "rotating"]


def decode_master_key(text: str) -> bytes:
    """The 32 bytes a MEMORY_ENCRYPTION_KEY value encodes (standard or URL-safe base64, padding optional);
    `ValueError` saying what is expected, never echoing the value."""
    cleaned = "".join(text.split()).rstrip("=").replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"must be {KEY_ADVICE}") from None
    if len(raw) != KEY_BYTES:
        raise ValueError(f"must be {KEY_ADVICE}; this one decodes to {len(raw)} bytes")
    return raw


def new_master_key_text() -> str:
    """A fresh master key, as MEMORY_ENCRYPTION_KEY expects it."""
    return base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode("ascii")


def _derive(secret: bytes, purpose: bytes, length: int) -> bytes:
    return HKDF(algorithm=SHA256(), length=length, salt=None, info=b"memory-bot " + purpose).derive(secret)


def _binding(kind: bytes, user_id: int, *parts: bytes) -> bytes:
    return b"|".join([b"memory-bot", kind, str(user_id).encode("ascii"), *parts])


class DataKey:
    """One user's data key: seals and opens their blobs. `ref` names it inside every blob it sealed."""

    __slots__ = ("_aead", "ref", "secret")

    def __init__(self, ref: bytes, secret: bytes) -> None:
        if len(ref) != REF_BYTES or len(secret) != KEY_BYTES:
            raise KeyUnusable("a stored data key has the wrong length")
        self.ref = ref
        self.secret = secret
        self._aead = AESGCM(secret)

    @classmethod
    def new(cls) -> DataKey:
        return cls(secrets.token_bytes(REF_BYTES), AESGCM.generate_key(bit_length=8 * KEY_BYTES))

    def __repr__(self) -> str:
        return f"DataKey({self.ref.hex()})"

    def seal(self, user_id: int, purpose: str, data: bytes) -> bytes:
        nonce = secrets.token_bytes(NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, data, _binding(purpose.encode("ascii"), user_id))
        return b"".join((MAGIC, self.ref, nonce, sealed))

    def open(self, user_id: int, purpose: str, blob: bytes) -> bytes:
        """The plaintext; `KeyDestroyed` when another (destroyed) key sealed it, `SealedDamaged` when it was
        changed or belongs to another user or purpose."""
        if sealed_ref(blob) != self.ref:
            raise KeyDestroyed("sealed with a data key that no longer exists (its user was forgotten)")
        try:
            return self._aead.decrypt(blob[len(MAGIC) + REF_BYTES : _HEADER], blob[_HEADER:],
                                      _binding(purpose.encode("ascii"), user_id))
        except InvalidTag:
            raise SealedDamaged("sealed data does not open: damaged, or not this user's") from None


class MasterKey:
    """The operator's key. It only wraps and unwraps data keys; `fingerprint` names it in the stores."""

    __slots__ = ("_wrap", "fingerprint")

    def __init__(self, secret: bytes) -> None:
        self._wrap = AESGCM(_derive(secret, b"key wrapping v1", KEY_BYTES))
        self.fingerprint = _derive(secret, b"key fingerprint v1", 8).hex()

    @classmethod
    def parse(cls, text: str) -> MasterKey:
        return cls(decode_master_key(text))

    def __repr__(self) -> str:
        return f"MasterKey({self.fingerprint})"

    def wrap(self, user_id: int, key: DataKey) -> bytes:
        nonce = secrets.token_bytes(NONCE_BYTES)
        return nonce + self._wrap.encrypt(nonce, key.secret, _binding(b"data key", user_id, key.ref))

    def unwrap(self, user_id: int, ref: bytes, wrapped: bytes) -> DataKey:
        """The data key; `KeyUnusable` when this master key did not wrap it (or the stored key was damaged)."""
        try:
            secret = self._wrap.decrypt(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:],
                                        _binding(b"data key", user_id, ref))
        except InvalidTag:
            raise KeyUnusable(f"the data key of user {user_id} does not unwrap with MEMORY_ENCRYPTION_KEY") from None
        return DataKey(ref, secret)


def is_sealed(data: bytes) -> bool:
    return data.startswith(MAGIC)


def sealed_ref(blob: bytes) -> bytes:
    """The reference of the data key that sealed `blob`; `SealedDamaged` when it is not a sealed blob."""
    if len(blob) < _HEADER + 16 or not is_sealed(blob):
        raise SealedDamaged("not a sealed blob")
    return blob[len(MAGIC) : len(MAGIC) + REF_BYTES]


def new_store_id() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class StoreMark:
    """Kept next to a store's data once it is sealed: the key store its keys are in (`store`), the fingerprint of
    the master key that wraps them, and whether a conversion or a key rotation is under way."""

    store: str
    master: str
    state: MarkState = "on"
    next_master: str | None = None  # while rotating: the new key's fingerprint

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"store": self.store, "master": self.master, "state": self.state}
        if self.next_master is not None:
            record["nextMaster"] = self.next_master
        return record

    @classmethod
    def from_json(cls, record: Any) -> StoreMark:
        if not isinstance(record, dict) or record.get("state") not in ("on", "converting", "rotating"):
            raise ValueError("not an encryption mark")
        next_master = record.get("nextMaster")
        return cls(str(record["store"]), str(record["master"]), record["state"],
                   None if next_master is None else str(next_master))


Decision = Literal["plain", "sealed", "new"]


def _start_unmarked(
    *, where: str, keys_where: str, key: MasterKey | None, key_store_used: bool, has_data: bool
) -> Decision:
    """A store with no mark: "plain" without a key, "new" with a key when the store and the key store are both
    unused; else `EncryptionRefused`: plain memory is sealed by `encrypt-existing` only, and a key store in use
    belongs to other memory."""
    if key is None:
        return "plain"
    if has_data:
        raise EncryptionRefused(
            f"memory in {where} is not encrypted yet: stop every bot process and run "
            "`python -m bot encrypt-existing`, or unset MEMORY_ENCRYPTION_KEY"
        )
    if key_store_used:
        raise EncryptionRefused(
            f"the key store ({keys_where}) holds keys of memory that is not in {where}: restore that memory, "
            "or move the key store away to start afresh"
        )
    return "new"


def _check_marked_start(
    *, where: str, keys_where: str, key: MasterKey | None, mark: StoreMark, key_store: str | None
) -> None:
    """`EncryptionRefused` unless a sealed store can open: its conversion or rotation finished, `key` is the
    master key its mark names, and `key_store` is the key store made with it."""
    if key is None:
        raise EncryptionRefused(
            f"memory in {where} is encrypted: set MEMORY_ENCRYPTION_KEY to the key it was encrypted with"
        )
    if mark.state == "converting":
        raise EncryptionRefused(
            f"`python -m bot encrypt-existing` did not finish on {where}: run it again before starting the bot"
        )
    if mark.state == "rotating":
        hint = "the new key" if key.fingerprint == mark.next_master else "the same two keys"
        raise EncryptionRefused(
            f"`python -m bot rotate-key` did not finish on {where}: run it again with {hint}"
        )
    if key.fingerprint != mark.master:
        raise EncryptionRefused(f"MEMORY_ENCRYPTION_KEY is not the key memory in {where} is encrypted with")
    if key_store is None:
        raise EncryptionRefused(
            f"the key store ({keys_where}) is missing: restore it from its backup; without it the encrypted "
            "memory cannot be read"
        )
    if key_store != mark.store:
        raise EncryptionRefused(
            f"the key store ({keys_where}) belongs to another memory store: restore the one made with {where}"
        )


def start_decision(
    *,
    where: str,
    keys_where: str,
    key: MasterKey | None,
    mark: StoreMark | None,
    key_store: str | None,
    key_store_used: bool,
    has_data: bool,
) -> Decision:
    """"plain" (no key, nothing sealed), "sealed" (the key opens this store), "new" (a key and an empty store: mark
    it and seal from now on), or `EncryptionRefused` with one line for the operator (never the key itself)."""
    if mark is None:
        return _start_unmarked(
            where=where, keys_where=keys_where, key=key, key_store_used=key_store_used, has_data=has_data
        )
    _check_marked_start(where=where, keys_where=keys_where, key=key, mark=mark, key_store=key_store)
    return "sealed"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: Any) -> bytes:
    """Base64 text as bytes; `SealedDamaged` for anything else."""
    if not isinstance(text, str):
        raise SealedDamaged("sealed data is not base64 text")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise SealedDamaged("sealed data is not base64 text") from None



def conversion_mark(
    *, where: str, keys_where: str, key: MasterKey, mark: StoreMark | None, key_store: str | None, key_store_used: bool
) -> StoreMark:
    """The mark to hold while `encrypt-existing` converts a store (the one it has when a run is resumed or the
    store is already sealed); `EncryptionRefused` when the key or the key store do not belong to it."""
    if mark is None:
        if key_store_used:
            raise EncryptionRefused(
                f"the key store ({keys_where}) holds keys of memory that is not in {where}: move it away first"
            )
        return StoreMark(key_store or new_store_id(), key.fingerprint, "converting")
    if mark.state == "rotating":
        raise EncryptionRefused(f"`python -m bot rotate-key` did not finish on {where}: finish it first")
    if key.fingerprint != mark.master:
        raise EncryptionRefused(f"MEMORY_ENCRYPTION_KEY is not the key memory in {where} is encrypted with")
    if key_store is not None and key_store != mark.store:
        raise EncryptionRefused(
            f"the key store ({keys_where}) belongs to another memory store: restore the one made with {where}"
        )
    if mark.state == "on" and key_store is None:
        raise EncryptionRefused(
            f"the key store ({keys_where}) is missing: restore it from its backup; without it the encrypted "
            "memory cannot be read"
        )
    return mark


def rotation_mark(*, where: str, mark: StoreMark | None, old: MasterKey, new: MasterKey) -> StoreMark | None:
    """The mark to hold while `rotate-key` re-wraps every data key from `old` to `new`, or None when the store
    already uses `new`; `EncryptionRefused` when the keys do not fit the store."""
    if mark is None:
        raise EncryptionRefused(f"memory in {where} is not encrypted: there is no key to rotate")
    if mark.state == "converting":
        raise EncryptionRefused(f"`python -m bot encrypt-existing` did not finish on {where}: finish it first")
    if old.fingerprint == new.fingerprint:
        raise EncryptionRefused("the new key is the same as MEMORY_ENCRYPTION_KEY")
    if mark.state == "rotating":
        if (mark.master, mark.next_master) != (old.fingerprint, new.fingerprint):
            raise EncryptionRefused(
                f"another key rotation is under way on {where}: run it again with the same two keys"
            )
        return mark
    if mark.master == new.fingerprint:
        return None
    if mark.master != old.fingerprint:
        raise EncryptionRefused(f"MEMORY_ENCRYPTION_KEY is not the key memory in {where} is encrypted with")
    return StoreMark(mark.store, old.fingerprint, "rotating", new.fingerprint)
