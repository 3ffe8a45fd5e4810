"""The Evaluations and Transcripts tables of an export read back from any of
the table formats, and what the database says they must hold."""

from collections import defaultdict
from datetime import date, datetime

from shs_platform.spreadsheet_cells import neutralize
from surveys.models import Turn
from tests.exports.readers import read_csv_tables, read_json, read_xlsx, sheet_dicts

TABLE_FORMATS = ["xlsx", "json", "csv-tables"]


def cell(value) -> str:
    """A value as text, whichever format it was read from (None, numbers, dates)."""
    if value is None:
        return ""
    if isinstance(value, datetime):  # a date cell: openpyxl reads it as midnight
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_tables(job) -> dict[str, list[dict] | None]:
    """{"evaluations": rows, "transcripts": rows or None when the file has none},
    every value as text."""
    path = job.absolute_path
    if job.format == "xlsx":
        sheets = read_xlsx(path)
        tables = {
            key: sheet_dicts(sheets[title]) if title in sheets else None
            for key, title in (("evaluations", "Evaluations"), ("transcripts", "Transcripts"))
        }
    elif job.format == "json":
        found = read_json(path)["tables"]
        tables = {key: found.get(key) for key in ("evaluations", "transcripts")}
    else:
        found = read_csv_tables(path)
        tables = {
            key: found[f"{key}.csv"][1] if f"{key}.csv" in found else None
            for key in ("evaluations", "transcripts")
        }
    return {
        key: None if rows is None else [{k: cell(v) for k, v in row.items()} for row in rows]
        for key, rows in tables.items()
    }


def database_turns(study, *, include_pilot: bool = False) -> dict[str, list[Turn]]:
    """transcript code -> its turns in order, for the blocks an export includes."""
    turns = Turn.objects.filter(transcript__interaction__session__study=study).select_related(
        "transcript__interaction__session"
    )
    if not include_pilot:
        turns = turns.filter(transcript__interaction__session__is_pilot=False)
    by_code: dict[str, list[Turn]] = defaultdict(list)
    for turn in turns.order_by("transcript_id", "position"):
        by_code[turn.transcript.code].append(turn)
    return dict(by_code)


def as_written(text: str, fmt: str) -> str:
    """A text as the format writes it (CSV quotes what a spreadsheet would run)."""
    return neutralize(text) if fmt.startswith("csv") else text
