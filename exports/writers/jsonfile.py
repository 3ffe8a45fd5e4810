"""JSON: About, the codebook and every table as lists of objects, streamed."""

import json
from datetime import date
from pathlib import Path

from exports.about import about_fields, codebook_rows
from exports.dataset_types import ExportDataset
from exports.progress import Progress
from exports.writers.base import Writer, row_values

# The long Items table repeats q1..q10 of Evaluations; JSON readers need no long format.
TABLES = (
    "evaluations",
    "sessions",
    "prompt_log",
    "feedback",
    "demographics",
    "retests",
    "transcripts",
)
FORMAT_VERSION = "shs-export-1"


def json_default(value):
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_json(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    tables = dataset.present(TABLES)
    about = dict(about_fields(dataset, "JSON"))
    codebook = [
        {"sheet": sheet, "variable": key, "label": label, "type": kind, "values": values}
        for sheet, key, label, kind, values in codebook_rows([(t.sheet, t.columns) for t in tables])
    ]
    with open(path, "w", encoding="utf-8") as out:
        out.write(f'{{"format": {json.dumps(FORMAT_VERSION)},\n"about": ')
        out.write(json.dumps(about, ensure_ascii=False, indent=1))
        out.write(',\n"codebook": ')
        out.write(json.dumps(codebook, ensure_ascii=False, indent=1))
        out.write(',\n"tables": {')
        for number, table in enumerate(tables):
            out.write(f"{',' if number else ''}\n{json.dumps(table.sheet.key)}: [")
            keys = table.keys
            separator = "\n"
            for values in row_values(table):
                out.write(separator)
                row = dict(zip(keys, values, strict=True))
                out.write(json.dumps(row, default=json_default, ensure_ascii=False))
                separator = ",\n"
                progress.advance()
            out.write("\n]")
        out.write("}}\n")


WRITER = Writer(write_json, TABLES)
