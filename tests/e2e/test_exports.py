"""A coordinator starts an XLSX export, watches the progress bar fill while a
real Celery worker writes it, and downloads a workbook that opens cleanly."""

import time

import pytest
from openpyxl import load_workbook
from playwright.sync_api import Error as PlaywrightError

from exports.models import ExportJob
from surveys.models import Evaluation
from tests.e2e.conftest import log_in
from tests.exports.factories import populate_study
from tests.personas import PASSWORD
from tests.worker import export_worker_for

pytestmark = pytest.mark.e2e


@pytest.fixture
def export_worker(tasks_run_in_process, live_server, tmp_path, settings):
    # Each progress tick pauses, so the bar can be seen moving.
    with export_worker_for(settings, tmp_path, tick_delay="0.25") as worker:
        yield worker


# The job page reloads itself when the job ends (static/exports/job.js):
# a look at the page may meet it between two documents, which is not an answer.


def _bar_values(page) -> list[int]:
    """The bar's values now; none while the page reloads. evaluate_all never
    waits, so a bar that left the page is no timeout either."""
    bar = page.locator("progress[data-role=progress]")
    try:
        return [
            int(v or 0) for v in bar.evaluate_all("bars => bars.map(b => b.getAttribute('value'))")
        ]
    except PlaywrightError:
        return []


def _finished(page) -> bool:
    try:
        return page.get_by_role("link", name="Download").count() > 0
    except PlaywrightError:
        return False


def test_a_coordinator_exports_xlsx_and_watches_the_progress_bar(
    export_worker, new_page, personas, study_a, tmp_path, screenshot
):
    populate_study(study_a, sessions=8)
    page = new_page()
    log_in(page, "coord-a@example.org", PASSWORD)
    page.goto(f"/studies/{study_a.slug}/")
    page.get_by_role("link", name="Exports").click()
    page.locator("input[name=format][value=xlsx]").check()
    page.locator("main form button[type=submit]").click()

    # The job page: the bar moves while the worker writes the workbook.
    seen = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _finished(page):
        seen.update(_bar_values(page))
        page.wait_for_timeout(200)
    screenshot(page, "export-finished")
    assert any(0 < value < 100 for value in seen), seen

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download").click()
    path = tmp_path / "download.xlsx"
    download_info.value.save_as(path)

    workbook = load_workbook(path, read_only=True)
    assert {"Evaluations", "Items", "Codebook", "About"} <= set(workbook.sheetnames)
    rows = list(workbook["Evaluations"].iter_rows(values_only=True))
    assert rows[0][:4] == ("evaluation_id", "participant_id", "session_id", "block")
    expected = Evaluation.objects.submitted().filter(
        session__study=study_a, session__is_pilot=False
    )
    assert len(rows) - 1 == expected.count() >= 16
    job = ExportJob.objects.get(study=study_a)
    assert job.status == ExportJob.Status.SUCCEEDED
