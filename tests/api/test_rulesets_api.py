"""Rulesets over HTTP in process: operators' folders, pinned versions, ETag and If-None-Match."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import CLUB, CLUB_E1, ruleset_folder

from service.api import create_app
from service.rulesets.catalogue import OperatorFileError

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "overlays" / "production" / "rulesets"


def test_an_operator_ruleset_is_listed_served_and_scores_by_id(tmp_path: Path) -> None:
    client = create_app({"log_requests": False, "rulesets_dir": str(ruleset_folder(tmp_path, club=CLUB))}).test_client()
    listed = {r["id"]: r for r in client.get("/v1/rulesets").get_json()["rulesets"]}
    assert listed["club-hanoi"]["base"]["id"] == "maubinh-2020"
    assert listed["club-hanoi"]["versions"] == ["2"]
    served = client.get("/v1/rulesets/club-hanoi").get_json()
    assert served["scoop"] == {"multiplier": 2, "basis": "total", "sweep_multiplier": 1}
    assert served["version"] == "2" and served["base"]["version"] == "2"
    scored = client.post("/v1/score", json=CLUB_E1).get_json()
    assert scored["ruleset"]["id"] == "club-hanoi" and scored["ruleset"]["digest"] == served["digest"]
    assert [p["units"] for p in scored["players"]] == [-6, 6]  # 3 chi + 3 × (2 − 1)
    pinned = client.post("/v1/score", json={**CLUB_E1, "ruleset": "club-hanoi@2"}).get_json()
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
    assert ready.status_code == 503 and str(refused) in ready.json["detail"]
    assert app.test_client().post("/v1/score", json=CLUB_E1).status_code == 503


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


def test_the_listing_names_every_selectable_version(client: FlaskClient) -> None:
    listed = client.get("/v1/rulesets").get_json()["rulesets"]
    assert {(r["id"], r["version"], tuple(r["versions"])) for r in listed} == {
        (rid, "3", ("1", "2", "3")) for rid in ("maubinh-2020", "maubinh-bao", "maubinh-chi-at")
    }
