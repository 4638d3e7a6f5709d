"""``maubinh``: the same JSON as the HTTP API, without a server.

maubinh score room.json          one room; exit 1 with the problem if rejected
maubinh score --jsonl - < rooms  one result (or problem) per input line
maubinh score --format csv ...   the ledger as a spreadsheet: one row per line
maubinh score|verify --jsonl IN --format parquet -o DIR
                                 the ledger as tables (Parquet): rooms, players, ledger, problems[, differences]
maubinh verify --jsonl IN --report report.html
                                 and an audit report: one offline HTML page
maubinh verify claim.json        a room and the settlement a backend claims; exit 1 unless they agree
maubinh verify --jsonl claims    one line per disagreement (or refusal), a summary; exit 1 if any disagree
maubinh rooms claims.jsonl|scored/ -o rooms.parquet
                                 the table of rooms (Parquet) the bulk engine reads, from claims or score's tables
maubinh verify --rooms rooms.parquet
                                 the table checked, as verify --jsonl checks lines
maubinh score --rooms rooms.parquet -o amounts.parquet
                                 every room of the table scored without explanations: amounts only
maubinh replay --jsonl claims --ruleset CANDIDATE [--only ID] [--report page.html] [--format parquet -o DIR]
                                 the money the candidate ruleset would have moved, round by round
maubinh evaluate hand.json       name the hands of one arrangement
maubinh arrange cards.json       suggest an arrangement (gợi ý)
maubinh rulesets [ID]            list the rulesets, or print one whole (ID may be pinned: id@1)
maubinh rulesets check FILE…|DIR check operators' ruleset files or folder; exit 1 on any fault
maubinh rulesets lock DIR        write DIR/rulesets.lock: each version's digest
maubinh keys new CALLER          print a new key once, and the callers file line that holds its SHA-256
maubinh keys check FILE          check a callers file as the service would; exit 1 on its fault
maubinh receipts verify FILE --keys JWKS
                                 check a receipt offline: signature, digests, the rules applied again
maubinh receipts make --request REQ --answer SAVED [--path P]
                                 a receipt from a request body and an answer `curl -i` saved
maubinh receipts publish KEY --keys JWKS
                                 the key set with KEY's public half added: publish a key before signing with it
maubinh log serve|vkey|check|monitor|proof
                                 the transparency log of signed rulings: run, key, check, monitor, prove
maubinh serve                    run the HTTP API under gunicorn

MAUBINH_RULESETS_DIR adds an operator's ruleset files, as it does for the service.

One module a command group, each with its ``arguments`` (what argparse adds) and ``run``:
``operations`` (score, verify, evaluate, arrange, and rooms: the table of rooms), ``replay``,
``rulesets``, ``keys``, ``receipts``, ``log``; ``commands`` makes the parser and dispatches; ``shared`` is what
they share (the language, the exit codes, files in and out, the usage errors' words).

May import every layer below it: service.server (``serve``), service.bulk, service.trust,
service.documents and down. Nothing imports the command line but the entry point.
"""

from service.cli.commands import main

__all__ = ["main"]
