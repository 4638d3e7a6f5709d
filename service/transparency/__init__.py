"""The transparency log of signed rulings: its format, followed exactly from C2SP's specifications, and
the log itself, run as its own process (``maubinh log serve``).

``merkle`` (RFC 6962 hashes; inclusion and consistency proofs made and checked as RFC 9162 §2.1.3 and
§2.1.4 say), ``tiles`` (c2sp.org/tlog-tiles: tile paths, entry bundles, a tree read from its tiles and
checked whole), ``note`` (c2sp.org/signed-note with Ed25519 and c2sp.org/tlog-checkpoint), ``proof``
(c2sp.org/tlog-proof@v1 bundles), ``stores`` (the folder store: a journal fsync'd before an entry is
acknowledged, tiles as static files; ``postgres``, the same in PostgreSQL), ``integrate`` (the tiles and
a new signed checkpoint from what was sequenced), ``server`` (the log's HTTP API), ``reading`` (a log
read from a folder or a URL) and ``feeder`` (the service's side: statements queued and posted in
batches, the answer never waiting).

An entry is opaque bytes here: what a statement of a ruling holds is service.trust's (``ruling_log``).

May import: service.support, service.texts and the standard library (PyNaCl for Ed25519, psycopg for the
PostgreSQL store); nothing of the game, the rules, the use cases, trust, the API or the command line.
"""
