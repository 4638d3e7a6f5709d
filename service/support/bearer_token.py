"""RFC 6750's b64token: what a key must be to be sent as ``Authorization: Bearer <key>`` (the API's
keys, the transparency log's add key)."""

from __future__ import annotations

import re
from typing import Final

BEARER_TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""Matched whole (``fullmatch``)."""
