"""Scores room.json with a client generated from openapi.yaml (openapi-python-client), then sends
bad-room.json and branches on each fault's code, as a backend would. MAUBINH_URL names the service."""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.getcwd())  # maubinh_client/, where the generator wrote it
from maubinh_client import Client
from maubinh_client.api.scoring import score_room
from maubinh_client.models import ScoreRequest, ScoreResponse, ValidationProblem

HERE = Path(__file__).parent
client = Client(base_url=os.environ.get("MAUBINH_URL", "http://127.0.0.1:8000"))

scored = score_room.sync(client=client, body=ScoreRequest.from_dict(json.loads((HERE / "room.json").read_text())))
assert isinstance(scored, ScoreResponse)
print(f"{scored.ruleset.id}@{scored.ruleset.version}:", ", ".join(f"{p.id} {p.amount:+d}" for p in scored.players))

refused = score_room.sync(client=client, body=ScoreRequest.from_dict(json.loads((HERE / "bad-room.json").read_text())))
assert isinstance(refused, ValidationProblem)
for fault in refused.errors:
    if fault.code == "duplicate_card":
        print(f"{fault.pointer}: dealt twice, a bug in the deal: {fault.message}")
    elif fault.code in ("unknown_field", "unknown_ruleset"):
        print(f"{fault.pointer}: a typo in our request: {fault.message}")
    else:
        print(f"{fault.pointer}: {fault.code}: {fault.message}")
