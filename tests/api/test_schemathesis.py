"""openapi.yaml fuzzed against the app in process: every operation, every default check.

Positive data may get 422 for what JSON Schema cannot say (a card twice across players,
a form that does not fit the status, a BÁO that qualifies for nothing); the extra check
below makes sure every such 422 is one of those semantic faults and never a shape fault,
so the schemas still agree both ways.
"""

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import yaml
from schemathesis.config import SchemathesisConfig

from service.api import create_app

SEMANTIC_FAULTS = frozenset(
    {
        "duplicate_card",
        "duplicate_player_id",
        "missing_hand",
        "both_forms",
        "no_cards",
        "declare_not_allowed",
        "false_declaration",
        "player_count",
        "unknown_ruleset",
        "invalid_ruleset",
        "ruleset_digest_mismatch",
        "amount_out_of_range",
        "claim_unknown_player",
        "claim_missing_player",
        "claim_not_zero_sum",
    }
)
"""Faults JSON Schema cannot express: a request valid by openapi.yaml can still have them."""

SETTINGS: dict[str, Any] = {
    "seed": 20261129,
    "generation": {"max-examples": 100, "deterministic": True},
    "checks": {
        "positive_data_acceptance": {"expected-statuses": ["2xx", "422"]},
        # A body past its route's limit is refused before it is read: 413 is a refusal too.
        "negative_data_rejection": {"expected-statuses": ["400", "401", "404", "405", "406", "413", "415", "422"]},
    },
    # A well-formed id the service does not know is a 404 (openapi.yaml), and a matching ETag a 304.
    "operations": [
        {
            "include-path": "/v1/rulesets/{id}",
            "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "304", "404"]}},
        }
    ],
}
KEY = "contract-key"
OPEN = schemathesis.openapi.from_wsgi(
    "/openapi.yaml", create_app({"log_requests": False}), config=SchemathesisConfig.from_dict(SETTINGS)
)
KEYED_EXAMPLES = 60
KEYED = schemathesis.openapi.from_wsgi(
    "/openapi.yaml",
    create_app({"log_requests": False, "api_keys": (KEY,)}),
    config=SchemathesisConfig.from_dict(
        {
            **SETTINGS,
            "generation": {**SETTINGS["generation"], "max-examples": KEYED_EXAMPLES},
            "auth": {"openapi": {"bearerAuth": {"bearer": KEY}}},
        }
    ),
)
"""The same contract fuzzed twice: as served with no keys, and with keys set and the key in the auth
schemathesis configures from the contract's security scheme (fewer examples: the keys' wiring is what
this run adds; the open run fuzzes in depth)."""
CALLS: dict[str, Counter[tuple[str, str, int]]] = {"open": Counter(), "keyed": Counter()}


def contract_operations() -> set[str]:
    """Every operation openapi.yaml declares, as schemathesis labels it (``POST /v1/score``)."""
    spec = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text("utf-8"))
    methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
    return {f"{method.upper()} {path}" for path, item in spec["paths"].items() for method in item if method in methods}


def _mode(case: Any) -> str:
    meta = case.meta
    return "positive" if meta is not None and meta.generation.mode.is_positive else "negative"


@schemathesis.check
def positive_422_is_semantic(ctx: Any, response: Any, case: Any) -> bool | None:
    """A schema-valid request may only be refused for a fault the schema cannot express."""
    if _mode(case) != "positive" or response.status_code != 422:
        return None
    codes = {fault["code"] for fault in response.json()["errors"]}
    assert codes <= SEMANTIC_FAULTS, f"schema-valid request refused for {sorted(codes - SEMANTIC_FAULTS)}"
    return None


TAKES_INPUT = {
    "POST /v1/score",
    "POST /v1/score/batch",
    "POST /v1/verify",
    "POST /v1/evaluate",
    "POST /v1/arrange",
    "GET /v1/rulesets/{id}",
}


def _exercised(run: str) -> Iterator[None]:
    """After every operation of one run: each operation of the contract was called, and each that takes
    input at least 50 times (30 with keys), with schema-valid and schema-invalid data (an operation without
    parameters or body has one possible request, so Hypothesis stops early there)."""
    CALLS[run].clear()
    yield
    per_operation: Counter[str] = Counter()
    modes: dict[str, set[str]] = {}
    for (operation, mode, _), count in CALLS[run].items():
        per_operation[operation] += count
        modes.setdefault(operation, set()).add(mode)
    # Every operation of the contract, but GET /openapi.yaml: schemathesis loads the contract from it and
    # does not fuzz it (it takes nothing to vary).
    expected = contract_operations() - {"GET /openapi.yaml"}
    assert set(per_operation) == expected, sorted(expected ^ set(per_operation))
    least = 50 if run == "open" else KEYED_EXAMPLES // 2
    for operation in TAKES_INPUT:
        assert per_operation[operation] >= least, per_operation
        assert modes[operation] == {"positive", "negative"}, modes
    if run == "keyed":
        assert not [key for key in CALLS[run] if key[2] == 401], "the configured key was refused"


@pytest.fixture(scope="module")
def exercised_open() -> Iterator[None]:
    yield from _exercised("open")


@pytest.fixture(scope="module")
def exercised_keyed() -> Iterator[None]:
    yield from _exercised("keyed")


@OPEN.parametrize()
def test_api_honours_openapi_yaml(case: Any, exercised_open: None) -> None:
    response = case.call_and_validate()
    CALLS["open"][(case.operation.label, _mode(case), response.status_code)] += 1


@KEYED.parametrize()
def test_api_honours_openapi_yaml_with_keys_on(case: Any, exercised_keyed: None) -> None:
    response = case.call_and_validate()
    CALLS["keyed"][(case.operation.label, _mode(case), response.status_code)] += 1
