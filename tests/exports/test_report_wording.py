"""The study report reads right in the singular: one administrator is not
"1 administrators"."""

from django.urls import reverse


def test_a_report_with_one_administrator_says_administrator(populated, run_export, client_for):
    job = run_export(populated.study, "report-html")
    assert job.status == "succeeded", job.error_message
    # The stored figures as a study run by a single administrator has them.
    job.report_data["feedback"]["administrators"] = 1
    job.save(update_fields=["report_data"])

    page = client_for("coordinator_a").get(
        reverse("exports:study_report", args=[populated.study.slug])
    )

    html = page.content.decode()
    assert "Percentages are of 1 administrator, with their most recent answer" in html
    assert "1 administrators" not in html
