"""A refused line's round id, as the bulk commands echo it (issue 52, second round): one with a lone
surrogate is refused by its line, in every output, and the run goes on; one of megabytes is cut short."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audit_lines import FIRST, RULES, sample, with_round_id

from service.cli import main


@pytest.fixture(autouse=True)
def club_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAUBINH_RULESETS_DIR", str(RULES))


LONE = with_round_id("bad\ud800id")
"""A round id holding a \\ud800 escape alone: no character, which UTF-8 cannot write."""


def test_a_lone_surrogate_round_id_is_refused_by_its_line_in_the_report_and_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a UnicodeEncodeError traceback, exit 1, no report and no tables."""
    import pyarrow.parquet as pq

    claims, count = sample(tmp_path, LONE)
    report, tables = tmp_path / "report.html", tmp_path / "audit"
    argv = ["verify", "--jsonl", str(claims), "--format", "parquet", "-o", str(tables), "--report", str(report)]
    assert main([*argv, "--jobs", "1"]) == 1  # the month's plants disagree
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{count:,} rooms checked" in err
    figures = json.loads(report.with_suffix(".json").read_text("utf-8"))
    refused = {r["line"]: r for r in figures["rounds"]["refused_rounds"]}
    assert refused[FIRST + 1] == {"line": FIRST + 1, "round_id": "bad\ufffdid", "codes": ["bad-json"]}
    problems = pq.read_table(tables / "problems.parquet").to_pylist()
    assert [(p["line"], p["round_id"], p["code"]) for p in problems if p["line"] == FIRST + 1] == [
        (FIRST + 1, "bad\ufffdid", "bad-json")
    ]
    assert pq.read_table(tables / "rooms.parquet").num_rows == count


def test_a_lone_surrogate_round_id_is_refused_by_replay_and_by_every_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claims, count = sample(tmp_path, LONE)
    figures = tmp_path / "figures.json"
    replay = ["replay", "--jsonl", str(claims), "--ruleset", "club-saigon@2", "-o", str(figures), "--jobs", "1"]
    assert main(replay) == 0
    assert "Traceback" not in capsys.readouterr().err
    rounds = json.loads(figures.read_text("utf-8"))["rounds"]
    assert rounds["lines"] == count and rounds["refused_by_code"].get("bad-json") == 1
    assert {"line": FIRST + 1, "round_id": "bad\ufffdid", "outcome": "refused", "code": "bad-json"} in rounds[
        "not_replayed_rounds"
    ]
    assert main(["replay", *replay[1:4], "club-saigon@2", "--format", "parquet", "-o", str(tmp_path / "r")]) == 0
    for command in (["score", "--jsonl"], ["verify", "--jsonl"], ["score", "--jsonl", "--format", "csv"]):
        out = tmp_path / "out"
        main([*command, str(claims), "-o", str(out), "--jobs", "1"])
        said = capsys.readouterr()
        assert "Traceback" not in said.err
        text = out.read_bytes().decode("utf-8") + said.err
        assert '"line":301' in text.replace(" ", "") and "bad\ufffdid" in text


def test_a_round_id_of_megabytes_is_echoed_cut_short(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a 4 MB round id was echoed whole, in the answer line, the report's figures and page, and
    the tables (a 40 MB one made a 100 MB report)."""
    monkeypatch.setenv("MAUBINH_MAX_LINE_BYTES", str(16 << 20))
    claims, _ = sample(tmp_path, with_round_id("r" * (4 << 20)))
    report = tmp_path / "report.html"
    main(["verify", "--jsonl", str(claims), "--report", str(report), "--jobs", "1"])
    said = capsys.readouterr()
    refused = [json.loads(line) for line in said.out.splitlines() if '"line":301,' in line.replace(" ", "")]
    assert refused and refused[0]["round_id"] == "r" * 128 + "…"
    assert len(said.out) < 200_000
    assert report.stat().st_size + report.with_suffix(".json").stat().st_size < 2_000_000
