"""``maubinh``'s entry point: the command line (service.cli), started fast.

A command is a process, and its imports are most of a one-room ``maubinh score`` (bench/cli.py):
the dataclasses they make take their generated methods' code from the install (dataclass_code.py), and
what they made is then frozen out of the cyclic collector's passes (docs/benchmarks.md).
"""

from __future__ import annotations

import gc

from service.support.dataclass_code import kept


def main() -> int:
    with kept():
        from service.cli import main as run_command
    gc.freeze()  # what the imports made lives till exit: the collector need not walk it again
    return run_command()


if __name__ == "__main__":
    raise SystemExit(main())
