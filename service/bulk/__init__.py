"""The bulk side: many rounds at once, for audits. JSON lines through worker processes (jsonl), the
audit tables (tables) as Parquet files (table_files) or CSV (spreadsheet), the audit report
(audit_report), and the same tables on Spark (spark). The per-room path (service.documents) is what
each of them applies to a room."""
