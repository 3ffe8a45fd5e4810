"""CSV: the Evaluations table, one row per evaluation, streamed to disk."""

import csv
from pathlib import Path

from exports.anonymize import RISKY_TEXT, neutralize
from exports.dataset import ExportDataset
from exports.progress import Progress
from exports.writers import Writer


def write_csv(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    table = dataset.table("evaluations")
    # utf-8-sig: the byte-order mark makes Excel read umlauts and accents correctly.
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(table.keys)
        for row in table.rows():
            # None becomes an empty cell and a date its ISO form (csv's own rules).
            # The inline test keeps neutralize() off the hot path: almost no cell
            # can be a formula, and this loop runs for every cell of the export.
            writer.writerow(
                [
                    neutralize(value)
                    if value.__class__ is str and RISKY_TEXT.search(value)
                    else value
                    for value in row
                ]
            )
            progress.advance()


WRITER = Writer(write_csv, ("evaluations",))
