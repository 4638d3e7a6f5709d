"""Signed answers, checkable offline: RFC 9421 signatures (Ed25519) over the status and the body's
Content-Digest (RFC 9530), the signing key published as a JWK Set (RFC 7517; OKP keys as RFC 8037),
and each room's digest, the SHA-256 of its canonical JSON (RFC 8785), stated in the answer so that the
signature covers the room the caller sent.

An answer's signature base is written here (:class:`Signer`); signatures are checked by
``http-message-signatures``, an RFC 9421 implementation written apart from ours, with Ed25519 on
``cryptography``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final

from nacl.bindings import crypto_core_ed25519_is_valid_point, crypto_sign, crypto_sign_open

from service.texts import Text
from service.trust.canonical_json import NotCanonical, canonical

COVERED: Final = ("@status", "content-type", "content-digest")
"""What every signature covers: the status, the body's type and its digest (so the body itself)."""
ROUTE: Final = '"@path";req'
"""And the route the answered request was sent to: the request's ``@path`` (RFC 9421 §2.4, a request's
component in a response's signature), so that a receipt of one route cannot pass as one of another.
Answers signed before it was covered still verify, as unbound (:class:`Verified`)."""
KEY_SET_MAX_AGE: Final = 300
"""Seconds a verifier may keep /.well-known/jwks.json (its Cache-Control max-age): a new key is
published this long, once every instance serves it, before it signs (docs/receipts.md, Rotation)."""
LABEL: Final = "maubinh"
TAG: Final = "maubinh-answer"
"""The signature's ``tag`` (RFC 9421 2.3): what a verifier asks for, so no other signature passes as ours."""


def room_digest(document: Any) -> str:
    """``sha256:`` and the hex SHA-256 of ``document``'s canonical JSON (RFC 8785, JCS)."""
    return "sha256:" + hashlib.sha256(canonical(document)).hexdigest()


def room_digest_if_any(document: Any) -> str | None:
    """:func:`room_digest`, or None for a room without one: one holding a whole number past every double
    (:class:`NotCanonical`), which no room the service loads or signs holds."""
    try:
        return room_digest(document)
    except NotCanonical:
        return None


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(crv: str, kty: str, x: str) -> str:
    """An OKP key's RFC 7638 thumbprint: the SHA-256 of its required members (RFC 8037 §2: crv, kty
    and x), in that order, as JSON without whitespace, in base64url without padding."""
    members = json.dumps({"crv": crv, "kty": kty, "x": x}, separators=(",", ":"), ensure_ascii=False)
    return _b64url(hashlib.sha256(members.encode()).digest())


def public_jwk(public_bytes: bytes) -> dict[str, str]:
    """An Ed25519 public key as a JWK (RFC 8037), its ``kid`` the RFC 7638 thumbprint."""
    members = {"crv": "Ed25519", "kty": "OKP", "x": _b64url(public_bytes)}
    return {**members, "kid": thumbprint(**members), "alg": "EdDSA", "use": "sig"}


class SigningKeyError(ValueError):
    """A signing key or published key set that cannot be used: ``args[0]`` says why."""


def load_private_key(path: str) -> Any:
    """An Ed25519 private key from a PEM PKCS#8 file (``openssl genpkey -algorithm ed25519``)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        with open(path, "rb") as file:
            key = load_pem_private_key(file.read(64 * 1024), password=None)
    except FileNotFoundError:
        raise SigningKeyError(Text("keys.private_no_file", path=path)) from None
    except (OSError, ValueError, TypeError):
        raise SigningKeyError(Text("keys.private_not_pem", path=path)) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(Text("keys.private_not_ed25519", path=path))
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
class Request:
    """The request a response answers, as http-message-signatures reads one for its ``req`` components:
    a receipt keeps its path alone, which is all a signature covers of it (the host is a placeholder
    the library asks for and no component reads)."""

    url: str
    method: str = "POST"
    headers: MutableMapping[str, str] = field(default_factory=dict)


@dataclass
class Message:
    """A response as http-message-signatures reads one: its status and its header fields."""

    status_code: int
    headers: MutableMapping[str, str] = field(default_factory=dict)
    request: Request | None = None


def _resolver(public: Mapping[str, Any]) -> Any:
    """http-message-signatures' key resolver, for checking: the published keys by ``kid``."""
    from http_message_signatures import HTTPSignatureKeyResolver, InvalidSignature

    class Published(HTTPSignatureKeyResolver):
        def resolve_public_key(self, key_id: str) -> Any:
            found = public.get(key_id)
            if found is None:
                raise InvalidSignature(f"no published key {key_id!r}")
            return found

    return Published()


_BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]*")


def _key_named(index: int, jwk: Any) -> Text:
    """How a warning names a key of a set: its place, and its ``kid`` as the set states it."""
    kid = jwk.get("kid") if isinstance(jwk, dict) else None
    if kid is None:
        return Text("receipts.key_at", index=index)
    shown = kid if isinstance(kid, str) else json.dumps(kid)
    return Text("receipts.key_at_kid", index=index, kid=shown[:80] + ("…" if len(shown) > 80 else ""))


def _public_key(jwk: Any) -> tuple[str, bytes] | Text:
    """An Ed25519 public JWK's thumbprint and raw key, or why it cannot be one."""
    if not isinstance(jwk, dict):
        return Text("receipts.key_not_object")
    kty, crv, x = jwk.get("kty"), jwk.get("crv"), jwk.get("x")
    if kty != "OKP" or crv != "Ed25519":
        shown = {name: (v if isinstance(v, str) else json.dumps(v))[:40] for name, v in (("kty", kty), ("crv", crv))}
        return Text("receipts.key_not_ed25519", **shown)
    if not isinstance(x, str) or len(x) != 43 or not _BASE64URL.fullmatch(x):
        return Text("receipts.key_malformed")
    raw = base64.urlsafe_b64decode(x + "=")
    if _b64url(raw) != x:  # the unused low bits of the last character set: not the key's one spelling
        return Text("receipts.key_malformed")
    if not crypto_core_ed25519_is_valid_point(raw):  # of small order (any signature checks) or off the group
        return Text("receipts.key_weak")
    found = thumbprint(crv, kty, x)
    if "kid" in jwk and jwk["kid"] != found:
        return Text("receipts.key_kid_not_thumbprint", thumbprint=found)
    return found, raw


@dataclass(frozen=True)
class KeySet:
    """The usable keys of a JWK Set, each by its RFC 7638 thumbprint (never by the ``kid`` it states:
    a key listed under another key's ``kid`` is refused), and a warning for each key skipped."""

    keys: dict[str, Any]
    skipped: tuple[Text, ...]
    published: tuple[dict[str, str], ...] = ()
    """The usable keys as this service publishes a key (:func:`public_jwk`), in the set's order."""

    @classmethod
    def read(cls, jwks: Any) -> KeySet:
        """:class:`Unverified` when ``jwks`` is not a JWK Set at all (an object with a list of keys)."""
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        listed = jwks.get("keys") if isinstance(jwks, Mapping) else None
        if not isinstance(listed, list):
            raise Unverified(Text("receipts.why_keys_unusable"))
        keys, skipped, published = {}, [], []
        for index, jwk in enumerate(listed):
            read = _public_key(jwk)
            if not isinstance(read, Text):
                try:
                    key = Ed25519PublicKey.from_public_bytes(read[1])
                except ValueError:
                    read = Text("receipts.key_malformed")
            if isinstance(read, Text):
                skipped.append(Text("receipts.key_skipped", key=_key_named(index, jwk), why=read))
                continue
            if read[0] not in keys:
                published.append(public_jwk(read[1]))
            keys[read[0]] = key
        return cls(keys, tuple(skipped), tuple(published))


def public_half(path: str) -> dict[str, str]:
    """The public JWK of an Ed25519 key in a PEM file: a private key (``openssl genpkey -algorithm
    ed25519``) or its public half (``openssl pkey -pubout``). :class:`SigningKeyError` (its
    ``args[0]`` a :class:`Text`) when it is neither."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        PublicFormat,
        load_pem_private_key,
        load_pem_public_key,
    )

    with open(path, "rb") as file:
        pem = file.read(64 * 1024)
    key: Any = None
    for load in (lambda: load_pem_private_key(pem, password=None), lambda: load_pem_public_key(pem)):
        try:
            key = load()
            break
        except (ValueError, TypeError):
            continue
    if isinstance(key, Ed25519PrivateKey):
        key = key.public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(Text("receipts.publish_not_ed25519", file=path))
    return public_jwk(key.public_bytes(Encoding.Raw, PublicFormat.Raw))


def publishing(jwks: Any, path: str) -> tuple[dict[str, list[dict[str, str]]], str, KeySet]:
    """Rotation's first step: the JWK Set ``jwks`` (a file's or the service's), its usable keys kept as
    this service publishes them, with the public half of the new key in ``path`` added last; and that
    key's id. The service publishes the set (MAUBINH_PUBLISHED_KEYS_FILE) before it signs with the key,
    and verifiers hold a set up to :data:`KEY_SET_MAX_AGE` seconds."""
    read = KeySet.read(jwks)
    new = public_half(path)
    kept = [key for key in read.published if key["kid"] != new["kid"]]
    return {"keys": [*kept, new]}, new["kid"], read


_INNER_LIST: Final = "(" + " ".join([*(f'"{name}"' for name in COVERED), ROUTE]) + ")"


class Signer:
    """The service's signing key, and the key set it publishes (the signing key's public half first).

    It writes RFC 9421's signature base itself: what it covers is fixed, so the base is three lines
    and the parameters, where http-message-signatures (which checks every signature in the tests and in
    ``maubinh receipts verify``) builds it through a structured-field parser at a third of a request.
    It signs with libsodium (PyNaCl), whose Ed25519 takes about half the instructions of OpenSSL's."""

    def __init__(self, private_key: Any, published: list[dict[str, str]]) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat
        from nacl.bindings import crypto_sign_seed_keypair

        own = public_jwk(private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
        self.key_id = own["kid"]
        self.jwks = {"keys": [own, *(k for k in published if k["kid"] != own["kid"])]}
        _, self._secret = crypto_sign_seed_keypair(
            private_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        )

    def headers(
        self, status: int, content_type: str, body: bytes, path: str, created: int | None = None
    ) -> dict[str, str]:
        """Content-Digest (RFC 9530), Signature-Input and Signature (RFC 9421) for an answer to a request
        sent to ``path`` (the route, as the service routes it)."""
        digest = f"sha-256=:{base64.b64encode(hashlib.sha256(body).digest()).decode()}:"
        when = int(time.time()) if created is None else created
        params = f'{_INNER_LIST};created={when};keyid="{self.key_id}";alg="ed25519";tag="{TAG}"'
        base = signature_base(status, content_type, digest, path, params)
        signature = base64.b64encode(crypto_sign(base, self._secret)[:64]).decode()
        return {"Content-Digest": digest, "Signature-Input": f"{LABEL}={params}", "Signature": f"{LABEL}=:{signature}:"}


def signature_base(status: int, content_type: str, digest: str, path: str | None, params: str) -> bytes:
    """The RFC 9421 signature base of an answer, as the service signs it: its COVERED components, the
    route (``None`` for an answer signed before signatures covered it), then the parameters."""
    lines = [f'"@status": {status}', f'"content-type": {content_type}', f'"content-digest": {digest}']
    if path is not None:
        lines.append(f"{ROUTE}: {path}")
    lines.append(f'"@signature-params": {params}')
    return "\n".join(lines).encode()


class Unverified(Exception):
    """A signed answer that does not check: ``args[0]`` (a :class:`Text`) says why."""


_KEY_ID: Final = re.compile(r';keyid="([^"]*)"')
_ANY_HOST: Final = "https://receipt.invalid"


@dataclass(frozen=True)
class Verified:
    """Whose key signed an answer (its thumbprint), and whether the signature covers the route
    (:data:`ROUTE`): False for an answer signed before routes were bound."""

    key_id: str
    route_bound: bool


def verify(status: int, headers: Mapping[str, str], body: bytes, jwks: Mapping[str, Any], path: str) -> Verified:
    """Check the signature of an answer to a request sent to ``path`` with a published key, found by its
    thumbprint (:class:`KeySet`), or raise :class:`Unverified` saying why not."""
    from http_message_signatures import HTTPMessageSignaturesException, HTTPMessageVerifier, algorithms

    lowered = {name.lower(): value for name, value in headers.items()}
    for needed in ("signature-input", "signature", "content-digest"):
        if needed not in lowered:
            raise Unverified(Text("receipts.why_no_header", header=needed))
    keys = KeySet.read(jwks).keys
    named = _KEY_ID.search(lowered["signature-input"])
    if named is None or named.group(1) not in keys:
        key_id = named.group(1) if named is not None else ""
        raise Unverified(Text("receipts.why_unknown_key", key_id=key_id[:80]))

    class Sodium(algorithms.ED25519):
        """The library's Ed25519, its verdict libsodium's (the signer's library, and the one
        :mod:`service.trust.answer_signatures` checks with): OpenSSL's takes signatures libsodium refuses."""

        def verify(self, signature: bytes, message: bytes) -> None:
            crypto_sign_open(signature + message, self.public_key.public_bytes_raw())

    verifier = HTTPMessageVerifier(signature_algorithm=Sodium, key_resolver=_resolver(keys))
    try:
        results = verifier.verify(
            Message(status, dict(lowered), Request(_ANY_HOST + path)),
            max_age=None,
            expect_tag=TAG,
            expect_label=LABEL,
            require_components=COVERED,
            body=body,
        )
    except (HTTPMessageSignaturesException, ValueError):
        raise Unverified(Text("receipts.why_bad_signature")) from None
    covered = results[0].covered_components
    return Verified(str(results[0].parameters["keyid"]), ROUTE in covered)
