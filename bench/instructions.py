"""Instructions per four-player room, counted by valgrind (cachegrind --cache-sim=no), which this
shared host's noise does not move.

The whole path is ``maubinh score --jsonl --jobs 1`` over 800 and over 200 rooms:
(I(800) − I(200)) / 600, so that start-up cancels out. The stages are the same difference over an
in-process loop that stops after each stage in turn (parse → load → settle → answer → bytes): each
row is what its stage adds to the one before. Then a request through the WSGI app in process (Flask,
metrics, logs off): ``POST /v1/score`` against ``GET /healthz``, what sets their throughput ratio,
against the same with a caller's key (a callers file of 1,000, no quota): what knowing the caller costs,
and against the same signed (Ed25519, service/trust/signing.py): what a signature and the room's digest cost.
Run: .venv/bin/python bench/instructions.py        (about 4 minutes)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from rooms import four_player_rooms

STAGES = ("parse", "load", "settle", "answer", "bytes")
LOOP = """
import sys
from service.documents import _check_amounts
from service.scoring import score
from service.serialize import dumps, result_json
from service.support.strict_json import loads
from service.validation import load_room

stage = sys.argv[1]
for line in open(sys.argv[2], "rb"):
    raw = loads(line)
    if stage == "parse":
        continue
    room = load_room(raw, None)
    if stage == "load":
        continue
    result = score(room)
    _check_amounts(result)
    if stage == "settle":
        continue
    body = result_json(result, "en")
    if stage == "answer":
        continue
    dumps(body, "en")
"""
FLOOR = """
import hashlib, sys
from nacl.bindings import crypto_sign, crypto_sign_seed_keypair
from service.documents import score_document
from service.serialize import dumps
from service.support.strict_json import loads

_, secret = crypto_sign_seed_keypair(bytes(32))
floor = sys.argv[1] == "floor"
for line in open(sys.argv[2], "rb"):
    body = dumps(score_document(loads(line)))
    if floor:  # what the issue fixes: a SHA-256 Content-Digest of the answer and an Ed25519 signature
        hashlib.sha256(body).digest()
        crypto_sign(bytes(300), secret)
"""
REQUESTS = """
import io, os, sys, tempfile
os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp()
from service.api import create_app
keyed, signed = sys.argv[1] == "keyed", sys.argv[1] == "signed"
app = create_app({"log_requests": False} | ({"callers_file": os.environ["BENCH_CALLERS"]} if keyed else {})
                 | ({"signing_key_file": os.environ["BENCH_SIGNING_KEY"]} if signed else {}))
import gc
gc.collect()
gc.freeze()  # as gunicorn's master does before each fork (service/server/gunicorn_config.py, pre_fork)
app.extensions["maubinh.callers"].started()  # and as each worker does as it starts
score = sys.argv[1] in ("score", "keyed", "signed")
for line in open(sys.argv[2], "rb"):
    environ = {"REQUEST_METHOD": "POST" if score else "GET", "PATH_INFO": "/v1/score" if score else "/healthz",
               "HTTP_AUTHORIZATION": "Bearer bench-key-500" if keyed else "",
               "SERVER_NAME": "x", "SERVER_PORT": "80", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(line),
               "CONTENT_LENGTH": str(len(line)), "CONTENT_TYPE": "application/json", "SERVER_PROTOCOL": "HTTP/1.1",
               "wsgi.errors": sys.stderr}
    statuses = []
    b"".join(app(environ, lambda status, headers, exc=None: statuses.append(status)))
    assert statuses[0].startswith("200"), statuses
"""


def instructions(command: list[str], env: dict[str, str] | None = None) -> int:
    """Instructions the command runs, start to exit; ``env`` adds to this process's environment."""
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *command],
        capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(), env={**os.environ, **(env or {})},
    )  # fmt: skip
    return int(re.search(r"I\s+refs:\s+([\d,]+)", done.stderr).group(1).replace(",", ""))  # type: ignore[union-attr]


def per_room(command: list[str], small: Path, large: Path, env: dict[str, str] | None = None) -> float:
    return (instructions([*command, str(large)], env) - instructions([*command, str(small)], env)) / 600


def added_by(command: list[str], mode: str, small: Path, large: Path, env: dict[str, str]) -> tuple[list[float], float]:
    """What ``mode`` adds to a plain ``score`` request, as a fraction, under hash seeds 0, 1 and 2 (each
    seed the same for both runs: seeds move a run by up to 2%, dict layouts); and the last seed's count."""
    fractions, last = [], 0.0
    for seed in ("0", "1", "2"):
        fixed = {"PYTHONHASHSEED": seed, **env}
        plain, last = (per_room([*command, run], small, large, fixed) for run in ("score", mode))
        fractions.append((last - plain) / plain)
    return fractions, last


def sample(name: str, loop_text: str) -> tuple[Path, Path, Path]:
    """A fresh folder with 200 and 800 four-player rooms as JSON lines, and ``loop_text`` as a script:
    (small, large, loop)."""
    work = Path(tempfile.mkdtemp(prefix=f"maubinh-{name}-"))
    rooms = four_player_rooms(800, seed=1)
    large, small = work / "800.jsonl", work / "200.jsonl"
    large.write_text("".join(json.dumps(room) + "\n" for room in rooms))
    small.write_text("".join(json.dumps(room) + "\n" for room in rooms[:200]))
    loop = work / "loop.py"
    loop.write_text(loop_text)
    return small, large, loop


def main() -> None:
    small, large, loop = sample("instructions", LOOP)
    maubinh = str(Path(sys.executable).with_name("maubinh"))
    whole = (instructions([maubinh, "score", "--jsonl", str(large), "--jobs", "1", "-o", "/dev/null"])
             - instructions([maubinh, "score", "--jsonl", str(small), "--jobs", "1", "-o", "/dev/null"])) / 600  # fmt: skip
    print("instructions per 4-player room (valgrind, (I(800) - I(200)) / 600)")
    print("| stage | instructions | share |")
    print("|---|---|---|")
    before = 0.0
    cumulative = {}
    for stage in STAGES:
        cumulative[stage] = per_room([sys.executable, str(loop), stage], small, large)
    in_process = cumulative["bytes"]
    for stage in STAGES:
        added = cumulative[stage] - before
        before = cumulative[stage]
        print(f"| {stage} | {added / 1e6:.3f} M | {added / in_process:.0%} |")
    print(f"| in process, bytes to bytes | {in_process / 1e6:.3f} M | |")
    print(f"| maubinh score --jsonl --jobs 1, the whole path | {whole / 1e6:.3f} M | (goal <= 2.0 M) |")
    _, _, requests = sample("requests", REQUESTS)
    score, health = (per_room([sys.executable, str(requests), route], small, large) for route in ("score", "healthz"))
    callers = requests.with_name("callers.toml")  # 1,000 callers, none with a quota
    callers.write_text("".join(
        f'[callers.c{n}]\nkeys = [{{ sha256 = "{hashlib.sha256(f"bench-key-{n}".encode()).hexdigest()}" }}]\n'
        for n in range(1000)
    ))  # fmt: skip
    keying, keyed = added_by([sys.executable, str(requests)], "keyed", small, large, {"BENCH_CALLERS": str(callers)})
    key = requests.with_name("signing.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
    signing, signed = added_by([sys.executable, str(requests)], "signed", small, large, {"BENCH_SIGNING_KEY": str(key)})
    _, _, floor_loop = sample("floor", FLOOR)
    floor = per_room([sys.executable, str(floor_loop), "floor"], small, large) - per_room(
        [sys.executable, str(floor_loop), "answer"], small, large
    )
    print("instructions per request through the WSGI app, in process (Flask, metrics; logs off)")
    print("| request | instructions |")
    print("|---|---|")
    print(f"| POST /v1/score, one four-player room | {score / 1e6:.3f} M |")
    print(f"| GET /healthz | {health / 1e6:.3f} M |")
    print(f"| the difference: what a room costs a request | {(score - health) / 1e6:.3f} M |")
    print(f"| POST /v1/score with a caller's key (1,000 callers, no quota) | {keyed / 1e6:.3f} M (seed 2) |")
    print(
        f"| what the key adds, median of 3 hash seeds | {statistics.median(keying):+.2%} (goal <= +3%), "
        f"each {', '.join(f'{a:+.2%}' for a in keying)} |"
    )
    print(f"| POST /v1/score signed (Ed25519) | {signed / 1e6:.3f} M (seed 2) |")
    print(
        f"| what signing adds, median of 3 hash seeds | {statistics.median(signing):+.2%} (goal <= +10%), "
        f"each {', '.join(f'{a:+.2%}' for a in signing)} |"
    )
    print(
        f"| of which the floor: SHA-256 of the answer and one Ed25519 signature (libsodium), nothing else "
        f"| {floor / 1e3:.0f} k, {floor / score:+.2%} of the unsigned request |"
    )


if __name__ == "__main__":
    main()
