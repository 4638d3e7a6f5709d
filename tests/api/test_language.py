"""Accept-Language: Vietnamese texts on request, English by default; machine fields never change."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


@pytest.mark.parametrize(
    ("header", "language"),
    [
        (None, "en"),
        ("vi", "vi"),
        ("vi-VN,vi;q=0.9,en;q=0.8", "vi"),
        ("en-US,en;q=0.9,vi;q=0.8", "en"),
        ("fr", "en"),
        ("en-GB,vi;q=0.9", "en"),  # en-GB falls back to en before vi's lower quality (werkzeug chose vi)
        ("fr,vi-VN;q=0.5", "vi"),
        ("vi;q=0,en-AU", "en"),
        ("*,vi;q=0.5", "en"),
    ],
)
def test_the_language_is_negotiated_and_named(client: FlaskClient, header: str | None, language: str) -> None:
    headers = {"Accept-Language": header} if header else {}
    response = client.post("/v1/score", json=E1, headers=headers)
    assert response.headers["Content-Language"] == language
    assert "Accept-Language" in response.headers["Vary"]
    first = response.get_json()["ledger"][0]
    expected = {
        "en": "back: full house, nines full of fours (9-9-9-4-4) beats two pair, aces and sevens (A-A-7-7-2)",
        "vi": "Chi 1 (5 lá): cù lũ 9 đôi 4 (9-9-9-4-4) thắng thú Át-7 (A-A-7-7-2)",
    }[language]
    assert first["explanation"] == expected
    assert (first["step"], first["rule"], first["position"]) == (
        "chi",
        "docs/rules.md §5: one unit per chi won",
        "back",
    )


def test_a_refusal_in_vietnamese_keeps_its_codes_and_pointers(client: FlaskClient) -> None:
    bad = {**E1, "players": [{**E1["players"][0], "front": ["QH", "JD", "1S"]}, E1["players"][1]]}
    english = client.post("/v1/score", json=bad).get_json()
    vietnamese = client.post("/v1/score", json=bad, headers={"Accept-Language": "vi"}).get_json()
    assert vietnamese["title"] == "Ván bài không xử lý được"
    assert vietnamese["detail"] == "Yêu cầu có 1 lỗi (sai đặc tả API hoặc sai luật chơi); xem chi tiết trong “errors”."
    assert vietnamese["errors"] == [
        {
            "pointer": "/players/0/front/2",
            "message": "'1S': số '1' không hợp lệ (dùng 2-9, T hoặc 10, J, Q, K, A)",
            "code": "unknown_rank",
        }
    ]
    assert [(e["pointer"], e["code"]) for e in english["errors"]] == [("/players/0/front/2", "unknown_rank")]
    assert english["type"] == vietnamese["type"]


def test_http_problems_speak_vietnamese_too(client: FlaskClient) -> None:
    vi = {"Accept-Language": "vi"}
    missing = client.get("/v1/nothing", headers=vi)
    assert missing.status_code == 404 and missing.headers["Content-Language"] == "vi"
    assert missing.get_json()["title"] == "Không tìm thấy"
    assert missing.get_json()["type"] == "/problems/not-found"
    wrong_type = client.post("/v1/score", data="x", content_type="text/plain", headers=vi).get_json()
    assert wrong_type["detail"] == "Hãy gửi nội dung dạng JSON, với Content-Type: application/json."
    not_json = client.post("/v1/score", data="{", content_type="application/json", headers=vi).get_json()
    assert not_json["title"] == "JSON không hợp lệ"
    assert not_json["detail"] == (  # "{" alone: a body cut short, as often as a key left unquoted
        "JSON không hợp lệ ở dòng 1, cột 2: thiếu tên khóa (tên khóa phải đặt trong dấu ngoặc kép), "
        "hoặc nội dung bị cắt ngang"
    )
    method = client.get("/v1/score", headers=vi)
    assert method.get_json()["detail"] == "Đường dẫn này chỉ nhận phương thức POST."


def test_a_batch_answers_every_room_in_the_language_asked(client: FlaskClient) -> None:
    body = client.post("/v1/score/batch", json={"rooms": [E1, {}]}, headers={"Accept-Language": "vi"}).get_json()
    assert body["results"][0]["ledger"][3]["explanation"].startswith("Q thắng cả 3 chi, bắt sập P")
    assert body["results"][1]["title"] == "Ván bài không xử lý được"
