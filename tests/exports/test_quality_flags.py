"""Quality flags (docs/design/analysis.md §8.10) in the export rows and the study report:
constructed speeders, straight-liners, inconsistent answers and blocks with too
few turns, compared with what tests/exports/expected.py works out row by row."""

from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse

from scoring.instruments.shs import DIMENSIONS, ITEM_KEYS, ITEMS
from scoring.scores.engine import score_answers
from surveys.models import Evaluation, InteractionBlock, Transcript, Turn
from surveys.scores import set_scores
from tests.exports.expected import expected_evaluations
from tests.exports.readers import read_csv, read_json, read_xlsx, sheet_dicts
from tests.exports.test_formats import FLAGS, _flag, assert_matches_database

CONSISTENT = [1, -1, 1, -1, 1, -1, 1, -1, 1, -1]  # every pair a = 1, b = -1: c = 0


def _answer(evaluation: Evaluation, answers: list[int], seconds: float = 300) -> None:
    evaluation.__dict__.update(zip(ITEM_KEYS, answers, strict=True))
    evaluation.submitted_at = evaluation.first_displayed_at + timedelta(seconds=seconds)
    set_scores(evaluation, score_answers(answers))
    evaluation.save()


def _transcript(interaction: InteractionBlock, user_turns: int) -> None:
    transcript = Transcript.objects.create(interaction=interaction, source="chat")
    Turn.objects.bulk_create(
        Turn(transcript=transcript, position=position, role=role, text="…")
        for position, role in enumerate(["user", "assistant"] * user_turns, start=1)
    )


@pytest.fixture
def flagged(populated):
    """Study A with one case per flag, every other evaluation unflagged, and
    {name: (session pk, block)} of the constructed cases."""
    sessions = sorted(populated.complete_sessions, key=lambda s: s.pk)
    evaluations = Evaluation.objects.submitted().filter(session__study=populated.study)
    for evaluation in evaluations:
        _answer(evaluation, CONSISTENT)
    cases = {
        "speeder": (sessions[0].pk, 1),
        "just_in_time": (sessions[0].pk, 2),
        "straight_liner": (sessions[1].pk, 1),
        "inconsistent": (sessions[1].pk, 2),
        "transcript_short": (sessions[2].pk, 1),
        "transcript_enough": (sessions[2].pk, 2),
        "log_short": (sessions[3].pk, 1),
        "ended_below_minimum": (sessions[3].pk, 2),
        "nothing_recorded": (sessions[4].pk, 1),
    }
    get = {name: dict(session_id=pk, block=block) for name, (pk, block) in cases.items()}
    # 19.96 s is exported as 20.0 but is under the threshold of 20 s.
    _answer(Evaluation.objects.get(**get["speeder"]), CONSISTENT, seconds=19.96)
    _answer(Evaluation.objects.get(**get["just_in_time"]), CONSISTENT, seconds=20)
    _answer(Evaluation.objects.get(**get["straight_liner"]), [0] * 10)  # consistent (c = 0)
    _answer(Evaluation.objects.get(**get["inconsistent"]), [1, 1, *CONSISTENT[2:]])
    block = {name: InteractionBlock.objects.get(**where) for name, where in get.items()}
    _transcript(block["transcript_short"], user_turns=5)  # its log has the 6 prompts
    _transcript(block["transcript_enough"], user_turns=6)
    block["log_short"].prompts.filter(pk__in=block["log_short"].prompts.all()[:1]).delete()
    block["ended_below_minimum"].prompts.all().delete()
    block["ended_below_minimum"].override_reason = "Participant had to leave"
    block["ended_below_minimum"].save()
    block["nothing_recorded"].prompts.all().delete()
    InteractionBlock.objects.filter(session__study=populated.study).exclude(
        pk__in=[b.pk for b in block.values()]
    ).update(override_reason="")
    return cases


WANT = {
    "speeder": {"flag_speeding": 1},
    "just_in_time": {},
    "straight_liner": {"flag_straight_lining": 1},
    "inconsistent": {"flag_inconsistent_pairs": 1},
    "transcript_short": {"flag_too_few_turns": 1},
    "transcript_enough": {},
    "log_short": {"flag_too_few_turns": 1},
    "ended_below_minimum": {"flag_too_few_turns": 1},
    "nothing_recorded": {"flag_too_few_turns": None},
}


def test_the_constructed_cases_carry_their_flags_and_no_other(populated, flagged):
    expected = expected_evaluations(populated.study)
    for name, key in flagged.items():
        want = dict.fromkeys(FLAGS, 0) | WANT[name]
        assert {flag: expected[key][flag] for flag in FLAGS} == want, name
    others = [row for key, row in expected.items() if key not in flagged.values()]
    assert others and all(row[flag] == 0 for row in others for flag in FLAGS)


def _rows(job, fmt):
    if fmt == "csv":
        return read_csv(job.absolute_path)[1]
    if fmt == "json":
        return read_json(job.absolute_path)["tables"]["evaluations"]
    return sheet_dicts(read_xlsx(job.absolute_path)["Evaluations"])


@pytest.mark.parametrize("fmt", ["csv", "json", "xlsx"])
def test_every_format_exports_the_flags(populated, flagged, run_export, fmt):
    job = run_export(populated.study, fmt)

    assert job.status == "succeeded", job.error_message
    rows = _rows(job, fmt)
    assert_matches_database(rows, populated.study)  # every flag of every row
    flags = {key: sorted(str(_flag(row[key])) for row in rows) for key in FLAGS}
    n = len(rows)
    assert flags["flag_speeding"] == ["0"] * (n - 1) + ["1"]
    assert flags["flag_straight_lining"] == ["0"] * (n - 1) + ["1"]
    assert flags["flag_inconsistent_pairs"] == ["0"] * (n - 1) + ["1"]
    assert flags["flag_too_few_turns"] == ["0"] * (n - 4) + ["1"] * 3 + ["None"]


def test_the_about_sheet_states_the_thresholds(populated, flagged, run_export):
    populated.study.speeding_seconds = 35
    populated.study.save()

    about = read_json(run_export(populated.study, "json").absolute_path)["about"]

    assert "under 35 s" in about["Quality flags"]
    assert "than 6 per block" in about["Quality flags"]


POSITIVE = [ITEM_KEYS.index(d.positive_item) for d in DIMENSIONS]
NEGATIVE = [ITEM_KEYS.index(d.negative_item) for d in DIMENSIONS]


def test_the_report_counts_the_flags_and_analyses_without_them(
    populated, flagged, run_export, client_for
):
    # Some spread among the unflagged evaluations, so that alpha is a number
    rng = np.random.default_rng(5)
    for evaluation in Evaluation.objects.submitted().filter(session__study=populated.study):
        key = (evaluation.session_id, evaluation.block)
        if key not in flagged.values():
            positive = rng.integers(-2, 3, size=5)
            answers = [0] * 10
            for column, (p, n) in enumerate(zip(POSITIVE, NEGATIVE, strict=True)):
                answers[p], answers[n] = int(positive[column]), int(-positive[column])
            _answer(evaluation, answers)

    job = run_export(populated.study, "report-html")

    assert job.status == "succeeded", job.error_message
    quality = job.report_data["quality"]
    expected = expected_evaluations(populated.study)
    n = len(expected)
    counts = {flag["key"]: (flag["flagged"], flag["judged"]) for flag in quality["flags"]}
    assert counts == {
        "speeding": (1, n),
        "straight_lining": (1, n),
        "inconsistent_pairs": (1, n),
        "too_few_turns": (3, n - 1),
    }
    kept = [row for row in expected.values() if not any(row[flag] for flag in FLAGS)]
    assert (quality["n"], quality["kept"], quality["left_out"]) == (n, len(kept), 6)
    # The kept column, computed independently from the rows no flag marks
    answers = np.array([[row[key] for key in ITEM_KEYS] for row in kept])
    items = answers * np.array([item.polarity for item in ITEMS])
    k = items.shape[1]
    alpha = k / (k - 1) * (1 - items.var(0, ddof=1).sum() / items.sum(1).var(ddof=1))
    dimension = (answers[:, POSITIVE] - answers[:, NEGATIVE]) / 4
    figures = {row["figure"]: row for row in quality["figures"]}
    assert figures["alpha"]["kept"] == pytest.approx(alpha)
    assert figures["shs_mean"]["kept"] == pytest.approx(dimension.mean(1).mean())
    assert figures["mean_SR"]["kept"] == pytest.approx(dimension[:, 1].mean())
    analysis = job.report_data["analysis"]
    assert figures["alpha"]["all"] == analysis["cronbach_alpha"]["alpha"]
    assert figures["shs_mean"]["all"] == analysis["overall"]["mean"]
    # The one presentation: the file and the study page show the same section
    page = client_for("coordinator_a").get(
        reverse("exports:study_report", args=[populated.study.slug])
    )
    for html in (job.absolute_path.read_text(encoding="utf-8"), page.content.decode()):
        assert 'id="quality"' in html
        assert f"3 of {n - 1}" in html and f"6 of {n}" in html
        assert f"Flagged left out (N = {len(kept)})" in html
        assert f"All evaluations (N = {n})" in html
        assert "Neither column shows that a system is reliable" in html


def test_a_report_stored_before_the_flags_still_renders(populated, run_export, client_for):
    job = run_export(populated.study, "report-html")
    del job.report_data["quality"]
    job.save()

    page = client_for("coordinator_a").get(
        reverse("exports:study_report", args=[populated.study.slug])
    )

    assert page.status_code == 200 and 'id="quality"' not in page.content.decode()


def test_the_section_reads_in_the_reports_language(populated, flagged, run_export):
    from django.utils import translation

    with translation.override("de"):
        job = run_export(populated.study, "report-html")

    html = job.absolute_path.read_text(encoding="utf-8")
    assert "Qualitätsmarkierungen" in html and "Ohne markierte (N =" in html
    assert "Zu schnell: SHS in weniger als 20 s abgeschickt" in html
    assert "Quality flags" not in html
