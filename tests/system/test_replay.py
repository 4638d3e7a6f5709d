"""`maubinh replay`: recorded rounds re-scored under a candidate ruleset, and the money that would move,
worked out by hand from docs/rules.md §6 and §11 for two rooms, and held to the per-room path over the
sample month."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from helpers import shell_lines

from service.bulk.replay import OUTCOMES
from service.cli import main
from service.documents import score_document
from service.rulesets.operator_folder import catalogue_for

ROOT = Path(__file__).resolve().parents[2]
CLUB = ROOT / "examples" / "audit" / "rulesets"
STAKE = 1000

# A wins every chi from B with plain hands (two pair, a pair, ace high against a pair, ten high, nine
# high): no bonus, no instant win, no foul, and maubinh-2020's family has no ace settlement.
A = {"id": "A", "back": ["KS", "KH", "8C", "8D", "2C"], "middle": ["QS", "QH", "9C", "5D", "3S"],
     "front": ["AS", "7H", "4D"]}  # fmt: skip
B = {"id": "B", "back": ["JS", "JH", "6C", "5C", "3D"], "middle": ["TS", "8H", "6D", "4C", "2D"],
     "front": ["9S", "7C", "3C"]}  # fmt: skip
B_FOULED = {**B, "back": B["middle"], "middle": B["back"]}  # a pair of jacks over ten high: lủng


def room(players: list[dict[str, Any]], ruleset: str = "club-saigon@1") -> dict[str, Any]:
    return {"ruleset": ruleset, "stake": STAKE, "players": players}


def claim(players: list[dict[str, Any]], amounts: dict[str, int], ruleset: str = "club-saigon@1") -> str:
    return json.dumps({**room(players, ruleset), "claimed": {"amounts": amounts}})


def replay(tmp_path: Path, lines: list[str], *options: str) -> tuple[int, dict[str, Any]]:
    rounds = tmp_path / "rounds.jsonl"
    rounds.write_text("".join(line + "\n" for line in lines))
    out = tmp_path / "figures.json"
    status = main(["replay", "--jsonl", str(rounds), "--jobs", "1", "-o", str(out), *options])
    return status, json.loads(out.read_text()) if out.exists() else {}


@pytest.fixture(autouse=True)
def club_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAUBINH_RULESETS_DIR", str(CLUB))


def test_a_scoop_pays_once_more_when_the_multiplier_goes_from_2_to_3(tmp_path: Path) -> None:
    """§6: B pays A the chi total, 3, and a scoop line of 3 × (m − 1): 6 at m = 2, 9 at m = 3."""
    status, figures = replay(tmp_path, [claim([A, B], {"A": 6 * STAKE, "B": -6 * STAKE})], "--ruleset",
                             "club-saigon@2")  # fmt: skip
    assert status == 0
    assert figures["rounds"]["replayed"] == figures["rounds"]["changed"] == 1
    assert figures["moved"]["total"] == 3 * STAKE
    assert figures["moved"]["by_step"] == {"scoop": 3 * STAKE}
    assert figures["moved"]["by_ruleset"] == {"club-saigon@1": 3 * STAKE}
    [largest] = figures["largest"]
    assert [(p["player"], p["recorded"], p["candidate"], p["difference"]) for p in largest["players"]] == [
        ("A", 6 * STAKE, 9 * STAKE, 3 * STAKE),
        ("B", -6 * STAKE, -9 * STAKE, -3 * STAKE),
    ]
    assert figures["moved"]["players"]["gain_most"] == [{"player": "A", "net": 3 * STAKE}]
    assert figures["moved"]["players"]["lose_most"] == [{"player": "B", "net": -3 * STAKE}]


def test_a_foul_moves_between_steps_but_no_money_when_6_fixed_units_replace_a_scoop_at_2(tmp_path: Path) -> None:
    """@1: the fouled B loses every chi and is scooped (3 chi + 3 scoop = 6); @2 (§11 fouls.fixed_units 6):
    one foul line of 6. Each player's total is the same; each step's positive parts count."""
    status, figures = replay(tmp_path, [claim([A, B_FOULED], {"A": 6 * STAKE, "B": -6 * STAKE})], "--ruleset",
                             "club-saigon@2")  # fmt: skip
    assert status == 0
    assert figures["rounds"]["replayed"] == 1 and figures["rounds"]["changed"] == 0
    assert figures["moved"]["total"] == 0
    assert figures["moved"]["by_step"] == {"foul": 6 * STAKE, "chi": 3 * STAKE, "scoop": 3 * STAKE}
    assert figures["largest"] == [] and figures["moved"]["players"]["gain_most"] == []


def test_only_a_round_that_follows_its_own_rules_is_replayed(tmp_path: Path) -> None:
    lines = [
        claim([A, B], {"A": 6 * STAKE, "B": -6 * STAKE}),  # replayed
        claim([A, B], {"A": 5 * STAKE, "B": -5 * STAKE}),  # the claim disagrees: verify's to explain
        claim([A, B], {"A": 6 * STAKE, "B": -6 * STAKE}, ruleset="maubinh-2020"),  # skipped with --only
        claim([A, B], {"A": 6 * STAKE, "B": -6 * STAKE}, ruleset="no-such-rules"),  # refused
        "{not json",  # refused
    ]
    status, figures = replay(tmp_path, lines, "--ruleset", "club-saigon@2", "--only", "club-saigon")
    assert status == 0
    rounds = figures["rounds"]
    assert (rounds["lines"], rounds["replayed"], rounds["disagrees"], rounds["skipped"], rounds["refused"]) == (
        5, 1, 1, 1, 2)  # fmt: skip
    assert rounds["refused_by_code"] == {"bad-json": 1, "unknown_ruleset": 1}
    assert rounds["not_replayed_rounds"] == [
        {"line": 2, "round_id": None, "outcome": "disagrees", "code": None},
        {"line": 4, "round_id": None, "outcome": "refused", "code": "unknown_ruleset"},
        {"line": 5, "round_id": None, "outcome": "refused", "code": "bad-json"},
    ]  # the skipped line 3 is only not the club's
    assert figures["moved"]["total"] == 3 * STAKE
    assert figures["candidate"] == {"ruleset": "club-saigon@2", "digest": figures["candidate"]["digest"],
                                    "given": "club-saigon@2", "only": "club-saigon"}  # fmt: skip
    lock = json.loads((CLUB / "rulesets.lock").read_text())
    assert {r["ruleset"]: r["digest"] for r in figures["rulesets"] if r["ruleset"] in lock} == lock


def test_a_patch_file_is_a_candidate_and_a_room_it_refuses_is_not_replayable(tmp_path: Path) -> None:
    """Recorded under maubinh-bao (declared instant wins, so each player may say ``declare``): the
    candidate, two players at most and instant wins found rather than declared, takes A and B without
    their declarations and refuses a three-player room."""
    patch = tmp_path / "two-players.json"
    patch.write_text(json.dumps({"base": "maubinh-2020", "patch": {"players": {"min": 2, "max": 2}}}))
    declared = [{**A, "declare": False}, {**B, "declare": False}]
    third = {"id": "C", "back": ["AC", "AD", "AH", "TC", "TD"], "middle": ["7D", "7S", "5S", "5H", "4H"],
             "front": ["JC", "9D", "2S"]}  # fmt: skip
    computed = score_document(room([A, B, third], "maubinh-bao"), catalogue_for(None))
    three = {p["id"]: p["amount"] for p in computed["players"]}
    lines = [
        claim(declared, {"A": 6 * STAKE, "B": -6 * STAKE}, "maubinh-bao"),  # 3 chi and a scoop at ×2 (§9.3)
        claim([A, B, third], three, "maubinh-bao"),
    ]
    status, figures = replay(tmp_path, lines, "--ruleset", str(patch))
    assert status == 0
    assert figures["rounds"]["replayed"] == 1 and figures["rounds"]["not_replayable"] == 1
    assert list(figures["rounds"]["not_replayable_by_code"].values()) == [1]
    assert figures["candidate"]["given"] == {"base": "maubinh-2020", "patch": {"players": {"min": 2, "max": 2}}}
    assert figures["moved"]["total"] == 3 * STAKE  # the scoop at ×3 (§9.1): 3 chi and 6 more
    assert figures["moved"]["by_step"] == {"scoop": 3 * STAKE}


def test_a_candidate_that_cannot_be_used_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _ = replay(tmp_path, [claim([A, B], {"A": 6 * STAKE, "B": -6 * STAKE})], "--ruleset", "club-saigon@9")
    assert status == 2
    said = capsys.readouterr().err
    assert "club-saigon@9" in said and "@1, @2" in said
    broken = tmp_path / "broken.json"
    broken.write_text('{"base": "maubinh-2020", "patch": {"scoop": {"multiplier": 0}}}')
    status, _ = replay(tmp_path, [], "--ruleset", str(broken))
    assert status == 2 and "scoop/multiplier" in capsys.readouterr().err
    status = main(["replay", "--jsonl", "-", "--ruleset", "maubinh-2020", "--format", "parquet"])
    assert status == 2 and "-o" in capsys.readouterr().err
    status, _ = replay(
        tmp_path, [], "--ruleset", "club-saigon@2", "--only", "club-saigom"
    )  # a typo: no round would match
    assert status == 2 and "'club-saigon'" in capsys.readouterr().err
    status, _ = replay(tmp_path, [], "--ruleset", "rules/club-2.json")  # meant as a file
    assert status == 2 and "cannot open rules/club-2.json" in capsys.readouterr().err
    os.mkfifo(tmp_path / "pipe.json")  # before, waited on for ever
    status, _ = replay(tmp_path, [], "--ruleset", str(tmp_path / "pipe.json"))
    assert status == 2 and "not a regular file" in capsys.readouterr().err
    (tmp_path / "large.json").write_text(json.dumps({"base": "maubinh-2020", "patch": {"title": "x" * 2_000_000}}))
    status, _ = replay(tmp_path, [], "--ruleset", str(tmp_path / "large.json"))  # before, cut and 'not JSON'
    assert status == 2 and "more than 65,536 bytes" in capsys.readouterr().err


def test_the_month_s_first_half_replayed_is_the_per_room_path_round_by_round(tmp_path: Path) -> None:
    """Over examples/audit's first half: the Parquet tables hold, for every replayed round, each
    player's amounts scored apart under both rulesets; page.json's figures are the tables' sums; the
    run gives the same figures with one worker and with two."""
    half = tmp_path / "half.jsonl"
    lines = (ROOT / "examples" / "audit" / "claims.jsonl").read_bytes().splitlines(keepends=True)[:1500]
    half.write_bytes(b"".join(lines))
    args = ["replay", "--jsonl", str(half), "--ruleset", "club-saigon@2", "--only", "club-saigon"]
    assert main([*args, "--format", "parquet", "-o", str(tmp_path / "tables"), "--report",
                 str(tmp_path / "page.html"), "--jobs", "2"]) == 0  # fmt: skip
    assert main([*args, "-o", str(tmp_path / "one.json"), "--jobs", "1"]) == 0
    figures = json.loads((tmp_path / "page.json").read_text())
    alone = json.loads((tmp_path / "one.json").read_text())
    assert {**alone, "generated_at": None} == {**figures, "generated_at": None}
    catalogue = catalogue_for(str(CLUB))
    table = str(tmp_path / "tables" / "replayed_players.parquet")
    rows = duckdb.sql(f"SELECT line, player, recorded, candidate FROM '{table}' ORDER BY line").fetchall()
    replayed = {line for line, *_ in rows}
    assert len(replayed) == figures["rounds"]["replayed"] > 300
    by_line: dict[int, dict[str, tuple[int, int]]] = {}
    for number in sorted(replayed)[::7]:  # every seventh: the per-room path takes a while
        request = json.loads(lines[number - 1])
        del request["claimed"]
        before = score_document(request, catalogue)
        after = score_document({**request, "ruleset": "club-saigon@2"}, catalogue)
        by_line[number] = {
            p["id"]: (p["amount"], q["amount"]) for p, q in zip(before["players"], after["players"], strict=True)
        }
    assert {n: {p: (r, c) for line, p, r, c in rows if line == n} for n in by_line} == by_line
    [(total,)] = duckdb.sql(f"SELECT sum(candidate - recorded) FILTER (candidate > recorded) FROM '{table}'").fetchall()
    assert figures["moved"]["total"] == total > 0
    steps = str(tmp_path / "tables" / "replayed_steps.parquet")
    by_step = duckdb.sql(f"SELECT step, sum(difference) FROM '{steps}' WHERE difference > 0 GROUP BY step").fetchall()
    assert figures["moved"]["by_step"] == dict(by_step)
    page = (tmp_path / "page.html").read_text()
    assert page.index(figures["input"]["sha256"]) < page.index('id="by-step"')
    assert page.count("#room=") == 2 * len(figures["largest"]) == 40


WORKED = (ROOT / "docs" / "audits.md").read_text("utf-8").split("### A worked example", 1)[1]
EXAMPLE, QUERIES = WORKED.split("```sql", 1)
QUERIES = QUERIES.split("```", 1)[0]


@pytest.mark.slow
def test_the_worked_example_runs_as_written_and_says_what_it_gives(tmp_path: Path) -> None:
    """docs/audits.md's worked example in a fresh folder: its figures are the run's, and its queries give
    page.json's figures. Its spark-submit line is not run here (a JVM's start-up, half a minute of CI):
    tests/system/test_audit_tables.py holds the Spark job's replay tables to the command line's in the
    Spark session it starts anyway, and test_the_spark_job_takes_replay_s_arguments its arguments."""
    commands = [c for c in shell_lines(EXAMPLE) if "spark-submit" not in c]
    for name in (".venv", "examples", "deploy"):
        (tmp_path / name).symlink_to(ROOT / name if name != ".venv" else Path(sys.executable).parents[1])
    env = {k: v for k, v in os.environ.items() if k != "MAUBINH_RULESETS_DIR"}
    for command in commands:
        if command.startswith("export "):
            name, _, value = command.removeprefix("export ").partition("=")
            env[name] = value
            continue
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              check=False)  # fmt: skip
        assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
    figures = json.loads((tmp_path / "replay.json").read_text())
    rounds, moved = figures["rounds"], figures["moved"]
    said = " ".join(EXAMPLE.split())
    for figure in (rounds["lines"], rounds["replayed"], rounds["changed"], rounds["skipped"], moved["total"],
                   *moved["by_step"].values(), figures["largest"][0]["line"]):  # fmt: skip
        assert f"{figure:,}" in said, figure
    assert f"{rounds['disagrees']} club rounds" in said and f"{rounds['refused']} line is refused" in said
    assert set(moved["by_step"]) == {"scoop", "foul", "chi", "bonus"}
    [refused] = rounds["refused_by_code"]
    assert f"`{refused}`" in said
    statements = [q.strip() for q in re.split(r";\s*\n", QUERIES) if q.strip()]
    named = {re.search(r"page\.json: (\S+)", q)[1]: q for q in statements if "page.json:" in q}  # type: ignore[index]
    db = duckdb.connect()

    def sql(query: str) -> list[tuple[Any, ...]]:
        return db.execute(query.replace("'replayed/", f"'{tmp_path}/replayed/")).fetchall()

    assert sql(named["moved.total"]) == [(moved["total"],)]
    assert dict(sql(named["moved.by_step"])) == moved["by_step"]
    assert dict(sql(named["moved.by_ruleset"])) == moved["by_ruleset"]
    assert dict(sql(named["rounds"])) == {k: v for k, v in rounds.items() if k in OUTCOMES and v}
    [*gainers] = sql(statements[-1])
    assert [{"player": p, "net": n} for p, n in gainers[:20]] == moved["players"]["gain_most"]


def test_the_spark_job_takes_replay_s_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    """deploy/spark/audit.py replay: each argument reaches the job; --ruleset goes with replay only, and a
    candidate it cannot use is said before any Spark starts."""
    from service.bulk.spark import main as spark_main
    from service.bulk.spark import read_job

    words = ["replay", "in.parquet", "-o", "out", "--ruleset", "maubinh-bao", "--only", "maubinh-2020"]
    job = read_job([*words, "--room-column", "body", "--lang", "vi"])
    assert (job.operation, job.input, job.output, job.room_column, job.language) == (
        "replay",
        "in.parquet",
        "out",
        "body",
        "vi",
    )
    assert job.candidate is not None
    assert (job.candidate.ruleset.id, job.candidate.only) == ("maubinh-bao", "maubinh-2020")
    plain = read_job(["verify", "in.jsonl", "-o", "out"])
    assert (plain.operation, plain.room_column, plain.language, plain.candidate) == ("verify", "room", "en", None)
    for refused in (
        ["replay", "in.jsonl", "-o", "out"],
        ["score", "in.jsonl", "-o", "out", "--ruleset", "maubinh-bao"],
        ["score", "in.jsonl", "-o", "out", "--only", "maubinh-2020"],
    ):
        with pytest.raises(SystemExit) as stopped:
            read_job(refused)
        assert stopped.value.code == 2 and "--" in capsys.readouterr().err
    assert spark_main(["replay", "in.jsonl", "-o", "out", "--ruleset", "club-saigon@9"]) == 2
    assert "cannot replay under club-saigon@9" in capsys.readouterr().err


def test_a_patch_that_changes_nothing_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A candidate patch restating its base is the base (issue 55's frictions): the replay says so, as
    a warning, and still runs."""
    patch = tmp_path / "same.json"
    patch.write_text(json.dumps({"base": "maubinh-2020@3", "patch": {"scoop": {"multiplier": 3}}}))
    status, figures = replay(tmp_path, [claim([A, B], {"A": 6 * STAKE, "B": -6 * STAKE})], "--ruleset", str(patch))
    assert status == 0 and figures["rounds"]["lines"] == 1
    assert "warning: the candidate's patch changes nothing of maubinh-2020@3" in capsys.readouterr().err
