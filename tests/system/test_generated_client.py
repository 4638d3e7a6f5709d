"""A client generated from openapi.yaml by openapi-python-client, used against a real `maubinh serve`.

Integrators meet the contract through generators: this one must generate with no warning, and its
models must carry every answer, the 422 with every fault included.
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server import start

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = Path(sys.executable).with_name("openapi-python-client")
E1 = {
    "ruleset": "maubinh-2020",
    "stake": 1000,
    "players": [
        {
            "id": "P",
            "back": ["AS", "AD", "7C", "7D", "2H"],
            "middle": ["KS", "KH", "9H", "5D", "3S"],
            "front": ["QH", "JD", "4C"],
        },
        {
            "id": "Q",
            "back": ["9S", "9D", "9C", "4S", "4D"],
            "middle": ["8S", "8H", "6C", "6D", "TS"],
            "front": ["AH", "3D", "2C"],
        },
    ],
}


@pytest.fixture(scope="module")
def client_package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    out = tmp_path_factory.mktemp("generated")
    generated = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(ROOT / "openapi.yaml"), "--meta", "none",
         "--config", str(ROOT / "tests" / "system" / "clients" / "openapi-python-client.yaml")],
        cwd=out, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ.get('PATH', '')}"},
    )  # fmt: skip
    assert generated.returncode == 0, generated.stdout + generated.stderr
    assert "warning" not in (generated.stdout + generated.stderr).lower(), generated.stdout + generated.stderr
    sys.path.insert(0, str(out))
    yield importlib.import_module("maubinh_client")
    sys.path.remove(str(out))


@pytest.fixture(scope="module")
def client(client_package: Any) -> Iterator[Any]:
    base, process = start({})
    yield client_package.Client(base_url=base, raise_on_unexpected_status=True)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=15)


def test_score_evaluate_and_arrange(client: Any) -> None:
    from maubinh_client.api.scoring import arrange_cards, evaluate_arrangement, score_room
    from maubinh_client.models import ArrangeRequest, EvaluateRequest, ScoreRequest, ScoreResponse

    scored = score_room.sync(client=client, body=ScoreRequest.from_dict(E1))
    assert isinstance(scored, ScoreResponse)
    assert [(p.id, p.units, p.amount) for p in scored.players] == [("P", -9, -9000), ("Q", 9, 9000)]
    assert [line.step for line in scored.ledger] == ["chi", "chi", "chi", "scoop"]
    assert (scored.ruleset.id, scored.ruleset.version) == ("maubinh-2020", "3")

    variant = {**E1, "ruleset": {"base": "maubinh-2020", "patch": {"scoop": {"multiplier": 2}}}}
    house = score_room.sync(client=client, body=ScoreRequest.from_dict(variant))
    assert isinstance(house, ScoreResponse)
    assert [p.units for p in house.players] == [-6, 6]
    assert house.ruleset.base.id == "maubinh-2020"
    assert [c.field for c in house.ruleset.changes] == ["id", "scoop.multiplier"]

    evaluated = evaluate_arrangement.sync(
        client=client,
        body=EvaluateRequest.from_dict(
            {"ruleset": "maubinh-2020", **{k: E1["players"][0][k] for k in ("back", "middle", "front")}}
        ),
    )
    assert evaluated.fouled is False and evaluated.hands.back.category == "two_pair"

    cards = [c for k in ("back", "middle", "front") for c in E1["players"][1][k]]
    arranged = arrange_cards.sync(
        client=client, body=ArrangeRequest.from_dict({"ruleset": "maubinh-bao", "cards": cards, "alternatives": 1})
    )
    assert sorted(arranged.arrangement.back + arranged.arrangement.middle + arranged.arrangement.front) == sorted(cards)
    assert len(arranged.alternatives) == 1


def test_the_rulesets_and_the_contract(client: Any) -> None:
    from maubinh_client.api.operations import openapi
    from maubinh_client.api.rulesets import get_ruleset, list_rulesets

    listed = list_rulesets.sync(client=client)
    assert {(r.id, tuple(r.versions)) for r in listed.rulesets} == {
        ("maubinh-2020", ("1", "2", "3")),
        ("maubinh-bao", ("1", "2", "3")),
        ("maubinh-chi-at", ("1", "2", "3", "4")),
    }
    pinned = get_ruleset.sync(client=client, id="maubinh-chi-at@1")
    assert pinned.version == "1" and pinned.aces.no_ace_pays == 4
    latest = get_ruleset.sync(client=client, id="maubinh-chi-at")
    assert latest.scoop.basis == "total" and latest.bonuses.mode == "replace"
    assert openapi.sync(client=client).startswith("openapi: 3.1.0")


def test_a_422_is_parsed_into_its_problem_model_with_every_fault(client: Any) -> None:
    from maubinh_client.api.scoring import score_room
    from maubinh_client.models import ScoreRequest, ValidationProblem

    # A typed client cannot even send an unknown patch key (its model has no field for it); the
    # faults it can send are a value out of range and a label too short.
    bad = {**E1, "ruleset": {"base": "maubinh-2020", "patch": {"scoop": {"multiplier": 0}, "labels": {"front": ""}}}}
    bad["players"] = [E1["players"][0], {**E1["players"][1], "back": ["AS", "9D", "9C", "4S", "4D"]}]
    refused = score_room.sync(client=client, body=ScoreRequest.from_dict(bad))
    assert isinstance(refused, ValidationProblem)
    assert refused.status == 422
    assert {(f.pointer, str(f.code.value)) for f in refused.errors} == {
        ("/ruleset/patch/scoop/multiplier", "invalid_ruleset"),
        ("/ruleset/patch/labels/front", "invalid_ruleset"),
        ("/players/1/back/0", "duplicate_card"),
    }
