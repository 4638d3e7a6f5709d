"""Optional API keys: with keys configured, every operation the contract does not declare open needs
``Authorization: Bearer <key>``.

Which operations are open is read from openapi.yaml (``security: []``), the one list of them: health,
readiness, metrics, the contract, the rules page, the problem pages and the viewer. A path that is no
route (404, 405) needs no key either: there is nothing behind it to protect. An answer given on a key
is ``Cache-Control: private``, so that no shared cache hands it to a caller without one.
"""

from __future__ import annotations

import hmac
import re
from functools import cache
from importlib import resources

import yaml
from flask import Flask, Response, current_app, g, request
from werkzeug.exceptions import Unauthorized

SCHEME = "bearer"
"""RFC 9110 11.1: the scheme is case-insensitive."""
_TEMPLATE_PART = re.compile(r"\{[^}]*\}|<[^>]*>")


def _template(path: str) -> str:
    """A path template with its parameters unnamed: ``/v1/rulesets/{id}`` and Flask's
    ``/v1/rulesets/<ruleset_id>`` are both ``/v1/rulesets/{}``."""
    return _TEMPLATE_PART.sub("{}", path)


@cache
def open_operations() -> frozenset[tuple[str, str]]:
    """(path template, method) of every operation openapi.yaml declares open (``security: []``)."""
    spec = yaml.load(resources.files("service").joinpath("openapi.yaml").read_bytes(), Loader=yaml.CSafeLoader)
    return frozenset(
        (_template(path), method.upper())
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and operation.get("security") == []
    )


def offered_key(header: str | None) -> str | None:
    """The key of an ``Authorization: Bearer <key>`` header, the scheme in any case; else None."""
    scheme, _, key = (header or "").strip().partition(" ")
    key = key.strip()
    return key if scheme.lower() == SCHEME and key else None


def authorized(header: str | None, keys: tuple[str, ...]) -> bool:
    """Constant time per key, and every key is compared whatever matched."""
    offered = (offered_key(header) or "").encode()
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(offered, key.encode())
    return matched and bool(offered)


def keyed_caller() -> bool:
    """Whether this request carries one of the configured keys (none configured: no caller is keyed)."""
    keys: tuple[str, ...] = current_app.config["SETTINGS"].api_keys
    return bool(keys) and authorized(request.headers.get("Authorization"), keys)


def needs_key() -> bool:
    """Whether this request's operation is one the contract does not declare open."""
    rule = request.url_rule
    if rule is None:
        return False
    method = "GET" if request.method == "HEAD" else request.method
    return (_template(rule.rule), method) not in open_operations()


def register(app: Flask, keys: tuple[str, ...]) -> None:
    if not keys:
        return
    open_operations()  # read once, before the first request

    @app.before_request
    def require_key() -> None:
        if not needs_key():
            return
        if not authorized(request.headers.get("Authorization"), keys):
            raise Unauthorized
        g.keyed = True

    @app.after_request
    def private_when_keyed(response: Response) -> Response:
        if g.get("keyed"):
            kept = [d for d in response.headers.get("Cache-Control", "").split(",") if d.strip() not in ("", "public")]
            response.headers["Cache-Control"] = ", ".join(["private", *(d.strip() for d in kept)])
        return response
