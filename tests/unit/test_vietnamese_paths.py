"""Every path a Vietnamese user meets answers in Vietnamese: each error path of each CLI subcommand
under ``--lang vi`` (and ``LANG=vi_VN.UTF-8``), and every problem page and problem answer under
``Accept-Language: vi``. A line fails when it holds English words that are not names: API members,
codes, options, paths and the like are allowed (ALLOWED), anything the English phrasebook says is not.
"""

from __future__ import annotations

import contextlib
import json
import re
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases

from service.cli import main
from service.problem_types import PROBLEM_TYPES
from service.texts import phrasebook

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
ALLOWED = {
    # API members, fields and values a sentence names as they are sent
    "back", "middle", "front", "cards", "players", "stake", "ruleset", "patch", "base", "status", "arranged",
    "timed_out", "left", "claimed", "amounts", "ledger", "step", "payer", "payee", "amount", "declare", "errors",
    "message", "code", "json", "csv", "parquet", "jsonl", "report", "format", "output", "viewer", "jobs", "lang",
    "opponents", "strong", "weak", "score", "verify", "evaluate", "arrange", "rulesets", "check", "lock", "serve",
    "command", "file", "content", "type", "encoding", "transfer", "chunked", "trailer", "length", "authorization",
    "bearer", "accept", "language", "retry", "after", "request", "problem", "problems", "openapi", "yaml", "https",
    "http", "api", "utf", "the", "otlp", "console", "none", "protobuf", "grpc", "maubinh", "pip", "install",
    "extra", "audit", "spark", "otel", "checkout", "secret", "kubernetes", "docs", "deployment", "timeout",
    "as_arranged", "automatic", "surrogate", "html", "readyz", "healthz", "metrics", "true", "false",
    "null", "merge", "rfc", "unlocked", "locked", "version", "digest", "sha256", "hex", "token", "key", "keys",
    "detail", "title", "nan", "header", "allow", "byte", "bytes", "callers", "routes", "ratelimit", "policy",
    "new", "unknown", "anonymous", "sha", "expires", "redis", "rediss", "unix", "receipts", "make",
}  # fmt: skip
"""Words an English reader would take for English, but that are names in a Vietnamese sentence."""


def _english_vocabulary() -> set[str]:
    words: set[str] = set()
    for template in phrasebook("en").values():
        literal = "".join(text for text, _, _, _ in string.Formatter().parse(template))
        words |= {w.lower() for w in re.findall(r"[A-Za-z]{3,}", literal)}
    return words - ALLOWED - {"chi", "mậu", "binh"}


ENGLISH = _english_vocabulary()


def english_in(text: str) -> list[str]:
    """The English words of ``text`` outside names: quoted values, options, paths, identifiers, URLs."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", " ", text)  # quoted values and names
    text = re.sub(r"\S*[/_.=@<>{}\[\]]\S*|--?[a-z][\w-]*|\b[A-Z][A-Z0-9_]{2,}\b", " ", text)
    return [word for word in re.findall(r"[A-Za-z]{3,}", text) if word.lower() in ENGLISH]


def test_the_detector_finds_english() -> None:
    assert english_in("maubinh score: cannot open x.json: No such file or directory")
    assert not english_in("maubinh score: không mở được x.json: không có tệp hoặc thư mục này")


def _cli(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    with contextlib.suppress(SystemExit):  # a usage error exits
        main(list(words))
    out = capsys.readouterr()
    return out.out + out.err


def _cli_paths(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """(what, the words) of each error path of each subcommand."""
    (tmp_path / "bad.json").write_text("{")
    (tmp_path / "room.json").write_text(json.dumps({**E1, "players": E1["players"][:1]}))
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "x.json").write_text(json.dumps({"base": "maubinh-2020", "patch": {"id": "maubinh-2020"}}))
    for command in ("score", "verify", "evaluate", "arrange"):
        yield f"{command}: a missing file", [command, str(tmp_path / "nope.json")]
        yield f"{command}: not JSON", [command, str(tmp_path / "bad.json")]
        yield f"{command}: a refused room", [command, str(tmp_path / "room.json")]
        yield f"{command}: an unknown option", [command, "--bogus"]
        yield f"{command}: --jobs not a number", [command, "--jobs", "x", "-"]
        yield f"{command}: -o without its value", [command, "-o"]
    yield "score: an unknown format", ["score", "--format", "xml", "-"]
    yield "verify: --report without --jsonl", ["verify", "--report", str(tmp_path / "r.html"), "-"]
    yield "score: parquet without -o", ["score", "--jsonl", "--format", "parquet", "-"]
    yield "score: -o is a file", ["score", "--jsonl", "--format", "parquet", "-o", str(tmp_path / "a-file"), "-"]
    yield "rulesets: two ids", ["rulesets", "a", "b"]
    yield "rulesets: an unknown id", ["rulesets", "maubinh-2021"]
    yield "rulesets check: nothing", ["rulesets", "check"]
    yield "rulesets check: a bad file", ["rulesets", "check", str(tmp_path / "rules" / "x.json")]
    yield "rulesets check: a missing file", ["rulesets", "check", str(tmp_path / "nope.json")]
    yield "rulesets check: a bad folder", ["rulesets", "check", str(tmp_path / "rules")]
    yield "rulesets lock: not a folder", ["rulesets", "lock", str(tmp_path / "a-file")]
    yield "rulesets lock: a bad folder", ["rulesets", "lock", str(tmp_path / "rules")]
    (tmp_path / "taken.key").write_text("x")
    (tmp_path / "callers.toml").write_text("[callers.a]\nkeys = []")
    yield "keys: no subcommand", ["keys"]
    yield "keys new: a bad name", ["keys", "new", "Club A"]
    yield "keys new: a bad expiry", ["keys", "new", "club-a", "--expires", "2027-06-01"]
    yield "keys new: a key file that exists", ["keys", "new", "club-a", "--key-file", str(tmp_path / "taken.key")]
    yield "keys check: a missing file", ["keys", "check", str(tmp_path / "nope.toml")]
    yield "keys check: a bad file", ["keys", "check", str(tmp_path / "callers.toml")]
    vectors = json.loads((Path(__file__).resolve().parents[1] / "receipts" / "vectors.json").read_text("utf-8"))
    signed = {"receipt": 1, "request": vectors["request"], "response": vectors["response"]}
    (tmp_path / "jwks.json").write_text(json.dumps(vectors["key"]["jwks"]))
    (tmp_path / "no-keys.json").write_text(json.dumps({"keys": []}))
    tampered = json.loads(json.dumps(signed))
    tampered["response"]["body"] = tampered["response"]["body"].replace("-9000", "-3000", 1)
    (tmp_path / "tampered.json").write_text(json.dumps(tampered))
    (tmp_path / "signed.json").write_text(json.dumps(signed))
    (tmp_path / "shapeless.json").write_text(json.dumps({"receipt": 1, "request": vectors["request"]}))
    (tmp_path / "no-blank-line.txt").write_text("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
    jwks, keys = str(tmp_path / "jwks.json"), "--keys"
    yield "receipts: no subcommand", ["receipts"]
    yield "receipts verify: a missing file", ["receipts", "verify", str(tmp_path / "nope.json"), keys, jwks]
    yield "receipts verify: not JSON", ["receipts", "verify", str(tmp_path / "bad.json"), keys, jwks]
    yield "receipts verify: a missing key set", ["receipts", "verify", str(tmp_path / "signed.json"), keys, "k.json"]
    yield "receipts verify: without --keys", ["receipts", "verify", str(tmp_path / "signed.json")]
    yield "receipts verify: a tampered answer", ["receipts", "verify", str(tmp_path / "tampered.json"), keys, jwks]
    yield "receipts verify: a key not published", [
        "receipts", "verify", str(tmp_path / "signed.json"), keys, str(tmp_path / "no-keys.json")
    ]  # fmt: skip
    yield "receipts verify: no response", ["receipts", "verify", str(tmp_path / "shapeless.json"), keys, jwks]
    month = [json.dumps(signed), json.dumps(tampered), "{", json.dumps({"receipt": 1, "request": vectors["request"]})]
    (tmp_path / "month.jsonl").write_text("\n".join(month) + "\n")
    many = ["receipts", "verify", keys, jwks]
    yield "receipts verify: a month of them", [*many, str(tmp_path / "month.jsonl"), str(tmp_path / "signed.json")]
    yield "receipts verify: many, one missing", [*many, str(tmp_path / "signed.json"), str(tmp_path / "nope.jsonl")]
    yield "receipts verify: many, no worker", [*many, "--jobs", "0", str(tmp_path / "month.jsonl")]
    yield (
        "receipts verify: many, keys no set",
        [*many[:2], "--keys", str(tmp_path / "bad.json"), str(tmp_path / "month.jsonl")],
    )
    yield "receipts make: a missing answer", [
        "receipts", "make", "--request", str(tmp_path / "room.json"), "--answer", str(tmp_path / "nope.txt")
    ]  # fmt: skip
    yield "receipts make: no blank line", [
        "receipts", "make", "--request", str(tmp_path / "room.json"), "--answer", str(tmp_path / "no-blank-line.txt")
    ]  # fmt: skip
    yield "no command", []


@pytest.mark.parametrize("how", ["--lang vi", "LANG=vi_VN.UTF-8"])
def test_every_cli_error_path_speaks_vietnamese(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setattr("sys.stdin", open("/dev/null"))  # noqa: SIM115 - closed with the test
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("LANG", "vi_VN.UTF-8" if how.startswith("LANG") else "C.UTF-8")
    said = {}
    for what, words in _cli_paths(tmp_path):
        given = words if how.startswith("LANG") else [*words[:1], "--lang", "vi", *words[1:]]
        said[what] = _cli(capsys, *given)
    assert all(said.values())  # each said something
    assert {what: english_in(text) for what, text in said.items() if english_in(text)} == {}


def test_serve_refusals_speak_vietnamese(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (("MAUBINH_API_KEYS", ","), ("MAUBINH_API_KEYS", "REPLACE-ME"), ("MAUBINH_BATCH_SLOTS", "0"),
                        ("OTEL_TRACES_EXPORTER", "zipkin"), ("MAUBINH_CALLERS_FILE", "/nowhere/callers.toml"),
                        ("MAUBINH_QUOTA_REDIS_URL", "http://redis")):  # fmt: skip
        with monkeypatch.context() as env:
            env.setenv(name, value)
            said = _cli(capsys, "serve", "--lang", "vi")
        assert said.startswith("maubinh serve: không khởi động được: ") and not english_in(said), said


def _problems(client: FlaskClient) -> Iterator[tuple[str, Any]]:
    vi = {"Accept-Language": "vi"}
    yield "422", client.post("/v1/score", json={**E1, "stake": "x"}, headers=vi)
    yield "400", client.post("/v1/score", data="{", content_type="application/json", headers=vi)
    yield "404", client.get("/nope", headers=vi)
    yield "405", client.put("/v1/score", headers=vi)
    yield "413", client.post("/v1/score", data=b"{" * 70_000, content_type="application/json", headers=vi)
    yield "415", client.post("/v1/score", data="{}", content_type="text/plain", headers=vi)
    yield (
        "501",
        client.post(
            "/v1/score",
            data=b"{}",
            content_type="application/json",
            headers={**vi, "Transfer-Encoding": "gzip, chunked"},
        ),
    )
    for slug in PROBLEM_TYPES:
        yield f"/problems/{slug}", client.get(f"/problems/{slug}", headers=vi)


def test_every_problem_answer_and_page_speaks_vietnamese(client: FlaskClient) -> None:
    found = {}
    for what, answer in _problems(client):
        text = answer.get_data(as_text=True)
        if answer.mimetype == "text/html":
            text = re.sub(r"<[^>]+>", " ", text)
        else:
            body = answer.get_json()
            text = (
                " ".join(str(body.get(k, "")) for k in ("title", "detail"))
                + " "
                + " ".join(e["message"] for e in body.get("errors", []))
            )
        if english_in(text):
            found[what] = english_in(text)
    assert found == {}
