"""``Authorization: Bearer <key>`` (RFC 6750) as this project reads it: what a key may hold and how an
offered one is taken from the header (the API's keys, the transparency log's add key)."""

from __future__ import annotations

import re
from typing import Final

BEARER_TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""RFC 6750's b64token, matched whole (``fullmatch``)."""
SCHEME: Final = "bearer"
"""RFC 9110 11.1: the scheme is case-insensitive."""
MOST_KEY_CHARS: Final = 256
"""An offered key longer than any a caller holds is no key, unread."""


def offered_key(header: str | None) -> str | None:
    """The key of an ``Authorization: Bearer <key>`` header, the scheme in any case; else None."""
    scheme, _, key = (header or "")[: MOST_KEY_CHARS + 16].strip().partition(" ")
    key = key.strip()
    return key if scheme.lower() == SCHEME and key and len(key) <= MOST_KEY_CHARS else None
