"""Taking a participant through the retest (docs/design/validation.md §14.2): finding
their retest by the code they quote at the lab, and storing each block's SHS.

The retest has a step of its own (block 1's SHS, block 2's SHS, complete),
kept on the `Retest` row and changed only under its row lock, as a session's
step is (surveys.protocol.state): a form for another step is refused, the
same form sent twice changes nothing. Scheduling a retest and finding it by
its link is surveys.retests, below the protocol that schedules it.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import Problem, validate
from surveys.models import Retest, RetestEvaluation, Study
from surveys.protocol.curation import participant_code_as_given
from surveys.protocol.state import ProtocolError
from surveys.retests import (
    RETEST_BLOCKS,
    SESSION_RELATED,
    retest_evaluation_for_display,
    retest_is_due,
    with_session,
)
from surveys.scores import scores_in_place

# The step after each SHS step of the retest.
_NEXT_STEP = {
    Retest.Step.BLOCK1_SHS: Retest.Step.BLOCK2_SHS,
    Retest.Step.BLOCK2_SHS: Retest.Step.COMPLETE,
}


def retest_by_code(study: Study, code: str) -> Retest | None:
    """The retest of the study's participant with this code, as quoted at the lab."""
    code = participant_code_as_given(code)
    queryset = Retest.objects.filter(session__study=study, session__participant__code=code)
    return with_session(queryset).first()


def retest_submit(*, retest_id: int, step: str, responses: Mapping[str, object]) -> list[Problem]:
    """Store and score one block's SHS of the retest and move to the next step.

    Returns the problems of invalid or missing answers; then nothing is
    stored. A form of a step the retest has left is refused, unless it
    repeats that block's submission exactly (a double click: nothing to do).
    """
    if step not in RETEST_BLOCKS:
        raise ProtocolError(_("This form does not belong to the retest. Nothing was saved."))
    answers, problems = validate(responses)
    with transaction.atomic():
        retest = (
            Retest.objects.select_for_update(of=("self",))
            .select_related(*SESSION_RELATED)
            .filter(pk=retest_id)
            .first()
        )
        if retest is None:
            # Erased (the participant's data, on request) since the page was read.
            raise ProtocolError(_("This retest no longer exists. Nothing was saved."))
        if not retest_is_due(retest):
            raise ProtocolError(_("The retest is not due yet. Nothing was saved."))
        if retest.step != step:
            _refuse_unless_repeated(retest, step, answers)
            return []
        if problems:
            return problems
        now = timezone.now()
        evaluation = retest_evaluation_for_display(retest)
        for key, answer in zip(ITEM_KEYS, answers, strict=True):
            setattr(evaluation, key, answer)
        evaluation.submitted_at = now
        scored = scores_in_place(evaluation, answers)
        evaluation.save(update_fields=[*ITEM_KEYS, "submitted_at", *scored])
        retest.step = _NEXT_STEP[retest.step]
        if retest.step == Retest.Step.COMPLETE:
            retest.completed_at = now
        retest.save(update_fields=["step", "completed_at"])
    return []


def _refuse_unless_repeated(retest: Retest, step: str, answers: tuple[int, ...] | None) -> None:
    submitted = RetestEvaluation.objects.filter(
        retest=retest, block=RETEST_BLOCKS[step], submitted_at__isnull=False
    ).first()
    if submitted is None:
        raise ProtocolError(
            _("This form belongs to another part of the retest. Nothing was saved; continue here.")
        )
    if answers != tuple(submitted.answers[key] for key in ITEM_KEYS):
        raise ProtocolError(_("These answers were submitted already and can no longer be changed."))
