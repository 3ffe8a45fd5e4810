"""LibreOffice Calc opens a workbook with transcripts: the Transcripts sheet
shows what the export holds, turn text that looks like a formula included,
shown and not run (the pattern of test_spreadsheet_app)."""

from exports.transcript_columns import TRANSCRIPTS
from shs_platform.spreadsheet_cells import looks_like_formula
from surveys.models import Turn
from tests.exports.conftest import INJECTIONS
from tests.exports.readers import read_xlsx
from tests.exports.test_spreadsheet_app import _open_in_libreoffice, _shown_as, soffice
from tests.exports.transcript_factory import add_transcripts

__all__ = ["soffice"]  # the fixture, shared with test_spreadsheet_app


def test_libreoffice_shows_the_transcripts_sheet_as_exported(
    populated, run_export, soffice, tmp_path
):
    add_transcripts(populated.study)
    answer = Turn.objects.filter(role=Turn.Role.ASSISTANT).first()
    answer.text = "=1+1 is what the model answered\nsecond line"
    answer.save(update_fields=["text"])
    job = run_export(populated.study, "xlsx", include_free_text=True)
    expected = read_xlsx(job.absolute_path)
    assert TRANSCRIPTS.title in expected

    shown = _open_in_libreoffice(soffice, job.absolute_path, tmp_path, list(expected))

    rows = expected[TRANSCRIPTS.title]
    assert len(shown[TRANSCRIPTS.title]) == len(rows) > 100
    for number, (row, shown_row) in enumerate(zip(rows, shown[TRANSCRIPTS.title], strict=True), 1):
        shown_row += [""] * (len(row) - len(shown_row))  # trailing empty cells are left off
        mismatches = [
            (column, value, text)
            for column, (value, text) in enumerate(zip(row, shown_row, strict=True), 1)
            if not _shown_as(value, text)
        ]
        assert not mismatches, number
    texts = [row[rows[0].index("text")] for row in shown[TRANSCRIPTS.title][1:]]
    assert answer.text in texts
    assert set(INJECTIONS) <= set(texts)
    assert sum(looks_like_formula(text) for text in texts) > len(INJECTIONS)
    # The Evaluations sheet shows the same transcript ids.
    evaluations = shown["Evaluations"]
    codes = {row[evaluations[0].index("transcript_id")] for row in evaluations[1:]} - {""}
    assert codes and codes <= set(row[0] for row in shown[TRANSCRIPTS.title][1:])
