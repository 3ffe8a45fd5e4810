"""The retest wave (docs/design/validation.md §14.2): the participant returns after the
study's number of days and rates the same systems again."""

from django.db import models
from django.utils import timezone

from scoring.instruments.shs import INSTRUMENT_VERSION
from surveys.models.evaluations import ShsAnswerFields, answers_in_range
from surveys.models.sessions import StudySession
from surveys.models.systems import LLMSystem


class Retest(models.Model):
    """A completed session's retest: due from `due_at`, reached by its link
    (only the SHA-256 of the token is kept) or the participant's code."""

    class Step(models.TextChoices):
        BLOCK1_SHS = "block1_shs", "Block 1: SHS"
        BLOCK2_SHS = "block2_shs", "Block 2: SHS"
        COMPLETE = "complete", "Complete"

    session = models.OneToOneField(StudySession, on_delete=models.CASCADE, related_name="retest")
    token_hash = models.CharField(max_length=64, unique=True)
    due_at = models.DateTimeField()
    step = models.CharField(max_length=12, choices=Step.choices, default=Step.BLOCK1_SHS)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"retest of session {self.session_id}"


class RetestEvaluation(ShsAnswerFields):
    """The SHS given again in the retest, for the system of one block."""

    retest = models.ForeignKey(Retest, on_delete=models.CASCADE, related_name="evaluations")
    block = models.PositiveSmallIntegerField(choices=[(1, "1"), (2, "2")])
    system = models.ForeignKey(LLMSystem, on_delete=models.PROTECT, related_name="+")
    language = models.CharField(max_length=5)
    instrument_version = models.CharField(max_length=20, default=INSTRUMENT_VERSION)
    first_displayed_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["retest_id", "block"]
        constraints = [
            models.UniqueConstraint(fields=["retest", "block"], name="one_retest_per_block"),
            *answers_in_range("retest"),
        ]

    def __str__(self) -> str:
        return f"retest evaluation {self.pk} (block {self.block})"
