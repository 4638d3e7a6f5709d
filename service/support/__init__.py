"""Helpers that know nothing of the game: strict JSON reading (``strict_json``), dataclasses' generated
code kept compiled (``dataclass_code``), the cores a process may use (``cores``), an operation's traced
stages (``traced_stages``), "did you mean" suggestions (``suggest``), the optional extras a feature
needs installed (``extras``), what a Bearer key may hold (``bearer_token``), one key seen with two
values among millions, in 16 bytes each (``rerolls``: a round id ruled on two room digests, for a month
of receipts and for the log's monitor alike), and where the workers' metrics are kept
(``metrics_store``: the master prepares it before the app, and so prometheus-client, is imported, which
is why it is not the API's).

May import: service.texts (its faults are said in words), service.package_files and the standard
library; nothing of the game, the rules or the service's layers above.
"""
