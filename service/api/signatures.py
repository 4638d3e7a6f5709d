"""Signed answers over HTTP (service/trust/signing.py): with MAUBINH_SIGNING_KEY_FILE set, each answer of
POST /v1/score, /v1/score/batch and /v1/verify that rules on rooms (200, and 422: a refusal of a room
is a ruling an auditor may dispute too) carries Content-Digest, Signature-Input and Signature, and
states each room's digest. Other refusals (400, 401, 403, 413, 429 …) are not signed: they rule on
no room, and signing them would let anyone without a key make the service spend a signature.

``GET /.well-known/jwks.json`` publishes the signing key and every older key the operator still
publishes (MAUBINH_PUBLISHED_KEYS_FILE), so that receipts signed before a rotation still check.
"""

from __future__ import annotations

import time
from typing import Any, Final

from flask import Flask, Response, current_app, g, request
from prometheus_client import Counter

from service.api.metrics import _series
from service.transparency.feeder import Feeder
from service.trust.ruling_log import statements
from service.trust.signing import KEY_SET_MAX_AGE, Signer, room_digest_if_any

SIGNED_ROUTES: Final = frozenset({"/v1/score", "/v1/score/batch", "/v1/verify"})
SIGNED_STATUSES: Final = frozenset({200, 422})
LOG_STATEMENTS = Counter(
    "maubinh_log_statements_total",
    "Statements of signed rulings for the transparency log (MAUBINH_LOG_URL), by outcome: queued, logged, "
    "retried (a post the log did not take, kept), dropped (the queue full)",
    ["outcome"],
)


def count_statements(outcome: str, count: int) -> None:
    _series(LOG_STATEMENTS, outcome).inc(count)


def signer() -> Signer | None:
    found: Signer | None = current_app.extensions.get("maubinh.signer")
    return found


def published_keys() -> dict[str, Any]:
    """The JWK Set /.well-known/jwks.json serves: what a receipt sent to POST /v1/verify is checked with."""
    keys: dict[str, Any] = current_app.extensions["maubinh.jwks"]
    return keys


def bind_room(answer: dict[str, Any], document: Any) -> dict[str, Any]:
    """The answer with its room's digest, when answers are signed (the signature then covers the room).
    A room refused for holding a number past every double has no digest (RFC 8785), and is refused unbound."""
    if signer() is not None and (digest := room_digest_if_any(document)) is not None:
        answer["room_digest"] = digest
    return answer


def register(app: Flask, signing: Signer | None, published: list[dict[str, str]], feeder: Feeder | None = None) -> None:
    """With ``feeder``, each signed answer's statements go to the transparency log (docs/receipts.md)."""
    if signing is not None:
        app.extensions["maubinh.signer"] = signing
    keys = signing.jwks if signing is not None else {"keys": published}
    app.extensions["maubinh.jwks"] = keys

    @app.get("/.well-known/jwks.json", provide_automatic_options=False)
    def jwks() -> Response:
        response = Response(
            current_app.json.dumps(keys),
            status=200,
            content_type="application/jwk-set+json",
        )
        response.headers["Cache-Control"] = f"public, max-age={KEY_SET_MAX_AGE}"
        return response

    if signing is None:
        return

    @app.after_request
    def sign(response: Response) -> Response:
        rule = request.url_rule
        if rule is None or rule.rule not in SIGNED_ROUTES or response.status_code not in SIGNED_STATUSES:
            return response
        body = response.get_data()  # the whole answer: its digest comes before its first byte
        created = int(time.time())
        headers = signing.headers(response.status_code, response.content_type or "", body, rule.rule, created)
        response.headers.extend(headers)  # none of them set before: nothing to replace
        if feeder is not None:
            said = statements(rule.rule, g.get("document"), body, headers["Content-Digest"], signing.key_id, created)
            feeder.submit(said)
        return response
