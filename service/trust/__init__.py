"""Trust: who is calling and what an answer proves. ``callers`` (the callers file: names, hashed keys,
routes, rulesets, quotas), ``signing`` (Ed25519 HTTP message signatures on answers, the published key
set), ``receipts`` (a saved answer checked offline: signature, digests, the rules applied again),
``answer_signatures`` (the service's own form of signature checked quickly), ``receipt_lines`` (a
receipt by the line, its first failure as a code), ``ruling_log`` (a signed ruling as the transparency
log's entry, a receipt found in the log) and ``canonical_json`` (the canonical form a digest is taken over).

May import: service.transparency (the log's format), service.documents (a receipt's rules are applied
again through the per-room path) and everything below them; never service.api, service.cli or service.bulk.
"""
