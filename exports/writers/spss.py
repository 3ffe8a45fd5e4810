"""SPSS .sav: the Evaluations table with variable and value labels from the
column definitions, and the About text as the file's document note.

pyreadstat and pandas are an optional extra (`pip install shs-platform[spss]`);
without them this format reports a readable error instead of failing to import.
"""

import textwrap
from datetime import datetime, time
from pathlib import Path

from exports.about import about_fields
from exports.columns import DATE, INTEGER, NUMBER
from exports.dataset import ExportDataset
from exports.progress import Progress
from exports.writers import Writer


class SpssUnavailable(RuntimeError):
    pass


def spss_available() -> bool:
    from importlib.util import find_spec

    return find_spec("pyreadstat") is not None and find_spec("pandas") is not None


def write_sav(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    if not spss_available():
        raise SpssUnavailable(
            "SPSS export needs the optional packages pyreadstat and pandas "
            "(install the platform with its 'spss' extra)."
        )
    import pandas as pd
    import pyreadstat

    table = dataset.table("evaluations")
    data: dict[str, list] = {key: [] for key in table.keys}
    columns = list(data.values())
    for row in table.rows():
        for values, value in zip(columns, row, strict=True):
            values.append(value)
        progress.advance()

    frame = pd.DataFrame(
        {column.key: _series(pd, column.kind, data[column.key]) for column in table.columns}
    )
    pyreadstat.write_sav(
        frame,
        str(path),
        file_label=f"SHS export: {dataset.study.title}"[:64],
        column_labels={column.key: column.label for column in table.columns},
        variable_value_labels={
            column.key: dict(column.values) for column in table.columns if column.values
        },
        variable_measure={
            column.key: "nominal" if column.values else "scale"
            for column in table.columns
            if column.kind in (INTEGER, NUMBER)
        },
        note=_document_lines(about_fields(dataset, "SPSS .sav")),
    )


def _document_lines(fields: list[tuple[str, str]]) -> list[str]:
    # SPSS stores a file's document as lines of at most 80 bytes.
    lines: list[str] = []
    for name, value in fields:
        lines += textwrap.wrap(f"{name}: {value}", width=80, subsequent_indent="  ")
    return [line.encode()[:80].decode(errors="ignore") for line in lines]


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
