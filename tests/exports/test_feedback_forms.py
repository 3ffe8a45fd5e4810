"""The Administrator feedback table's administrator_form (docs/design/exports.md
§7.4): each administrator's questionnaires numbered 1, 2, ... by the moment
they were submitted (two at the same moment in the order stored), in every
format, the pilot sessions' only when the export includes them."""

from collections import defaultdict
from datetime import timedelta

import pytest

from scoring.instruments.feedback import FEEDBACK
from surveys.models import FeedbackResponse
from tests.exports.expected import expected_feedback_forms
from tests.exports.readers import (
    read_csv_tables,
    read_json,
    read_sav_tables,
    read_xlsx,
    sheet_dicts,
)


def _submitted_against_session_order(populated):
    """The first administrator's questionnaires submitted in the reverse of
    their sessions' order, the second's all at one moment, each with its own
    answer to the first question."""
    clarity = FEEDBACK.questions[0].codes
    for number, experimenter in enumerate(populated.experimenters[:2]):
        forms = list(
            FeedbackResponse.objects.filter(
                experimenter=experimenter, session__is_pilot=False
            ).order_by("-session__created_at")
        )
        assert len(forms) >= 2
        moment = forms[0].submitted_at
        for position, form in enumerate(forms):
            form.submitted_at = moment + timedelta(minutes=position * (1 - number))
            form.clarity = clarity[position]
            form.save()


def _feedback_rows(job, fmt) -> list[dict]:
    path = job.absolute_path
    if fmt == "xlsx":
        return sheet_dicts(read_xlsx(path)["Administrator feedback"])
    if fmt == "json":
        return read_json(path)["tables"]["feedback"]
    if fmt == "csv-tables":
        return read_csv_tables(path)["feedback.csv"][1]
    return read_sav_tables(path)["feedback.sav"][0].to_dict("records")


def _by_form(rows) -> dict[str, list[tuple]]:
    """Administrator -> their answers, by administrator_form (which must run 1..k)."""
    numbered = defaultdict(list)
    for row in rows:
        answers = tuple(int(float(row[key])) for key in FEEDBACK.keys)
        numbered[row["administrator"]].append((int(float(row["administrator_form"])), answers))
    forms = {}
    for administrator, rows_of_one in numbered.items():
        rows_of_one.sort()
        assert [number for number, _ in rows_of_one] == list(range(1, len(rows_of_one) + 1))
        forms[administrator] = [answers for _number, answers in rows_of_one]
    return forms


@pytest.mark.parametrize("fmt", ["xlsx", "json", "csv-tables", "sav-tables"])
def test_administrator_form_numbers_each_administrators_forms_by_submission(
    populated, run_export, fmt
):
    if fmt == "sav-tables":
        pytest.importorskip("pyreadstat")
    _submitted_against_session_order(populated)

    job = run_export(populated.study, fmt)

    assert job.status == "succeeded", job.error_message
    assert _by_form(_feedback_rows(job, fmt)) == expected_feedback_forms(populated.study)


def test_pilot_questionnaires_are_numbered_only_when_exported(populated, run_export):
    without = _by_form(_feedback_rows(run_export(populated.study, "csv-tables"), "csv-tables"))
    with_pilot = _by_form(
        _feedback_rows(run_export(populated.study, "csv-tables", include_pilot=True), "csv-tables")
    )

    assert without == expected_feedback_forms(populated.study)
    assert with_pilot == expected_feedback_forms(populated.study, include_pilot=True)
    assert sum(map(len, with_pilot.values())) > sum(map(len, without.values()))
