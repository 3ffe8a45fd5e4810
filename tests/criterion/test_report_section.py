"""The criterion section of the study report and `shs_criterion` (docs/design/criterion.md §13.3):
shown only for a study that began the criterion study, the same figures in both,
in the report's language, and the command's refusals."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from criterion.models import AutomatedResult
from criterion.page import render_criterion_page
from criterion.preregistration.services import save_version
from criterion.report import criterion_report, holds_criterion_data
from exports.progress import Progress
from exports.report.build import build_report, render_report_file
from tests.criterion.annotation_data import study_with_transcripts
from tests.criterion.test_dataset import annotate


@pytest.fixture
def annotated(personas, study_a):
    study_with_transcripts(study_a, sessions=6)
    annotate(study_a, personas["coordinator_a"])
    return study_a


def test_a_study_without_criterion_data_gets_no_section(personas, study_a):
    study_with_transcripts(study_a, sessions=2)

    assert not holds_criterion_data(study_a)
    report = build_report(study_a, Progress(lambda _done: None))
    assert "criterion" not in report
    assert "Criterion validity" not in render_report_file(report)


@pytest.mark.parametrize(
    "begin",
    [
        lambda study, user: save_version(study, {}, user),
        lambda study, user: AutomatedResult.objects.create(
            system=study.systems.first(),
            benchmark="B",
            score=0.9,
            measured_on="2026-01-01",
            source="s",
        ),
    ],
    ids=["pre-registration", "automated result"],
)
def test_a_pre_registration_or_an_automated_result_begins_the_section(personas, study_a, begin):
    study_with_transcripts(study_a, sessions=2)
    begin(study_a, personas["coordinator_a"])

    assert holds_criterion_data(study_a)
    assert "criterion" in build_report(study_a, Progress(lambda _done: None))


def test_without_a_pre_registration_the_report_says_the_tests_are_not_pre_registered(annotated):
    report = build_report(annotated, Progress(lambda _done: None))

    html = render_report_file(report)
    assert report["criterion"]["preregistration"] == {}
    assert "No pre-registration on record" in html
    # The paper's values stand in.
    assert report["criterion"]["plan"]["h1_threshold"] == 0.40
    assert report["criterion"]["plan"]["falsification_threshold"] == 0.20


def test_the_report_and_the_command_show_the_same_figures(annotated, personas, tmp_path):
    save_version(annotated, {"bootstrap_resamples": 300}, personas["coordinator_a"])
    report = build_report(annotated, Progress(lambda _done: None))
    out = tmp_path / "c.json"

    call_command("shs_criterion", annotated.slug, "-o", str(out), stdout=io.StringIO())

    written = json.loads(out.read_text(encoding="utf-8"))
    # The same dict but for the moment it was computed at.
    shown = json.loads(json.dumps(report["criterion"]))
    for figures in (written, shown):
        del figures["joint_use"]["as_of"]
    assert written == shown
    assert written["analysis"]["bootstrap"]["resamples"] == 300
    assert written["agreement"]["factual_precision"]["icc_2_1"]["n_raters"] == 2


@pytest.mark.parametrize(
    "language, heading",
    [("en", "Criterion validity"), ("de", "Kriteriumsvalidität"), ("fr", "Validité de critère")],
)
def test_the_page_speaks_the_language_asked_for(annotated, language, heading):
    page = render_criterion_page(annotated, criterion_report(annotated), language)

    assert heading in page
    assert f'lang="{language}"' in page


def test_an_unknown_study_is_refused_and_nothing_is_written(db, tmp_path):
    out = tmp_path / "c.json"

    with pytest.raises(CommandError, match="no study"):
        call_command("shs_criterion", "no-such-study", "-o", str(out), stdout=io.StringIO())
    assert not out.exists()


def test_the_html_is_written_beside_the_json(annotated, tmp_path):
    out, page = tmp_path / "c.json", tmp_path / "c.html"

    call_command(
        "shs_criterion", annotated.slug, "-o", str(out), "--html", str(page), stdout=io.StringIO()
    )

    html = page.read_text(encoding="utf-8")
    assert "H1: overall SHS and factual precision" in html
    assert json.loads(out.read_text(encoding="utf-8"))["analysis"]["counts"]["n_evaluations"] > 0
