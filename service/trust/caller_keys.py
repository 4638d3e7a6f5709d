"""A caller's key as maubinh makes it: a recognisable prefix, random base62 characters, a checksum; and the
SHA-256 a callers file keeps of it instead of the key."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import zlib
from typing import Final

KEY_PREFIX: Final = "mbk_"
"""A maubinh key starts so, as GitHub's start with ``ghp_``: a secret scanner can find a leaked one."""
BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RANDOM_CHARS: Final = 30
"""178 bits of randomness."""
CHECK_CHARS: Final = 6


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        digits.append(BASE62[digit])
    return "".join(reversed(digits))


def _checksum(body: str) -> str:
    """The CRC-32 of the random part, in base62: a scanner tells a real key from random text offline."""
    return _base62(zlib.crc32(body.encode()), CHECK_CHARS)


def new_key() -> str:
    """A new key: the prefix, 30 random base62 characters, and their checksum."""
    body = "".join(secrets.choice(BASE62) for _ in range(RANDOM_CHARS))
    return KEY_PREFIX + body + _checksum(body)


def well_formed(key: str) -> bool:
    """Whether ``key`` is a maubinh key whose checksum holds (keys of MAUBINH_API_KEYS need not be)."""
    body, check = key[len(KEY_PREFIX) : -CHECK_CHARS], key[-CHECK_CHARS:]
    return (
        key.startswith(KEY_PREFIX)
        and len(body) == RANDOM_CHARS
        and all(c in BASE62 for c in body)
        and hmac.compare_digest(_checksum(body), check)
    )


def digest_of(key: str) -> str:
    """The hex SHA-256 a callers file keeps of a key."""
    return hashlib.sha256(key.encode()).hexdigest()
