"""What reloading a callers file of 10,000 callers costs: in process, and to a real `maubinh serve`'s probes.

    .venv/bin/python bench/callers_reload.py [--changes 4] [--in-place 15]

Writes a callers file of 10,000 callers (2 or 3 keys each, routes, rulesets, a quota: ≈ 3.6 MiB), then
prints (1) in process, the median of 3: parsing it (`callers.load`: TOML and the checks), taking another
worker's reading of it from the shared folder (the JSON a worker keeps there), both files' sizes and
the memory the callers hold; (2) against `maubinh serve` (2 workers) started on it, the file replaced
`--changes` times, 5 s apart, as a Kubernetes Secret's update replaces it, while `GET /healthz` is
probed every 50 ms with a 2 s timeout: the probes, those that timed out, the slowest and the 99th
percentile, and how often gevent's monitor found a worker's event loop held 50 ms or more (nothing
else answers while it is); (3) a small file rewritten in place (`cat > file`) for `--in-place` seconds
while a caller asks a route outside its scope: how often it was let in, and keys refused meanwhile.
docs/callers.md quotes the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from load import free_port, wait_ready

from service.trust import callers, callers_source

CALLERS = 10_000
BLOCKED = 0.05
"""gevent's monitor thread reports each time a worker's event loop has not run for this long."""
MiB = 1024 * 1024


def callers_text(change: int) -> str:
    tables = []
    for n in range(CALLERS):
        keys = ", ".join(
            f'{{ sha256 = "{hashlib.sha256(f"k{n}-{j}-{change if n == 0 else 0}".encode()).hexdigest()}", '
            "expires = 2030-01-01T00:00:00Z }"
            for j in range(3 if n % 3 == 0 else 2)
        )
        tables.append(
            f'[callers.club-{n:05d}]\nkeys = [{keys}]\nroutes = ["score", "batch", "verify"]\n'
            f'rulesets = ["club-{n}"]\nrooms_per_minute = {600 + n}\n\n'
        )
    return "".join(tables)


def replace(path: Path, text: str) -> None:
    """A new file renamed over the old one, as the kubelet swaps a Secret's files."""
    fresh = path.with_suffix(".new")
    fresh.write_text(text)
    os.replace(fresh, path)


def median_seconds(work: object, rounds: int = 3) -> float:
    took = []
    for _ in range(rounds):
        began = time.perf_counter()
        work()  # type: ignore[operator]
        took.append(time.perf_counter() - began)
    return statistics.median(took)


def in_process(path: Path) -> None:
    parse = median_seconds(lambda: callers.load(str(path)))
    print(f"file: {CALLERS:,} callers, {path.stat().st_size / MiB:.2f} MiB; parse (TOML and checks): {parse:.2f} s")
    tracemalloc.start()
    found = callers.load(str(path))
    held = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"the callers held: {held[0] / MiB:.1f} MiB (peak while parsing {held[1] / MiB:.1f} MiB)")
    if hasattr(callers, "_encode"):  # the shared folder's reading
        kept = callers_source.encode_last_good(found, (0, 0, 0, 0, 0, 0), 1)
        taken = median_seconds(lambda: callers_source.decode_last_good(kept))
        tracemalloc.start()
        callers_source.decode_last_good(kept)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(
            f"last good callers kept for other workers: {len(kept) / MiB:.2f} MiB; taking them: {taken:.2f} s "
            f"(peak {peak / MiB:.1f} MiB)"
        )


def served(path: Path, changes: int) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(MAUBINH_WORKERS="2", MAUBINH_LOG_REQUESTS="off", MAUBINH_CALLERS_FILE=str(path))
    env.update(GEVENT_MONITOR_THREAD_ENABLE="1", GEVENT_MAX_BLOCKING_TIME=str(BLOCKED))  # gevent reports a stall
    script = Path(sys.executable).with_name("maubinh")
    said = path.with_suffix(".log")
    with said.open("wb") as log:
        process = subprocess.Popen(
            [str(script), "serve", "--host", "127.0.0.1", "--port", str(port)], env=env, stderr=log
        )
    base = f"http://127.0.0.1:{port}"
    took: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            began = time.monotonic()
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                    response.read()
                took.append(time.monotonic() - began)
            except OSError:
                took.append(float("inf"))
            time.sleep(max(0.0, 0.05 - (time.monotonic() - began)))

    try:
        wait_ready(base, 60)
        time.sleep(2)
        prober = threading.Thread(target=probe)
        prober.start()
        for change in range(1, changes + 1):
            time.sleep(5)
            replace(path, callers_text(change))
        time.sleep(6)
        stop.set()
        prober.join()
        newest = [status(base, f"k0-0-{changes}") for _ in range(10)]
        oldest = [status(base, "k0-0-0") for _ in range(10)]
    finally:
        process.terminate()
        process.wait(timeout=30)
    blocked = said.read_text(errors="replace").count("appears to be blocked")
    late = sum(1 for t in took if t >= 2)
    finite = sorted(t for t in took if t < 2)
    p99 = finite[int(len(finite) * 0.99)] if finite else float("nan")
    print(
        f"served, {changes} changes: {len(took)} probes, {late} timed out (2 s), "
        f"slowest answered {max(finite) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms; "
        f"a worker's event loop held ≥ {BLOCKED * 1000:.0f} ms: {blocked} times (gevent's monitor); "
        f"the last change in force in every answer: {set(newest) == {403} and set(oldest) == {401}}"
    )


def status(base: str, key: str) -> int:
    """``GET /v1/rulesets`` with a caller's key: 403 outside its scope, 401 for a key not known."""
    request = urllib.request.Request(base + "/v1/rulesets", headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


ALPHA, BETA = hashlib.sha256(b"mbk_alpha").hexdigest(), hashlib.sha256(b"mbk_beta").hexdigest()
SCOPED = f"""[callers.club-alpha]
keys = [{{ sha256 = "{ALPHA}" }}]

[callers.club-beta]
keys = [{{ sha256 = "{BETA}" }}]
routes = ["verify"]
"""


def in_place(folder: Path, seconds: float) -> None:
    """A small callers file rewritten in place for ``seconds`` (opened with truncation, 5 ms, up to club-beta's
    routes, 5 ms, the rest; every 0.1 s) while club-beta asks a route outside its scope and club-alpha one
    inside it: club-beta's 200s are answers outside its scope, the 401s keys refused for an empty file."""
    path = folder / "scoped.toml"
    path.write_text(SCOPED)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(MAUBINH_WORKERS="2", MAUBINH_LOG_REQUESTS="off", MAUBINH_CALLERS_FILE=str(path))
    script = Path(sys.executable).with_name("maubinh")
    process = subprocess.Popen(
        [str(script), "serve", "--host", "127.0.0.1", "--port", str(port)], env=env, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    answers: dict[str, list[int]] = {"mbk_alpha": [], "mbk_beta": []}
    stop = threading.Event()

    def ask(key: str) -> None:
        while not stop.is_set():
            answers[key].append(status(base, key))

    half = SCOPED.index("routes")
    try:
        wait_ready(base, 60)
        askers = [threading.Thread(target=ask, args=(key,)) for key in answers]
        for asker in askers:
            asker.start()
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            with path.open("w") as file:
                time.sleep(0.005)
                file.write(SCOPED[:half])
                file.flush()
                time.sleep(0.005)
                file.write(SCOPED[half:])
            time.sleep(0.1)
        stop.set()
        for asker in askers:
            asker.join()
    finally:
        process.terminate()
        process.wait(timeout=30)
    beta, alpha = answers["mbk_beta"], answers["mbk_alpha"]
    print(
        f"rewritten in place for {seconds:.0f} s: club-beta outside its scope {len(beta)} times, "
        f"answered 200 {beta.count(200)} times (401: {beta.count(401)}); club-alpha in its scope "
        f"{len(alpha)} times, 401 {alpha.count(401)} times"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=4)
    parser.add_argument("--in-place", type=float, default=15, help="seconds of rewriting a small file in place")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="maubinh-callers-bench-"))
    path = folder / "callers.toml"
    path.write_text(callers_text(0))
    os.utime(path, (time.time() - 10, time.time() - 10))
    try:
        in_process(path)
        served(path, args.changes)
        in_place(folder, args.in_place)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
