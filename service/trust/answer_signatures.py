"""Checking the service's own signatures quickly: a month of receipts, each checked in tens of microseconds.

``signing.verify`` builds each signature base through http-message-signatures' structured-field parser,
which costs several times the Ed25519 check itself. But what the service signs is fixed
(:class:`service.trust.signing.Signer`): the same label, the same covered components, the same
parameters in the same order. An answer whose ``Signature-Input`` and ``Signature`` are exactly in that
form has its base written here, as the signer wrote it, and checked with libsodium (PyNaCl); any other
form (a second signature, other parameters, a header value with spaces around it or outside printable
ASCII) is left to http-message-signatures, so the verdict never depends on which path read a receipt
(tests/unit/test_receipt_lines.py holds them equal on genuine and tampered receipts).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, Final

from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError

from service.texts import Text
from service.trust.signing import COVERED, LABEL, TAG, KeySet, Unverified, Verified, signature_base, verify

_INPUT: Final = re.compile(
    LABEL
    + r'=\("@status" "content-type" "content-digest"( "@path";req)?\);'
    + r'created=(0|[1-9]\d{0,14});keyid="([A-Za-z0-9_-]{43})";'
    + f'alg="ed25519";tag="{TAG}"'
)
"""The one Signature-Input the service writes (with the route covered, or before routes were): ``created``
as a structured field's integer is written, with no leading zero, which the library reads and writes back
without, so that its base and this one are the same bytes."""
_SIGNATURE: Final = re.compile(LABEL + r"=:([A-Za-z0-9+/]{86}==):")
_PLAIN: Final = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")
"""A header value the library reads as it is: printable ASCII, no space at either end."""


class AnswerKeys:
    """A key set read once for a run of receipts: each usable key's raw bytes by its RFC 7638
    thumbprint (:class:`KeySet`), and the set itself for the answers not in the service's form."""

    def __init__(self, jwks: Mapping[str, Any]) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        self.jwks = jwks
        read = KeySet.read(jwks)
        self.raw = {kid: key.public_bytes(Encoding.Raw, PublicFormat.Raw) for kid, key in read.keys.items()}
        self.thumbprints = tuple(sorted(self.raw))

    def verify(self, status: int, headers: Mapping[str, str], body: bytes, jwks: Any, path: str) -> Verified:
        """:func:`service.trust.signing.verify`'s verdict (the same signature, ``jwks`` is this set):
        written here for an answer in the service's form, else the library's."""
        del jwks  # read once, in __init__
        given, signature = headers.get("signature-input"), headers.get("signature")
        content_type, digest = headers.get("content-type"), headers.get("content-digest")
        named = _INPUT.fullmatch(given) if given is not None else None
        signed = _SIGNATURE.fullmatch(signature) if signature is not None else None
        if (
            named is None
            or signed is None
            or content_type is None
            or digest is None
            or not _PLAIN.fullmatch(content_type)
            or not _PLAIN.fullmatch(digest)
            or not 100 <= status <= 999
        ):
            return verify(status, headers, body, self.jwks, path)
        bound, key_id = named.group(1) is not None, named.group(3)
        key = self.raw.get(key_id)
        if key is None:
            raise Unverified(Text("receipts.why_unknown_key", key_id=key_id))
        assert given is not None
        base = signature_base(status, content_type, digest, path if bound else None, given[len(LABEL) + 1 :])
        try:
            crypto_sign_open(base64.b64decode(signed.group(1), validate=True) + base, key)
        except (BadSignatureError, binascii.Error, ValueError):
            raise Unverified(Text("receipts.why_bad_signature")) from None
        return Verified(key_id, bound)


assert COVERED == ("@status", "content-type", "content-digest"), "_INPUT is written for these components"
