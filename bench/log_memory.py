"""What reading a whole transparency log costs in memory: `maubinh log monitor` and `maubinh receipts
verify --log` (one receipt, the log's tree read whole and checked) over a folder log of N statements and
of 4N, their peak RSS, and from the difference the bytes an entry (start-up and numpy cancel out).

The statements are the service's own (service/trust/ruling_log.py: a round id, a room digest, a content
digest, a key id, a time, a route), one round in 1,000 ruled on a second room. With --against OTHER
(another build's source tree, compiled), the same commands of that build, for a before/after.
Run: .venv/bin/python bench/log_memory.py [--entries 100000] [--against OTHER]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).parent))
from explained import launcher
from receipt_month import CREATED, Maker, room
from receipts import rss as peak_kib

from service.transparency.integrate import Integrator
from service.transparency.note import Signer
from service.transparency.stores import FolderStore
from service.trust.ruling_log import statement

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
SIGNER = Signer("maubinh.bench/log", bytes(range(32)))


def write_log(folder: Path, count: int, keyid: str) -> None:
    """``count`` statements signed by ``keyid`` in a folder log, integrated in groups as the service feeds them."""
    store = FolderStore(folder)
    integrator = Integrator(store, SIGNER, SIGNER.name)
    for start in range(0, count, 50_000):
        rulings = [
            statement(f"2026-11/{k // 2 if k % 1000 == 1 else k}", f"sha256:{k:064x}", "sha-256=:x:", keyid,
                      CREATED + k, "/v1/score")
            for k in range(start, min(count, start + 50_000))
        ]  # fmt: skip
        store.sequence(rulings)
        integrator.integrate()
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--against", metavar="OTHER", help="another build's source tree, compiled")
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    work = Path(tempfile.mkdtemp(prefix="maubinh-log-memory-"))
    maker = Maker()
    receipt = work / "receipt.json"
    receipt.write_text(json.dumps(maker.receipt(room(__import__("random").Random(1), "2026-11/0"))))
    keys = work / "keys.json"
    keys.write_text(json.dumps(maker.jwks))
    sizes = (args.entries, 4 * args.entries)
    for size in sizes:
        write_log(work / str(size), size, maker.signer.key_id)
    builds = {"ours": [MAUBINH]} | ({args.against: launcher(args.against)} if args.against else {})
    print(
        f"peak RSS reading a folder log whole, {sizes[0]:,} and {sizes[1]:,} entries; bytes an entry from the difference:"
    )
    for name, maubinh in builds.items():
        for label, words in (
            ("log monitor", ["log", "monitor", "--keys", str(keys)]),
            ("receipts verify --log", ["receipts", "verify", str(receipt), "--keys", str(keys), "--log-key", SIGNER.verifier.vkey]),
        ):  # fmt: skip
            peaks = [peak_kib([*maubinh, *words, "--log", str(work / str(size)), *(
                ["--vkey", SIGNER.verifier.vkey] if words[0] == "log" else [])]) for size in sizes]  # fmt: skip
            per_entry = (peaks[1] - peaks[0]) * 1024 / (sizes[1] - sizes[0])
            print(
                f"  {name:>14} {label:<22}: {peaks[0] / 1024:7.0f} MiB, {peaks[1] / 1024:7.0f} MiB: {per_entry:6.0f} bytes an entry"
            )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
