"""The tables (:mod:`service.bulk.tables`) as Parquet files in a directory, one per table, written as the
chunks of a run arrive: memory holds at most a row group's rows a table, whatever the input's size."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from service.bulk.tables import COLUMNS, arrow_schema, decode_rows, tables_for

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

ROW_GROUP_ROWS = 128 * 1024
"""Rows gathered before a table writes a row group: large enough for Parquet's column statistics and
readers' scans, small enough to bound memory (a ledger row is about 200 bytes in Arrow)."""


class ParquetTables:
    """``<directory>/<table>.parquet`` for each table of ``operation``."""

    def __init__(self, directory: str | Path, operation: str) -> None:
        import pyarrow.parquet as pq

        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.operation = operation
        for stale in set(COLUMNS) - set(tables_for(operation)):  # another operation's, into the same directory
            (self.directory / f"{stale}.parquet").unlink(missing_ok=True)
        self._writers: dict[str, pq.ParquetWriter] = {
            table: pq.ParquetWriter(self.directory / f"{table}.parquet", arrow_schema(table), compression="zstd")
            for table in tables_for(operation)
        }
        self._pending: dict[str, list[pa.RecordBatch]] = {table: [] for table in self._writers}
        self._rows = dict.fromkeys(self._writers, 0)

    def add(self, encoded: bytes) -> None:
        """One chunk's rows (:func:`service.bulk.tables.encode_rows`)."""
        for table, batch in decode_rows(self.operation, encoded).items():
            if batch.num_rows:
                self._pending[table].append(batch)
                self._rows[table] += batch.num_rows
                if self._rows[table] >= ROW_GROUP_ROWS:
                    self._flush(table)

    def _flush(self, table: str) -> None:
        import pyarrow as pa

        if self._pending[table]:
            self._writers[table].write_table(pa.Table.from_batches(self._pending[table]), row_group_size=ROW_GROUP_ROWS)
        self._pending[table], self._rows[table] = [], 0

    def close(self) -> None:
        for table, writer in self._writers.items():
            self._flush(table)
            writer.close()

    def __enter__(self) -> ParquetTables:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
