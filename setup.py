"""Compiles the settlement pipeline, the serializer, the hand evaluator and the patterns with mypyc
(C extensions) at install.

They are plain, strictly typed Python; compiled, the pipeline and the hand tables a one-room command
builds at start-up are faster (README, Layout, gives the figures). Set MAUBINH_PURE_PYTHON=1 to
install without compiling (everything works the same, slower).
"""

import os

from setuptools import setup

SCORING = [f"service/scoring/{name}.py" for name in ("__init__", "results", "evaluation", "stages")]
COMPILED = [*SCORING, "service/serialize.py", "service/hands.py", "service/patterns.py", "service/hand_words.py"]

if os.environ.get("MAUBINH_PURE_PYTHON") == "1":
    setup()
else:
    from mypyc.build import mypycify

    setup(ext_modules=mypycify(COMPILED, opt_level="3"))
