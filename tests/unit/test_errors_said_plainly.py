"""Errors said as a Vietnamese reader says them (fifth review of the texts, items 20-30): no English
field name opening a sentence, no word-for-word "ở 1 chỗ", no stacked prefixes, argparse's own words
in Vietnamese, and a player id with diacritics refused saying why, with the id it could be."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases

from service.cli import main
from service.documents import OPERATIONS, answer
from service.serialize import dumps

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


def _refused(request: dict[str, object], language: str = "vi") -> dict[str, object]:
    status, body = answer(OPERATIONS["score"], json.dumps(request).encode(), language=language)  # type: ignore[arg-type]
    assert status == 422
    return json.loads(dumps(body, language))  # type: ignore[arg-type, no-any-return]


def test_a_name_with_diacritics_is_refused_saying_why_and_what_id_it_could_be() -> None:
    """Decision: ids stay codes (the bulk engines and tables read ASCII ids, and "Bình" has two
    spellings, composed or not, that look the same); the refusal says so and offers the plain id."""
    players = [{**E1["players"][0], "id": "Bình"}, {**E1["players"][1], "id": "Anh Tú"}]
    vi = _refused({**E1, "players": players})
    en = _refused({**E1, "players": players}, "en")
    messages = {e["pointer"]: e["message"] for e in vi["errors"]}  # type: ignore[union-attr]
    assert "(không dấu, không khoảng trắng)" in messages["/players/0/id"]
    assert "'Binh'" in messages["/players/0/id"] and "'Anh_Tu'" in messages["/players/1/id"]
    assert {e["code"] for e in en["errors"]} == {"pattern_mismatch"}  # type: ignore[union-attr]
    assert "'Binh'" in en["errors"][0]["message"]  # type: ignore[index]


def test_a_422_says_how_many_faults_and_names_a_hand_by_its_chi() -> None:
    short = {**E1, "players": [{**E1["players"][0], "back": E1["players"][0]["back"][:4]}, E1["players"][1]]}
    vi = _refused(short)
    assert vi["detail"] == "Yêu cầu có 1 lỗi (sai đặc tả API hoặc sai luật chơi); xem chi tiết trong “errors”."
    assert vi["errors"][0]["message"] == "chi 1 (back) phải có đúng 5 lá, nhưng ở đây có 4 lá"  # type: ignore[index]


def test_a_hand_s_fault_counts_the_chi_as_the_ruleset_labels_them() -> None:
    """Review 7, item 4: "chi 1 (back)" under maubinh-bao, whose players count from the 3-card hand
    ("Chi đầu"), so that "chi 1" reads as the front; the card's fault is found before the ruleset."""
    short = {**E1, "ruleset": "maubinh-bao", "players": [{**E1["players"][0], "back": ["AS"]}, E1["players"][1]]}
    vi = _refused(short)
    assert vi["errors"][0]["message"] == "chi cuối (back) phải có đúng 5 lá, nhưng ở đây có 1 lá"  # type: ignore[index]
    assert _refused(short, "en")["errors"][0]["message"] == "back needs 5 cards; it has 1"  # type: ignore[index]
    missing = {
        **E1,
        "ruleset": "maubinh-bao",
        "players": [{"id": "P", "back": E1["players"][0]["back"]}, E1["players"][1]],
    }
    said = {e["pointer"]: e["message"] for e in _refused(missing)["errors"]}  # type: ignore[union-attr]
    assert said["/players/0/front"] == (
        "người chơi đã xếp bài phải gửi đủ ba chi: chi cuối (back), chi giữa (middle) và chi đầu (front)"
    )


def _cli(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    with contextlib.suppress(SystemExit):
        main(list(words))
    out = capsys.readouterr()
    return out.out + out.err


def test_help_and_usage_errors_are_vietnamese(capsys: pytest.CaptureFixture[str]) -> None:
    helped = _cli(capsys, "score", "--help", "--lang", "vi")
    assert helped.startswith("cách dùng: maubinh score")
    assert "\ntùy chọn:\n" in helped and "\nđối số:\n" in helped and "in trợ giúp này rồi thoát" in helped
    assert [w for w in ("usage:", "options:", "positional arguments:", "show this help") if w in helped] == []
    first = _cli(capsys, "--lang", "vi", "score")  # the option before the command
    assert "maubinh: lỗi: 'vi' không phải lệnh hợp lệ" in first and "--lang đặt sau tên lệnh" in first
    assert "command" not in first
    assert _cli(capsys, "--lang=vi").endswith("maubinh: lỗi: thiếu đối số bắt buộc: lệnh\n")
    english = _cli(capsys, "score", "--help", "--lang", "en")
    assert english.startswith("usage: maubinh score") and "\noptions:\n" in english


def test_a_bad_ruleset_file_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review 5, item 26: "…/bad.json: /: không đọc được tệp JSON: không phải JSON: …" stacked four prefixes."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"base": "maubinh-2020",\n')
    said = _cli(capsys, "rulesets", "check", str(bad), "--lang", "vi")
    assert f"{bad}: JSON không hợp lệ ở dòng 2, cột 1: thiếu tên khóa" in said, said
    assert ": /: " not in said


def test_a_card_twice_in_one_player_s_cards_names_no_room() -> None:
    """Review 5, runners-up: /v1/arrange has 13 cards and no ván."""
    cards = ["AS", "AS", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC"]
    status, body = answer(OPERATIONS["arrange"], json.dumps({"ruleset": "maubinh-2020", "cards": cards}).encode(),
                          language="vi")  # fmt: skip
    assert status == 422
    said = json.loads(dumps(body, "vi"))["errors"]
    assert said == [{"pointer": "/cards/1", "message": "lá AS xuất hiện hai lần trong số lá đã gửi (lần đầu ở /cards/0)",
                     "code": "duplicate_card"}]  # fmt: skip


def test_a_problem_s_detail_is_a_capitalised_sentence(client: FlaskClient) -> None:
    """Review 5, consistency: a 404's detail reused a 422 message's lower-case words."""
    detail = client.get("/v1/rulesets/khong-co", headers={"Accept-Language": "vi"}).get_json()["detail"]
    assert detail.startswith("Không có bộ luật 'khong-co'; các bộ luật hiện có: ")


def test_a_group_s_missing_or_unknown_command_is_said_as_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    """`keys`, `receipts`: argparse named their subcommands by the code's dest (keys_command)."""
    assert _cli(capsys, "keys", "--lang", "vi").endswith("maubinh keys: lỗi: thiếu đối số bắt buộc: lệnh\n")
    said = _cli(capsys, "receipts", "bogus", "--lang", "vi")
    assert "'bogus' không phải lệnh hợp lệ (chọn một trong 'verify', 'make', 'publish')" in said
    assert "_command" not in said


def test_the_sixth_read_s_errors_say_only_the_real_fault_in_vietnamese_words() -> None:
    """Review 6, items 13, 14, 17, 19: a player who left may send its 13 cards, so one who sent both
    forms is told only that; "gửi hoặc … hoặc" was English word for word; "JSON lines" was English;
    "cards" opened a sentence bare. Review 7, item 5: the must ("phải") was missing; item 13: "13 lá rời
    (cards) phải có 13 lá" said the 13 cards must be 13 cards."""
    left = {**E1["players"][1], "status": "left", "cards": ["2C"]}
    both = _refused({**E1, "players": [E1["players"][0], left]})
    said = {(e["pointer"], e["code"]): e["message"] for e in both["errors"]}  # type: ignore[union-attr]
    assert not [where for where in said if where[1] == "missing_hand"], said
    assert said["/players/1/cards", "both_forms"] == (
        "chỉ gửi một trong hai cách: ba chi (back, middle, front) hoặc 13 lá (cards), không gửi cả hai"
    )
    partial = {key: value for key, value in left.items() if key not in ("cards", "middle")}
    said = {e["pointer"]: e["message"] for e in _refused({**E1, "players": [E1["players"][0], partial]})["errors"]}  # type: ignore[union-attr]
    assert said["/players/1/middle"] == (
        "người chơi đã rời bàn (status 'left') phải gửi một trong hai: đủ chi 1 (back), chi 2 (middle) và "
        "chi 3 (front), hoặc 13 lá trong cards"
    )
    short = {"id": "L", "status": "left", "cards": ["2C"]}
    said = {e["pointer"]: e["message"] for e in _refused({**E1, "players": [E1["players"][0], short]})["errors"]}  # type: ignore[union-attr]
    assert said["/players/1/cards"] == "bài chưa xếp (cards) phải có đúng 13 lá, nhưng ở đây có 1 lá"
    status, body = answer(OPERATIONS["score"], b"  ", language="vi")
    assert status == 400 and "JSON lines" not in dumps(body, "vi").decode()


def test_a_bad_json_line_of_many_names_its_column_on_that_line_not_line_1() -> None:
    """Review 6, item 18: "dòng 1" for input line 2 sent the reader to the wrong line."""
    from service.bulk.jsonl import answer_line
    from service.rulesets.operator_folder import catalogue_for

    status, body = answer_line(OPERATIONS["score"], b'{"stake":\n', catalogue_for(None), {}, "vi")
    detail = json.loads(dumps(body, "vi"))["detail"]
    assert status == 400 and detail.startswith("JSON không hợp lệ ở cột 10 của dòng này: "), detail


def test_a_malformed_verifier_key_is_said_as_the_option_s_fault(capsys: pytest.CaptureFixture[str]) -> None:
    """Review 7, item 15: "không nhất quán: a verifier key is <name>+<key ID>+<key>" called a bad option
    an inconsistent log, in the parser's English."""
    said = _cli(capsys, "log", "check", "--log", "/nowhere", "--vkey", "abc", "old", "new", "--lang", "vi")
    assert said == (
        "maubinh log check: khóa kiểm (--vkey) sai dạng: khóa kiểm có dạng <tên>+<mã khóa>+<khóa>, "
        "như maubinh log vkey in ra\n"
    )


def test_a_missing_log_key_says_what_is_missing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review 7, item 16: "khóa của sổ minh bạch: : not an unencrypted PEM private key (FileNotFoundError)"
    hid the cause (no key given at all) behind an empty path and the loader's English."""
    monkeypatch.delenv("MAUBINH_LOG_KEY_FILE", raising=False)
    assert _cli(capsys, "log", "vkey", "--lang", "vi") == (
        "maubinh log vkey: khóa của sổ minh bạch: chưa đặt MAUBINH_LOG_KEY_FILE và không có --key "
        "(cần khóa riêng Ed25519 dạng PEM: openssl genpkey -algorithm ed25519)\n"
    )
    said = _cli(capsys, "log", "vkey", "--key", "/no/such/key.pem", "--lang", "vi")
    assert "/no/such/key.pem: không có tệp này" in said and "FileNotFoundError" not in said


def test_a_toml_fault_keeps_its_place_and_loses_the_parser_s_english(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review 7, item 17: "không phải TOML: Invalid value (at line 1, column 5)"."""
    bad, cut = tmp_path / "a.toml", tmp_path / "b.toml"
    bad.write_text("x = 1\n\n y z\n")
    cut.write_text('a = "x')
    said = _cli(capsys, "keys", "check", str(bad), "--lang", "vi")
    assert said == f"maubinh keys check: {bad}: không phải TOML: lỗi cú pháp ở dòng 3, cột 4\n"
    said = _cli(capsys, "keys", "check", str(cut), "--lang", "vi")
    assert said == f"maubinh keys check: {cut}: không phải TOML: tệp kết thúc giữa chừng một giá trị hay một bảng\n"


def test_a_file_that_is_not_parquet_is_said_so_in_our_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review 7, item 18: "không phải tệp Parquet (Parquet file size is 3 bytes, smaller than the minimum
    file footer (8 bytes))": pyarrow's English in the middle of a Vietnamese line."""
    said = {}
    for name, data in (("short", b"abc"), ("text", b"not parquet at all"), ("broken", b"PAR1" + b"\0" * 12 + b"PAR1")):
        (tmp_path / name).write_bytes(data)
        said[name] = _cli(capsys, "verify", "--rooms", str(tmp_path / name), "--lang", "vi")
    tail = "): bảng các ván là tệp mà maubinh rooms ghi ra\n"
    assert said["short"].endswith(
        "không phải tệp Parquet (tệp chỉ dài 3 byte, ngắn hơn 12 byte của tệp Parquet nhỏ nhất" + tail
    )
    assert said["text"].endswith("(tệp không mở đầu và kết thúc bằng 'PAR1' như mọi tệp Parquet" + tail)
    assert said["broken"].endswith("(phần cuối tệp, nơi mô tả bảng, không đọc được" + tail)


def test_a_receipt_not_made_says_so_not_that_it_failed_to_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review 7, item 27: `receipts make` said "không xác minh được: sai cấu trúc: …", a verifier's words."""
    (tmp_path / "request.json").write_text(json.dumps(E1))
    (tmp_path / "answer.txt").write_text("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{}")
    said = _cli(capsys, "receipts", "make", "--request", str(tmp_path / "request.json"),
                "--answer", str(tmp_path / "answer.txt"), "--lang", "vi")  # fmt: skip
    assert said.startswith("maubinh receipts make: không tạo được biên nhận: ") and "xác minh" not in said, said
    assert "dòng trống giữa phần tiêu đề và phần nội dung" in said, said


def test_a_lock_of_a_missing_folder_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review 7, item 28: "hãy nêu một thư mục chứa các tệp bộ luật" for a folder that does not exist."""
    missing = tmp_path / "nodir"
    assert _cli(capsys, "rulesets", "lock", str(missing), "--lang", "vi") == (
        f"maubinh rulesets lock: {missing}: không có thư mục này; hãy nêu một thư mục chứa các tệp bộ luật\n"
    )
