"""The bulk side: many rounds at once, for audits. JSON lines through worker processes (jsonl), the
audit tables (tables) as Parquet files (table_files) or CSV (spreadsheet), the audit report
(audit_report), what-if replays under a candidate ruleset (replay, replay_report), the bulk engine for
claims of amounts (engine), the table of rooms it reads fastest (room_table, room_conversion,
table_engine, table_runs), and the same tables on Spark (spark). The per-room path (service.documents)
is what each of them applies to a room. Receipts by the million (receipt_runs, receipts_report,
spark_receipts) run files of receipts over the workers with a check of one receipt handed in: that
check is service.trust's, which this package never imports.

May import: service.documents and every layer below it (the per-room path is what each applies to a
room); never service.trust, service.api, service.server or service.cli.
"""

VIEWER = "http://127.0.0.1:8000/viewer"
"""Where a report's links go unless told (``--viewer URL``): the viewer of a service run with ``make run``."""
