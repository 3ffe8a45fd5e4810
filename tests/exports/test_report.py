"""The study report: the paper's tables and figures from the study's own data,
the sample stated next to every score, and degenerate data that explains
itself instead of crashing."""

import json
import re
from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse

from exports.models import ExportJob
from scoring.instruments.shs import ITEM_KEYS
from scoring.stats.reliability.analysis import analyze
from surveys.models import Evaluation, FeedbackResponse, PromptEntry
from tests.exports.factories import populate_study


def non_pilot_answers(study) -> np.ndarray:
    rows = (
        Evaluation.objects.submitted()
        .filter(session__study=study, session__is_pilot=False)
        .exclude(session__step__in=["withdrawn", "ineligible"])
        .order_by("session__created_at", "session_id", "block")
        .values_list(*ITEM_KEYS)
    )
    return np.array(list(rows), dtype=int).reshape(-1, 10)


@pytest.fixture
def report_job(populated, run_export):
    # The first administrator changes their mind in a later session: only the
    # most recent answer counts for the per-administrator figures.
    first = populated.experimenters[0]
    latest = (
        FeedbackResponse.objects.filter(experimenter=first, session__is_pilot=False)
        .order_by("submitted_at")
        .first()
    )
    latest.clarity = 5
    latest.submitted_at += timedelta(days=1)
    latest.save()
    job = run_export(populated.study, "report-html")
    assert job.status == "succeeded", job.error_message
    return job


def test_report_figures_come_from_the_studys_own_data(populated, report_job):
    report = report_job.report_data
    answers = non_pilot_answers(populated.study)

    assert report["n"] == len(answers) == 13
    expected = analyze(answers)
    assert report["analysis"]["cronbach_alpha"] == expected["cronbach_alpha"]
    assert report["analysis"]["dimension_correlations"] == expected["dimension_correlations"]
    assert report["analysis"]["dimension_profile"] == expected["dimension_profile"]
    # Table 6: lower triangle, diagonal 1.
    table6 = report["table6"]
    assert table6[1]["cells"][0]["r"] == expected["dimension_correlations"]["FA-SR"]["r"]
    assert table6[0]["cells"][0]["r"] == 1.0 and table6[0]["cells"][1] == {"blank": True}
    # Table 3: evaluations per system add up to the sample.
    assert sum(system["evaluations"] for system in report["systems"]) == 13
    assert report["participants"] == 7 and report["administrators"] == 3
    # Screen-outs, withdrawals, pilot: counted, never analysed.
    assert report["exclusions"]["ineligible"] == 1
    assert report["exclusions"]["withdrawn"] == 1
    assert report["exclusions"]["pilot"] == 1
    # Prompt log counts per category.
    blocks = 2 * 7
    assert report["prompts"]["blocks"] == blocks
    assert report["prompts"]["verified"] == 3 * blocks == report["prompts"]["glatteis"]
    assert PromptEntry.objects.filter(interaction__session__is_pilot=True).exists()
    # Completion time of the SHS, in minutes.
    seconds = [
        e.shs_seconds
        for e in Evaluation.objects.submitted().filter(session__is_pilot=False)
        if e.session.step != "withdrawn"
    ]
    assert report["completion"]["mean_minutes"] == pytest.approx(np.mean(seconds) / 60)
    assert report["completion"]["sd_minutes"] == pytest.approx(np.std(seconds, ddof=1) / 60)


def test_feedback_counts_each_administrator_once_with_the_latest_answer(report_job):
    feedback = report_job.report_data["feedback"]
    clarity = next(q for q in feedback["questions"] if q["key"] == "clarity")

    assert feedback["administrators"] == 3 and feedback["sessions"] == 6
    assert sum(option["administrators"] for option in clarity["options"]) == 3
    assert sum(option["sessions"] for option in clarity["options"]) == 6
    no = next(option for option in clarity["options"] if option["code"] == 5)
    assert no["administrators"] == 1 and no["share"] == pytest.approx(1 / 3)
    a01 = next(row for row in feedback["by_administrator"] if row["administrator"] == "A01")
    assert a01["answers"][0] == 5


def test_report_file_is_self_contained_and_states_sample_and_regime(populated, report_job):
    html = report_job.absolute_path.read_text(encoding="utf-8")

    assert "<link" not in html and "<script" not in html and 'src="http' not in html
    images = re.findall(r'<img src="([^"]+)"', html)
    assert len(images) == 8  # Figures 1-5, item distributions, Figure 6, heat map
    assert all(uri.startswith("data:image/png;base64,") for uri in images)
    for heading in ("Table 5", "Figure 6", "Table 6", "Table 3"):
        assert heading in html
    # The sample and prompting regime next to every block of scores.
    assert html.count('class="sample-note"') >= 4
    assert populated.study.prompting_regime in html
    assert "Descriptive only." in html
    assert "It is not a measurement of whether the system is reliable." in html
    # Administrators appear as pseudonyms only.
    for user in populated.experimenters:
        assert user.email not in html and user.last_name not in html


def test_report_page_shows_the_latest_report(populated, report_job, client_for):
    page = client_for("coordinator_a").get(
        reverse("exports:study_report", args=[populated.study.slug])
    )

    html = page.content.decode()
    assert page.status_code == 200
    assert "Correlations between dimensions (paper Table 6)" in html
    assert reverse("exports:job_download", args=[populated.study.slug, report_job.token]) in html
    assert "style=" not in html and "<script>" not in html


@pytest.mark.parametrize("complete_sessions, evaluations", [(0, 0), (0, 1), (1, 2)])
def test_degenerate_studies_render_with_explanations(
    personas, study_a, run_export, client_for, complete_sessions, evaluations
):
    if evaluations:
        populate_study(study_a, sessions=complete_sessions, extras=evaluations == 1)
        if evaluations == 1:  # only the abandoned session's block 1 and the pilot
            assert Evaluation.objects.submitted().filter(session__is_pilot=False).count() == 1

    job = run_export(study_a, "report-html")

    assert job.status == ExportJob.Status.SUCCEEDED, job.error_message
    report = job.report_data
    assert report["n"] == evaluations
    assert report["analysis"]["cronbach_alpha"]["alpha"] is None
    assert report["figures"]["heatmap"] is None
    html = client_for("coordinator_a").get(reverse("exports:study_report", args=[study_a.slug]))
    text = html.content.decode()
    assert html.status_code == 200
    assert "they are shown as “—” until then" in text
    assert "Correlations need at least" in text
    if evaluations == 0:
        assert "No submitted evaluations yet" in text
    if complete_sessions == 0:
        assert "No administrator feedback yet" in text


def test_the_report_counts_prompt_flags_as_the_prompt_log_sheet_does(report_job):
    # The factory logs six prompts per block: one follow-up, two source requests, one challenge.
    prompts = report_job.report_data["prompts"]
    blocks = prompts["blocks"]

    assert (prompts["follow_ups"], prompts["source_requests"], prompts["challenges"]) == (
        blocks,
        2 * blocks,
        blocks,
    )
    assert prompts["verified_per_block"] == prompts["glatteis_per_block"] == 3


def test_signed_numbers_never_show_minus_zero():
    from scoring.templatetags.shs_numbers import signed

    assert signed(-0.001) == "0.00"  # zero carries no sign
    assert signed(-0.25) == "-0.25"
    assert signed(0.5, 1) == "+0.5"
    assert signed(None) == "—"


# --- translated and localised; small samples; internal keys never shown ---------

INTERNAL_KEYS = re.compile(
    r"additions\.|omega_total|cronbach_alpha|paired_item|item_total\.|spearman_brown|"
    r"dimension_correlations|alpha_if_deleted"
)


def visible_text(html: str) -> str:
    html = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    html = re.sub(r'src="data:[^"]+"', "", html)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


REPORT_IN = {
    "de": {
        "item": "Die Antwort war sachlich zuverlässig.",
        "dimension": "Faktische Genauigkeit",
        "feedback": "Waren die SHS-Items für die teilnehmende Person verständlich?",
        "language": "Deutsch",
        "sentence": "Die Werte beschreiben wahrgenommene Zuverlässigkeit",
        "caution": "(kleine Stichprobe)",
        "decimal": ",",
    },
    "fr": {
        "item": "La réponse était factuellement fiable.",
        "dimension": "Précision factuelle",
        "feedback": "Les items de la SHS étaient-ils compréhensibles pour le participant ?",
        "language": "Allemand",
        "sentence": "Les scores décrivent la fiabilité perçue",
        "caution": "(petit échantillon)",
        "decimal": ",",
    },
}
ENGLISH_ONLY = (
    "The response was factually reliable.",
    "Factual Accuracy",
    "Were the SHS items understandable for the participant?",
    "Scores describe perceived reliability",
    "submitted evaluations",
    "Internal consistency and items",
)


@pytest.mark.parametrize("language", ["de", "fr"])
def test_report_file_and_page_are_translated_with_localised_numbers(
    language, populated, run_export, client_for
):
    from django.utils import translation

    # (override also restores the language the request's middleware activates)
    with translation.override(language):
        job = run_export(populated.study, "report-html")
        page = client_for("coordinator_a").get(
            reverse("exports:study_report", args=[populated.study.slug]),
            HTTP_ACCEPT_LANGUAGE=language,
        )
    assert job.status == "succeeded", job.error_message
    alpha = job.report_data["analysis"]["cronbach_alpha"]["alpha"]
    expected = REPORT_IN[language]
    for html in (job.absolute_path.read_text(encoding="utf-8"), page.content.decode()):
        text = visible_text(html)
        for key in ("item", "dimension", "feedback", "language", "sentence", "caution"):
            assert expected[key] in text, key
        for english in ENGLISH_ONLY:
            assert english not in text
        assert f"{alpha:.2f}".replace(".", expected["decimal"]) in text
        assert f"{alpha:.2f}" not in text
        assert not INTERNAL_KEYS.search(text)
    assert f'<html lang="{language}">' in job.absolute_path.read_text(encoding="utf-8")


def test_report_shows_paired_item_p_and_a_small_sample_caution(populated, report_job, client_for):
    report = report_job.report_data
    assert report["n"] < populated.study.small_sample_evaluations == 30
    assert report["analysis"]["small_sample"] == {"threshold": 30, "caution": True}
    text = visible_text(report_job.absolute_path.read_text(encoding="utf-8"))
    # The caution of every analysis (scoring/_analysis.html), with the study's threshold.
    assert "These figures rest on 13 evaluations, fewer than the 30 evaluations" in text
    assert text.count("(small sample)") >= 3  # alpha, Shapiro-Wilk, paired-item r
    assert "read these correlations with caution" in text
    first = report["dimensions"][0]
    assert first["paired_item_p"] == report["analysis"]["paired_item_p"]["FA"]
    r, p = first["paired_item_r"], first["paired_item_p"]
    assert f"{r:+.2f} {'< 0.001' if p < 0.001 else f'{p:.3f}'}" in text

    # A study that asks for fewer evaluations shows no caution.
    populated.study.small_sample_evaluations = 10
    populated.study.save()
    quiet = run_report_again(populated, client_for)
    assert "Small sample" not in quiet and "(small sample)" not in quiet


def run_report_again(populated, client_for) -> str:
    client = client_for("coordinator_a")
    url = reverse("exports:study_report", args=[populated.study.slug])
    client.post(url)
    job = ExportJob.objects.filter(study=populated.study).order_by("-pk").first()
    if not job.is_finished:
        from exports.runner import export_job_run

        export_job_run(job_id=job.pk)
    return visible_text(client.get(url).content.decode())


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_sample_note_counts_read_right_in_the_singular(language):
    from django.utils import translation

    from exports.report.localize import sample_note

    report = {
        "n": 1,
        "participants": 1,
        "administrators": 1,
        "exclusions": {"pilot": 0, "withdrawn": 0, "ineligible": 0},
        "study": {"prompting_regime": "Free prompting."},
    }
    singular = {
        "en": ("1 submitted evaluation from 1 participant and 1 administrator ",),
        "de": ("1 abgegebene Bewertung von 1 teilnehmenden Person und 1 Versuchsleitung ",),
        "fr": ("1 évaluation soumise de 1 participant et 1 administrateur ",),
    }
    with translation.override(language):
        note = sample_note(report)
        plural = sample_note({**report, "n": 2, "participants": 2, "administrators": 2})
    assert singular[language][0] in note
    assert {"en": "2 administrators", "de": "2 Versuchsleitungen", "fr": "2 administrateurs"}[
        language
    ] in plural


def test_a_report_stored_before_translation_renders_translated(report_job):
    from django.utils import translation

    from exports.report.build import render_report_file

    # What an older job stored: no caveat messages, no paired p, no small_sample.
    old = json.loads(json.dumps(report_job.report_data))
    for warning in old["analysis"]["warnings"]:
        warning.pop("message", None)
        warning.pop("params", None)
    old["analysis"].pop("small_sample")
    old["analysis"].pop("paired_item_p")
    for row in old["dimensions"]:
        row.pop("paired_item_p")
    with translation.override("de"):
        html = render_report_file(old, "de")
    assert "Faktische Genauigkeit" in visible_text(html)


def test_the_job_page_of_a_finished_report_reads_as_finished(
    populated, client_for, django_capture_on_commit_callbacks
):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from django.utils import translation

    client = client_for("coordinator_a")
    with translation.override("en"):
        # Given a report that is ready by the time its page loads (the task runs
        # when the request's transaction commits, before the redirect is followed)
        with django_capture_on_commit_callbacks(execute=True):
            posted = client.post(reverse("exports:study_report", args=[populated.study.slug]))
        job = ExportJob.objects.filter(study=populated.study).latest("pk")
        assert job.is_finished
        response = client.get(posted.url)
        # and requested in the afternoon: the English short format ends on "p.m."
        afternoon = datetime(2026, 11, 30, 15, 30, tzinfo=ZoneInfo("Europe/Vienna"))
        ExportJob.objects.filter(pk=job.pk).update(
            created_at=afternoon, expires_at=afternoon.replace(year=2099)
        )
        page = client.get(reverse("exports:job_detail", args=[populated.study.slug, job.token]))
    first, later = visible_text(response.content.decode()), visible_text(page.content.decode())
    # The page the coordinator lands on does not call a ready report "being computed".
    assert "Status: Ready" in first and "Report requested." in first
    assert "being computed" not in first
    # Dates read normally: no sentence adds its period after "p.m.".
    assert "Requested: 11/30/2026 3:30 p.m." in later
    assert "available until 11/30/2099 3:30 p.m." in later
    assert ".." not in later
