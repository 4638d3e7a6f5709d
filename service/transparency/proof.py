"""c2sp.org/tlog-proof@v1: an entry's index, its inclusion path and the checkpoint it is included in, as
text a receipt can carry and anyone can check with the log's verifier key and no network."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Final

from service.transparency.merkle import HASH_SIZE, ProofError, leaf_hash, verify_inclusion
from service.transparency.note import Checkpoint, NoteError, Verifier, open_checkpoint

HEADER: Final = "c2sp.org/tlog-proof@v1"


@dataclass(frozen=True)
class TlogProof:
    index: int
    path: tuple[bytes, ...]
    checkpoint: str
    """The checkpoint's signed note, verbatim."""
    extra: bytes | None = None

    def text(self) -> str:
        lines = [HEADER]
        if self.extra is not None:
            lines.append("extra " + base64.b64encode(self.extra).decode())
        lines.append(f"index {self.index}")
        lines += [base64.b64encode(h).decode() for h in self.path]
        return "\n".join(lines) + "\n\n" + self.checkpoint

    @classmethod
    def parse(cls, text: str) -> TlogProof:
        head, separator, checkpoint = text.partition("\n\n")
        lines = head.split("\n")
        if not separator or not lines or lines[0] != HEADER:
            raise ProofError(f"a proof starts with {HEADER} and holds a blank line before its checkpoint")
        at, extra = 1, None
        try:
            if len(lines) > at and lines[at].startswith("extra "):
                extra = base64.b64decode(lines[at][6:], validate=True)
                at += 1
            index = re.fullmatch(r"index (0|[1-9][0-9]{0,19})", lines[at]) if len(lines) > at else None
            if index is None or int(index[1]) >= 1 << 64:  # a tree's size is a uint64
                raise ProofError("a proof names its entry's index: 'index N', N below 2^64")
            path = tuple(base64.b64decode(line, validate=True) for line in lines[at + 1 :])
        except binascii.Error:
            raise ProofError("a proof's hashes are base64") from None
        if any(len(h) != HASH_SIZE for h in path):
            raise ProofError("a proof's hashes are 32 bytes each")
        return cls(int(index[1]), path, checkpoint, extra)

    def verify(self, entry: bytes, verifier: Verifier, origin: str | None = None) -> Checkpoint:
        """The checkpoint, once its signature verifies and the path proves ``entry`` at ``index`` in it;
        :class:`ProofError` (or :class:`NoteError`) says why not."""
        checkpoint = open_checkpoint(self.checkpoint, verifier, origin)
        verify_inclusion(leaf_hash(entry), self.index, checkpoint.size, self.path, checkpoint.root)
        return checkpoint


__all__ = ["HEADER", "NoteError", "ProofError", "TlogProof"]
