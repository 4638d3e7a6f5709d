"""Rulesets over HTTP in process: operators' folders, pinned versions, ETag and If-None-Match."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import CLUB, CLUB_E1, ruleset_folder

from service.api import create_app
from service.rulesets.operator_folder import OperatorFileError

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "overlays" / "production" / "rulesets"


def test_an_operator_ruleset_is_listed_served_and_scores_by_id(tmp_path: Path) -> None:
    client = create_app({"log_requests": False, "rulesets_dir": str(ruleset_folder(tmp_path, club=CLUB))}).test_client()
    listed = {r["id"]: r for r in client.get("/v1/rulesets").get_json()["rulesets"]}
    assert listed["club-hanoi"]["base"]["id"] == "maubinh-2020"
    assert listed["club-hanoi"]["versions"] == ["1"]  # a flat file is version 1 of its id, whatever its base's
    served = client.get("/v1/rulesets/club-hanoi").get_json()
    assert served["scoop"] == {"multiplier": 2, "basis": "total", "sweep_multiplier": 1}
    assert served["version"] == "1" and served["base"]["version"] == "2"
    scored = client.post("/v1/score", json=CLUB_E1).get_json()
    assert scored["ruleset"]["id"] == "club-hanoi" and scored["ruleset"]["digest"] == served["digest"]
    assert [p["units"] for p in scored["players"]] == [-6, 6]  # 3 chi + 3 × (2 − 1)
    pinned = client.post("/v1/score", json={**CLUB_E1, "ruleset": "club-hanoi@1"}).get_json()
    assert pinned["ruleset"]["digest"] == served["digest"]
    # a request may patch an operator's ruleset in turn
    patched = client.post(
        "/v1/score", json={**CLUB_E1, "ruleset": {"base": "club-hanoi", "patch": {"scoop": {"multiplier": 4}}}}
    )
    assert patched.get_json()["ruleset"]["id"] == "club-hanoi~custom"
    assert [p["units"] for p in patched.get_json()["players"]] == [-12, 12]


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"base": "maubinh-2020", "patch": {"scoop": {"multiplier": 2}}}, "/patch/id: an operator's ruleset must set"),
        ({"base": "maubinh-2020", "patch": {"id": "maubinh-bao"}}, "/patch/id: 'maubinh-bao' names a ruleset"),
        ({"base": "maubinh-1999", "patch": {"id": "x"}}, "/base: unknown ruleset"),
        (
            {"base": "maubinh-2020", "patch": {"id": "x", "scoop": {"multiplier": 0}}},
            "/patch/scoop/multiplier: scoop.multiplier",
        ),
        ("{not json", ": not a readable JSON file"),
        ([1, 2], 'is {"base": …, "patch": {…}}'),
    ],
)
def test_a_bad_operator_file_leaves_the_app_unready_naming_file_pointer_and_fault(
    tmp_path: Path, document: Any, says: str
) -> None:
    directory = ruleset_folder(tmp_path, good=CLUB, zbad=document)
    app = create_app({"log_requests": False, "rulesets_dir": str(directory)})
    refused = app.config["RULESETS_FAULT"]
    assert isinstance(refused, OperatorFileError)
    assert str(refused).startswith(str(directory / "zbad.json"))
    assert says in str(refused)
    ready = app.test_client().get("/readyz")
    assert ready.status_code == 503 and str(refused) not in ready.json["detail"]  # /readyz is open: no paths
    assert ready.json["detail"].startswith("The operator's rulesets did not load")
    assert app.test_client().post("/v1/score", json=CLUB_E1).status_code == 503
    keyed = create_app({"log_requests": False, "rulesets_dir": str(directory), "api_keys": ("k1",)}).test_client()
    assert str(refused) in keyed.get("/readyz", headers={"Authorization": "Bearer k1"}).json["detail"]
    assert str(refused) not in keyed.get("/readyz").json["detail"]
    assert str(refused) not in keyed.get("/readyz", headers={"Authorization": "Bearer k2"}).json["detail"]


@pytest.mark.parametrize("name", ["missing", "a-file"])
def test_a_rulesets_dir_that_is_no_folder_leaves_the_app_unready_saying_so(tmp_path: Path, name: str) -> None:
    """Before: a mistyped MAUBINH_RULESETS_DIR stopped the start with a FileNotFoundError traceback."""
    directory = tmp_path / name
    if name == "a-file":
        directory.write_text("{}")
    app = create_app({"log_requests": False, "rulesets_dir": str(directory), "api_keys": ("k1",)})
    ready = app.test_client().get("/readyz", headers={"Authorization": "Bearer k1"})
    assert ready.status_code == 503
    assert f"{directory}: no such folder: MAUBINH_RULESETS_DIR names the folder" in ready.json["detail"]


def test_two_files_may_not_claim_one_id(tmp_path: Path) -> None:
    app = create_app({"log_requests": False, "rulesets_dir": str(ruleset_folder(tmp_path, a=CLUB, b=CLUB))})
    assert "also the id in a.json" in str(app.config["RULESETS_FAULT"])


def test_a_ruleset_s_etag_is_its_digest_and_if_none_match_answers_304(client: FlaskClient) -> None:
    first = client.get("/v1/rulesets/maubinh-2020@1")
    digest = first.get_json()["digest"]
    assert first.headers["ETag"] == f'"{digest}"'
    assert "immutable" in first.headers["Cache-Control"]
    again = client.get("/v1/rulesets/maubinh-2020@1", headers={"If-None-Match": f'"{digest}"'})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == f'"{digest}"'
    latest = client.get("/v1/rulesets/maubinh-2020", headers={"If-None-Match": f'"{digest}"'})
    assert latest.status_code == 200 and latest.headers["Cache-Control"] == "no-cache"
    assert latest.get_json()["version"] == "3"
    assert client.get("/v1/rulesets/maubinh-2020@7").status_code == 404
    weak = client.get("/v1/rulesets/maubinh-2020@1", headers={"If-None-Match": f'W/"{digest}"'})
    assert weak.status_code == 304  # If-None-Match compares weakly (RFC 9110 13.1.2), as a proxy may weaken a tag
    for header in ("ETag", "Cache-Control", "Vary"):  # RFC 9110 15.4.5: the 304 says what the 200 would have
        assert again.headers[header] == first.headers[header], header


def test_the_listing_names_every_selectable_version(client: FlaskClient) -> None:
    listed = client.get("/v1/rulesets").get_json()["rulesets"]
    assert {(r["id"], r["version"], tuple(r["versions"])) for r in listed} == {
        ("maubinh-2020", "3", ("1", "2", "3")),
        ("maubinh-bao", "3", ("1", "2", "3")),
        ("maubinh-chi-at", "4", ("1", "2", "3", "4")),  # 4: the title says "sập" by scoopers, not "sập làng"
    }
    titles = {r["id"]: r["title"] for r in listed}
    assert "sập làng" not in titles["maubinh-chi-at"]  # sập làng names only the sweep


def versions(tmp_path: Path, *patches: dict[str, Any]) -> Path:
    """An operator's folder of versions of club-hanoi: ``club-hanoi/<n>.json``, one a patch, from 1."""
    folder = tmp_path / "club-hanoi"
    folder.mkdir(parents=True)
    for n, patch in enumerate(patches, start=1):
        (folder / f"{n}.json").write_text(
            json.dumps({"base": "maubinh-2020@2", "patch": {"id": "club-hanoi", **patch}})
        )
    return tmp_path


def test_each_version_of_an_operator_ruleset_scores_as_its_own_patch(tmp_path: Path) -> None:
    """club-hanoi@1 scoops ×2, @2 ×3; a bare id means @2; each echoes its own version and digest."""
    directory = versions(tmp_path, {"scoop": {"multiplier": 2}}, {"scoop": {"multiplier": 3}})
    client = create_app({"log_requests": False, "rulesets_dir": str(directory)}).test_client()
    units = {}
    for reference in ("club-hanoi@1", "club-hanoi@2", "club-hanoi"):
        scored = client.post("/v1/score", json={**CLUB_E1, "ruleset": reference}).get_json()
        units[reference] = (
            [p["units"] for p in scored["players"]],
            scored["ruleset"]["version"],
            scored["ruleset"]["digest"],
        )
    assert units["club-hanoi@1"][:2] == ([-6, 6], "1")  # 3 chi + 3 × (2 − 1)
    assert units["club-hanoi@2"][:2] == ([-9, 9], "2")  # 3 chi + 3 × (3 − 1)
    assert units["club-hanoi"] == units["club-hanoi@2"] and units["club-hanoi@1"][2] != units["club-hanoi@2"][2]
    assert client.get("/v1/rulesets/club-hanoi@1").get_json()["digest"] == units["club-hanoi@1"][2]
    assert next(r for r in client.get("/v1/rulesets").get_json()["rulesets"] if r["id"] == "club-hanoi")[
        "versions"
    ] == [
        "1",
        "2",
    ]


def test_a_flat_file_moved_into_its_folder_as_version_1_keeps_its_rules_and_digest(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    flat = create_app({"log_requests": False, "rulesets_dir": str(ruleset_folder(tmp_path / "a", club=CLUB))})
    moved = versions(tmp_path / "b", CLUB["patch"])
    folder = create_app({"log_requests": False, "rulesets_dir": str(moved)})
    assert flat.config["CATALOGUE"].get("club-hanoi@1") == folder.config["CATALOGUE"].get("club-hanoi@1")


@pytest.mark.parametrize(
    ("arrange", "says"),
    [
        (lambda d: (d / "club-hanoi" / "latest.json").write_text("{}"), "latest.json: a folder holds the versions"),
        (
            lambda d: (d / "club-hanoi" / "2.json").write_text(
                json.dumps({"base": "maubinh-2020", "patch": {"id": "club-hcm"}})
            ),
            "2.json: /patch/id: the patch's id is 'club-hcm', but the file is in the folder of 'club-hanoi'",
        ),
        (
            lambda d: (d / "club.json").write_text(json.dumps(CLUB)),
            "club-hanoi/1.json: /patch/id: 'club-hanoi@1' is also the id in club.json",
        ),
    ],
)
def test_a_folder_s_layout_faults_are_named(tmp_path: Path, arrange: Any, says: str) -> None:
    directory = versions(tmp_path, {"scoop": {"multiplier": 2}})
    arrange(directory)
    fault = create_app({"log_requests": False, "rulesets_dir": str(directory)}).config["RULESETS_FAULT"]
    assert says in str(fault)


def cli(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    from service.cli import main

    status = main(list(words))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_lock_holds_each_version_to_its_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = versions(tmp_path, {"scoop": {"multiplier": 2}}, {"scoop": {"multiplier": 3}})
    catalogue = create_app({"log_requests": False, "rulesets_dir": str(directory)}).config["CATALOGUE"]
    digests = {f"club-hanoi@{n}": catalogue.get(f"club-hanoi@{n}").digest for n in (1, 2)}
    assert cli(capsys, "rulesets", "lock", str(directory))[0] == 0
    assert json.loads((directory / "rulesets.lock").read_text()) == digests
    status, out, _ = cli(capsys, "rulesets", "check", str(directory))
    assert status == 0 and [line.rsplit(" ", 1)[1] for line in out.splitlines()] == ["locked", "locked"]

    (directory / "club-hanoi" / "3.json").write_text(
        json.dumps({"base": "maubinh-2020@3", "patch": {"id": "club-hanoi"}})
    )
    status, out, _ = cli(capsys, "rulesets", "check", str(directory))
    assert status == 0 and out.splitlines()[-1].endswith(
        "club-hanoi/3.json: ok club-hanoi@3 " + out.split()[-2] + " unlocked"
    )
    assert create_app({"log_requests": False, "rulesets_dir": str(directory)}).config["RULESETS_FAULT"] is None

    one = directory / "club-hanoi" / "1.json"
    one.write_text(json.dumps({"base": "maubinh-2020@2", "patch": {"id": "club-hanoi", "scoop": {"multiplier": 4}}}))
    fault = str(create_app({"log_requests": False, "rulesets_dir": str(directory)}).config["RULESETS_FAULT"])
    assert fault.startswith(
        f"{one}: club-hanoi@1 is locked at {digests['club-hanoi@1']}, but its file now gives sha256:"
    )
    status, _, err = cli(capsys, "rulesets", "check", str(directory))
    assert status == 1 and f"club-hanoi@1 is locked at {digests['club-hanoi@1']}" in err
    status, _, err = cli(capsys, "rulesets", "lock", str(directory))
    assert status == 1 and "not locking" in err and json.loads((directory / "rulesets.lock").read_text()) == digests

    one.unlink()
    fault = str(create_app({"log_requests": False, "rulesets_dir": str(directory)}).config["RULESETS_FAULT"])
    assert (
        fault
        == f"{directory / 'rulesets.lock'}: /club-hanoi@1: club-hanoi@1 is locked, but its file is gone: a locked version stays served, so that old rounds can be replayed"
    )


@pytest.mark.parametrize("lock", ["[]", '{"club-hanoi@1": "md5:00"}', '{"club-hanoi": "sha256:' + "0" * 64 + '"}', "{"])
def test_a_lock_that_is_not_one_is_refused(tmp_path: Path, lock: str) -> None:
    directory = versions(tmp_path, {"scoop": {"multiplier": 2}})
    (directory / "rulesets.lock").write_text(lock)
    fault = create_app({"log_requests": False, "rulesets_dir": str(directory)}).config["RULESETS_FAULT"]
    assert fault is not None and fault.path == directory / "rulesets.lock"


def test_lock_never_writes_through_a_symlink(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a ``rulesets.lock`` symlink was followed, and the lock written wherever it pointed."""
    directory = versions(tmp_path, {"scoop": {"multiplier": 2}})
    (directory / "rulesets.lock").symlink_to(tmp_path / "nowhere.lock")  # a link to a file not yet made
    assert cli(capsys, "rulesets", "lock", str(directory))[0] == 0
    assert not (directory / "rulesets.lock").is_symlink()
    assert "club-hanoi@1" in json.loads((directory / "rulesets.lock").read_text())
    assert not (tmp_path / "nowhere.lock").exists()
    assert [p.name for p in directory.iterdir() if p.name.startswith(".")] == []  # no temporary left behind
