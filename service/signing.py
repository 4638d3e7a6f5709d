"""Signed answers, checkable offline: RFC 9421 signatures (Ed25519) over the status and the body's
Content-Digest (RFC 9530), the signing key published as a JWK Set (RFC 7517; OKP keys as RFC 8037),
and each room's digest, the SHA-256 of its canonical JSON (RFC 8785), stated in the answer so that the
signature covers the room the caller sent.

The HTTP signature is made and checked by ``http-message-signatures`` (the RFC 9421 implementation
with Ed25519 on ``cryptography``); this module only says what is covered, under which key id, and
adapts a response to the library's message interface.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final

COVERED: Final = ("@status", "content-type", "content-digest")
"""What a signature covers: the status, the body's type and its digest (so the body itself)."""
LABEL: Final = "maubinh"
TAG: Final = "maubinh-answer"
"""The signature's ``tag`` (RFC 9421 2.3): what a verifier asks for, so no other signature passes as ours."""


def room_digest(document: Any) -> str:
    """``sha256:`` and the hex SHA-256 of ``document``'s canonical JSON (RFC 8785, JCS)."""
    import rfc8785

    return "sha256:" + hashlib.sha256(rfc8785.dumps(document)).hexdigest()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_jwk(public_bytes: bytes) -> dict[str, str]:
    """An Ed25519 public key as a JWK (RFC 8037), its ``kid`` the RFC 7638 thumbprint."""
    members = {"crv": "Ed25519", "kty": "OKP", "x": _b64url(public_bytes)}
    thumbprint = _b64url(hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest())
    return {**members, "kid": thumbprint, "alg": "EdDSA", "use": "sig"}


class SigningKeyError(ValueError):
    """A signing key or published key set that cannot be used: ``args[0]`` says why."""


def load_private_key(path: str) -> Any:
    """An Ed25519 private key from a PEM PKCS#8 file (``openssl genpkey -algorithm ed25519``)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        with open(path, "rb") as file:
            key = load_pem_private_key(file.read(64 * 1024), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise SigningKeyError(f"{path}: not an unencrypted PEM private key ({type(error).__name__})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path}: the key is not Ed25519 (openssl genpkey -algorithm ed25519 makes one)")
    return key


def load_key_set(path: str) -> list[dict[str, str]]:
    """The published keys of a JWK Set file: each an Ed25519 OKP key with a ``kid``."""
    try:
        with open(path, "rb") as file:
            document = json.loads(file.read(1024 * 1024))
    except (OSError, ValueError) as error:
        raise SigningKeyError(f"{path}: not a readable JSON file ({type(error).__name__})") from None
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise SigningKeyError(f"{path}: a JWK Set is an object with a list of keys")
    found = []
    for k, key in enumerate(keys):
        if not (isinstance(key, dict) and key.get("kty") == "OKP" and key.get("crv") == "Ed25519"):
            raise SigningKeyError(f"{path}: keys[{k}] is not an Ed25519 OKP key")
        if "d" in key:
            raise SigningKeyError(f"{path}: keys[{k}] holds a private part (d); publish public keys only")
        x = key.get("x")
        if not isinstance(x, str):
            raise SigningKeyError(f"{path}: keys[{k}] has no x")
        try:
            raw = base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))
        except ValueError:
            raise SigningKeyError(f"{path}: keys[{k}].x is not base64url") from None
        if len(raw) != 32:
            raise SigningKeyError(f"{path}: keys[{k}].x is not a 32-byte Ed25519 key")
        found.append(public_jwk(raw))
    return found


@dataclass
class Message:
    """A response as http-message-signatures reads one: its status and its header fields."""

    status_code: int
    headers: MutableMapping[str, str] = field(default_factory=dict)


class _Keys:
    """http-message-signatures' key resolver: the signing key, and the published keys by ``kid``."""

    def __init__(self, private: Any, public: Mapping[str, Any]) -> None:
        self.private, self.public = private, public

    def resolve_private_key(self, key_id: str) -> Any:
        return self.private

    def resolve_public_key(self, key_id: str) -> Any:
        found = self.public.get(key_id)
        if found is None:
            from http_message_signatures import InvalidSignature

            raise InvalidSignature(f"no published key {key_id!r}")
        return found


def _public_keys(jwks: Iterable[Mapping[str, str]]) -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    keys = {}
    for jwk in jwks:
        x = jwk["x"]
        keys[jwk["kid"]] = Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)))
    return keys


class Signer:
    """The service's signing key, and the key set it publishes (the signing key's public half first)."""

    def __init__(self, private_key: Any, published: list[dict[str, str]]) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
        from http_message_signatures import HTTPMessageSigner, algorithms

        own = public_jwk(private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
        self.key_id = own["kid"]
        self.jwks = {"keys": [own, *(k for k in published if k["kid"] != own["kid"])]}
        self._signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=_Keys(private_key, {}))

    def sign(self, message: Message, body: bytes, created: datetime.datetime | None = None) -> None:
        """Add Content-Digest, Signature-Input and Signature to ``message``'s headers."""
        self._signer.sign(
            message,
            key_id=self.key_id,
            created=created or datetime.datetime.now(datetime.UTC),
            label=LABEL,
            tag=TAG,
            covered_component_ids=COVERED,
            body=body,
        )


class Unverified(Exception):
    """A signed answer that does not check: ``args[0]`` names the check that failed."""


def verify(status: int, headers: Mapping[str, str], body: bytes, jwks: Mapping[str, Any]) -> str:
    """Check an answer's signature with a published key and its Content-Digest against its body; the
    key id that signed it, or :class:`Unverified` naming the first check that failed."""
    from http_message_signatures import HTTPMessageSignaturesException, HTTPMessageVerifier, algorithms

    lowered = {name.lower(): value for name, value in headers.items()}
    for needed in ("signature-input", "signature", "content-digest"):
        if needed not in lowered:
            raise Unverified(f"the answer has no {needed} header")
    try:
        keys = _public_keys(jwks.get("keys", []))
    except (KeyError, TypeError, ValueError) as error:
        raise Unverified(f"the key set is not a set of Ed25519 keys ({type(error).__name__})") from None
    verifier = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=_Keys(None, keys))
    try:
        results = verifier.verify(
            Message(status, dict(lowered)),
            max_age=None,
            expect_tag=TAG,
            expect_label=LABEL,
            require_components=COVERED,
            body=body,
        )
    except (HTTPMessageSignaturesException, ValueError) as error:
        raise Unverified(f"the signature does not verify: {error or 'it does not match the signed fields'}") from None
    key_id: str = results[0].parameters["keyid"]
    return key_id
