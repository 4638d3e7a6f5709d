"""Every `.venv/bin/maubinh …` line of the README and docs/, run as written, in a folder that holds
the files they name (room.json, claims.jsonl, rules/ …): each exits as its comment says, with no
traceback. `maubinh serve` runs in tests/system/test_serve.py; the quick starts and the audits run in
test_quickstart.py and test_audit_examples.py, which check what they print."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import CLUB, golden_cases

from service.api import create_app
from service.trust import receipts

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in ("callers.md", "receipts.md")),
]
"""docs/callers.md's and docs/receipts.md's lines build on each other and need a server:
tests/system/test_quickstart.py and test_receipts_interop.py run them."""
E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
AGREES = {"amounts": {"P": -9000, "Q": 9000}}
SHORT = {"amounts": {"P": -3000, "Q": 3000}}  # the sập forgotten
EXIT = {"verify dispute.json": 1, "verify --jsonl claims.jsonl": 1, "verify --jsonl examples/audit": 1,
        "verify --rooms rooms.parquet": 1}  # fmt: skip
"""Lines that exit 1 by design (a disagreement); every other exits 0."""

pytestmark = pytest.mark.slow


def command_lines() -> list[tuple[str, str]]:
    """(page, command) for every maubinh line in 4-space code, alternatives ``[a | b]`` spelled out."""
    found = []
    for page in PAGES:
        for raw in page.read_text("utf-8").splitlines():
            line = re.sub(r"\s+#.*$", "", raw.strip()).removeprefix("$ ")  # a shell prompt, where a page shows one
            if not re.match(r"(MAUBINH_\w+=\S+ )?\.venv/bin/maubinh ", line) or not raw.startswith("    "):
                continue
            if line.endswith("\\") or " serve" in line:
                continue
            if choice := re.search(r"\[([^\]]*\|[^\]]*)\]", line):
                alternatives = ["", *choice.group(1).split("|")]
                found += [(page.name, (line[: choice.start()] + alt.strip()).strip()) for alt in alternatives]
            else:
                found.append((page.name, line))
    return found


def _signed_receipt(here: Path) -> None:
    """receipt.json and keys.json for the README's receipt line: E1 scored by a service that signs."""
    key = here / "signing.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True, capture_output=True)
    client = create_app({"log_requests": False, "signing_key_file": str(key)}).test_client()
    raw = json.dumps(E1).encode()
    answer = client.post("/v1/score", data=raw, content_type="application/json")
    saved = f"HTTP/1.1 {answer.status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items()) + "\r\n"
    made = receipts.from_exchange("POST", "/v1/score", raw, saved.encode() + answer.get_data())
    (here / "receipt.json").write_text(json.dumps(made))
    (here / "keys.json").write_text(client.get("/.well-known/jwks.json").get_data(as_text=True))


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the lines name, each a real request."""
    here = tmp_path_factory.mktemp("commands")
    (here / ".venv").symlink_to(Path(sys.executable).parents[1])
    (here / "examples").symlink_to(ROOT / "examples")
    (here / "deploy").symlink_to(ROOT / "deploy")
    _signed_receipt(here)
    (here / "room.json").write_text(json.dumps(E1))
    (here / "rooms.jsonl").write_text(json.dumps(E1) + "\n{not json\n")
    (here / "month.jsonl").write_text("".join(json.dumps({**E1, "round_id": f"r{k}"}) + "\n" for k in range(5)))
    (here / "claim.json").write_text(json.dumps({**E1, "claimed": AGREES}))
    (here / "dispute.json").write_text(json.dumps({**E1, "claimed": SHORT}))
    claims = [json.dumps({**E1, "claimed": AGREES}), json.dumps({**E1, "claimed": SHORT})]
    (here / "claims.jsonl").write_text("\n".join(claims) + "\n")
    player = E1["players"][0]
    hand = {"ruleset": "maubinh-2020", **{k: player[k] for k in ("back", "middle", "front")}}
    (here / "hand.json").write_text(json.dumps(hand))
    cards = player["back"] + player["middle"] + player["front"]
    (here / "cards.json").write_text(json.dumps({"ruleset": "maubinh-2020", "cards": cards}))
    (here / "rules" / "club-hanoi").mkdir(parents=True)
    (here / "rules" / "club-hanoi" / "1.json").write_text(json.dumps(CLUB))
    return here


@pytest.mark.parametrize(("page", "command"), command_lines())
def test_the_line_runs_as_written(work: Path, page: str, command: str) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    if "examples/audit" in command:
        env["MAUBINH_RULESETS_DIR"] = "examples/audit/rulesets"
    done = subprocess.run(
        ["bash", "-c", command], cwd=work, capture_output=True, text=True, timeout=600, env=env, check=False
    )
    said = command.removeprefix(".venv/bin/maubinh ")
    expected = next((code for start, code in EXIT.items() if said.startswith(start)), 0)
    assert done.returncode == expected, f"{page}: {command}\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() or done.stderr.strip()


def test_every_page_s_lines_are_found() -> None:
    lines = command_lines()
    assert len(lines) >= 20 and {page for page, _ in lines} >= {"README.md", "audits.md", "house-rules.md"}
