"""openapi.yaml fuzzed against the app in process: every operation, every default check.

Positive data may get 422 for what JSON Schema cannot say (a card twice across players,
a form that does not fit the status, a BÁO that qualifies for nothing); the extra check
below makes sure every such 422 is one of those semantic faults and never a shape fault,
so the schemas still agree both ways.
"""

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
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

CONFIG = SchemathesisConfig.from_dict(
    {
        "seed": 20261129,
        "generation": {"max-examples": 200, "deterministic": True},
        "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "422"]}},
        # A well-formed id the service does not know is a 404 (openapi.yaml), and a matching ETag a 304.
        "operations": [
            {
                "include-path": "/v1/rulesets/{id}",
                "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "304", "404"]}},
            }
        ],
    }
)
APP = create_app({"log_requests": False})
schema = schemathesis.openapi.from_wsgi("/openapi.yaml", APP, config=CONFIG)


CALLS: Counter[tuple[str, str, int]] = Counter()


@schemathesis.check
def positive_422_is_semantic(ctx: Any, response: Any, case: Any) -> bool | None:
    """A schema-valid request may only be refused for a fault the schema cannot express."""
    meta = case.meta
    mode = "positive" if meta is not None and meta.generation.mode.is_positive else "negative"
    CALLS[(case.operation.label, mode, response.status_code)] += 1
    if mode != "positive" or response.status_code != 422:
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


@pytest.fixture(scope="module")
def exercised() -> Iterator[None]:
    """After every operation of this module has run: each that takes input was called at least 100
    times, with schema-valid and schema-invalid data (an operation without parameters or body has
    one possible request, so Hypothesis stops early there)."""
    CALLS.clear()
    yield
    per_operation: Counter[str] = Counter()
    modes: dict[str, set[str]] = {}
    for (operation, mode, _), count in CALLS.items():
        per_operation[operation] += count
        modes.setdefault(operation, set()).add(mode)
    for operation in TAKES_INPUT & set(per_operation):
        assert per_operation[operation] >= 100, per_operation
        assert modes[operation] == {"positive", "negative"}, modes


@schema.parametrize()
def test_api_honours_openapi_yaml(case: Any, exercised: None) -> None:
    case.call_and_validate()
