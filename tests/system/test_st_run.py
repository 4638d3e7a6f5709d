"""`st run <url>/openapi.yaml` from a checkout, with the shipped schemathesis.toml, against a real server."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import yaml
from server import start

ROOT = Path(__file__).resolve().parents[2]
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
OPERATIONS = sum(
    len(METHODS & set(item)) for item in yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))["paths"].values()
)


def test_st_run_with_the_shipped_config_passes_every_default_check() -> None:
    """With keys set and the key sent, as a third party's backend meets a production instance; the
    fuzzing in depth, open and keyed, is test_schemathesis.py's, in process."""
    keys = "st-run-key"
    base, process = start({"MAUBINH_API_KEYS": keys})
    auth = ["--header", f"Authorization: Bearer {keys}", "--max-examples", "10"]
    try:
        ran = subprocess.run(
            [str(Path(sys.executable).with_name("st")), "run", f"{base}/openapi.yaml", "--seed", "20261130", *auth],
            cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
    assert ran.returncode == 0, ran.stdout[-4000:]
    summary = ran.stdout[ran.stdout.rindex("SUMMARY") :]
    assert "failed" not in summary, summary
    assert f"Tested: {OPERATIONS - 1}" in summary  # all but /openapi.yaml, the document st loads from
    # Warnings inform, they do not fail a run; the shipped config hides the one it explains.
    print(ran.stdout[ran.stdout.find("WARNINGS") :] if "WARNINGS" in ran.stdout else "no warnings")
