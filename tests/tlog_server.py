"""A real `maubinh log serve` on a free loopback port, on a folder or on a real PostgreSQL server
(Debian's postgresql-15 binaries: initdb and pg_ctl in a temporary folder), for the log's system tests.

Without the PostgreSQL binaries its tests fail, unless MAUBINH_REQUIRE_POSTGRES=0 lets them skip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from server import free_port

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
PG_BIN = Path("/usr/lib/postgresql/15/bin")
ORIGIN = "maubinh.test/log"


def new_key(folder: Path, name: str = "log.pem") -> Path:
    key = folder / name
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True, capture_output=True)
    return key


def vkey(key: Path, origin: str = ORIGIN) -> str:
    found = subprocess.run([MAUBINH, "log", "vkey", "--key", str(key), "--origin", origin],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return found.stdout.strip()


def start_log(
    key: Path, store: list[str], port: int | None = None, add_key: Path | None = None, add_port: int | None = None
) -> tuple[str, subprocess.Popen[bytes]]:
    """`maubinh log serve` with ``store`` (``["--dir", D]`` or ``["--database", URL]``), once it answers;
    with ``add_key``, a file holding the key additions must carry; with ``add_port``, additions taken there only."""
    port = port or free_port()
    more = ["--add-port", str(add_port)] if add_port is not None else []
    env = {**os.environ, "MAUBINH_LOG_KEY_FILE": str(key), "MAUBINH_LOG_ORIGIN": ORIGIN}
    if add_key is not None:
        env["MAUBINH_LOG_ADD_KEY_FILE"] = str(add_key)
    process = subprocess.Popen(
        [MAUBINH, "log", "serve", *store, "--host", "127.0.0.1", "--port", str(port), "--interval", "0.2", *more],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return base, process
        except OSError:
            time.sleep(0.1)
    process.kill()
    pytest.fail("the log never answered: " + (process.stderr.read().decode()[-2000:] if process.stderr else ""))


def health(base: str) -> dict[str, Any]:
    with urllib.request.urlopen(base + "/healthz", timeout=5) as answer:
        found: dict[str, Any] = json.loads(answer.read())
        return found


def wait_integrated(base: str, size: int, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while health(base)["size"] < size:
        if time.monotonic() > deadline:
            pytest.fail(f"the log did not integrate {size} entries within {seconds} s: {health(base)}")
        time.sleep(0.05)


@contextmanager
def postgres_server(folder: Path) -> Iterator[str]:
    """A fresh PostgreSQL 15 on a free loopback port: its URL."""
    if not (PG_BIN / "initdb").exists():
        if os.environ.get("MAUBINH_REQUIRE_POSTGRES") == "0":
            pytest.skip("no PostgreSQL 15 binaries (MAUBINH_REQUIRE_POSTGRES=0)")
        pytest.fail("no /usr/lib/postgresql/15/bin: apt-get install postgresql-15 (MAUBINH_REQUIRE_POSTGRES=0 skips)")
    port, run_as = free_port(), list[str]()
    data = folder / "pgdata"
    if os.geteuid() == 0:  # initdb refuses root: the server runs as nobody, its data in a folder nobody reaches
        data = Path(tempfile.mkdtemp(prefix="maubinh-pg-")) / "pgdata"
        os.chmod(data.parent, 0o755)
        data.mkdir()
        shutil.chown(data, "nobody")
        run_as = ["runuser", "-u", "nobody", "--"]
    subprocess.run([*run_as, str(PG_BIN / "initdb"), "-D", str(data), "-U", "maubinh", "--auth=trust", "-E", "UTF8"],
                   check=True, capture_output=True)  # fmt: skip
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {data} -c fsync=on"
    subprocess.run([*run_as, str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(data / "log"), "start"],
                   check=True, capture_output=True)  # fmt: skip
    try:
        yield f"postgresql://maubinh@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*run_as, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, check=False)  # fmt: skip
        if run_as:
            shutil.rmtree(data.parent, ignore_errors=True)
