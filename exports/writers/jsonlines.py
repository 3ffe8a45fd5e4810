"""JSONL for annotation tools: one line per transcript, each a JSON object with
the transcript's columns of the Transcripts table (transcript_id, system,
block, language, source, import_format) and its turns in order, each with
the turn's columns (docs/design/transcripts.md §10.6). Annotation tools (Label Studio,
doccano, Prodigy) import such a file as one task per line.

The export-local session_id and evaluation_id are left out: this file is an
export of its own, and transcript_id is the key that joins annotations back
to the Evaluations table of any export with free text. The file is made of
the Transcripts table's rows, so the codebook of any other export documents
its keys; it is free text as a whole, so it needs free text to be asked for.
"""

import json
from pathlib import Path

from exports.dataset_types import ExportDataset
from exports.progress import Progress
from exports.transcript_columns import EXPORT_LOCAL_COLUMNS, TRANSCRIPT_COLUMNS, TRANSCRIPTS
from exports.writers.base import Writer, row_values
from exports.writers.jsonfile import json_default

TABLES = (TRANSCRIPTS.key,)


class FreeTextRequired(ValueError):
    """The transcripts file was asked for without free text (the services refuse
    such a job; this guards a job made some other way)."""


def write_jsonl(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    if TRANSCRIPTS.key not in dataset.tables:
        raise FreeTextRequired(
            "The transcripts file (JSONL) is free text: start it again with free text included."
        )
    table = dataset.table(TRANSCRIPTS.key)
    keys = table.keys
    turn_keys = [k for k in keys if k not in TRANSCRIPT_COLUMNS + EXPORT_LOCAL_COLUMNS]
    with open(path, "w", encoding="utf-8") as out:
        line: dict | None = None
        for values in row_values(table):
            row = dict(zip(keys, values, strict=True))
            if line is None or row["transcript_id"] != line["transcript_id"]:
                _write_line(out, line)
                line = {key: row[key] for key in TRANSCRIPT_COLUMNS} | {"turns": []}
            line["turns"].append({key: row[key] for key in turn_keys})
            progress.advance()
        _write_line(out, line)


def _write_line(out, line: dict | None) -> None:
    if line is not None:
        # One object per line: json.dumps escapes the line breaks inside texts, and
        # the two Unicode separators are escaped too, which some readers split lines at.
        text = json.dumps(line, default=json_default, ensure_ascii=False)
        out.write(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n")


WRITER = Writer(write_jsonl, TABLES)
