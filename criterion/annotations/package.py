"""The annotator package (docs/design/criterion.md §13.2): the study's transcripts as the
annotators of paper 8.2 need them, and nothing of the SHS.

One record per block with a transcript, of the non-pilot sessions that left
data (withdrawn sessions have none): the transcript_id, the block's language
and its turns (position, role, text as stored, so a redacted turn carries its
replacement). The system's name only when the coordinator asks for it: blind
annotators judge the answers, not the brand. Never answers, scores, the
participant, the session, the block number or any date.

Two turns are not the exchange as the participant saw it:
- the system prompt is left out: the participant never saw it, and it often
  names the system, which would unblind the annotators;
- an error turn (a failed call) stays, with its role and empty text, so an
  annotator sees that a question went unanswered; its cause does not.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from openpyxl import Workbook

from exports.rows import CHUNK_SIZE
from exports.writers.sheetrows import WorkbookSheet, discard_sheets
from surveys.models import Study, Transcript, Turn
from surveys.selection import exported_transcripts

FORMATS = ("jsonl", "xlsx")
CONTENT_TYPES = {
    "jsonl": "application/jsonl; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
SHEET_TITLE = "Transcripts"


def package_transcripts(study: Study) -> QuerySet[Transcript]:
    """The transcripts the annotators get, and so the rows of their sheet."""
    return exported_transcripts(study, timezone.now(), include_pilot=False)


def package_records(study: Study, *, include_system_names: bool) -> Iterator[dict]:
    """One dict per transcript in transcript_id order (random, so the order says
    nothing of sessions or systems), turns in order. Two queries."""
    transcripts = package_transcripts(study)
    heads = transcripts.order_by("code").values_list(
        "pk", "code", "interaction__session__language", "interaction__system__name"
    )
    turns = (
        Turn.objects.filter(transcript__in=transcripts.values("pk"))
        .exclude(role=Turn.Role.SYSTEM)
        .order_by("transcript__code", "position")
        .values_list("transcript_id", "position", "role", "text")
        .iterator(chunk_size=CHUNK_SIZE)
    )
    pending = next(turns, None)
    for pk, code, language, system in heads:
        record: dict[str, Any] = {"transcript_id": code, "language": language}
        if include_system_names:
            record["system"] = system
        record["turns"] = []
        while pending is not None and pending[0] == pk:
            record["turns"].append({"position": pending[1], "role": pending[2], "text": pending[3]})
            pending = next(turns, None)
        yield record


def package_jsonl(study: Study, *, include_system_names: bool) -> bytes:
    lines = []
    for record in package_records(study, include_system_names=include_system_names):
        # The Unicode line separators are escaped too: some line readers split there.
        text = json.dumps(record, ensure_ascii=False)
        lines.append(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n")
    return "".join(lines).encode("utf-8")


def package_xlsx(study: Study, *, include_system_names: bool) -> bytes:
    """One row per turn; text cells written as the exports write them (§6.4)."""
    header = ["transcript_id", "language"] + (["system"] if include_system_names else [])
    header += ["position", "role", "text"]
    workbook = Workbook(write_only=True)
    output = io.BytesIO()
    with TemporaryDirectory(prefix="annotator-package-") as folder:
        try:
            sheet = WorkbookSheet(workbook, SHEET_TITLE, header, folder=Path(folder))
            for record in package_records(study, include_system_names=include_system_names):
                head = [record[key] for key in header[: -len(("position", "role", "text"))]]
                for turn in record["turns"]:
                    sheet.append([*head, turn["position"], turn["role"], turn["text"]])
            workbook.save(output)
        except BaseException:
            discard_sheets(workbook)
            raise
    return output.getvalue()


def package_file(study: Study, fmt: str, *, include_system_names: bool) -> bytes:
    make = package_jsonl if fmt == "jsonl" else package_xlsx
    return make(study, include_system_names=include_system_names)
