"""A witness of logs (c2sp.org/tlog-witness, ``maubinh log witness``): an outside party that cosigns a
log's checkpoint only once it has seen the tree extend the last one it cosigned, so that a log showing one
tree to some and another to others (a fork) or taking entries back (a rollback) is caught by whoever
holds a cosigned checkpoint. Cosignatures are c2sp.org/tlog-cosignature's Ed25519 ones (``cosignature/v1``).

The witness keeps, for each log it follows, the size and root it last cosigned, in one JSON file written
whole and fsync'd before it answers; the check against it and the write happen under one lock, as the
spec asks (two requests racing cannot roll the record back).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import struct
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Final

from nacl.bindings import crypto_sign, crypto_sign_open, crypto_sign_seed_keypair
from nacl.exceptions import BadSignatureError

from service.support.deadline import within
from service.transparency.bounded_http import (
    CONTENT_LENGTH,
    IDLE_SECONDS,
    MOST_CONNECTIONS,
    BoundedHandler,
    BoundedServer,
)
from service.transparency.merkle import HASH_SIZE, ProofError, consistency_proof, verify_consistency
from service.transparency.note import DASH, Checkpoint, NoteError, Verifier, key_id, key_name, open_note, parse_vkey
from service.transparency.tiles import Read, TiledTree

COSIGNATURE: Final = 0x04
"""The signature type of an Ed25519 tlog-cosignature key (its key ID and its vkey)."""
MAX_PROOF_LINES: Final = 63
MAX_BODY: Final = 64 * 1024
SIZE_TYPE: Final = "text/x.tlog.size"
_OLD: Final = re.compile(r"old (0|[1-9][0-9]{0,19})")
"""A tree size: below 2**64, so at most 20 digits."""


def cosigned_message(checkpoint_text: str, timestamp: int) -> bytes:
    """What a cosigner signs: two header lines, then the checkpoint's note text (its signatures left out)."""
    return f"cosignature/v1\ntime {timestamp}\n{checkpoint_text}".encode()


@dataclass(frozen=True)
class CosignerKey:
    """A cosigner's public key, as a client configures it: a name and an Ed25519 key (vkey type 0x04)."""

    name: str
    public: bytes

    @property
    def key_id(self) -> bytes:
        return key_id(self.name, self.public, COSIGNATURE)

    @property
    def vkey(self) -> str:
        return f"{self.name}+{self.key_id.hex()}+{base64.b64encode(bytes([COSIGNATURE]) + self.public).decode()}"

    @classmethod
    def parse(cls, vkey: str) -> CosignerKey:
        return cls(*parse_vkey(vkey, COSIGNATURE, "cosigner"))

    def timestamp(self, note: str) -> int:
        """When this cosigner cosigned ``note`` (a checkpoint with its signature lines): :class:`NoteError`
        unless one of the lines is its cosignature and verifies."""
        split = note.rfind("\n\n")
        text = note[: split + 1]
        for line in note[split + 2 :].splitlines():
            name, _, signature = line.removeprefix(f"{DASH} ").partition(" ")
            try:
                blob = base64.b64decode(signature, validate=True) if name == self.name else b""
            except binascii.Error:
                continue
            if len(blob) != 76 or blob[:4] != self.key_id:
                continue
            (timestamp,) = struct.unpack(">Q", blob[4:12])
            try:
                crypto_sign_open(blob[12:] + cosigned_message(text, timestamp), self.public)
            except (BadSignatureError, ValueError):
                raise NoteError(f"the cosignature of {self.name} does not verify") from None
            return int(timestamp)
        raise NoteError(f"the checkpoint holds no cosignature of {self.name}+{self.key_id.hex()}")


@dataclass(frozen=True)
class Cosigner:
    """A witness's key: a name and the 32-byte seed of its Ed25519 key."""

    name: str
    seed: bytes

    @property
    def key(self) -> CosignerKey:
        public, _ = crypto_sign_seed_keypair(self.seed)
        return CosignerKey(key_name(self.name), public)

    def cosign(self, checkpoint_text: str, timestamp: int) -> str:
        """One note signature line, ``— <name> base64(key ID || timestamp || signature)``."""
        _, secret = crypto_sign_seed_keypair(self.seed)
        signature = crypto_sign(cosigned_message(checkpoint_text, timestamp), secret)[:64]
        blob = self.key.key_id + struct.pack(">Q", timestamp) + signature
        return f"{DASH} {self.name} {base64.b64encode(blob).decode()}\n"


@dataclass(frozen=True)
class Answer:
    """An add-checkpoint answer: the HTTP status, its content type and its body."""

    status: int
    content_type: str
    body: bytes

    @classmethod
    def says(cls, status: int, why: str) -> Answer:
        return cls(status, "text/plain; charset=utf-8", (why + "\n").encode())


class Witness:
    """The logs a witness follows (origin → the log's verifier key), and what it last cosigned of each."""

    def __init__(self, folder: Path, logs: dict[str, Verifier], cosigner: Cosigner) -> None:
        self.logs, self.cosigner = logs, cosigner
        self.record = folder / "witnessed.json"
        folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[int, bytes]] = {}
        if self.record.exists():
            for origin, held in json.loads(self.record.read_text()).items():
                self._seen[origin] = (int(held["size"]), base64.b64decode(held["root"]))

    def add_checkpoint(self, body: bytes, now: int) -> Answer:
        """The tlog-witness add-checkpoint call: each check and its status in the spec's order."""
        try:
            old, proof, note = _read_request(body)
            text = note[: note.rfind("\n\n") + 1]
            checkpoint = Checkpoint.parse_text(text, note)
        except (NoteError, ValueError) as error:
            return Answer.says(400, str(error.args[0]))
        verifier = self.logs.get(checkpoint.origin)
        if verifier is None:
            return Answer.says(404, f"this witness follows no log named {checkpoint.origin[:100]!r}")
        try:
            open_note(note, verifier)
        except NoteError as error:
            return Answer.says(403, str(error.args[0]))
        if old > checkpoint.size:
            return Answer.says(400, f"the old size {old} is larger than the checkpoint's {checkpoint.size}")
        with self._lock:
            size, root = self._seen.get(checkpoint.origin, (0, b""))
            if old != size:
                return Answer(409, SIZE_TYPE, f"{size}\n".encode())
            if old == checkpoint.size and old > 0 and root != checkpoint.root:
                return Answer.says(409, f"a checkpoint of {old} entries with another root than the one cosigned")
            try:
                verify_consistency(old, checkpoint.size, root if old else checkpoint.root, checkpoint.root, proof)
            except ProofError as error:
                return Answer.says(422, str(error.args[0]))
            self._seen[checkpoint.origin] = (checkpoint.size, checkpoint.root)
            self._write()
        return Answer(200, "text/plain; charset=utf-8", self.cosigner.cosign(text, now).encode())

    def _write(self) -> None:
        held = {o: {"size": s, "root": base64.b64encode(r).decode()} for o, (s, r) in sorted(self._seen.items())}
        aside = self.record.with_name(self.record.name + ".tmp")
        with open(aside, "w", encoding="utf-8") as file:
            json.dump(held, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(aside, self.record)
        folder = os.open(self.record.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _read_request(body: bytes) -> tuple[int, list[bytes], str]:
    """An add-checkpoint body: ``old N``, up to 63 proof hashes in base64, an empty line, the checkpoint."""
    if len(body) > MAX_BODY:
        raise ValueError(f"a request of at most {MAX_BODY} bytes")
    try:
        lines = body.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise ValueError("the request is UTF-8") from None
    old = _OLD.fullmatch(lines[0])
    if old is None:
        raise ValueError("the first line is 'old <size>', a decimal below 2**64 with no leading zero")
    proof: list[bytes] = []
    for at, line in enumerate(lines[1:], 1):
        if line == "":
            return int(old[1]), proof, "\n".join(lines[at + 1 :])
        if len(proof) == MAX_PROOF_LINES:
            raise ValueError(f"at most {MAX_PROOF_LINES} consistency proof lines")
        try:
            proof.append(base64.b64decode(line, validate=True))
        except binascii.Error:
            raise ValueError(f"proof line {at} is not base64") from None
        if len(proof[-1]) != HASH_SIZE:
            raise ValueError(f"proof line {at} is not a 32-byte hash")
    raise ValueError("no empty line ends the consistency proof")


class _Handler(BoundedHandler):
    server: WitnessServer

    def _send(self, answer: Answer, close: bool = False) -> None:
        """``close``: a refusal of a POST whose body is not read, so that none of it is read as a request."""
        self.close_connection = self.close_connection or close
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(answer.body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.split("?", 1)[0] == "/healthz":
            return self._send(
                Answer(200, "application/json", json.dumps({"logs": len(self.server.witness.logs)}).encode())
            )
        self._send(Answer.says(404, "checkpoints are cosigned with POST /add-checkpoint"))

    def _refusal(self) -> Answer | None:
        """Why a POST is refused before its body is read (its route, its length), if it is."""
        if self.path != "/add-checkpoint":
            return Answer.says(404, "checkpoints are cosigned with POST /add-checkpoint")
        length = self.headers.get("Content-Length")
        if length is None or not CONTENT_LENGTH.fullmatch(length):
            return Answer.says(411, "POST /add-checkpoint needs a Content-Length")
        if int(length) > MAX_BODY:
            return Answer.says(413, f"a request of at most {MAX_BODY} bytes")
        return None

    def refused_before_body(self) -> bool:
        refused = self._refusal()
        if refused is not None:
            self._send(refused, close=True)
        return refused is not None

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.refused_before_body():
            return
        body = self.read_body(int(self.headers["Content-Length"]))
        self._send(self.server.witness.add_checkpoint(body, int(time.time())))


class WitnessServer(BoundedServer):
    """A witness's HTTP API, open to whoever reaches it, bounded as the log's (:class:`BoundedServer`)."""

    def __init__(
        self,
        address: tuple[str, int],
        witness: Witness,
        most_connections: int = MOST_CONNECTIONS,
        idle_seconds: float = IDLE_SECONDS,
        most_per_client: int | None = None,
    ) -> None:
        self.witness = witness
        super().__init__(address, _Handler, most_connections, idle_seconds, most_per_client)


ASKING_SECONDS: Final = 60.0
"""The longest a witness's answer may take to come, whole (:func:`request_cosignature`)."""


def _answer(request: urllib.request.Request) -> tuple[int, bytes, str | None]:
    """The witness's status, body and content type: an error's body too, read within the same deadline."""
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return 200, bytes(answer.read(MAX_BODY)), None
    except urllib.error.HTTPError as error:
        return error.code, bytes(error.read(MAX_BODY)), error.headers.get("Content-Type")


def request_cosignature(read: Read, checkpoint: Checkpoint, witness: str, known: int = 0) -> tuple[int, bytes]:
    """Ask the witness at URL prefix ``witness`` to cosign ``checkpoint`` (a log's, read by ``read``): its
    status and body. ``known`` is the size the witness is believed to hold; when it says another (409),
    the request is made once more from that size, with the consistency proof made from the log's tiles."""
    tree = TiledTree(read, checkpoint.size)
    for _ in range(2):
        proof = consistency_proof(known, checkpoint.size, tree.subtree) if 0 < known < checkpoint.size else []
        lines = [f"old {known}", *(base64.b64encode(h).decode() for h in proof), "", checkpoint.note]
        request = urllib.request.Request(witness.rstrip("/") + "/add-checkpoint", "\n".join(lines).encode())
        status, body, kind = within(ASKING_SECONDS, partial(_answer, request))
        size = body.strip()  # as int() reads it: "3\n" is 3
        if status != 409 or kind != SIZE_TYPE or not re.fullmatch(rb"[0-9]{0,20}", size) or known == int(size or b"0"):
            return status, body
        known = int(size or b"0")
    return 409, body
