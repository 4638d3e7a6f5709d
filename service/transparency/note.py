"""c2sp.org/signed-note with Ed25519 keys (signature type 0x01), and the note a log signs:
c2sp.org/tlog-checkpoint (origin, tree size, root hash).

A verifier key is ``<name>+<hex key ID>+<base64(0x01 || public key)>``, the key ID being the first
four bytes of SHA-256(name || 0x0A || 0x01 || public key); a signer key is the same with ``PRIVATE+KEY+``
before it and the 32-byte seed in place of the public key. Signatures are checked with libsodium (PyNaCl).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from typing import Final

from nacl.bindings import crypto_sign, crypto_sign_open, crypto_sign_seed_keypair
from nacl.exceptions import BadSignatureError

from service.transparency.merkle import HASH_SIZE

ED25519: Final = 0x01
DASH: Final = "\u2014"
MAX_SIGNATURES: Final = 100
"""The most signature lines read from one note (the spec asks a verifier to take at least 16)."""
_NAME: Final = re.compile(r"[^\s+]+")


class NoteError(ValueError):
    """A note, key or checkpoint that cannot be read or does not verify: ``args[0]`` says why."""


def key_id(name: str, public: bytes, algorithm: int = ED25519) -> bytes:
    """signed-note's key ID; ``algorithm`` is the signature type (0x04 for a tlog-cosignature's key)."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([algorithm]) + public).digest()[:4]


def key_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise NoteError(f"a key name is not empty and holds no space nor '+': {name[:60]!r}")
    return name


def parse_vkey(vkey: str, algorithm: int, kind: str) -> tuple[str, bytes]:
    """The name and Ed25519 public key of ``<name>+<key ID>+<base64(algorithm || key)>``, its key ID
    checked: a verifier key (0x01) or a witness's cosigner key (0x04); ``kind`` names it in a fault."""
    parts = vkey.strip().split("+", 2)
    if len(parts) != 3:
        raise NoteError(f"a {kind} key is <name>+<key ID>+<key>")
    name, hex_id, material = parts
    try:
        raw = base64.b64decode(material, validate=True)
        wanted = bytes.fromhex(hex_id)
    except (binascii.Error, ValueError):
        raise NoteError(f"a {kind} key's ID is 8 hex digits and its key base64") from None
    if len(hex_id) != 8 or len(raw) != 33 or raw[0] != algorithm:
        raise NoteError(f"not an Ed25519 {kind} key (type 0x{algorithm:02x} and 32 bytes)")
    public = raw[1:]
    if key_id(key_name(name), public, algorithm) != wanted:
        raise NoteError(f"the {kind} key's ID is not the hash of its name and key")
    return name, public


@dataclass(frozen=True)
class Verifier:
    """An Ed25519 verifier key of a signed note."""

    name: str
    public: bytes

    @property
    def key_id(self) -> bytes:
        return key_id(self.name, self.public)

    @property
    def vkey(self) -> str:
        material = base64.b64encode(bytes([ED25519]) + self.public).decode()
        return f"{self.name}+{self.key_id.hex()}+{material}"

    @classmethod
    def parse(cls, vkey: str) -> Verifier:
        return cls(*parse_vkey(vkey, ED25519, "verifier"))


@dataclass(frozen=True)
class Signer:
    """An Ed25519 signer of notes: a name and the key's 32-byte seed."""

    name: str
    seed: bytes

    @property
    def verifier(self) -> Verifier:
        public, _ = crypto_sign_seed_keypair(self.seed)
        return Verifier(key_name(self.name), public)

    @classmethod
    def parse(cls, skey: str) -> Signer:
        parts = skey.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise NoteError("a signer key is PRIVATE+KEY+<name>+<key ID>+<key>")
        raw = base64.b64decode(parts[4])
        if len(raw) != 33 or raw[0] != ED25519:
            raise NoteError("not an Ed25519 signer key")
        signer = cls(key_name(parts[2]), raw[1:])
        if signer.verifier.key_id.hex() != parts[3]:
            raise NoteError("the signer key's ID is not the hash of its name and key")
        return signer

    def sign(self, text: str) -> str:
        """``text`` (ending in a newline) as a note signed by this key alone."""
        if not text.endswith("\n"):
            raise NoteError("a note's text ends in a newline")
        _, secret = crypto_sign_seed_keypair(self.seed)
        signature = crypto_sign(text.encode(), secret)[:64]
        line = base64.b64encode(self.verifier.key_id + signature).decode()
        return f"{text}\n{DASH} {self.name} {line}\n"


def open_note(note: str | bytes, verifier: Verifier) -> str:
    """The text of ``note`` once a signature by ``verifier`` verifies on it. Signatures by other keys
    (another name or key ID) are ignored, as the spec says; one by this key that does not verify, or
    none by it, refuses the note (:class:`NoteError`)."""
    if isinstance(note, bytes):
        try:
            note = note.decode("utf-8")
        except UnicodeDecodeError:
            raise NoteError("a note is UTF-8") from None
    if any(ord(c) < 0x20 and c != "\n" for c in note):
        raise NoteError("a note holds no control character but newline")
    split = note.rfind("\n\n")
    if split < 0 or not note.endswith("\n"):
        raise NoteError("a note is a text, a blank line, then its signature lines")
    text, lines = note[: split + 1], note[split + 2 : -1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise NoteError(f"a note with more than {MAX_SIGNATURES} signatures is not read")
    found = False
    for line in lines:
        match = re.fullmatch(f"{DASH} ([^ ]+) ([A-Za-z0-9+/=]+)", line)
        if match is None:
            raise NoteError("a signature line is '— <name> <base64>'")
        try:
            blob = base64.b64decode(match[2], validate=True)
        except binascii.Error:
            raise NoteError("a signature is base64") from None
        if match[1] != verifier.name or blob[:4] != verifier.key_id:
            continue
        try:
            crypto_sign_open(blob[4:] + text.encode(), verifier.public)
        except (BadSignatureError, ValueError):
            raise NoteError(f"the signature of {verifier.name} does not verify") from None
        found = True
    if not found:
        raise NoteError(f"the note holds no signature of {verifier.name}+{verifier.key_id.hex()}")
    return text


@dataclass(frozen=True)
class Checkpoint:
    """A tree head as c2sp.org/tlog-checkpoint writes one, and the signed note that carried it."""

    origin: str
    size: int
    root: bytes
    note: str = ""

    def text(self) -> str:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"

    @classmethod
    def parse_text(cls, text: str, note: str = "") -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "" or any(line == "" for line in lines[:-1]):
            raise NoteError("a checkpoint is at least three non-empty lines: origin, size, root")
        origin, size, root = lines[0], lines[1], lines[2]
        if not re.fullmatch(r"0|[1-9][0-9]{0,19}", size) or int(size) >= 2**64:
            raise NoteError("a checkpoint's size is a decimal below 2**64 with no leading zero")
        try:
            raw = base64.b64decode(root, validate=True)
        except binascii.Error:
            raise NoteError("a checkpoint's root is base64") from None
        if len(raw) != HASH_SIZE:
            raise NoteError("a checkpoint's root is a 32-byte hash")
        return cls(origin, int(size), raw, note)


def open_checkpoint(note: str | bytes, verifier: Verifier, origin: str | None = None) -> Checkpoint:
    """A checkpoint whose note ``verifier`` signed, its origin ``origin`` (the key's name unless told)."""
    text = open_note(note, verifier)
    read = Checkpoint.parse_text(text, note if isinstance(note, str) else note.decode())
    wanted = verifier.name if origin is None else origin
    if read.origin != wanted:
        raise NoteError(f"the checkpoint is of {read.origin[:80]!r}, not {wanted!r}")
    return read
