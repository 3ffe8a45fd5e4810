"""What every writer shares: its description (Writer) and the check of each
row it writes against the columns it writes."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

from exports.dataset_types import ExportDataset, Table
from exports.progress import Progress


@dataclass(frozen=True)
class Writer:
    write: Callable[[ExportDataset, Path, Progress], None]
    tables: tuple[str, ...]

    def total_rows(self, dataset: ExportDataset) -> int:
        return sum(table.count for table in dataset.present(self.tables))


class RowMismatch(ValueError):
    """A row whose keys are not its table's columns: a bug in the code that
    made it, never data to drop or to pad."""


def row_values(table: Table) -> Iterator[tuple]:
    """The values of each row of `table` in column order, after checking that
    the row has exactly the table's columns."""
    keys = table.keys
    # itemgetter of several keys gives a tuple of values, of a single key the bare value.
    in_order = itemgetter(*keys) if len(keys) > 1 else lambda row: (row[keys[0]],)
    for number, row in enumerate(table.rows(), start=1):
        try:
            values = in_order(row)
        except KeyError:  # a column the row lacks
            raise RowMismatch(_mismatch(table, number, row)) from None
        if len(row) != len(keys):  # a key that is not a column
            raise RowMismatch(_mismatch(table, number, row))
        yield values


def _mismatch(table: Table, number: int, row) -> str:
    missing = [key for key in table.keys if key not in row]
    extra = [key for key in row if key not in table.keys]
    return (
        f"row {number} of the table {table.sheet.key!r} does not match its columns: "
        f"missing {missing or 'none'}, not columns {extra or 'none'}"
    )
