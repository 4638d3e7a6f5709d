"""RFC 6962's Merkle tree over SHA-256: leaf and node hashes, the root of a range read from complete
subtrees, inclusion and consistency proofs made (RFC 6962 §2.1.1, §2.1.2) and checked (RFC 9162 §2.1.3.2,
§2.1.4.2).

A tree is read through ``subtree(height, index)``: the hash of the complete subtree of ``2**height``
leaves starting at leaf ``index * 2**height``, which the tiles hold (:mod:`service.transparency.tiles`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Final

HASH_SIZE: Final = 32
EMPTY_ROOT: Final = hashlib.sha256(b"").digest()

Subtree = Callable[[int, int], bytes]
"""``subtree(height, index)``: the hash of leaves ``[index << height, (index + 1) << height)``."""


class ProofError(ValueError):
    """A proof that does not check, or a request for one that cannot exist: ``args[0]`` says why."""


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1): where RFC 6962 splits a tree of n leaves."""
    return 1 << ((n - 1).bit_length() - 1)


def range_hash(start: int, end: int, subtree: Subtree) -> bytes:
    """MTH(D[start:end]) for a range the RFC's recursion reaches (``start`` aligned to the range's left
    subtree): its complete subtrees, largest first, folded from the right."""
    if end <= start:
        raise ProofError("an empty range has no hash")
    parts: list[bytes] = []
    at = start
    while at < end:
        height = (end - at).bit_length() - 1
        while at % (1 << height):
            height -= 1
        parts.append(subtree(height, at >> height))
        at += 1 << height
    folded = parts[-1]
    for part in reversed(parts[:-1]):
        folded = node_hash(part, folded)
    return folded


def root(size: int, subtree: Subtree) -> bytes:
    """The tree head of the first ``size`` leaves."""
    return EMPTY_ROOT if size == 0 else range_hash(0, size, subtree)


def inclusion_proof(index: int, size: int, subtree: Subtree) -> list[bytes]:
    """RFC 6962 §2.1.1's PATH(index, D[0:size]), from the leaf's sibling up."""
    if not 0 <= index < size:
        raise ProofError(f"index {index} is not in a tree of {size}")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index - start < k:
            path.append(range_hash(start + k, end, subtree))
            end = start + k
        else:
            path.append(range_hash(start, start + k, subtree))
            start += k
    path.reverse()
    return path


def consistency_proof(old: int, new: int, subtree: Subtree) -> list[bytes]:
    """RFC 6962 §2.1.2's PROOF(old, D[0:new])."""
    if not 0 <= old <= new:
        raise ProofError(f"no consistency proof from {old} to {new}")
    if old in (0, new):
        return []
    path: list[bytes] = []
    start, end, complete = 0, new, True
    m = old
    while m != end - start:
        k = _split(end - start)
        if m <= k:
            path.append(range_hash(start + k, end, subtree))
            end = start + k
        else:
            path.append(range_hash(start, start + k, subtree))
            start += k
            m -= k
            complete = False
    if not complete:
        path.append(range_hash(start, end, subtree))
    path.reverse()
    return path


def verify_inclusion(entry_hash: bytes, index: int, size: int, path: Sequence[bytes], tree_root: bytes) -> None:
    """RFC 9162 §2.1.3.2; :class:`ProofError` unless ``path`` proves the leaf in the tree."""
    if not 0 <= index < size:
        raise ProofError(f"index {index} is not in a tree of {size}")
    fn, sn, r = index, size - 1, entry_hash
    for p in path:
        if len(p) != HASH_SIZE or sn == 0:
            raise ProofError("the inclusion proof is too long or holds a hash of the wrong size")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is too short")
    if r != tree_root:
        raise ProofError("the inclusion proof leads to another root")


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes, path: Sequence[bytes]) -> None:
    """RFC 9162 §2.1.4.2; :class:`ProofError` unless ``path`` proves the tree of ``old`` leaves a prefix of
    the tree of ``new``."""
    if not 0 <= old <= new:
        raise ProofError(f"a tree of {new} cannot extend one of {old}")
    if old in (new, 0):
        if path:
            raise ProofError("a consistency proof between these sizes is empty")
        if old == new and old_root != new_root:
            raise ProofError("two trees of one size with different roots")
        return
    if not path or any(len(p) != HASH_SIZE for p in path):
        raise ProofError("the consistency proof is empty or holds a hash of the wrong size")
    hashes = list(path)
    if old & (old - 1) == 0:
        hashes.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = hashes[0]
    for c in hashes[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is too long")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the consistency proof is too short")
    if fr != old_root or sr != new_root:
        raise ProofError("the older tree is not a prefix of the newer one")


class Frontier:
    """The complete subtrees a growing tree ends in, largest first: its root after each append costs
    about one node hash a leaf, and nothing of the leaves is kept."""

    def __init__(self, size: int = 0, subtrees: list[bytes] | None = None) -> None:
        self.size = size
        self.subtrees = subtrees or []

    @classmethod
    def of(cls, size: int, subtree: Subtree) -> Frontier:
        """The frontier of a tree already of ``size`` leaves, read from its complete subtrees."""
        hashes, at = [], 0
        for height in range(size.bit_length() - 1, -1, -1):
            if size >> height & 1:
                hashes.append(subtree(height, at >> height))
                at += 1 << height
        return cls(size, hashes)

    def append(self, leaf: bytes) -> None:
        self.subtrees.append(leaf)
        self.size += 1
        merges = (self.size & -self.size).bit_length() - 1  # the trailing zero bits: subtrees completed
        for _ in range(merges):
            right = self.subtrees.pop()
            self.subtrees[-1] = node_hash(self.subtrees[-1], right)

    def root(self) -> bytes:
        if not self.subtrees:
            return EMPTY_ROOT
        folded = self.subtrees[-1]
        for part in reversed(self.subtrees[:-1]):
            folded = node_hash(part, folded)
        return folded
