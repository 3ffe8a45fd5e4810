from django.conf import settings
from django.db import models
from django.utils import timezone

from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import (
    DIMENSION_KEYS,
    INSTRUMENT_VERSION,
    ITEM_KEYS,
    MAX_ANSWER,
    MIN_ANSWER,
)
from surveys.models.sessions import StudySession
from surveys.models.studies import LLMSystem


def _answer_field():
    return models.SmallIntegerField(null=True, blank=True)


def _in_range(field: str) -> models.CheckConstraint:
    return models.CheckConstraint(
        condition=models.Q(**{f"{field}__isnull": True})
        | models.Q(**{f"{field}__gte": MIN_ANSWER, f"{field}__lte": MAX_ANSWER}),
        name=f"evaluation_{field}_in_range",
    )


class EvaluationQuerySet(models.QuerySet):
    def submitted(self):
        return self.filter(submitted_at__isnull=False)

    def unscored(self):
        return self.submitted().filter(scored_at__isnull=True)


class Evaluation(models.Model):
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
    first_displayed_at = models.DateTimeField(default=timezone.now)
    last_answered_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # The sequence number of the autosave each item's answer came from: saves
    # sent a few ms apart may arrive out of order, and an older one must not
    # overwrite a newer answer. {"q1": 3, ...}
    answer_sequence = models.JSONField(default=dict, blank=True)

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

    s_FA = models.FloatField(null=True, blank=True)
    s_SR = models.FloatField(null=True, blank=True)
    s_LC = models.FloatField(null=True, blank=True)
    s_DP = models.FloatField(null=True, blank=True)
    s_RG = models.FloatField(null=True, blank=True)
    c_FA = models.FloatField(null=True, blank=True)
    c_SR = models.FloatField(null=True, blank=True)
    c_LC = models.FloatField(null=True, blank=True)
    c_DP = models.FloatField(null=True, blank=True)
    c_RG = models.FloatField(null=True, blank=True)
    shs = models.FloatField(null=True, blank=True)
    shs100 = models.FloatField(null=True, blank=True)
    band = models.CharField(max_length=12, blank=True)
    flagged_pairs = models.CharField(max_length=20, blank=True)
    scored_at = models.DateTimeField(null=True, blank=True)

    objects = EvaluationQuerySet.as_manager()

    class Meta:
        ordering = ["session_id", "block"]
        constraints = [
            models.UniqueConstraint(fields=["session", "block"], name="one_evaluation_per_block"),
            *[_in_range(key) for key in ITEM_KEYS],
        ]

    def __str__(self) -> str:
        return f"evaluation {self.pk} (session {self.session_id}, block {self.block})"

    @property
    def answers(self) -> dict[str, int | None]:
        return {key: getattr(self, key) for key in ITEM_KEYS}

    @property
    def is_submitted(self) -> bool:
        return self.submitted_at is not None

    @property
    def shs_seconds(self) -> float | None:
        """Time from first display to submission (paper: 4.2 min, SD 1.8)."""
        if self.submitted_at is None:
            return None
        return (self.submitted_at - self.first_displayed_at).total_seconds()

    SCORE_FIELDS = (
        *(f"s_{key}" for key in DIMENSION_KEYS),
        *(f"c_{key}" for key in DIMENSION_KEYS),
        "shs",
        "shs100",
        "band",
        "flagged_pairs",
    )


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


def _coded_field(question):
    return models.PositiveSmallIntegerField(choices=question.choices("en"))


class FeedbackResponse(models.Model):
    """The experimenter's administrator feedback (SPEC 2.2) for one session."""

    session = models.OneToOneField(StudySession, on_delete=models.CASCADE, related_name="feedback")
    experimenter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="feedback_responses"
    )
    clarity = _coded_field(FEEDBACK.question("clarity"))
    relevance = _coded_field(FEEDBACK.question("relevance"))
    response_options = _coded_field(FEEDBACK.question("response_options"))
    explanation_needed = _coded_field(FEEDBACK.question("explanation_needed"))
    demographics_length = _coded_field(FEEDBACK.question("demographics_length"))
    submitted_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"feedback for session {self.session_id}"


class DemographicsResponse(models.Model):
    """The participant's demographics (SPEC 2.3); 9 = prefer not to say."""

    session = models.OneToOneField(
        StudySession, on_delete=models.CASCADE, related_name="demographics"
    )
    age_band = _coded_field(DEMOGRAPHICS.question("age_band"))
    gender = _coded_field(DEMOGRAPHICS.question("gender"))
    education = _coded_field(DEMOGRAPHICS.question("education"))
    first_language = _coded_field(DEMOGRAPHICS.question("first_language"))
    llm_use = _coded_field(DEMOGRAPHICS.question("llm_use"))
    submitted_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"demographics of session {self.session_id}"
