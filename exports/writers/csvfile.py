"""CSV: the Evaluations table as one file, or every table (with the codebook
and About) as a ZIP of one CSV per table; rows are streamed to disk."""

import csv
import io
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from exports.about import about_fields, codebook_rows
from exports.columns import ABOUT, CODEBOOK
from exports.dataset_types import ExportDataset
from exports.progress import Progress
from exports.transcript_columns import SHEETS_WITH_TRANSCRIPTS
from exports.writers.base import Writer, row_values
from shs_platform.spreadsheet_cells import RISKY_TEXT, neutralize

TABLES = tuple(sheet.key for sheet in SHEETS_WITH_TRANSCRIPTS)
# utf-8-sig: the byte-order mark makes Excel read umlauts and accents correctly.
ENCODING = "utf-8-sig"


def write_csv(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    table = dataset.table("evaluations")
    with open(path, "w", encoding=ENCODING, newline="") as handle:
        _write_rows(handle, table.keys, row_values(table), progress)


def write_csv_tables(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    """evaluations.csv, items.csv, ... (transcripts.csv with free text), codebook.csv,
    about.csv in one ZIP file."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        write_tables_into(archive, dataset, progress, "CSV, every table (ZIP)")


def write_tables_into(
    archive: zipfile.ZipFile,
    dataset: ExportDataset,
    progress: Progress,
    described_as: str,
    folder: str = "",
) -> None:
    """Every table, the codebook and About as CSV members of `archive`, in
    `folder` ("data/" in the replication package)."""
    tables = dataset.present(TABLES)
    for table in tables:
        with _member(archive, folder + table.sheet.key) as handle:
            _write_rows(handle, table.keys, row_values(table), progress)
    # Coordinator-typed text (study title, regime) takes the same path as the data.
    with _member(archive, folder + CODEBOOK.key) as handle:
        rows = codebook_rows([(t.sheet, t.columns) for t in tables])
        _write_rows(handle, [c.key for c in CODEBOOK.columns], rows)
    with _member(archive, folder + ABOUT.key) as handle:
        fields = about_fields(dataset, described_as)
        _write_rows(handle, [c.key for c in ABOUT.columns], fields)


def _member(archive: zipfile.ZipFile, name: str) -> io.TextIOWrapper:
    # Written straight into the archive: no table is held in memory or on disk twice.
    raw = archive.open(f"{name}.csv", "w", force_zip64=True)
    return io.TextIOWrapper(raw, encoding=ENCODING, newline="")


def _write_rows(
    handle, header: list[str], rows: Iterable[Sequence], progress: Progress | None = None
) -> None:
    writer = csv.writer(handle)
    writer.writerow(header)
    for row in rows:
        # None becomes an empty cell and a date its ISO form (csv's own rules).
        # The inline test keeps neutralize() off the hot path: almost no cell
        # can be a formula, and this loop runs for every cell of the export.
        writer.writerow(
            [
                neutralize(value) if value.__class__ is str and RISKY_TEXT.search(value) else value
                for value in row
            ]
        )
        if progress is not None:
            progress.advance()


WRITER = Writer(write_csv, ("evaluations",))
TABLES_WRITER = Writer(write_csv_tables, TABLES)
