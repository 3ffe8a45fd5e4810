"""SPSS .sav: the Evaluations table, or every table as a ZIP of one .sav per
table (evaluations.sav, items.sav, sessions.sav, ...: joined on session_id or
evaluation_id), with variable and value labels and measure levels from the
column definitions, and the About text as each file's document. The
Transcripts table is left out (docs/design/transcripts.md §10.6): long turn texts are
what SPSS handles worst, and the other formats hold them.

pyreadstat and pandas are an optional extra (`pip install shs-platform[spss]`);
without them this format reports a readable error instead of failing to import.
"""

import zipfile
from datetime import datetime, time
from pathlib import Path

from exports.about import about_fields
from exports.columns import DATA_SHEETS, DATE, INTEGER, NUMBER, Column
from exports.dataset_types import ExportDataset, Table
from exports.progress import Progress
from exports.retest_records import RETESTS
from exports.writers.base import Writer, row_values

# The Retests table only in a study with a retest wave (docs/design/validation.md §14.2).
TABLES = (*(sheet.key for sheet in DATA_SHEETS), RETESTS.key)
# SPSS keeps a file's document as lines of 80 bytes, and its label in 64.
DOCUMENT_LINE_BYTES = 80
FILE_LABEL_BYTES = 64


class SpssUnavailable(RuntimeError):
    pass


def spss_available() -> bool:
    from importlib.util import find_spec

    return find_spec("pyreadstat") is not None and find_spec("pandas") is not None


def _require_spss() -> None:
    if not spss_available():
        raise SpssUnavailable(
            "SPSS export needs the optional packages pyreadstat and pandas "
            "(install the platform with its 'spss' extra)."
        )


def write_sav(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    _require_spss()
    _write_table(dataset, dataset.table("evaluations"), path, progress, "SPSS .sav")


def write_sav_tables(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    _require_spss()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        write_sav_tables_into(archive, dataset, progress, path.parent)


def write_sav_tables_into(
    archive: zipfile.ZipFile, dataset: ExportDataset, progress: Progress, work: Path, folder=""
) -> None:
    """One .sav member of `archive` per table, in `folder`; each is written
    first in `work`, the run's own folder (see exports.writers)."""
    for table in dataset.present(TABLES):
        part = work / f"{table.sheet.key}.sav"
        _write_table(dataset, table, part, progress, "SPSS, every table (ZIP of .sav)")
        archive.write(part, folder + part.name)
        part.unlink()


def _write_table(
    dataset: ExportDataset, table: Table, path: Path, progress: Progress, format_label: str
) -> None:
    import pandas as pd
    import pyreadstat

    data: dict[str, list] = {key: [] for key in table.keys}
    columns = list(data.values())
    for row in row_values(table):
        for values, value in zip(columns, row, strict=True):
            values.append(value)
        progress.advance()

    frame = pd.DataFrame(
        {column.key: _series(pd, column.kind, data[column.key]) for column in table.columns}
    )
    pyreadstat.write_sav(
        frame,
        str(path),
        file_label=fit_bytes(f"SHS {table.sheet.title}: {dataset.study.title}", FILE_LABEL_BYTES),
        column_labels={column.key: column.label for column in table.columns},
        variable_value_labels={
            column.key: dict(column.values) for column in table.columns if column.values
        },
        variable_measure={column.key: measure(column) for column in table.columns},
        note=document_lines(about_fields(dataset, format_label)),
    )


def measure(column: Column) -> str:
    """SPSS measure level: ordered codes (Likert items, ordered feedback answers)
    are ordinal, other codes and text nominal, numbers and dates scale."""
    if column.ordinal:
        return "ordinal"
    if column.values or column.kind not in (INTEGER, NUMBER, DATE):
        return "nominal"
    return "scale"


def fit_bytes(text: str, limit: int) -> str:
    """The longest start of `text` within `limit` UTF-8 bytes, cut between characters."""
    return text.encode()[:limit].decode(errors="ignore")


def document_lines(fields: list[tuple[str, str]]) -> list[str]:
    """The About fields as document lines of at most 80 bytes each, wrapped
    between words (or, within a word too long for a line, between characters):
    nothing is cut off, however many bytes its characters need."""
    lines: list[str] = []
    for name, value in fields:
        lines += _wrap(f"{name}: {value}", DOCUMENT_LINE_BYTES, indent="  ")
    return lines


def _wrap(text: str, limit: int, indent: str) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        joined = f"{line} {word}" if line else word
        if len(joined.encode()) <= limit:
            line = joined
            continue
        if line:
            lines.append(line)
        line = (indent if lines else "") + word
        while len(line.encode()) > limit:
            head = fit_bytes(line, limit)
            lines.append(head)
            line = indent + line[len(head) :]
    if line:
        lines.append(line)
    return lines


def _series(pd, kind: str, values: list):
    if kind in (INTEGER, NUMBER):
        # SPSS numbers are doubles; a missing value becomes system-missing.
        return pd.Series([float("nan") if v is None else v for v in values], dtype="float64")
    if kind == DATE:
        return pd.Series(
            [pd.NaT if v is None else datetime.combine(v, time()) for v in values],
            dtype="datetime64[ns]",
        )
    return pd.Series(["" if v is None else v for v in values], dtype="object")


WRITER = Writer(write_sav, ("evaluations",))
TABLES_WRITER = Writer(write_sav_tables, TABLES)
