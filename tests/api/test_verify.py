"""POST /v1/verify: a backend's claimed settlement against the rules, per player, per line, per step.

E1 (docs/rules.md §10) at stake 1000: P pays Q chi 3 × 1000 and a scoop of 6 × 1000.
Q4 below is E1 with Q's back quads (a back bonus of 3): P pays chi 3000 + bonus 3000 + scoop 12000.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases

from service.documents import score_document
from service.scoring.claims import who_owes_whom

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
RIGHT = {"P": -9000, "Q": 9000}
RIGHT_LEDGER = [
    {"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"},
    {"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"},
    {"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"},
    {"payer": "P", "payee": "Q", "amount": 6000, "step": "scoop"},
]


def verify(client: FlaskClient, claimed: dict[str, Any], room: dict[str, Any] = E1, language: str = "en") -> Any:
    return client.post("/v1/verify", json={**room, "claimed": claimed}, headers={"Accept-Language": language})


def test_an_agreeing_claim_with_and_without_a_ledger(client: FlaskClient) -> None:
    for claimed in ({"amounts": RIGHT}, {"amounts": RIGHT, "ledger": RIGHT_LEDGER}):
        answer = verify(client, claimed)
        assert answer.status_code == 200
        body = answer.get_json()
        assert body["agrees"] is True
        assert [(p["id"], p["difference"]) for p in body["players"]] == [("P", 0), ("Q", 0)]
        assert body["result"] == client.post("/v1/score", json=E1).get_json()
    assert verify(client, {"amounts": RIGHT}).get_json()["ledger"] is None


def test_a_missing_scoop_is_named_by_step(client: FlaskClient) -> None:
    body = verify(client, {"amounts": {"P": -3000, "Q": 3000}, "ledger": RIGHT_LEDGER[:3]}).get_json()
    assert body["agrees"] is False
    p = body["players"][0]
    assert (p["claimed"], p["computed"], p["difference"]) == (-3000, -9000, 6000)
    assert p["explanation"] == [
        "P: the game recorded −3,000, the rules give −9,000 → P still owes Q 6,000",
        "scoop: the rules give −6,000, the game did not record it",
    ]
    assert body["corrections"] == [{"payer": "P", "payee": "Q", "amount": 6000}]
    assert body["ledger"] == {
        "missing": [
            {
                "payer": "P",
                "payee": "Q",
                "step": "scoop",
                "computed": 6000,
                "explanation": "the game did not record this line: P pays Q 6,000 (scoop)",
            }
        ],
        "extra": [],
        "different": [],
    }


def test_totals_right_but_a_line_booked_under_the_wrong_step_is_said(client: FlaskClient) -> None:
    """Review 5, item 4: the sập booked as a foul penalty; the totals agree, and the answer still says
    in words what is wrong, in the language asked."""
    relabelled = [*RIGHT_LEDGER[:3], {**RIGHT_LEDGER[3], "step": "foul"}]
    vi = {"Accept-Language": "vi"}
    body = client.post("/v1/verify", json={**E1, "claimed": {"amounts": RIGHT, "ledger": relabelled}}, headers=vi)
    answer = body.get_json()
    assert answer["agrees"] is False and [p["difference"] for p in answer["players"]] == [0, 0]
    assert answer["explanation"] == [
        "Tổng tiền của từng người khớp, nhưng các khoản game ghi khác với luật:",
        "– P trả 6.000 cho Q: game ghi là phạt binh lủng, theo luật là sập",
    ]
    assert [e["explanation"] for e in answer["ledger"]["missing"] + answer["ledger"]["extra"]] == [
        "Khoản game không ghi: P trả 6.000 cho Q (sập)",
        "Khoản game ghi nhưng theo luật không có: P trả 6.000 cho Q (phạt binh lủng)",
    ]
    assert verify(client, {"amounts": RIGHT}).get_json()["explanation"] == [
        "The game's settlement agrees with the rules."
    ]


def test_a_wrong_amount_without_a_ledger_still_shows_the_steps(client: FlaskClient) -> None:
    body = verify(client, {"amounts": {"P": -8000, "Q": 8000}}).get_json()
    assert body["agrees"] is False and body["ledger"] is None
    assert body["players"][0]["explanation"] == [
        "P: the game recorded −8,000, the rules give −9,000 → P still owes Q 1,000",
        "chi: the rules give −3,000",
        "scoop: the rules give −6,000",
    ]
    assert body["players"][1]["explanation"][0] == (
        "Q: the game recorded +8,000, the rules give +9,000 → Q is still owed 1,000 by P"
    )


def test_an_extra_bonus_and_a_different_amount(client: FlaskClient) -> None:
    ledger = [
        *RIGHT_LEDGER[:3],
        {"payer": "P", "payee": "Q", "amount": 3000, "step": "bonus"},
        {**RIGHT_LEDGER[3], "amount": 12000},
    ]
    body = verify(client, {"amounts": {"P": -18000, "Q": 18000}, "ledger": ledger}).get_json()
    assert body["ledger"]["extra"] == [
        {
            "payer": "P",
            "payee": "Q",
            "step": "bonus",
            "claimed": 3000,
            "explanation": "the game recorded a line the rules do not have: P pays Q 3,000 (bonus)",
        }
    ]
    assert body["ledger"]["different"] == [
        {
            "payer": "P",
            "payee": "Q",
            "step": "scoop",
            "computed": 6000,
            "claimed": 12000,
            "explanation": "P pays Q (scoop): the rules give 6,000, the game recorded 12,000",
        }
    ]
    assert body["players"][0]["explanation"] == [
        "P: the game recorded −18,000, the rules give −9,000 → Q must pay P back 9,000",
        "scoop: the rules give −6,000, the game recorded −12,000",
        "bonus: the rules give nothing, the game recorded −3,000",
    ]
    assert body["corrections"] == [{"payer": "Q", "payee": "P", "amount": 9000}]
    # the game made P pay too much: review 5's runner-up, said as an agent says a refund, from both sides
    vi = verify(client, {"amounts": {"P": -18000, "Q": 18000}, "ledger": ledger}, language="vi").get_json()
    assert [p["explanation"][0] for p in vi["players"]] == [
        "P: game ghi −18.000, theo luật −9.000 → Q phải trả lại 9.000 cho P",
        "Q: game ghi +18.000, theo luật +9.000 → Q phải trả lại 9.000 cho P",
    ]


def test_swapped_payer_and_payee(client: FlaskClient) -> None:
    swapped = [{**line, "payer": line["payee"], "payee": line["payer"]} for line in RIGHT_LEDGER]
    body = verify(client, {"amounts": {"P": 9000, "Q": -9000}, "ledger": swapped}).get_json()
    assert body["agrees"] is False
    assert {(d["payer"], d["step"]) for d in body["ledger"]["missing"]} == {("P", "chi"), ("P", "scoop")}
    assert {(d["payer"], d["step"]) for d in body["ledger"]["extra"]} == {("Q", "chi"), ("Q", "scoop")}
    assert [p["difference"] for p in body["players"]] == [18000, -18000]


@pytest.mark.parametrize(
    ("claimed", "pointer", "code"),
    [
        ({"amounts": {"P": -9000}}, "/claimed/amounts", "claim_missing_player"),
        ({"amounts": {"P": -9000, "Q": 9000, "R": 0}}, "/claimed/amounts/R", "claim_unknown_player"),
        ({"amounts": {"P": -9000, "Q": 8000}}, "/claimed/amounts", "claim_not_zero_sum"),
        (
            {"amounts": RIGHT, "ledger": [{"payer": "P", "payee": "Z", "amount": 1}]},
            "/claimed/ledger/0/payee",
            "claim_unknown_player",
        ),
        (
            {"amounts": RIGHT, "ledger": [{"payer": "P", "payee": "Q", "amount": 0}]},
            "/claimed/ledger/0/amount",
            "out_of_range",
        ),
        ({}, "/claimed/amounts", "required"),
    ],
)
def test_a_claim_that_cannot_be_checked_is_a_422_at_its_pointer(
    client: FlaskClient, claimed: Any, pointer: str, code: str
) -> None:
    answer = verify(client, claimed)
    assert answer.status_code == 422
    assert (pointer, code) in {(e["pointer"], e["code"]) for e in answer.get_json()["errors"]}


def test_a_claim_on_a_refused_room_is_the_room_s_422(client: FlaskClient) -> None:
    bad = copy.deepcopy(E1)
    bad["players"][1]["back"][0] = "AS"  # P holds AS too
    answer = verify(client, {"amounts": RIGHT}, bad)
    assert answer.status_code == 422
    assert {(e["pointer"], e["code"]) for e in answer.get_json()["errors"]} == {("/players/1/back/0", "duplicate_card")}


def test_a_claimed_ledger_without_steps_is_matched_by_payer_and_payee(client: FlaskClient) -> None:
    """Lines without a step: compared per (payer, payee) in all, and explained like an amounts-only claim."""
    lines = [{"payer": "P", "payee": "Q", "amount": 3000}]
    body = verify(client, {"amounts": {"P": -3000, "Q": 3000}, "ledger": lines}).get_json()
    assert body["ledger"]["different"] == [
        {
            "payer": "P",
            "payee": "Q",
            "step": None,
            "computed": 9000,
            "claimed": 3000,
            "explanation": "P pays Q (lines without a step): the rules give 9,000, the game recorded 3,000",
        }
    ]
    assert body["players"][0]["explanation"] == [
        "P: the game recorded −3,000, the rules give −9,000 → P still owes Q 6,000",
        "chi: the rules give −3,000",
        "scoop: the rules give −6,000",
    ]
    assert body["corrections"] == [{"payer": "P", "payee": "Q", "amount": 6000}]
    agreeing = verify(client, {"amounts": RIGHT, "ledger": [{"payer": "P", "payee": "Q", "amount": 9000}]}).get_json()
    assert agreeing["agrees"] is True


E3 = next(c for c in golden_cases() if c["name"] == "worked-example/E3")["request"]
"""docs/rules.md §10 E3: four players, stake 10; 18 chi lines, then S pays P 40 for the aces."""


def _e3_ledger() -> list[dict[str, Any]]:
    return [{key: line[key] for key in ("payer", "payee", "amount", "step")} for line in score_document(E3)["ledger"]]


def test_who_owes_whom_follows_the_claimed_lines_pair_by_pair(client: FlaskClient) -> None:
    """The claim forgot S's ace line to P (40) and invented Q paying R 10: S owes P 40, R owes Q 10.
    Paired by the amounts alone, in request order, R would be told to pay P."""
    ledger = [*_e3_ledger()[:-1], {"payer": "Q", "payee": "R", "amount": 10, "step": "chi"}]
    claimed = {"P": -10, "Q": -20, "R": 0, "S": 30}
    body = verify(client, {"amounts": claimed, "ledger": ledger}, E3).get_json()
    assert [p["difference"] for p in body["players"]] == [-40, -10, 10, 40]
    assert body["corrections"] == [
        {"payer": "R", "payee": "Q", "amount": 10},
        {"payer": "S", "payee": "P", "amount": 40},
    ]
    said = {p["id"]: p["explanation"][0] for p in body["players"]}
    assert said["S"] == "S: the game recorded +30, the rules give −10 → S still owes P 40"
    assert said["Q"] == "Q: the game recorded −20, the rules give −10 → R must pay Q back 10"  # a refund: Q overpaid
    vi = verify(client, {"amounts": claimed, "ledger": ledger}, E3, language="vi").get_json()
    assert vi["players"][3]["explanation"] == [
        "S: game ghi +30, theo luật −10 → S còn phải trả 40 cho P",
        "chi Át: theo luật −40, game không ghi khoản này",
    ]
    amounts_only = verify(client, {"amounts": claimed}, E3).get_json()
    assert amounts_only["corrections"] == [
        {"payer": "R", "payee": "P", "amount": 10},
        {"payer": "S", "payee": "P", "amount": 30},
        {"payer": "S", "payee": "Q", "amount": 10},
    ]  # without lines: who was credited too much pays back who too little, in request order
    assert (
        amounts_only["players"][3]["explanation"][0]
        == "S: the game recorded +30, the rules give −10 → S still owes P 30 and Q 10"
    )


def test_vietnamese_verify_says_who_owes_whom_with_vietnamese_numbers(client: FlaskClient) -> None:
    body = verify(client, {"amounts": {"P": -3000, "Q": 3000}, "ledger": RIGHT_LEDGER[:3]}, language="vi").get_json()
    assert [p["explanation"] for p in body["players"]] == [
        [
            "P: game ghi −3.000, theo luật −9.000 → P còn phải trả 6.000 cho Q",
            "sập: theo luật −6.000, game không ghi khoản này",
        ],
        [
            "Q: game ghi +3.000, theo luật +9.000 → Q còn được nhận 6.000 từ P",
            "sập: theo luật +6.000, game không ghi khoản này",
        ],
    ]
    assert "+0" not in str(body) and "dương là" not in str(body)


def test_a_line_claimed_without_its_step_is_said_summed_over_every_step(client: FlaskClient) -> None:
    """Review 6, item 8: "(dòng không ghi bước)" was opaque; a line with no step stands for the pair's sum."""
    unstated = {"amounts": {"P": -3000, "Q": 3000}, "ledger": [{"payer": "P", "payee": "Q", "amount": 3000}]}
    answer = verify(client, unstated, language="vi").get_json()
    said = [line["explanation"] for line in answer["ledger"]["different"]]
    assert said == ["P trả Q (cộng gộp mọi bước): theo luật 9.000, game ghi 3.000"]


def test_one_who_owes_and_is_owed_says_each_debt_in_its_own_clause() -> None:
    """Review 6, items 9, 10: no "và …, và", and no amount right after an id ("trả lại S0 2")."""
    owed = [
        {"payer": "Chi0", "payee": "S1", "amount": 1_000_000},
        {"payer": "Chi0", "payee": "Q3", "amount": 1_000_000},
        {"payer": "R2", "payee": "Chi0", "amount": 9_000_000},
    ]
    said = who_owes_whom("Chi0", owed)
    assert (
        said.render("vi")
        == "Chi0 còn phải trả 1.000.000 cho S1 và 1.000.000 cho Q3; R2 còn phải trả 9.000.000 cho Chi0"
    )
    assert said == "Chi0 still owes S1 1,000,000 and Q3 1,000,000, and is still owed 9,000,000 by R2"  # as it was
    refund = who_owes_whom("S0", [{"payer": "S1", "payee": "S0", "amount": 2}], frozenset({("S1", "S0")}))
    assert refund.render("vi") == "S1 phải trả lại 2 cho S0"


def test_a_refund_is_said_only_where_the_game_s_lines_moved_that_money(client: FlaskClient) -> None:
    """Review 7, item 20: "Q: … → S phải trả lại 10 cho Q" said S had Q's money; the claim (amounts
    alone) never said so: Q was charged too much and S too little, and S owes Q the difference."""
    claimed = {"P": 30, "Q": -20, "R": -10, "S": 0}
    vi = verify(client, {"amounts": claimed}, E3, language="vi").get_json()
    said = {p["id"]: p["explanation"][0] for p in vi["players"] if p["difference"]}
    assert said == {
        "Q": "Q: game ghi −20, theo luật −10 → Q còn được nhận 10 từ S",
        "S": "S: game ghi 0, theo luật −10 → S còn phải trả 10 cho Q",
    }
