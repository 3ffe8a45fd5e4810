"""One presentation of an analysis: the calculator page, the `shs_analyze` HTML
report and the study report write the same figure of the same data in the same
words and digits, in every language (scoring.web.numbers, scoring/_analysis.html)."""

import csv
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import translation

from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import score_answers
from surveys.models import Evaluation
from tests.exports.factories import populate_study
from tests.exports.test_report import non_pilot_answers

DECIMAL = {"en": ".", "de": ",", "fr": ","}
CONFIDENT = [1, -2, 0, -1, 2, -1, -1, 0, 1, -1]


def figure(html: str, name: str) -> str:
    """The text of the cell marked data-figure="name", tags stripped."""
    found = re.search(rf'data-figure="{name}">(.*?)</(td|strong)>', html, re.S)
    assert found, name
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", found.group(1))).strip()


def cli_report(answers, tmp_path, language: str) -> str:
    source, page = tmp_path / "answers.csv", tmp_path / "report.html"
    with source.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(ITEM_KEYS)
        writer.writerows(answers.tolist())
    call_command(
        "shs_analyze", str(source), "-o", str(tmp_path / "report.json"),
        "--html", str(page), "--language", language,
    )  # fmt: skip
    return page.read_text(encoding="utf-8")


def study_reports(study, language: str, run_export, client_for) -> list[str]:
    """The downloadable study report and the study's report page."""
    with translation.override(language):
        job = run_export(study, "report-html")
        page = client_for("coordinator_a").get(
            reverse("exports:study_report", args=[study.slug]), HTTP_ACCEPT_LANGUAGE=language
        )
    assert job.status == "succeeded", job.error_message
    return [job.absolute_path.read_text(encoding="utf-8"), page.content.decode()]


@pytest.mark.parametrize("language", ["en", "de"])
def test_alpha_and_shapiro_p_read_the_same_in_the_cli_and_the_study_report(
    language, populated, run_export, client_for, tmp_path
):
    studies = study_reports(populated.study, language, run_export, client_for)
    cli = cli_report(non_pilot_answers(populated.study), tmp_path, language)

    job_data = populated.study.export_jobs.latest("pk").report_data["analysis"]
    alpha, shapiro_p = job_data["cronbach_alpha"]["alpha"], job_data["shapiro"]["p"]
    expected = {
        "alpha": f"{alpha:.2f}".replace(".", DECIMAL[language]),
        "shapiro_p": f"{shapiro_p:.3f}".replace(".", DECIMAL[language]),
    }
    for name, text in expected.items():
        # (the 13 evaluations of the study carry the small-sample mark in all of them)
        assert figure(cli, name).split(" (")[0] == text
        for study_html in studies:
            assert figure(study_html, name) == figure(cli, name), name


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_one_evaluation_has_the_same_shs_on_the_calculator_and_in_both_reports(
    language, personas, study_a, run_export, client_for, client, tmp_path
):
    populate_study(study_a, sessions=0, extras=True)  # one non-pilot evaluation
    # ... with answers whose SHS is positive: its "+" and its decimals must read alike
    given = dict(zip(ITEM_KEYS, CONFIDENT, strict=True))
    Evaluation.objects.filter(session__study=study_a).update(**given)
    answers = non_pilot_answers(study_a)
    assert answers.tolist() == [CONFIDENT]
    shs = score_answers(CONFIDENT).shs
    assert shs > 0
    expected = f"{shs:+.2f}".replace(".", DECIMAL[language])

    calculator = client.post(
        reverse("scoring:calculator_in", kwargs={"language": language}),
        {"lang": language, **given},
    )
    assert figure(calculator.content.decode(), "shs") == expected
    assert figure(cli_report(answers, tmp_path, language), "overall_mean") == expected
    for study_html in study_reports(study_a, language, run_export, client_for):
        assert figure(study_html, "overall_mean") == expected
