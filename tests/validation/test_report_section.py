"""The study report's validation section (docs/design/validation-analysis.md §14.8): built from the
study's own rows, every part present exactly when its data is, the figures the
same as an independent computation over the same rows, and a fixed number of
queries whatever the study's size."""

import hashlib
import random
import re
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from exports.progress import Progress
from exports.report.build import build_report, render_report_file
from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.shs import ITEM_KEYS
from surveys.models import CompanionResponse, Evaluation, Retest, RetestEvaluation
from tests.exports.factories import populate_study
from validation.dataset import validation_data
from validation.report import validation_report

SUS = COMPANION_SCALES["sus"]


def _evaluations(study):
    return list(
        Evaluation.objects.submitted()
        .filter(session__study=study, session__is_pilot=False)
        .exclude(session__step__in=["withdrawn", "ineligible"])
        .order_by("session__created_at", "session_id", "block")
    )


def _add_companions(evaluations, rng):
    # SUS answers that lean with the SHS answers, so the correlation is not zero.
    rows = []
    for evaluation in evaluations:
        lean = sum(evaluation.answers[key] * (1 if n % 2 else -1) for n, key in
                   enumerate(ITEM_KEYS, start=1)) / 10  # fmt: skip
        given = {}
        for item in SUS.items:
            code = min(5, max(1, round(3 + lean * (-1 if item.reversed else 1) + rng.gauss(0, 1))))
            given[item.key] = code
        rows.append(
            CompanionResponse(
                evaluation=evaluation,
                scale="sus",
                answers=given,
                score=SUS.score(given),
                submitted_at=evaluation.submitted_at,
            )
        )
    CompanionResponse.objects.bulk_create(rows)


def _add_retests(evaluations, rng):
    # Retests submitted a minute ago: the report counts what was submitted by its moment.
    submitted = timezone.now() - timedelta(minutes=1)
    by_session = {}
    for evaluation in evaluations:
        by_session.setdefault(evaluation.session, []).append(evaluation)
    for number, (session, pair) in enumerate(by_session.items()):
        if number % 2:
            continue
        retest = Retest.objects.create(
            session=session,
            token_hash=hashlib.sha256(f"t{session.pk}".encode()).hexdigest(),
            due_at=submitted - timedelta(hours=1),
            step=Retest.Step.COMPLETE,
        )
        for evaluation in pair:
            again = {
                k: max(-2, min(2, v + rng.choice((-1, 0, 0, 1))))
                for k, v in evaluation.answers.items()
            }
            RetestEvaluation.objects.create(
                retest=retest,
                block=evaluation.block,
                system=evaluation.system,
                language=evaluation.language,
                submitted_at=submitted,
                **again,
            )


@pytest.fixture
def validation_study(study_a):
    study_a.languages = ["en", "de"]
    study_a.companion_scales = ["sus"]
    study_a.retest_after_days = 14
    study_a.invariance_grouping = "gender"
    study_a.save()
    populate_study(study_a, sessions=40, extras=False)
    rng = random.Random(3)
    evaluations = _evaluations(study_a)
    _add_companions(evaluations, rng)
    _add_retests(evaluations, rng)
    return study_a


def _shs(answers: np.ndarray) -> np.ndarray:
    # The SHS written out from its definition (docs/design/instrument.md §2.3), not from the engine.
    positive, negative = answers[:, 0::2], answers[:, 1::2]
    return ((positive - negative) / 4).mean(axis=1)


def _sus(items: np.ndarray) -> np.ndarray:
    total = np.zeros(len(items))
    for column in range(10):
        total += items[:, column] - 1 if column % 2 == 0 else 5 - items[:, column]
    return total * 2.5


def test_every_part_is_there_and_agrees_with_an_independent_computation(validation_study):
    report = build_report(validation_study, Progress(lambda _done: None))
    validation = report["validation"]
    evaluations = _evaluations(validation_study)
    answers = np.array([[e.answers[k] for k in ITEM_KEYS] for e in evaluations], dtype=float)

    assert validation["n"] == len(evaluations) == report["n"]
    assert validation["participants"] == len({e.session_id for e in evaluations})
    assert set(validation) >= {"cfa", "invariance", "convergent", "retest", "nested"}

    sus = {r.evaluation_id: r.answers for r in CompanionResponse.objects.all()}
    sus_items = np.array([[sus[e.pk][k] for k in SUS.item_keys] for e in evaluations], dtype=float)
    pair = validation["convergent"]["pairs"]["shs"]["sus"]
    assert pair["n"] == len(evaluations)
    assert pair["r"] == pytest.approx(np.corrcoef(_shs(answers), _sus(sus_items))[0, 1])

    alpha = validation["nested"]["alpha"]["estimate"]
    keyed = answers.copy()
    keyed[:, 1::2] *= -1
    k = keyed.shape[1]
    expected = k / (k - 1) * (1 - keyed.var(axis=0, ddof=1).sum() / keyed.sum(axis=1).var(ddof=1))
    assert alpha == pytest.approx(expected)

    retests = RetestEvaluation.objects.all()
    first_of = {(e.session_id, e.block): e for e in evaluations}
    first = np.array(
        [[first_of[(r.retest.session_id, r.block)].answers[k] for k in ITEM_KEYS] for r in retests],
        dtype=float,
    )  # noqa: E501
    second = np.array([[getattr(r, k) for k in ITEM_KEYS] for r in retests], dtype=float)
    assert validation["retest"]["n"] == len(retests)
    days = [
        (r.submitted_at - first_of[(r.retest.session_id, r.block)].submitted_at) for r in retests
    ]
    mean_days = np.mean([d.total_seconds() for d in days]) / 86_400
    assert validation["retest"]["mean_days"] == pytest.approx(mean_days)
    # ICC(3,1) from the two-way ANOVA of targets x occasions, written out.
    ratings = np.column_stack([_shs(first), _shs(second)])
    n, occasions = ratings.shape
    grand = ratings.mean()
    ms_rows = occasions * ((ratings.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    residual = ratings - ratings.mean(axis=1, keepdims=True) - ratings.mean(axis=0) + grand
    ms_error = (residual**2).sum() / ((n - 1) * (occasions - 1))
    icc31 = (ms_rows - ms_error) / (ms_rows + (occasions - 1) * ms_error)
    assert validation["retest"]["scores"]["shs"]["icc3_1"]["value"] == pytest.approx(icc31)
    assert validation["retest"]["plot_svg"].startswith("<svg")


def test_invariance_groups_by_language_and_by_the_coordinators_grouping(validation_study):
    validation = validation_report(validation_study, _now())
    by_gender = validation["invariance"]["gender"]
    evaluations = _evaluations(validation_study)
    genders = [
        getattr(getattr(e.session, "demographics", None), "gender", None) for e in evaluations
    ]
    ungrouped = sum(1 for g in genders if g in (None, 9))
    assert by_gender["without_group"] == ungrouped
    seen = {g["label"] for g in by_gender["groups"]} | {
        g["label"] for g in by_gender["too_small_groups"]
    }
    # Named as the codebook names the answers (English in the JSON), not by their codes.
    codebook = dict(DEMOGRAPHICS.question("gender").choices("en"))
    assert seen == {codebook[g] for g in genders if g not in (None, 9)}
    assert "language" in validation["invariance"]
    german = render_report_file(build_report(validation_study, Progress(lambda _done: None)), "de")
    invariance = german.split('id="validation-invariance"')[1].split("<h3")[0]
    german_labels = dict(DEMOGRAPHICS.question("gender").choices("de"))
    assert "Über die Geschlechter" in invariance
    for code in {g for g in genders if g not in (None, 9)}:
        assert f"{german_labels[code]} (n = " in invariance
    assert not re.search(r"\b[123] \(n ?=", invariance)


def test_a_failed_or_unidentified_fit_prints_no_figures(validation_study):
    cfa = validation_report(validation_study, _now())["cfa"]
    for model in ("five", "one"):
        fit = cfa[model]
        assert (fit["problem"] is None) == ("chi2" in fit)


def test_a_study_without_companions_or_retest_names_what_it_skipped(study_a):
    populate_study(study_a, sessions=20, extras=False)
    validation = validation_report(study_a, _now())
    assert "convergent" not in validation and "retest" not in validation
    languages = {e.language for e in _evaluations(study_a)}
    assert set(validation["skipped"]) == {"convergent", "retest"} | (
        {"invariance"} if len(languages) == 1 else set()
    )
    assert ("invariance" in validation) == (len(languages) > 1)
    assert "nested" in validation and "cfa" in validation


def test_a_small_study_gets_no_section(study_a):
    populate_study(study_a, sessions=5, extras=False)
    report = build_report(study_a, Progress(lambda _done: None))
    assert "validation" not in report
    assert "Validation programme" not in render_report_file(report)


def test_the_section_renders_in_the_report_file(validation_study):
    report = build_report(validation_study, Progress(lambda _done: None))
    html = render_report_file(report, "de")
    assert "Validation programme" in html or "Validierungsprogramm" in html
    assert "<svg" in html


@pytest.mark.parametrize("sessions", [10, 30])
def test_the_data_is_read_in_a_fixed_number_of_queries(
    study_a, sessions, django_assert_num_queries
):
    study_a.companion_scales = ["sus"]
    study_a.retest_after_days = 7
    study_a.invariance_grouping = "age_band"
    study_a.save()
    populate_study(study_a, sessions=sessions, extras=False)
    with django_assert_num_queries(3):
        data = validation_data(study_a, _now())
    assert data.n > 0


def _now():
    return timezone.now()


def test_the_section_in_german_has_translated_sentences_and_no_placeholders(validation_study):
    from django.template.loader import render_to_string
    from django.utils import translation

    validation = validation_report(validation_study, _now())
    # A retest score whose reasons are shown although it is estimable, and one that
    # is not: the defect printed "needs at least {needed} retest pairs, got {n}".
    shs = validation["retest"]["scores"]["shs"]
    shs["reasons"].append(
        {"reason": "x", "message": "needs at least {needed} retest pairs, got {n}",
         "params": {"needed": 10, "n": 3}}
    )  # fmt: skip
    validation["retest"]["mean_days"] = None
    with translation.override("de"):
        html = render_to_string("validation/_validation.html", {"validation": validation})
    assert "{" not in html.replace("{%", "")
    assert "needs at least" not in html and "got 3" not in html
    pair = validation["convergent"]["pairs"]["shs"]["sus"]
    assert pair["explanation"].split(" ")[0] not in html  # "Even"/"Corrected" is English
    assert "Varianz" in html  # the verdict sentence, translated
    assert "nicht bekannt" in html  # the retest pairs without days
    # The clustered intervals of r and of the disattenuated r are printed.
    from scoring.web import numbers

    with translation.override("de"):
        assert numbers.interval(pair["ci95_clustered"]["interval"]) in html
        assert numbers.interval(pair["disattenuated"]["ci95_clustered"]["interval"]) in html
        assert numbers.interval(shs["bland_altman"]["bias_ci"]) in html
        # The retest ICCs: the unit of the ICC said, the clustered intervals beside.
        assert numbers.interval(shs["icc2_1"]["ci95_clustered"]["interval"]) in html
        assert numbers.interval(shs["icc3_1"]["ci95_clustered"]["interval"]) in html
    assert "Einheit des ICC ist das Retest-Paar" in html and "Paare (Teilnehmende)" in html
    assert "Reliabilitäten neu geschätzt" in html  # the verdict's interval, named
