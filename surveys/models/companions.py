"""Answers to the companion scales given after a block's SHS (docs/design/validation.md §14.1)."""

from django.db import models
from django.utils import timezone

from surveys.models.evaluations import Evaluation


class CompanionResponse(models.Model):
    """One companion scale (SUS, SCS or trust) for one evaluation's system.

    Answers are kept as the scale's item keys and codes ({"sus1": 4, ...});
    the form checks them against the scale's own codes before they are
    stored, and `score` is the scale's published score of them.
    """

    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.CASCADE, related_name="companion_responses"
    )
    scale = models.CharField(max_length=8)
    answers = models.JSONField(default=dict)
    score = models.FloatField(null=True, blank=True)
    first_displayed_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["evaluation_id", "scale"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "scale"], name="one_response_per_scale"),
        ]

    def __str__(self) -> str:
        return f"{self.scale} for evaluation {self.evaluation_id}"
