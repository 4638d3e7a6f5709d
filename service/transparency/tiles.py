"""c2sp.org/tlog-tiles: where each tile and entry bundle of a tree lives, what a bundle holds, and a tree
read (and checked whole) from them.

A tile at level L, number N, holds up to 256 hashes: each the hash of a complete subtree of ``256**L``
leaves. A tree of ``size`` leaves has, at each level, ``size // 256**(L+1)`` full tiles and, when
``size // 256**L % 256`` is not 0, one partial tile of that width at ``<path>.p/<width>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from service.transparency.merkle import HASH_SIZE, Frontier, ProofError, leaf_hash, node_hash

WIDTH: Final = 256
HEIGHT: Final = 8
"""A tile is a subtree of height 8: 256 hashes."""
MAX_ENTRY: Final = 0xFFFF
"""An entry bundle prefixes each entry with its length as a big-endian uint16."""

Read = Callable[[str], bytes | None]
"""A log's file by its path under the prefix (``checkpoint``, ``tile/0/000``): its bytes, or None."""


class TreeFault(ValueError):
    """A tile or bundle missing, of the wrong size, or not what its entries hash to: ``args[0]`` says which."""


def number_path(n: int) -> str:
    """``n`` in zero-padded 3-digit path elements, all but the last prefixed ``x``: 1234067 → x001/x234/067."""
    groups = [f"{n % 1000:03d}"]
    n //= 1000
    while n:
        groups.append(f"x{n % 1000:03d}")
        n //= 1000
    return "/".join(reversed(groups))


def tile_path(level: int | str, n: int, width: int = WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]``; level ``"entries"`` for an entry bundle."""
    if not 1 <= width <= WIDTH:
        raise ValueError(f"a tile is 1 to 256 wide, not {width}")
    suffix = "" if width == WIDTH else f".p/{width}"
    return f"tile/{level}/{number_path(n)}{suffix}"


def tile_width(size: int, level: int, n: int) -> int:
    """The width of tile ``n`` at ``level`` in a tree of ``size`` leaves (0: the tree has no such tile)."""
    hashes = size >> (HEIGHT * level)
    return max(0, min(WIDTH, hashes - n * WIDTH))


def bundle(entries: list[bytes]) -> bytes:
    out = bytearray()
    for entry in entries:
        if len(entry) > MAX_ENTRY:
            raise ValueError(f"an entry is at most {MAX_ENTRY} bytes, not {len(entry)}")
        out += len(entry).to_bytes(2, "big") + entry
    return bytes(out)


def unbundle(data: bytes, most: int | None = None) -> list[bytes]:
    """An entry bundle's entries; :class:`TreeFault` for one that runs past the end, or holds more than
    ``most``."""
    entries: list[bytes] = []
    at = 0
    while at < len(data):
        if most is not None and len(entries) == most:
            raise TreeFault(f"an entry bundle of at most {most} entries")
        if at + 2 > len(data):
            raise TreeFault("an entry bundle ends inside a length")
        length = int.from_bytes(data[at : at + 2], "big")
        if at + 2 + length > len(data):
            raise TreeFault("an entry bundle ends inside an entry")
        entries.append(data[at + 2 : at + 2 + length])
        at += 2 + length
    return entries


def tile_root(hashes: bytes) -> bytes:
    """The hash of a full tile's subtree: its 256 hashes hashed up eight levels."""
    level = [hashes[k : k + HASH_SIZE] for k in range(0, len(hashes), HASH_SIZE)]
    while len(level) > 1:
        level = [node_hash(level[k], level[k + 1]) for k in range(0, len(level), 2)]
    return level[0]


class TiledTree:
    """A tree of ``size`` leaves read from its tiles: the hash of any complete subtree, so its root and
    any proof (:mod:`service.transparency.merkle`). Tiles read are kept; with ``keep_all`` False (a walk
    through every entry, :func:`check_tree`), only the last one read at each level, since a whole log's
    tiles are 32 bytes an entry."""

    def __init__(self, read: Read, size: int, keep_all: bool = True) -> None:
        self.read, self.size, self.keep_all = read, size, keep_all
        self._tiles: dict[tuple[int, int], bytes] = {}

    def tile(self, level: int, n: int) -> bytes:
        width = tile_width(self.size, level, n)
        if width == 0:
            raise TreeFault(f"a tree of {self.size} has no tile {level}/{n}")
        if (level, n) not in self._tiles:
            path = tile_path(level, n, width)
            data = self.read(path)
            if data is None or len(data) != width * HASH_SIZE:
                raise TreeFault(f"{path} is missing or not {width} hashes")
            if not self.keep_all:
                for kept in [key for key in self._tiles if key[0] == level]:
                    del self._tiles[kept]
            self._tiles[level, n] = data
        return self._tiles[level, n]

    def subtree(self, height: int, index: int) -> bytes:
        level, rest = divmod(height, HEIGHT)
        first = index << rest
        data = self.tile(level, first // WIDTH)
        at = first % WIDTH
        if (at + (1 << rest)) * HASH_SIZE > len(data):
            raise ProofError(f"the subtree {height}/{index} is not complete in a tree of {self.size}")
        hashes = [data[k * HASH_SIZE : (k + 1) * HASH_SIZE] for k in range(at, at + (1 << rest))]
        while len(hashes) > 1:
            hashes = [node_hash(hashes[k], hashes[k + 1]) for k in range(0, len(hashes), 2)]
        return hashes[0]

    def entries(self, n: int) -> list[bytes]:
        """Bundle ``n``'s entries, each checked against the level-0 tile: :class:`TreeFault` if not."""
        width = tile_width(self.size, 0, n)
        path = tile_path("entries", n, width)
        data = self.read(path)
        if data is None:
            raise TreeFault(f"{path} is missing")
        found = unbundle(data)
        if len(found) != width:
            raise TreeFault(f"{path} holds {len(found)} entries, not {width}")
        if b"".join(leaf_hash(entry) for entry in found) != self.tile(0, n):
            raise TreeFault(f"{path} does not hash to {tile_path(0, n, width)}")
        return found


def every_entry(tree: TiledTree) -> Iterator[tuple[int, bytes]]:
    """Every entry of the tree with its index, each bundle checked against its tile (:meth:`TiledTree.entries`)."""
    for n in range((tree.size + WIDTH - 1) // WIDTH):
        for k, entry in enumerate(tree.entries(n)):
            yield n * WIDTH + k, entry


def check_tree(tree: TiledTree, root: bytes) -> Iterator[tuple[int, bytes]]:
    """Every entry, as :func:`every_entry` gives them, while every tile of every level is recomputed from
    the entries and compared byte for byte, and the root from them with ``root``: :class:`TreeFault` at
    the first that differs (the root once the last entry is read)."""
    frontier = Frontier()
    pending: list[bytearray] = [bytearray()]
    numbers = [0]
    for index, entry in every_entry(tree):
        leaf = leaf_hash(entry)
        frontier.append(leaf)
        pending[0] += leaf
        level = 0
        while len(pending[level]) == WIDTH * HASH_SIZE:
            if bytes(pending[level]) != tree.tile(level, numbers[level]):
                raise TreeFault(f"{tile_path(level, numbers[level])} is not what its entries hash to")
            up = tile_root(bytes(pending[level]))
            pending[level] = bytearray()
            numbers[level] += 1
            level += 1
            if level == len(pending):
                pending.append(bytearray())
                numbers.append(0)
            pending[level] += up
        yield index, entry
    for level, hashes in enumerate(pending):
        if hashes and bytes(hashes) != tree.tile(level, numbers[level]):
            raise TreeFault(
                f"{tile_path(level, numbers[level], len(hashes) // HASH_SIZE)} is not what its entries hash to"
            )
    if frontier.root() != root:
        raise TreeFault("the entries do not hash to the checkpoint's root")
