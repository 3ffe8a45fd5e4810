"""Read exported files back the way an analyst's tools would."""

import csv
import io
import json
import tempfile
import zipfile
from pathlib import Path

from openpyxl import load_workbook


def read_csv(path: Path) -> tuple[list[str], list[dict]]:
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames), list(reader)


def read_xlsx(path: Path) -> dict[str, list[list]]:
    """Every sheet as a list of rows (header first), values as openpyxl reads them."""
    workbook = load_workbook(path, read_only=False)
    return {
        sheet.title: [[cell.value for cell in row] for row in sheet.iter_rows()]
        for sheet in workbook.worksheets
    }


def xlsx_cells(path: Path):
    """Every cell of every sheet (for checks on types and styles)."""
    workbook = load_workbook(path)
    for sheet in workbook.worksheets:
        for row in sheet.iter_rows():
            yield from row


def sheet_dicts(rows: list[list]) -> list[dict]:
    header, *body = rows
    return [dict(zip(header, row, strict=True)) for row in body]


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def read_sav(path: Path):
    import pyreadstat

    return pyreadstat.read_sav(str(path), apply_value_formats=False)


def read_csv_tables(path: Path) -> dict[str, tuple[list[str], list[dict]]]:
    """A ZIP of CSV files: member name -> (header, rows)."""
    tables = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            text = archive.read(name).decode("utf-8-sig")
            reader = csv.DictReader(io.StringIO(text, newline=""))
            tables[name] = (list(reader.fieldnames), list(reader))
    return tables


def read_sav_tables(path: Path) -> dict:
    """A ZIP of .sav files: member name -> (data frame, metadata)."""
    tables = {}
    with zipfile.ZipFile(path) as archive, tempfile.TemporaryDirectory() as folder:
        for name in archive.namelist():
            tables[name] = read_sav(archive.extract(name, folder))
    return tables


def all_text(path: Path, fmt: str) -> str:
    """Everything a reader of the file can see, as one string."""
    if fmt in ("csv-tables", "sav-tables"):
        single = fmt.removesuffix("-tables")
        with zipfile.ZipFile(path) as archive, tempfile.TemporaryDirectory() as folder:
            return "\n".join(
                all_text(Path(archive.extract(name, folder)), single) for name in archive.namelist()
            )
    if fmt == "xlsx":
        return "\n".join(str(cell.value) for cell in xlsx_cells(path) if cell.value is not None)
    if fmt == "sav":
        frame, meta = read_sav(path)
        parts = [frame.to_csv(), json.dumps(meta.column_names_to_labels, ensure_ascii=False)]
        parts.append(
            json.dumps(
                {
                    k: {str(c): v for c, v in labels.items()}
                    for k, labels in meta.variable_value_labels.items()
                },
                ensure_ascii=False,
            )
        )
        parts.append(str(meta.notes))
        parts.append(str(meta.file_label))
        # The raw bytes too: anything stored but not surfaced by the reader.
        parts.append(Path(path).read_bytes().decode("latin-1"))
        return "\n".join(parts)
    return Path(path).read_text(encoding="utf-8-sig")
