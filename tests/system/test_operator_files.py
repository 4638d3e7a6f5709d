"""Operators' ruleset files through the command line and a real `maubinh serve`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from helpers import CLUB, CLUB_E1, ruleset_folder
from server import call, start

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "overlays" / "production" / "rulesets"


def test_rulesets_check_prints_id_and_digest_and_exits_1_on_any_fault(tmp_path: Path) -> None:
    ruleset_folder(tmp_path, good=CLUB, bad={"base": "maubinh-2020", "patch": {"id": "y", "sap_lang": 1}})
    ok = subprocess.run(
        [MAUBINH, "rulesets", "check", str(tmp_path / "good.json")], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0 and ok.stdout.startswith(f"{tmp_path / 'good.json'}: ok club-hanoi@1 sha256:")
    both = subprocess.run(
        [MAUBINH, "rulesets", "check", str(tmp_path / "good.json"), str(tmp_path / "bad.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert both.returncode == 1
    assert "ok club-hanoi@1" in both.stdout
    assert f"{tmp_path / 'bad.json'}: /patch/sap_lang: 'sap_lang' is not a ruleset field" in both.stderr


def test_the_cli_scores_under_the_operator_s_rulesets_too(tmp_path: Path) -> None:
    env = {**os.environ, "MAUBINH_RULESETS_DIR": str(ruleset_folder(tmp_path, club=CLUB))}
    scored = subprocess.run(
        [MAUBINH, "score", "-"], input=json.dumps(CLUB_E1), capture_output=True, text=True, env=env, check=False
    )
    assert scored.returncode == 0, scored.stdout
    assert json.loads(scored.stdout)["ruleset"]["id"] == "club-hanoi"
    listed = subprocess.run([MAUBINH, "rulesets", "club-hanoi@1"], capture_output=True, text=True, env=env, check=False)
    assert json.loads(listed.stdout)["id"] == "club-hanoi"


def test_the_shipped_example_checks_clean() -> None:
    checked = subprocess.run(
        [MAUBINH, "rulesets", "check", str(EXAMPLE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert "ok club-hanoi@1 " in checked.stdout and checked.stdout.endswith(" locked\n")


def test_serve_with_a_bad_file_starts_unready_naming_it(tmp_path: Path) -> None:
    """Alive, so that an orchestrator does not restart it in a loop; not ready, so that no traffic
    comes; scoring nothing under other rules; the file named where an operator looks, and counted."""
    directory = ruleset_folder(tmp_path, broken={"base": "maubinh-2020", "patch": {"id": "z", "wheel": "highest"}})
    base, process = start({"MAUBINH_RULESETS_DIR": str(directory)}, probe="/healthz")  # alive, not ready
    said = f'{directory / "broken.json"}: /patch/wheel: wheel: "highest" is not one of the values allowed: "second", "lowest"'
    try:
        status, body = call(base, "/readyz")
        assert status == 503 and str(directory) not in body.decode()  # open to all: that they failed, no more
        for path in ("/v1/score", "/v1/rulesets"):
            status, body = call(base, path, CLUB_E1 if path == "/v1/score" else None)
            assert status == 503 and str(directory) not in body.decode(), path  # callers are not told the paths
            assert "log names the file" in json.loads(body)["detail"]
        status, metrics = call(base, "/metrics")
        assert "maubinh_operator_rulesets_failed 1.0" in metrics.decode()
    finally:
        process.send_signal(signal.SIGTERM)
        stderr = process.communicate(timeout=30)[1].decode()
    logged = [json.loads(line)["msg"] for line in stderr.splitlines() if line.startswith("{")]
    assert [msg for msg in logged if "starting unready" in msg and said in msg]  # the log names the file


def test_serve_with_a_good_folder_serves_and_scores_it(tmp_path: Path) -> None:
    base, process = start({"MAUBINH_RULESETS_DIR": str(ruleset_folder(tmp_path, club=CLUB))})
    try:
        status, body = call(base, "/v1/score", CLUB_E1)
        assert status == 200 and json.loads(body)["ruleset"]["id"] == "club-hanoi"
        assert call(base, "/readyz")[0] == 200
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
