"""The joint-use table of paper 9.2 (docs/design/criterion.md §13.4): its figures against an
independent computation, the divergence marker on either side of its edges, the
warning below 30 participants, and a fixed number of queries."""

import json
from datetime import date, timedelta

import numpy as np
import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation
from scipy import stats

from criterion.joint_use.table import MIN_PARTICIPANTS, joint_use_table
from criterion.models import AutomatedResult
from scoring.instruments.shs import ITEM_KEYS
from surveys.models import Evaluation, LLMSystem
from surveys.steps import Step

# Item columns of the five dimensions, positive and negative (q1/q2 FA ... q9/q10 RG).
POSITIVE = [0, 2, 4, 6, 8]
NEGATIVE = [1, 3, 5, 7, 9]
NEUTRAL = [0] * 10


def answers_with(dp: int) -> list[int]:
    """Neutral answers except the DP pair: q7 - q8 = dp (DP mean dp / 4)."""
    answers = list(NEUTRAL)
    answers[6], answers[7] = (dp, 0) if dp >= 0 else (0, -dp)
    return answers


def _evaluation(session, block, system, answers, submitted=True) -> Evaluation:
    shown = timezone.now() - timedelta(minutes=30)
    return Evaluation.objects.create(
        session=session,
        block=block,
        system=system,
        language="en",
        first_displayed_at=shown,
        submitted_at=shown + timedelta(minutes=4) if submitted else None,
        **dict(zip(ITEM_KEYS, answers, strict=True)),
    )


def rate(make_session, first, first_answers, second, second_answers=None, **fields):
    """One participant's session: block 1 rates `first`, block 2 `second` (if answered)."""
    session = make_session(first_system=first, second_system=second, step=Step.COMPLETE, **fields)
    _evaluation(session, 1, first, first_answers)
    if second_answers is not None:
        _evaluation(session, 2, second, second_answers)
    return session


def record(system, score, *, low=0.0, high=1.0, higher_is_better=True, benchmark="FActScore",
           day=date(2026, 1, 15)) -> AutomatedResult:  # fmt: skip
    return AutomatedResult.objects.create(
        system=system,
        benchmark=benchmark,
        score=score,
        scale_min=low,
        scale_max=high,
        higher_is_better=higher_is_better,
        measured_on=day,
        source="own run",
    )


def row_of(table: dict, system) -> dict:
    return next(row for row in table["systems"] if row["id"] == system.pk)


@pytest.fixture
def systems(study_a):
    return list(study_a.systems.order_by("name"))


def test_means_and_intervals_match_an_independent_computation(study_a, systems, make_session):
    # Given three systems rated in pairs, and rows that must not count: a pilot
    # session, a withdrawn one and an SHS form opened but never submitted.
    rng = np.random.default_rng(2026)
    given: dict[int, list[list[int]]] = {system.pk: [] for system in systems[:3]}
    for number in range(15):
        first, second = systems[number % 3], systems[(number + 1) % 3]
        a, b = rng.integers(-2, 3, size=(2, 10)).tolist()
        rate(make_session, first, a, second, b)
        given[first.pk].append(a)
        given[second.pk].append(b)
    rate(make_session, systems[0], [2] * 10, systems[1], [2] * 10, is_pilot=True)
    withdrawn = make_session(first_system=systems[0], second_system=systems[1])
    _evaluation(withdrawn, 1, systems[0], [-2] * 10)
    withdrawn.step = Step.WITHDRAWN
    withdrawn.save()
    open_form = rate(make_session, systems[2], [1] * 10, systems[0])
    _evaluation(open_form, 2, systems[0], [-2] * 10, submitted=False)

    table = joint_use_table(study_a)

    json.dumps(table)  # JSON-safe: the report job stores it
    assert [d["key"] for d in table["dimensions"]] == ["FA", "SR", "LC", "DP", "RG"]
    for system in systems[:3]:
        raw = np.array(given[system.pk] + ([[1] * 10] if system == systems[2] else []))
        differences = raw[:, POSITIVE] - raw[:, NEGATIVE]
        shs = differences.sum(axis=1) / 20
        low, high = stats.t.interval(0.95, len(shs) - 1, loc=shs.mean(), scale=stats.sem(shs))
        row = row_of(table, system)
        assert row["evaluations"] == len(raw)
        assert row["participants"] == len(raw)  # one evaluation of a system per session
        assert row["shs_mean"] == pytest.approx(shs.mean(), abs=1e-12)
        assert row["shs_sd"] == pytest.approx(shs.std(ddof=1), abs=1e-12)
        assert row["shs_ci95"] == pytest.approx([low, high], abs=1e-12)
        means = differences.mean(axis=0) / 4
        assert [row["dimension_means"][key] for key in ("FA", "SR", "LC", "DP", "RG")] == (
            pytest.approx(means.tolist(), abs=1e-12)
        )
    # A system nobody rated: no figures, nothing to judge.
    untouched = row_of(table, systems[4])
    assert untouched["evaluations"] == untouched["participants"] == 0
    assert untouched["shs_mean"] is None and untouched["shs_ci95"] is None
    assert untouched["divergence"]["flag"] is None


@pytest.mark.parametrize(
    ("score", "higher_is_better", "dp", "flagged"),
    [
        (0.75, True, 0, True),  # both edges reached: normalised 0.75, DP mean 0
        (0.25, False, -1, True),  # lower is better: 0.25 is 0.75 of the way to the best end
        (0.7499, True, -2, False),  # just below the automated edge
        (0.26, False, -2, False),
        (1.0, True, 1, False),  # DP mean +0.25: errors judged easy to catch
    ],
)
def test_divergence_on_either_side_of_its_edges(
    study_a, systems, make_session, score, higher_is_better, dp, flagged
):
    target, other = systems[0], systems[1]
    rate(make_session, target, answers_with(dp), other, NEUTRAL)
    rate(make_session, target, answers_with(dp), other, NEUTRAL)
    record(target, score, higher_is_better=higher_is_better)

    row = row_of(joint_use_table(study_a), target)

    assert row["dimension_means"]["DP"] == dp / 4
    assert row["divergence"]["flag"] is flagged
    assert row["divergence"]["benchmarks"] == (["FActScore"] if flagged else [])
    html = render_to_string("criterion/_joint_use.html", {"joint_use": joint_use_table(study_a)})
    assert ("Proposition, not result" in html) is flagged
    assert ("whose errors are hard for users to catch" in html) is flagged


def test_divergence_reads_the_latest_result_of_each_benchmark(study_a, systems, make_session):
    target, other = systems[0], systems[1]
    rate(make_session, target, answers_with(-2), other, NEUTRAL)
    record(target, 0.95, day=date(2025, 6, 1))
    record(target, 0.40, day=date(2026, 2, 1))  # the newer run of the same benchmark
    record(target, 12.0, low=0, high=100, higher_is_better=False, benchmark="HaluEval errors")

    row = row_of(joint_use_table(study_a), target)

    assert [(r["benchmark"], r["score"]) for r in row["automated"]] == [
        ("FActScore", 0.40),
        ("HaluEval errors", 12.0),
    ]
    assert row["automated"][1]["normalised"] == pytest.approx(0.88)
    assert row["divergence"] == {"flag": True, "benchmarks": ["HaluEval errors"]}


def test_a_system_rated_by_fewer_than_30_participants_carries_a_warning(
    study_a, systems, make_session
):
    few, enough = systems[0], systems[1]
    for _number in range(MIN_PARTICIPANTS - 1):
        rate(make_session, few, NEUTRAL, enough, NEUTRAL)
    rate(make_session, enough, NEUTRAL, systems[2], NEUTRAL)

    table = joint_use_table(study_a)
    html = render_to_string("criterion/_joint_use.html", {"joint_use": table})

    assert row_of(table, few)["participants"] == 29 and row_of(table, few)["few_participants"]
    assert row_of(table, enough)["participants"] == 30
    assert not row_of(table, enough)["few_participants"]
    assert f"{few.name}: only 29 participants rated this system" in html
    assert f"{enough.name}: only" not in html
    # The non-claims stand next to the table whatever it shows.
    assert "is not proof that a system is reliable" in html
    assert "No criterion validity is established here" in html
    assert "a t interval" in html


def _queries(study) -> int:
    with CaptureQueriesContext(connection) as captured:
        joint_use_table(study)
    return len(captured)


def test_a_fixed_number_of_queries_whatever_the_size(study_a, systems, make_session):
    rate(make_session, systems[0], NEUTRAL, systems[1], NEUTRAL)
    record(systems[0], 0.9)
    small = _queries(study_a)
    for number in range(4):
        systems.append(LLMSystem.objects.create(study=study_a, name=f"Added {number}"))
    for number in range(18):
        first, second = systems[number % 9], systems[(number + 1) % 9]
        rate(make_session, first, NEUTRAL, second, NEUTRAL)
        record(first, 0.5, benchmark=f"benchmark {number}")

    assert small == _queries(study_a) == 3


def test_the_partial_speaks_the_readers_language(study_a, systems, make_session):
    rate(make_session, systems[0], answers_with(-1), systems[1], NEUTRAL)
    record(systems[0], 0.9)
    table = joint_use_table(study_a)

    with translation.override("de"):
        html = render_to_string("criterion/_joint_use.html", {"joint_use": table})

    assert "Proposition, kein Ergebnis" in html
    assert 'title="Täuschungspotenzial"' in html
    assert "−0,25" in html or "-0,25" in html  # DP mean, German decimal comma
