"""Small logs grown on a folder, shared by the log's and the witness's unit tests."""

from __future__ import annotations

from pathlib import Path

from service.transparency.integrate import Integrator
from service.transparency.note import Signer
from service.transparency.stores import FolderStore

ORIGIN = "maubinh.test/log"
SIGNER = Signer(ORIGIN, bytes(range(32)))


def grow(folder: Path, entries: list[bytes], steps: int = 3) -> Integrator:
    """A log in ``folder`` given ``entries`` in ``steps`` groups, integrated after each."""
    store = FolderStore(folder)
    integrator = Integrator(store, SIGNER, ORIGIN)
    cut = max(1, len(entries) // steps)
    for k in range(0, len(entries), cut):
        store.sequence(entries[k : k + cut])
        integrator.integrate()
    store.close()
    return integrator


def entries(n: int, tag: str = "e") -> list[bytes]:
    return [f'{{"{tag}":{k}}}'.encode() for k in range(n)]
