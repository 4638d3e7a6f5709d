"""The HTTP layer: every error status, the auth switch, request ids, metrics, one serializer."""

import copy
import json
import logging
from pathlib import Path

import pytest
import yaml
from flask.testing import FlaskClient
from helpers import golden_cases
from openapi_spec_validator import validate

from service.api import create_app
from service.api.config import SettingError, Settings
from service.documents import score_document, verify_document
from service.serialize import dumps

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
PROBLEM = "application/problem+json"


def test_the_spec_is_valid_openapi_and_served_as_is(client: FlaskClient) -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "openapi.yaml").read_bytes()
    validate(yaml.safe_load(text))
    response = client.get("/openapi.yaml")
    assert response.status_code == 200 and response.data == text


def test_score_e1_over_http_is_the_clis_bytes(client: FlaskClient) -> None:
    response = client.post("/v1/score", json=E1)
    assert response.status_code == 200 and response.content_type == "application/json"
    assert [(p["id"], p["amount"]) for p in response.json["players"]] == [("P", -9000), ("Q", 9000)]
    assert response.data == dumps(score_document(E1))


@pytest.mark.parametrize(("ruleset", "fouled"), [("maubinh-2020", False), ("maubinh-bao", True)])
def test_evaluate_a_wheel_under_each_wheel_setting(client: FlaskClient, ruleset: str, fouled: bool) -> None:
    """A-2-3-4-5 in the back under a 6-T straight: second highest (legal) or lowest (fouls)."""
    body = {
        "ruleset": ruleset,
        "back": ["AS", "2D", "3C", "4H", "5S"],
        "middle": ["6S", "7D", "8C", "9H", "TS"],
        "front": ["KH", "QD", "JC"],
    }
    response = client.post("/v1/evaluate", json=body)
    assert response.status_code == 200
    assert response.json["fouled"] is fouled
    assert response.json["foul_reason"] == ("middle_beats_back" if fouled else None)
    assert response.json["hands"]["back"]["cards"] == ["5S", "4H", "3C", "2D", "AS"]


def test_rulesets_listing_and_whole(client: FlaskClient) -> None:
    listed = client.get("/v1/rulesets").json["rulesets"]
    assert [r["id"] for r in listed] == ["maubinh-2020", "maubinh-bao", "maubinh-chi-at"]
    whole = client.get("/v1/rulesets/maubinh-bao").json
    assert whole["labels"] == {"back": "Chi cuối", "middle": "Chi giữa", "front": "Chi đầu"}
    assert whole["digest"] == listed[1]["digest"]
    assert any(choice["id"] == "scoop.multiplier" for choice in whole["choices"])


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("post", "/v1/score", {"data": "{", "content_type": "application/json"}, 400),
        ("post", "/v1/score", {"data": b"\xff", "content_type": "application/json"}, 400),
        ("post", "/v1/score", {"data": '{"a": NaN}', "content_type": "application/json"}, 400),
        ("get", "/v1/nothing", {}, 404),
        ("get", "/v1/rulesets/maubinh-1999", {}, 404),
        ("get", "/v1/score", {}, 405),
        ("delete", "/v1/rulesets", {}, 405),
        ("post", "/v1/score", {"data": "x" * (64 * 1024 + 1), "content_type": "application/json"}, 413),
        ("post", "/v1/score", {"data": json.dumps(E1), "content_type": "text/plain"}, 415),
        ("post", "/v1/score", {"data": json.dumps(E1)}, 415),
        ("post", "/v1/score", {"json": {**E1, "ruleset": "nope"}}, 422),
    ],
)
def test_every_error_is_problem_json(client: FlaskClient, method: str, path: str, kwargs: dict, status: int) -> None:  # type: ignore[type-arg]
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status
    assert response.content_type == PROBLEM
    body = response.json
    assert body["status"] == status and body["title"] and body["detail"] and body["type"].startswith("/problems/")
    assert body["request_id"] == response.headers["X-Request-ID"]
    page = client.get(body["type"])  # a relative URI: it resolves on the service that answered
    assert page.status_code == 200 and page.content_type == "text/html; charset=utf-8"


def test_405_names_the_allowed_methods(client: FlaskClient) -> None:
    assert client.get("/v1/score").headers["Allow"] == "POST"
    assert client.post("/v1/rulesets").headers["Allow"] == "GET, HEAD"


def test_422_lists_every_fault_with_pointer_and_code(client: FlaskClient) -> None:
    bad = json.loads(json.dumps(E1))
    bad["players"][0]["back"][0] = "1S"
    bad["players"][1]["back"][0] = "AD"  # also in P's back
    bad["stake"] = "1000"
    errors = client.post("/v1/score", json=bad).json["errors"]
    assert [(e["pointer"], e["code"]) for e in errors] == [
        ("/stake", "not_integer"),
        ("/players/0/back/0", "unknown_rank"),
        ("/players/1/back/0", "duplicate_card"),
    ]


def test_body_limit_is_configurable() -> None:
    small = create_app({"max_body_bytes": 100, "log_requests": False}).test_client()
    assert small.post("/v1/score", json=E1).status_code == 413
    assert "100 bytes" in small.post("/v1/score", json=E1).json["detail"]


def test_a_crash_is_a_generic_500_that_leaks_nothing(app, client: FlaskClient, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import service.api.views

    raised: list[str] = []

    def explode(raw: object, catalogue: object, language: object) -> dict[str, object]:
        raised.append("secret internals")  # called as the view calls score_document
        raise RuntimeError("secret internals")

    monkeypatch.setattr(service.api.views, "score_document", explode)
    crashing = create_app({"log_requests": False}).test_client()
    response = crashing.post("/v1/score", json=E1, headers={"X-Request-ID": "trace-42"})
    assert raised == ["secret internals"]
    assert response.status_code == 500 and response.content_type == PROBLEM
    assert "secret" not in response.get_data(as_text=True)
    assert response.json["request_id"] == "trace-42" and "trace-42" in response.json["detail"]


def test_request_id_is_taken_or_made(client: FlaskClient) -> None:
    assert client.get("/healthz", headers={"X-Request-ID": "abc-123"}).headers["X-Request-ID"] == "abc-123"
    made = client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"}).headers["X-Request-ID"]
    assert made != "bad id with spaces" and len(made) == 32


def test_one_json_log_line_per_request(capsys) -> None:  # type: ignore[no-untyped-def]
    logging.getLogger("maubinh").handlers.clear()  # bind the handler to the captured stderr
    logged = create_app({"log_requests": True}).test_client()
    logged.post("/v1/score", json=E1, headers={"X-Request-ID": "r-1"})
    refused = {**E1, "players": [E1["players"][0], {**E1["players"][1], "back": E1["players"][0]["back"]}]}
    logged.post("/v1/score/batch", json={"rooms": [E1, refused]}, headers={"X-Request-ID": "r-2"})
    logged.post("/v1/score", json={**E1, "ruleset": "nope"}, headers={"X-Request-ID": "r-3"})
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    request_lines = [line for line in lines if line["msg"] == "request"]
    assert len(request_lines) == 3
    line, batch, unknown = request_lines
    assert (line["request_id"], line["route"], line["status"], line["method"]) == ("r-1", "/v1/score", 200, "POST")
    assert (line["rulesets"], line["rooms"], line["duration_ms"] > 0, "codes" in line) == (
        ["maubinh-2020"],
        1,
        True,
        False,
    )
    assert (batch["rulesets"], batch["rooms"], batch["codes"]) == (["maubinh-2020"], 2, ["duplicate_card"])
    assert (unknown["status"], unknown["codes"], "rooms" in unknown) == (422, ["unknown_ruleset"], False)
    assert "P" not in json.dumps({k: v for k, v in line.items() if k not in ("ts", "msg", "logger", "level")}).split(
        '"'
    )
    logging.getLogger("maubinh").handlers.clear()


CONTRACT = yaml.safe_load(Path(__file__).resolve().parents[2].joinpath("openapi.yaml").read_text("utf-8"))


def _operations(open_: bool) -> list[tuple[str, str]]:
    """(method, a concrete path) of every operation of the contract that is open (``security: []``) or
    not, each path parameter given the first value its schema lists (else ``x``)."""
    found = []
    for template, item in CONTRACT["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post") or (operation.get("security") == []) != open_:
                continue
            path = template
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path":
                    value = parameter["schema"].get("enum", ["x"])[0]
                    path = path.replace("{" + parameter["name"] + "}", str(value))
            found.append((method.upper(), path))
    return found


class TestAuth:
    @pytest.fixture
    def secured(self) -> FlaskClient:
        return create_app({"api_keys": ("k-one", "k-two"), "log_requests": False}).test_client()

    def test_off_by_default(self, client: FlaskClient) -> None:
        assert client.post("/v1/score", json=E1).status_code == 200

    @pytest.mark.parametrize(
        "header", [None, "Bearer nope", "k-one", "Basic k-one", "Bearer ", "Bearerk-one", "Bearer k-"]
    )
    def test_scoring_needs_a_valid_bearer_key(self, secured: FlaskClient, header: str | None) -> None:
        headers = {"Authorization": header} if header is not None else {}
        response = secured.post("/v1/score", json=E1, headers=headers)
        assert response.status_code == 401 and response.content_type == PROBLEM
        assert response.headers["WWW-Authenticate"].startswith("Bearer")

    @pytest.mark.parametrize(
        "header", ["Bearer k-one", "Bearer k-two", "bearer k-one", "BEARER k-two", "Bearer  k-one"]
    )
    def test_any_configured_key_works_and_the_scheme_is_case_insensitive(
        self, secured: FlaskClient, header: str
    ) -> None:
        """RFC 9110 11.1: the scheme is case-insensitive; before, ``bearer`` (lower case) was refused."""
        assert secured.post("/v1/score", json=E1, headers={"Authorization": header}).status_code == 200
        assert secured.get("/v1/rulesets", headers={"Authorization": header}).status_code == 200

    @pytest.mark.parametrize(("method", "path"), _operations(open_=True))
    def test_every_operation_the_contract_declares_open_answers_without_a_key(
        self, secured: FlaskClient, method: str, path: str
    ) -> None:
        """Before: /docs/rules and /problems/* answered 401 with keys on, breaking every problem's type."""
        assert secured.open(path, method=method).status_code == 200

    @pytest.mark.parametrize(("method", "path"), _operations(open_=False))
    def test_every_other_operation_of_the_contract_needs_a_key(
        self, secured: FlaskClient, method: str, path: str
    ) -> None:
        assert secured.open(path, method=method, json=E1).status_code == 401

    def test_a_path_that_is_no_route_is_a_404_without_a_key(self, secured: FlaskClient) -> None:
        assert secured.get("/no-such-route").status_code == 404
        assert secured.post("/healthz").status_code == 405
        assert secured.get("/static/x").status_code == 404  # no route outside the contract

    def test_keyed_answers_are_private_to_caches(self, secured: FlaskClient) -> None:
        """Before: a pinned ruleset answered to a key said ``public``: a shared cache could hand an
        operator's rules to anyone."""
        key = {"Authorization": "Bearer k-one"}
        pinned = secured.get("/v1/rulesets/maubinh-2020@1", headers=key)
        assert pinned.headers["Cache-Control"] == "private, max-age=31536000, immutable"
        assert secured.get("/v1/rulesets/maubinh-2020", headers=key).headers["Cache-Control"] == "private, no-cache"
        assert secured.post("/v1/score", json=E1, headers=key).headers["Cache-Control"] == "private"
        assert "private" not in secured.get("/healthz").headers.get("Cache-Control", "")

    def test_without_keys_a_pinned_ruleset_may_be_cached_by_anyone(self, client: FlaskClient) -> None:
        assert client.get("/v1/rulesets/maubinh-2020@1").headers["Cache-Control"].startswith("public")


def test_settings_from_the_environment() -> None:
    env = {
        "MAUBINH_MAX_BODY_BYTES": "2048",
        "MAUBINH_API_KEYS": "a, b,,",
        "MAUBINH_LOG_LEVEL": "debug",
        "MAUBINH_LOG_REQUESTS": "off",
    }
    assert Settings.from_env(env) == Settings(
        max_body_bytes=2048, api_keys=("a", "b"), log_level="DEBUG", log_requests=False
    )
    with pytest.raises(ValueError, match="unknown settings: colour"):
        Settings().merged({"colour": "red"})


@pytest.mark.parametrize(
    "keys",
    ["", ",", " ", " , ,", "REPLACE-ME", "good,REPLACE-ME", "replace-me", "good,Replace-Me", "a key with spaces"],
)
def test_a_key_setting_that_holds_no_usable_key_is_refused(keys: str) -> None:
    """Before: an empty MAUBINH_API_KEYS (the docs' recipe without openssl) started the service open."""
    with pytest.raises(SettingError, match="MAUBINH_API_KEYS"):
        Settings.from_env({"MAUBINH_API_KEYS": keys})


@pytest.mark.parametrize(
    ("name", "value"),
    [("MAUBINH_MAX_BODY_BYTES", "64k"), ("MAUBINH_BATCH_SLOTS", "0"), ("MAUBINH_BODY_SECONDS", "0"),
     ("MAUBINH_MAX_BATCH_ROOMS", "-1")],
)  # fmt: skip
def test_an_unusable_number_setting_is_refused_by_name(name: str, value: str) -> None:
    with pytest.raises(SettingError, match=name):
        Settings.from_env({name: value})


def test_metrics_count_requests_rooms_fouls_and_instant_wins(client: FlaskClient) -> None:
    def sample(text: str, name: str, **labels: str) -> float:
        for line in text.splitlines():
            if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    before = client.get("/metrics").get_data(as_text=True)
    fouled = json.loads(json.dumps(E1))
    fouled["players"][0]["front"], fouled["players"][0]["middle"] = (
        fouled["players"][0]["middle"][:3],
        fouled["players"][0]["front"] + fouled["players"][0]["middle"][3:],
    )
    client.post("/v1/score", json=E1)
    client.post("/v1/score", json=fouled)
    client.post("/v1/score", json={**E1, "stake": 0})
    after = client.get("/metrics").get_data(as_text=True)
    rooms = ("maubinh_rooms_scored_total", {"ruleset": "maubinh-2020", "players": "2"})
    assert sample(after, rooms[0], **rooms[1]) - sample(before, rooms[0], **rooms[1]) == 2
    assert (
        sample(after, "maubinh_fouls_total", ruleset="maubinh-2020")
        - sample(before, "maubinh_fouls_total", ruleset="maubinh-2020")
        == 1
    )
    ok = {"route": "/v1/score", "method": "POST", "status": "200"}
    assert sample(after, "maubinh_http_requests_total", **ok) - sample(before, "maubinh_http_requests_total", **ok) == 2
    assert sample(after, "maubinh_http_request_duration_seconds_count", **ok) >= 2
    assert "maubinh_build_info{" in after
    assert "P" not in {
        label.split('="')[1].rstrip('"')
        for line in after.splitlines()
        if "maubinh_" in line and "{" in line
        for label in line[line.index("{") + 1 : line.index("}")].split(",")
    }


def test_openapi_response_examples_are_what_the_service_answers() -> None:
    """Examples are the contract's word; scripts/refresh_openapi_examples.py rewrites them."""
    from pathlib import Path

    import jsonschema

    spec = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text())
    operation = spec["paths"]["/v1/score"]["post"]
    response = operation["responses"]["200"]["content"]["application/json"]
    schemas = {"components": spec["components"], **response["schema"]}
    for name in ("E1", "house-rules"):
        request = operation["requestBody"]["content"]["application/json"]["examples"][name]["value"]
        example = response["examples"][name]["value"]
        assert example == score_document(request), "run scripts/refresh_openapi_examples.py"
        jsonschema.validate(example, schemas)
    verify = spec["paths"]["/v1/verify"]["post"]
    claim = verify["requestBody"]["content"]["application/json"]["examples"]["missing-scoop"]["value"]
    shown = verify["responses"]["200"]["content"]["application/json"]["examples"]["missing-scoop"]["value"]
    assert shown == verify_document(claim), "run scripts/refresh_openapi_examples.py"
    assert shown["players"][0]["explanation"] == [
        "P: the game recorded −3,000, the rules give −9,000 → P still owes Q 6,000",
        "scoop: the rules give −6,000, the game did not record it",
    ]
    # E1 under sập ×2: 3 chi + 3 × (2 − 1) scoop = 6 units, × stake 1000
    assert [p["amount"] for p in response["examples"]["house-rules"]["value"]["players"]] == [-6000, 6000]


def test_near_misses_get_a_suggestion(client: FlaskClient) -> None:
    """A ruleset id in the wrong case or one edit away, a field one edit away: each names the known one."""
    for reference in ("Maubinh-2020", "maubinh-202", "maubinh-2002"):
        [fault] = client.post("/v1/score", json={**E1, "ruleset": reference}).json["errors"]
        assert fault["code"] == "unknown_ruleset" and "did you mean 'maubinh-2020'?" in fault["message"], fault
    misspelled = {
        **E1,
        "players": [
            {**{k: v for k, v in E1["players"][0].items() if k != "middle"}, "midle": E1["players"][0]["middle"]},
            E1["players"][1],
        ],
    }
    faults = client.post("/v1/score", json=misspelled).json["errors"]
    assert ("/players/0/midle", "unknown_field") in [(f["pointer"], f["code"]) for f in faults]
    assert any("did you mean 'middle'?" in f["message"] for f in faults)
    vi = client.post("/v1/score", json={**E1, "stakee": 1}, headers={"Accept-Language": "vi"}).json["errors"]
    assert [(f["pointer"], f["code"]) for f in vi] == [("/stakee", "unknown_field")] and "'stake'" in vi[0]["message"]
    [far] = client.post("/v1/score", json={**E1, "ruleset": "tien-len"}).json["errors"]
    assert "did you mean" not in far["message"]  # nothing near: only the known ids


def test_a_hint_names_only_a_field_of_the_same_object(client: FlaskClient) -> None:
    """Before: hints came from every body's fields, so a player's 'stakes' was pointed to the room's
    'stake', and a room's 'x' to a player's 'id'."""
    room = copy.deepcopy(E1)
    room["players"][0]["stakes"] = 1
    room["players"][1]["midle"] = 1
    room["x"] = 1
    room["stakee"] = 1
    line = {"payer": "P", "payee": "Q", "amount": 1, "hands": 1, "stepp": "chi"}
    verify = {**room, "claimed": {"amounts": {"P": 0, "Q": 0}, "ledgr": [], "ledger": [line]}}
    hints = {
        f["pointer"]: f["message"].partition("; ")[2] for f in client.post("/v1/verify", json=verify).json["errors"]
    }
    assert hints == {
        "/stakee": "did you mean 'stake'?",
        "/x": "",
        "/players/0/stakes": "did you mean 'status'?",
        "/players/1/midle": "did you mean 'middle'?",
        "/claimed/ledgr": "did you mean 'ledger'?",
        "/claimed/ledger/0/hands": "",
        "/claimed/ledger/0/stepp": "did you mean 'step'?",
    }


def test_an_empty_key_is_pointed_at_as_itself(client: FlaskClient) -> None:
    """Before: the key "" was taken for the object's own fault and reported at its parent's pointer."""
    room = copy.deepcopy(E1)
    room[""] = 1
    room["players"][0][""] = 1
    faults = client.post("/v1/score", json=room).json["errors"]
    assert {(f["pointer"], f["code"]) for f in faults} == {("/", "unknown_field"), ("/players/0/", "unknown_field")}
    assert all("did you mean" not in f["message"] for f in faults)


def test_a_ruleset_not_found_lists_the_known_ids(client: FlaskClient) -> None:
    missing = client.get("/v1/rulesets/maubinh-202")
    assert missing.status_code == 404
    assert "did you mean 'maubinh-2020'?" in missing.json["detail"] and "maubinh-chi-at" in missing.json["detail"]
    version = client.get("/v1/rulesets/maubinh-2020@9").json["detail"]
    assert "@1, @2, @3" in version
    said = client.get("/v1/rulesets/maubinh-2020@9", headers={"Accept-Language": "vi"}).json["detail"]
    assert version.startswith("maubinh-2020 has")  # an id keeps its case
    assert said.startswith("Bộ luật maubinh-2020 không có phiên bản")  # and Vietnamese says what the id is
    assert missing.json["detail"].startswith("Unknown ruleset")  # a sentence starts with a capital


def test_a_problem_type_resolves_to_its_page_in_the_reader_s_language(client: FlaskClient) -> None:
    problem = client.post("/v1/score", data="{", content_type="application/json").json
    english = client.get(problem["type"])
    vietnamese = client.get(problem["type"], headers={"Accept-Language": "vi"})
    assert english.headers["Content-Language"] == "en" and vietnamese.headers["Content-Language"] == "vi"
    assert "<h1>Bad JSON (400)</h1>" in english.get_data(as_text=True)
    assert "Cách khắc phục" in vietnamese.get_data(as_text=True)
    assert client.get("/problems/no-such-type").status_code == 404


def test_a_doubled_slash_is_a_404_problem_not_a_redirect(client: FlaskClient) -> None:
    """Before: werkzeug merged the slashes with a 308, an HTML body and a Location built from the Host header."""
    for method, path in (("GET", "/v1//rulesets"), ("POST", "/v1//score"), ("GET", "//healthz")):
        answer = client.open(path, method=method, headers={"Host": "elsewhere.example"}, json=E1)
        assert (answer.status_code, answer.content_type, answer.location) == (404, "application/problem+json", None)


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "application/json; charset=utf-8"}, 200),
        ({"Content-Type": "application/json", "Content-Encoding": "identity"}, 200),
        ({"Content-Type": "application/json; charset=utf-16"}, 415),
        ({"Content-Type": "application/json", "Content-Encoding": "gzip"}, 415),
    ],
)
def test_a_body_in_another_charset_or_content_coding_is_a_415(
    client: FlaskClient, headers: dict[str, str], status: int
) -> None:
    """Before: a gzip body was a 400 'not UTF-8 (byte 1)', and a declared UTF-16 one was read as UTF-8."""
    answer = client.post("/v1/score", data=json.dumps(E1).encode(), headers=headers)
    assert answer.status_code == status
    if status == 415:
        assert answer.get_json()["detail"].startswith("Send the body as UTF-8 JSON, not compressed")
