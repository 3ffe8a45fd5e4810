"""The validation data holds what was submitted by the report's moment, and
every retest already collected (docs/design/validation-analysis.md §14.8): a companion answer
submitted later is left out; retests stay in when the wave is switched off."""

import hashlib
from datetime import timedelta

import numpy as np
from django.utils import timezone

from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.shs import ITEM_KEYS
from surveys.models import CompanionResponse, Evaluation, Retest, RetestEvaluation, Study
from tests.exports.factories import populate_study
from validation.dataset import validation_data

SUS = COMPANION_SCALES["sus"]
AGREE = dict.fromkeys(SUS.item_keys, 4)


def _evaluations(study):
    # In the order validation_data reads them.
    return list(
        Evaluation.objects.submitted()
        .filter(session__study=study, session__is_pilot=False)
        .order_by("session__created_at", "session_id", "block")
    )


def test_a_companion_answer_submitted_after_the_moment_is_left_out(study_a):
    Study.objects.filter(pk=study_a.pk).update(companion_scales=["sus"])
    study_a.refresh_from_db()
    populate_study(study_a, sessions=3, extras=False)
    moment = timezone.now()
    evaluations = _evaluations(study_a)
    late = len(evaluations) - 1
    CompanionResponse.objects.bulk_create(
        CompanionResponse(
            evaluation=evaluation,
            scale="sus",
            answers=AGREE,
            score=SUS.score(AGREE),
            submitted_at=moment + timedelta(minutes=5 if row == late else -5),
        )
        for row, evaluation in enumerate(evaluations)
    )

    data = validation_data(study_a, moment)

    items = data.companion_items["sus"]
    assert np.isnan(items[late]).all()
    assert (items[:late] == 4).all()
    # SUS of all fours: odd items 4 - 1, even 5 - 4, (5 * 3 + 5 * 1) * 2.5 = 50.
    assert np.isnan(data.companion_scores["sus"][late])
    assert (data.companion_scores["sus"][:late] == 50).all()


def _retest(evaluations, submitted):
    session = evaluations[0].session
    retest = Retest.objects.create(
        session=session,
        token_hash=hashlib.sha256(f"t{session.pk}".encode()).hexdigest(),
        due_at=submitted - timedelta(hours=1),
        step=Retest.Step.COMPLETE,
    )
    for evaluation in evaluations[:2]:
        RetestEvaluation.objects.create(
            retest=retest,
            block=evaluation.block,
            system=evaluation.system,
            language=evaluation.language,
            submitted_at=submitted,
            **dict.fromkeys(ITEM_KEYS, 1),
        )


def test_retests_already_collected_stay_when_the_wave_is_switched_off(study_a):
    Study.objects.filter(pk=study_a.pk).update(retest_after_days=14)
    populate_study(study_a, sessions=3, extras=False)
    evaluations = _evaluations(study_a)
    _retest(evaluations, timezone.now() - timedelta(minutes=1))
    Study.objects.filter(pk=study_a.pk).update(retest_after_days=None)
    study_a.refresh_from_db()

    retest = validation_data(study_a, timezone.now()).retest

    assert retest is not None and retest.n == 2
    first = np.array([[e.answers[key] for key in ITEM_KEYS] for e in evaluations[:2]])
    assert (retest.first == first).all() and (retest.second == 1).all()


def test_a_study_without_retests_has_no_pairs(study_a):
    populate_study(study_a, sessions=3, extras=False)

    assert validation_data(study_a, timezone.now()).retest is None
