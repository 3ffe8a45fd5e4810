"""The validation programme end to end: a simulated study with SUS, SCS and trust, a retest
wave and three languages (simulate_study, the latent model of docs/design/validation-analysis.md
§14.9, through the real protocol over HTTP) yields a report job whose
validation section holds every new figure, each checked here against a
computation written out in this test, and whose CFA recovers the simulated
loadings within their intervals."""

import numpy as np
import pytest
from django.core.management import call_command

from exports.models import ExportJob
from exports.progress import Progress
from exports.report.build import build_report, render_report_file
from exports.runner import Outcome, export_job_run
from exports.services import export_job_create
from scoring.instruments.shs import ITEM_KEYS
from scoring.stats.factors.cfa import shs_layout
from scoring.stats.factors.fit import fit_measurement_model
from surveys.models import Evaluation
from tests.exports.factories import populate_study
from tests.validation.exact import shs_code_covariance
from tests.validation.test_latent_cfa import SYSTEMS, data_with_covariance
from validation.dataset import validation_data
from validation.simulation import parameters as model
from validation.simulation.latent import simulate_latent, to_validation_data

PARTICIPANTS = 40


@pytest.fixture(scope="module")
def estimand() -> dict[str, float]:
    """The loadings ML on the codes estimates (tests/validation/test_latent_cfa.py)."""
    covariance = data_with_covariance(shs_code_covariance(model.DEFAULT))
    fit = fit_measurement_model(covariance, shs_layout("five"))
    return {entry["item"]: entry["estimate"] for entry in fit["loadings"]}


@pytest.fixture
def report(study_a, personas, django_capture_on_commit_callbacks):
    call_command(
        "simulate_study", study_a.slug, "--participants", str(PARTICIPANTS), "--seed", "16",
        "--languages", "en,de,fr", "--companions", "sus,scs,trust", "--retest",
    )  # fmt: skip
    job = export_job_create(
        study=study_a, requested_by=personas["coordinator_a"], fmt="report-html"
    )
    assert export_job_run(job_id=job.pk) == Outcome.SUCCEEDED
    job.refresh_from_db()
    assert job.status == ExportJob.Status.SUCCEEDED and job.progress == 100
    return job


def _alpha(items: np.ndarray) -> float:
    k = items.shape[1]
    return k / (k - 1) * (1 - items.var(axis=0, ddof=1).sum() / items.sum(axis=1).var(ddof=1))


def _shs(answers: np.ndarray) -> np.ndarray:
    return ((answers[:, 0::2] - answers[:, 1::2]) / 4).mean(axis=1)


def _two_way(ratings: np.ndarray) -> tuple[float, float, float]:
    n, k = ratings.shape
    grand = ratings.mean()
    ms_rows = k * ((ratings.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    ms_columns = n * ((ratings.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    residual = ratings - ratings.mean(axis=1, keepdims=True) - ratings.mean(axis=0) + grand
    ms_error = (residual**2).sum() / ((n - 1) * (k - 1))
    return ms_rows, ms_columns, ms_error


def test_the_simulated_study_yields_every_figure_of_the_validation_section(
    report, study_a, estimand
):
    section = report.report_data["validation"]
    study_a.refresh_from_db()  # simulate_study set its scales and its retest
    data = validation_data(study_a, report.created_at.replace(year=2100))
    answers = data.answers.astype(float)
    assert section["n"] == data.n == 2 * PARTICIPANTS
    assert section["skipped"] == {}

    # Reliability: alpha of the keyed items, with a participant-clustered interval.
    keyed = answers * np.where(np.arange(10) % 2 == 0, 1, -1)
    nested = section["nested"]
    assert nested["alpha"]["estimate"] == pytest.approx(_alpha(keyed))
    assert nested["bootstrap"]["seed"] == study_a.random_seed
    assert nested["bootstrap"]["resamples"] == 2000
    assert nested["bootstrap"]["clusters"] == PARTICIPANTS
    low, high = nested["alpha"]["ci95_clustered"]["interval"]
    assert low < nested["alpha"]["estimate"] < high
    # The participant's share, one-way ANOVA ICC(1) with two evaluations each.
    shs = _shs(answers)
    pairs = shs.reshape(PARTICIPANTS, 2)
    msb = 2 * ((pairs.mean(axis=1) - shs.mean()) ** 2).sum() / (PARTICIPANTS - 1)
    msw = ((pairs - pairs.mean(axis=1, keepdims=True)) ** 2).sum() / PARTICIPANTS
    share = nested["participant_share"]["anova"]["icc"]
    assert share == pytest.approx((msb - msw) / (msb + msw))

    # Convergent validity: SHS with each companion, disattenuated by both alphas.
    for key, scale_items in data.companion_items.items():
        pair = section["convergent"]["pairs"]["shs"][key]
        scores = data.companion_scores[key]
        r = np.corrcoef(shs, scores)[0, 1]
        assert pair["r"] == pytest.approx(r)
        keyed_scale = np.where([i.reversed for i in _scale(key).items], -scale_items, scale_items)
        reliability = np.sqrt(_alpha(keyed) * _alpha(keyed_scale))
        assert pair["disattenuated"]["r"] == pytest.approx(r / reliability)

    # Test-retest: ICC(2,1), ICC(3,1) and the Bland-Altman limits of the SHS.
    retest = section["retest"]
    ratings = np.column_stack([_shs(data.retest.first), _shs(data.retest.second)])
    n = len(ratings)
    ms_r, ms_c, ms_e = _two_way(ratings)
    shs_retest = retest["scores"]["shs"]
    assert retest["n"] == n
    assert shs_retest["icc3_1"]["value"] == pytest.approx((ms_r - ms_e) / (ms_r + ms_e))
    icc21 = (ms_r - ms_e) / (ms_r + ms_e + 2 * (ms_c - ms_e) / n)
    assert shs_retest["icc2_1"]["value"] == pytest.approx(icc21)
    difference = ratings[:, 1] - ratings[:, 0]
    bias, sd = difference.mean(), difference.std(ddof=1)
    assert shs_retest["bland_altman"]["bias"] == pytest.approx(bias)
    assert shs_retest["bland_altman"]["upper"] == pytest.approx(bias + 1.959964 * sd, abs=1e-5)
    assert retest["plot_svg"].startswith("<svg")

    # Invariance across the three languages: the groups as the study holds them.
    languages = section["invariance"]["language"]
    counted = {code: int((data.language == code).sum()) for code in ("en", "de", "fr")}
    fitted = {group["label"]: group["n"] for group in languages["groups"]}
    named = {text.split(" ")[0] for text in languages["too_small"]}
    assert set(fitted) | named == set(counted)
    assert all(fitted[code] == counted[code] for code in fitted)

    # 80 evaluations are too few for ten loadings and ten factor correlations:
    # the CFA may fit, or say why not, but never print figures of a failed fit.
    five = section["cfa"]["five"]
    assert (five["problem"] is None) == ("loadings" in five)

    html = render_report_file(report.report_data)
    assert "Validation programme (paper section 8.3)" in html
    assert "Bland-Altman" in html and "<svg" in html


def test_the_report_of_a_large_simulated_study_recovers_the_loadings(study_a, estimand):
    """The report's CFA on 2,000 evaluations drawn by the latent model (the same
    draws as tests/validation/test_latent_cfa.py), stored as the study's own."""
    populate_study(study_a, sessions=1000, extras=False, evaluations_only=True)
    sample = to_validation_data(simulate_latent(1000, seed=1, systems=SYSTEMS, scales=()))
    evaluations = list(
        Evaluation.objects.filter(session__study=study_a).order_by("session_id", "block")
    )
    for evaluation, answers, language in zip(
        evaluations, sample.answers, sample.language, strict=True
    ):
        for key, value in zip(ITEM_KEYS, answers, strict=True):
            setattr(evaluation, key, int(value))
        evaluation.language = language
    Evaluation.objects.bulk_update(evaluations, [*ITEM_KEYS, "language"], batch_size=500)

    cfa = build_report(study_a, Progress(lambda _done: None))["validation"]["cfa"]

    five = cfa["five"]
    assert five["problem"] is None and cfa["n"] == 2000
    for entry in five["loadings"]:
        assert entry["ci95"][0] <= estimand[entry["item"]] <= entry["ci95"][1], entry


def _scale(key):
    from scoring.instruments.companions import COMPANION_SCALES

    return COMPANION_SCALES[key]
