"""Optional API keys: when configured, every /v1/* call needs ``Authorization: Bearer <key>``."""

from __future__ import annotations

import hmac

from flask import Flask, request
from werkzeug.exceptions import Unauthorized

OPEN_PATHS = ("/healthz", "/readyz", "/metrics", "/openapi.yaml")
"""Always open, like the viewer's page and assets (its calls to /v1/* carry the key the user gives)."""


def authorized(header: str | None, keys: tuple[str, ...]) -> bool:
    """Constant time per key, and every key is compared whatever matched."""
    offered = (header or "").removeprefix("Bearer ").encode()
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(offered, key.encode())
    return matched and bool(header and header.startswith("Bearer "))


def register(app: Flask, keys: tuple[str, ...]) -> None:
    if not keys:
        return

    @app.before_request
    def require_key() -> None:
        if request.path in OPEN_PATHS or request.path.startswith("/viewer"):
            return
        if not authorized(request.headers.get("Authorization"), keys):
            raise Unauthorized
