from django.conf import settings
from django.db import models
from django.utils import timezone

from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import (
    INSTRUMENT_VERSION,
    ITEM_KEYS,
    MAX_ANSWER,
    MIN_ANSWER,
)
from scoring.scores.engine import SCORE_COLUMNS
from surveys.models.protocol_fields import PROTOCOL_LENGTH, Protocol
from surveys.models.sessions import StudySession
from surveys.models.systems import LLMSystem


def _answer_field():
    return models.SmallIntegerField(null=True, blank=True)


# The figures kept as text, with their field lengths; every other figure is a number.
_TEXT_FIGURES = {"band": 12, "flagged_pairs": 20}


def _score_field(column: str) -> models.Field:
    if column in _TEXT_FIGURES:
        return models.CharField(max_length=_TEXT_FIGURES[column], blank=True)
    return models.FloatField(null=True, blank=True)


def _in_range(field: str, prefix: str = "evaluation") -> models.CheckConstraint:
    return models.CheckConstraint(
        condition=models.Q(**{f"{field}__isnull": True})
        | models.Q(**{f"{field}__gte": MIN_ANSWER, f"{field}__lte": MAX_ANSWER}),
        name=f"{prefix}_{field}_in_range",
    )


def answers_in_range(prefix: str) -> list[models.CheckConstraint]:
    """The database's own guard on each of the ten answers (1-5 or empty)."""
    return [_in_range(key, prefix) for key in ITEM_KEYS]


class ShsAnswerFields(models.Model):
    """The ten answers and the engine's figures: one SHS administration's data,
    shared by the block's evaluation and its retest (docs/design/validation.md §14.2)."""

    q1 = _answer_field()
    q2 = _answer_field()
    q3 = _answer_field()
    q4 = _answer_field()
    q5 = _answer_field()
    q6 = _answer_field()
    q7 = _answer_field()
    q8 = _answer_field()
    q9 = _answer_field()
    q10 = _answer_field()

    # One field per figure of the scoring engine, named by its column, so the
    # engine's list is the only one (vars() here is the namespace the model is
    # made from). A new figure is then a new field, and a migration.
    vars().update({column: _score_field(column) for column in SCORE_COLUMNS})
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def answers(self) -> dict[str, int | None]:
        return {key: getattr(self, key) for key in ITEM_KEYS}


class EvaluationQuerySet(models.QuerySet):
    def submitted(self):
        return self.filter(submitted_at__isnull=False)

    def unscored(self):
        return self.submitted().filter(scored_at__isnull=True)


class Evaluation(ShsAnswerFields):
    """One SHS administration: one participant, one system, one block.

    The row exists from the moment the form is first shown, so answers are
    saved as they are given; it is final once `submitted_at` is set. The
    scores are filled in by a Celery task after the submission commits.
    """

    session = models.ForeignKey(StudySession, on_delete=models.CASCADE, related_name="evaluations")
    block = models.PositiveSmallIntegerField(choices=[(1, "1"), (2, "2")])
    system = models.ForeignKey(LLMSystem, on_delete=models.PROTECT, related_name="evaluations")
    language = models.CharField(max_length=5)
    instrument_version = models.CharField(max_length=20, default=INSTRUMENT_VERSION)
    # The study's protocol variant when the SHS was first shown (docs/design/remote.md
    # §11.5): copied, so a later edit of the study cannot rewrite what it was given under.
    protocol = models.CharField(
        max_length=PROTOCOL_LENGTH, choices=Protocol.choices, default=Protocol.TWO_CATEGORY
    )
    first_displayed_at = models.DateTimeField(default=timezone.now)
    last_answered_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # The sequence number of the autosave each item's answer came from: saves
    # sent a few ms apart may arrive out of order, and an older one must not
    # overwrite a newer answer. {"q1": 3, ...}
    answer_sequence = models.JSONField(default=dict, blank=True)

    objects = EvaluationQuerySet.as_manager()

    class Meta:
        ordering = ["session_id", "block"]
        constraints = [
            models.UniqueConstraint(fields=["session", "block"], name="one_evaluation_per_block"),
            *answers_in_range("evaluation"),
        ]

    def __str__(self) -> str:
        return f"evaluation {self.pk} (session {self.session_id}, block {self.block})"

    @property
    def is_submitted(self) -> bool:
        return self.submitted_at is not None

    @property
    def shs_seconds(self) -> float | None:
        """Time from first display to submission (paper: 4.2 min, SD 1.8)."""
        if self.submitted_at is None:
            return None
        return (self.submitted_at - self.first_displayed_at).total_seconds()


class EvaluationCorrection(models.Model):
    """Audit record of a coordinator's correction to a submitted answer."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="corrections")
    item = models.CharField(max_length=4, choices=[(key, key) for key in ITEM_KEYS])
    old_value = models.SmallIntegerField(null=True)
    new_value = models.SmallIntegerField()
    reason = models.TextField()
    corrected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    corrected_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["corrected_at"]

    def __str__(self) -> str:
        return f"{self.item}: {self.old_value} → {self.new_value}"


def _coded_fields(questionnaire) -> dict[str, models.Field]:
    """One coded field per question, named by its key: the protocol stores and
    the exports read the answers by the questionnaire's keys, so the fields
    come from the questionnaire rather than a copy of its list."""
    return {
        question.key: models.PositiveSmallIntegerField(choices=question.choices("en"))
        for question in questionnaire
    }


class FeedbackResponse(models.Model):
    """The experimenter's administrator feedback (docs/design/instrument.md §3.2) for one
    session."""

    session = models.OneToOneField(StudySession, on_delete=models.CASCADE, related_name="feedback")
    experimenter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="feedback_responses"
    )
    vars().update(_coded_fields(FEEDBACK))
    submitted_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"feedback for session {self.session_id}"


class DemographicsResponse(models.Model):
    """The participant's demographics (docs/design/instrument.md §3.3); 9 = prefer not to say."""

    session = models.OneToOneField(
        StudySession, on_delete=models.CASCADE, related_name="demographics"
    )
    vars().update(_coded_fields(DEMOGRAPHICS))
    submitted_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"demographics of session {self.session_id}"
