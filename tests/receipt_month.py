"""A month of receipts for the tests and the bench: real answers (the per-room path's), signed with the
test-only key (tests/receipts/test-vector-key.pem) by the service's own Signer, with planted faults of
every kind, a re-rolled round and a retried one (tests/unit/test_receipt_month.py, bench/receipts.py).

Signed directly, without an HTTP round trip: 5,000 receipts take a few seconds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from nacl.signing import SigningKey

from service.documents import OPERATIONS, answer, score_batch_results
from service.rulesets.catalogue import builtin_catalogue
from service.serialize import dumps, dumps_results
from service.trust.signing import Signer, load_private_key, room_digest

KEY = Path(__file__).parent / "receipts" / "test-vector-key.pem"
CREATED = 1796083200
DECK = [r + s for r in "23456789TJQKA" for s in "SCDH"]
RULESETS = ("maubinh-2020", "maubinh-chi-at", "maubinh-bao")
PLANTS = (
    "content_digest_mismatch",
    "bad_signature",
    "unknown_key",
    "room_digest_mismatch",
    "ruling_differs",
    "unreadable",
)


def _tidy(cards: list[str]) -> dict[str, list[str]]:
    order = "23456789TJQKA"
    ranked = sorted(cards, key=lambda c: (-sum(x[0] == c[0] for x in cards), -order.index(c[0])))
    return {"back": ranked[:5], "middle": ranked[5:10], "front": ranked[10:]}


def room(rng: random.Random, round_id: str) -> dict[str, Any]:
    deck = DECK[:]
    rng.shuffle(deck)
    size = rng.choice((2, 3, 4, 4))
    players = [{"id": f"p{rng.randrange(10**6)}-{i}", **_tidy(deck[13 * i : 13 * i + 13])} for i in range(size)]
    return {"ruleset": rng.choice(RULESETS), "stake": rng.choice((1000, 2000, 5000)), "round_id": round_id,
            "players": players}  # fmt: skip


class Maker:
    """Signs answers as the service does: the test key, or another key nobody published."""

    def __init__(self) -> None:
        self.signer = Signer(load_private_key(str(KEY)), [])
        self.catalogue = builtin_catalogue()
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self.stranger = Signer(Ed25519PrivateKey.from_private_bytes(bytes(SigningKey(b"s" * 32))), [])

    @property
    def jwks(self) -> dict[str, Any]:
        return self.signer.jwks

    def receipt(
        self, request: dict[str, Any], path: str = "/v1/score", created: int = CREATED, answered: Any = None,
        signer: Signer | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """The receipt of ``request`` sent to ``path``; ``answered`` the request whose answer it carries
        (a wrong ruling, signed), else ``request``'s own."""
        text = json.dumps(request, separators=(",", ":"))
        operation = "verify" if path == "/v1/verify" else "score"
        source = json.dumps(answered if answered is not None else request).encode()
        if path == "/v1/score/batch":
            results = score_batch_results(request, self.catalogue)
            status, raw = (
                200,
                dumps_results(
                    {**result, "room_digest": room_digest(room)}
                    for result, room in zip(results, request["rooms"], strict=True)
                ),
            )
        else:
            status, body = answer(OPERATIONS[operation], source, self.catalogue)
            if status in (200, 422):
                body["room_digest"] = room_digest(request)
            raw = dumps(body, "en")
        headers = (signer or self.signer).headers(status, "application/json", raw, path, created)
        return {"receipt": 1, "request": {"method": "POST", "path": path, "body": text},
                "response": {"status": status, "headers": {"content-type": "application/json", **{k.lower(): v for k, v in headers.items()}},
                             "body": raw.decode()}}  # fmt: skip


def _line(receipt: dict[str, Any]) -> bytes:
    return json.dumps(receipt, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def month(count: int, seed: int = 53) -> tuple[list[bytes], dict[str, list[int]], dict[str, Any]]:
    """``count`` receipt lines (about: a few planted lines are added), the planted faults by code (their
    1-based lines; ``retried`` the lines of a round sent again, which is no fault: the same room, or a room
    first refused and then sent corrected), and the key set."""
    rng = random.Random(seed)
    maker = Maker()
    lines: list[bytes] = []
    plants: dict[str, list[int]] = {code: [] for code in (*PLANTS, "round_scored_twice", "retried")}
    spots = [k for k in range(10, count - 10) if k not in (count // 3, count // 2)]
    planted_at = dict(zip(rng.sample(spots, 3 * len(PLANTS)), PLANTS * 3, strict=True))
    for k in range(count):
        request = room(rng, f"2026-11/{k}")
        code = planted_at.get(k)
        if code == "ruling_differs":
            made = maker.receipt(request, answered={**request, "stake": request["stake"] * 2})
        elif code == "unknown_key":
            made = maker.receipt(request, signer=maker.stranger)
        else:
            made = maker.receipt(request, created=CREATED + k)
        if code == "content_digest_mismatch":
            made["response"]["body"] += " "
        elif code == "bad_signature":
            headers = made["response"]["headers"]
            headers["signature-input"] = headers["signature-input"].replace(
                f"created={CREATED + k}", f"created={CREATED}"
            )
        elif code == "room_digest_mismatch":
            made["request"]["body"] = made["request"]["body"].replace(f'"stake":{request["stake"]}', '"stake":7', 1)
        if code == "unreadable":
            text = b'{"receipt": 1, "request": "not a request"}\n' if len(plants[code]) % 2 else b"{not json\n"
            lines.append(text)
        else:
            lines.append(_line(made))
        if code is not None:
            plants[code].append(len(lines))
        if k == count // 3:  # the same room again, a retry: another created, no fault
            lines.append(_line(maker.receipt(request, created=CREATED + 10**6)))
            plants["retried"] += [len(lines) - 1, len(lines)]
        if k == count // 4:  # a room refused (a stake of 0), then sent corrected for its round: no re-roll
            lines.append(_line(maker.receipt({**request, "stake": 0}, created=CREATED + 10**6)))
            lines.append(_line(maker.receipt(request, created=CREATED + 10**6 + 1)))
            plants["retried"] += [len(lines) - 1, len(lines)]
        if k == count // 2:  # the same round again, on another room: a re-roll
            lines.append(_line(maker.receipt(room(rng, request["round_id"]), created=CREATED + 10**6)))
            plants["round_scored_twice"] += [len(lines) - 1, len(lines)]
    batch = {"rooms": [room(rng, f"2026-12/batch-{i}") for i in range(3)]}
    lines.append(_line(maker.receipt(batch, "/v1/score/batch")))
    verify = room(rng, "2026-12/verify")
    scored = json.loads(maker.receipt(verify)["response"]["body"])
    verify["claimed"] = {"amounts": {p["id"]: p["amount"] for p in scored["players"]}}
    lines.append(_line(maker.receipt(verify, "/v1/verify")))
    return lines, plants, maker.jwks


def write_month(folder: Path, count: int, seed: int = 53) -> tuple[Path, Path, dict[str, list[int]]]:
    """The month as ``month.jsonl`` and ``keys.json`` in ``folder``: (the month, the keys, the plants)."""
    lines, plants, jwks = month(count, seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "month.jsonl").write_bytes(b"".join(lines))
    (folder / "keys.json").write_text(json.dumps(jwks))
    return folder / "month.jsonl", folder / "keys.json", plants
