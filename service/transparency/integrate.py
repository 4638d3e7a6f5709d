"""Integration: what was sequenced since the last checkpoint made into tiles, entry bundles and a new
checkpoint signed with the log's key.

The integrator keeps the right edge of the tree in memory (each level's partial tile, the partial
bundle's entries, the Merkle frontier), read back from the store's files when it starts: a log killed
at any moment starts again from its last checkpoint and integrates the journal's rest, writing the same
bytes, since a tile's content is fixed by the entries before it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from service.transparency.merkle import HASH_SIZE, Frontier, leaf_hash
from service.transparency.note import Checkpoint, Signer
from service.transparency.stores import Store
from service.transparency.tiles import HEIGHT, WIDTH, TiledTree, bundle, tile_path, tile_root, tile_width


class Integrator:
    def __init__(self, store: Store, signer: Signer, origin: str) -> None:
        self.store, self.signer, self.origin = store, signer, origin
        held = store.read("checkpoint")
        size = Checkpoint.parse_text(held.decode().partition("\n\n")[0] + "\n").size if held else 0
        tree = TiledTree(store.read, size)
        self.frontier = Frontier.of(size, tree.subtree)
        self.levels: list[bytearray] = []
        level = 0
        while size >> (HEIGHT * level):
            n = (size >> (HEIGHT * level)) // WIDTH
            partial = tile_width(size, level, n)
            self.levels.append(bytearray(tree.tile(level, n) if partial else b""))
            level += 1
        if not self.levels:
            self.levels.append(bytearray())
        self.bundled = tree.entries(size // WIDTH) if size % WIDTH else []
        self.size = size
        self.published = size
        """The size of the last checkpoint written (``size`` runs ahead of it while one is made)."""
        self.lock = threading.Lock()
        if held is None:
            self._publish({})

    def _publish(self, files: dict[str, bytes]) -> None:
        text = Checkpoint(self.origin, self.size, self.frontier.root()).text()
        self.store.publish(files, self.signer.sign(text).encode())

    def integrate(self) -> int:
        """Integrate every entry sequenced so far: the new tree size (the same when there was none)."""
        with self.lock:
            wanted = self.store.sequenced()
            if wanted == self.size:
                return self.size
            files: dict[str, bytes] = {}
            for entry in self.store.entries(self.size, wanted):
                self._append(entry, files)
            for level, hashes in enumerate(self.levels):
                if hashes:
                    n = (self.size >> (HEIGHT * level)) // WIDTH
                    files[tile_path(level, n, len(hashes) // HASH_SIZE)] = bytes(hashes)
            if self.bundled:
                files[tile_path("entries", self.size // WIDTH, len(self.bundled))] = bundle(self.bundled)
            self._publish(files)
            self.published = self.size
            self.store.integrated(self.size)
            return self.size

    def _append(self, entry: bytes, files: dict[str, bytes]) -> None:
        leaf = leaf_hash(entry)
        self.frontier.append(leaf)
        self.size += 1
        self.bundled.append(entry)
        self.levels[0] += leaf
        if len(self.bundled) == WIDTH:
            files[tile_path("entries", self.size // WIDTH - 1)] = bundle(self.bundled)
            self.bundled = []
        level = 0
        while len(self.levels[level]) == WIDTH * HASH_SIZE:
            full = bytes(self.levels[level])
            files[tile_path(level, (self.size >> (HEIGHT * level)) // WIDTH - 1)] = full
            self.levels[level] = bytearray()
            level += 1
            if level == len(self.levels):
                self.levels.append(bytearray())
            self.levels[level] += tile_root(full)


def integrating(integrator: Integrator, interval: float, stop: threading.Event,
                failed: Callable[[Exception], None]) -> threading.Thread:  # fmt: skip
    """A thread integrating every ``interval`` seconds until ``stop`` is set (and once more then)."""

    def loop() -> None:
        while True:
            stopping = stop.wait(interval)
            started, before = time.monotonic(), integrator.size
            try:
                integrator.integrate()
                took = time.monotonic() - started
                if took > 1:
                    logging.getLogger("maubinh.log").warning(
                        "integrating %d entries took %.2f s", integrator.size - before, took
                    )
            except Exception as error:
                failed(error)
            if stopping:
                return

    thread = threading.Thread(target=loop, name="maubinh-log-integrator", daemon=True)
    thread.start()
    return thread
