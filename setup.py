"""Compiles the settlement pipeline, the serializer, the hand evaluator, the patterns and the request
path's own modules (the strict JSON reader, the canonical JSON writer, the bounds, the room's rules,
loading and the documents) and the checks of a month of receipts with mypyc (C extensions) at install.

They are plain, strictly typed Python; compiled, the pipeline and the hand tables a one-room command
builds at start-up are faster, and a request spends less of its time outside the room (docs/layout.md
and docs/benchmarks.md give the figures). Set MAUBINH_PURE_PYTHON=1 to install without compiling
(everything works the same, slower).
"""

import os

from setuptools import setup

SCORING = [
    f"service/scoring/{name}.py"
    for name in ("__init__", "results", "evaluation", "pairs", "settlement", "scoops", "aces")
]
COMPILED = [
    *SCORING,
    "service/serialize.py",
    "service/game/hand_strengths.py",
    "service/game/hands.py",
    "service/game/patterns.py",
    "service/game/hand_words.py",
    "service/support/strict_json.py",
    "service/support/json_rules.py",
    "service/trust/canonical_json.py",
    "service/validation/bounds.py",
    "service/validation/room_rules.py",
    "service/validation/load.py",
    "service/validation/room_arrays.py",
    "service/validation/plain_rooms.py",
    "service/documents.py",
    "service/bulk/engine.py",
    "service/trust/rulings_in_bulk.py",
    "service/trust/receipts.py",
    "service/trust/rescoring.py",
    "service/trust/receipt_lines.py",
    "service/trust/answer_signatures.py",
]

if os.environ.get("MAUBINH_PURE_PYTHON") == "1":
    setup()
else:
    from mypyc.build import mypycify

    setup(ext_modules=mypycify(COMPILED, opt_level="3"))
