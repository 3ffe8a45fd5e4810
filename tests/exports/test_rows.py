"""Rows are made from the column list, and every writer checks each row it is
given against the columns it writes (exports.dataset, exports.writers.base)."""

from dataclasses import replace

import pytest

from exports import columns as cols
from exports.dataset import build_dataset
from exports.progress import Progress
from exports.writers import writer_for
from exports.writers.base import RowMismatch
from tests.exports import readers

FORMATS = ["csv", "csv-tables", "xlsx", "json", "sav", "sav-tables"]

# A column defined in one place only: its value worked out from the row's record.
SYSTEM_AND_BLOCK = cols.Column(
    "system_and_block",
    "The system rated and its block, as one text",
    cols.TEXT,
    value_of=lambda record: f"{record['system']} #{record['block']}",
)


def _needs_spss(fmt: str) -> None:
    if fmt.startswith("sav"):
        pytest.importorskip("pyreadstat")


def _write(dataset, fmt: str, path):
    writer = writer_for(fmt)
    progress = Progress(lambda percent: None)
    progress.expect(writer.total_rows(dataset))
    writer.write(dataset, path, progress)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("change", "mismatch"),
    [
        (lambda row: {k: v for k, v in row.items() if k != "shs"}, r"missing \['shs'\]"),
        (lambda row: {**row, "shs_z": 0.0}, r"not columns \['shs_z'\]"),
    ],
    ids=["missing key", "extra key"],
)
def test_a_row_that_does_not_match_its_columns_is_refused(
    populated, tmp_path, fmt, change, mismatch
):
    _needs_spss(fmt)
    # Given an Evaluations table whose second row lacks a column, or has one too many
    dataset = build_dataset(study=populated.study, include_pilot=False, include_free_text=False)
    table = dataset.table("evaluations")
    good = next(table.rows())
    dataset.tables["evaluations"] = replace(table, rows=lambda: iter([good, change(good)]))

    # When it is written, then the writer refuses it, naming the row and the keys
    with pytest.raises(RowMismatch, match=rf"row 2 of the table 'evaluations' .*{mismatch}"):
        _write(dataset, fmt, tmp_path / f"export.{fmt}")


def _evaluation_rows(fmt: str, path) -> tuple[list[dict], set[str]]:
    """The Evaluations rows of an export, and the variables its codebook documents
    (None where the format has no codebook of its own: the single CSV file)."""
    if fmt == "csv":
        return readers.read_csv(path)[1], None
    if fmt == "csv-tables":
        tables = readers.read_csv_tables(path)
        codebook = tables["codebook.csv"][1]
        return tables["evaluations.csv"][1], {row["variable"] for row in codebook}
    if fmt == "xlsx":
        sheets = readers.read_xlsx(path)
        codebook = readers.sheet_dicts(sheets["Codebook"])
        return readers.sheet_dicts(sheets["Evaluations"]), {row["variable"] for row in codebook}
    if fmt == "json":
        document = readers.read_json(path)
        codebook = {row["variable"] for row in document["codebook"]}
        return document["tables"]["evaluations"], codebook
    if fmt == "sav":
        frame, meta = readers.read_sav(path)
    else:
        frame, meta = readers.read_sav_tables(path)["evaluations.sav"]
    return frame.to_dict("records"), set(meta.column_names_to_labels)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_column_added_in_one_place_is_in_every_format(populated, run_export, monkeypatch, fmt):
    _needs_spss(fmt)
    # Given one more column, defined in exports.columns and nowhere else
    evaluations = cols.EVALUATIONS
    added = replace(evaluations, columns=(*evaluations.columns, SYSTEM_AND_BLOCK))
    monkeypatch.setattr(cols, "EVALUATIONS", added)

    # When the study is exported
    job = run_export(populated.study, fmt)

    # Then every row holds it, worked out from that row, and the codebook documents it
    assert job.status == "succeeded", job.error_message
    rows, documented = _evaluation_rows(fmt, job.absolute_path)
    assert rows
    for row in rows:
        assert row["system_and_block"] == f"{row['system']} #{int(row['block'])}"
    assert documented is None or "system_and_block" in documented


def test_a_column_nothing_gives_a_value_is_refused_by_name(populated, tmp_path, monkeypatch):
    # Given a column with neither a value_of nor a value read by the dataset
    evaluations = cols.EVALUATIONS
    unknown = cols.Column("not_read", "A column nothing gives a value")
    monkeypatch.setattr(
        cols, "EVALUATIONS", replace(evaluations, columns=(*evaluations.columns, unknown))
    )
    dataset = build_dataset(study=populated.study, include_pilot=False, include_free_text=False)

    # Then writing its rows fails, and says which column has no value
    with pytest.raises(RowMismatch, match=r"row 1 of the table 'evaluations' .*\['not_read'\]"):
        _write(dataset, "csv", tmp_path / "export.csv")
