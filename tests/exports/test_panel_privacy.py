"""Panel ids are kept apart from the study data (docs/design/remote.md §11.6): no
export format and no report holds one."""

import pytest

from surveys.models import PanelEntry
from tests.exports.readers import all_text

PLANTED = "PanelSecret7QX"
FORMATS = ["csv", "csv-tables", "xlsx", "json", "jsonl", "sav", "sav-tables", "report-html"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_panel_id_in_any_export_or_the_report(populated, run_export, fmt):
    if fmt.startswith("sav"):
        pytest.importorskip("pyreadstat")
    sessions = populated.study.sessions.all()
    PanelEntry.objects.bulk_create(
        PanelEntry(study=populated.study, panel_id=f"{PLANTED}{n}", session=session)
        for n, session in enumerate(sessions)
    )
    assert PanelEntry.objects.filter(study=populated.study).count() >= 6

    job = run_export(populated.study, fmt, include_free_text=True, include_pilot=True)
    assert job.status == "succeeded", job.error_message

    assert PLANTED.lower() not in all_text(job.absolute_path, fmt).lower()
