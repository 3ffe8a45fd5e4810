"""What the criterion-validity study keeps (docs/design/criterion.md §13): the
pre-registration and its versions, the annotators' objective measures of each
transcript with the imports that brought them, and the automated factuality
results recorded per system for the joint-use report (paper sections 8.2, 9.2).

Nothing here names a participant: annotations are keyed by transcript, and
annotators by a pseudonym the coordinator chooses.
"""

import hashlib
import json

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from surveys.models import LLMSystem, Study, Transcript


class Sidedness(models.TextChoices):
    ONE_SIDED = "one_sided", _("one-sided (in the predicted direction)")
    TWO_SIDED = "two_sided", _("two-sided")


class H3Predictor(models.TextChoices):
    DECEPTIVENESS = "DP", _("the Deceptiveness dimension (DP), tested against a permutation null")
    PRESENTATION = (
        "presentation",
        _("the annotated presentation measure (confident framing of errors)"),
    )


class PrimaryAnalysis(models.TextChoices):
    # Each participant rates two systems: their two evaluations are not independent.
    CLUSTERED = "clustered", _("participant-clustered (cluster bootstrap by participant)")
    UNCLUSTERED = "unclustered", _("unclustered (every evaluation independent)")


# The fields a pre-registration's fingerprint covers, in the order of its
# canonical JSON (sorted keys make the order irrelevant to the hash; this
# tuple is what a deviation is computed over).
REGISTERED_FIELDS = (
    "h1_threshold",
    "falsification_threshold",
    "alpha",
    "sidedness",
    "planned_n",
    "primary_analysis",
    "bootstrap_seed",
    "bootstrap_resamples",
    "h3_predictor",
    "text",
)
# Fields added after versions were registered: left out of the fingerprint
# while they hold the value every earlier version implicitly had, so those
# versions keep their hash.
LATER_FIELDS = {"h3_predictor": "DP"}


def _unit_interval():
    return [MinValueValidator(0.0), MaxValueValidator(1.0)]


class PreRegistration(models.Model):
    """One version of a study's pre-registration of hypotheses H1-H3 (paper 8.2).

    A version is frozen when the study's first non-pilot session starts; a
    later change is a new version, marked as made after data collection began.
    Versions are never edited once frozen, and never deleted.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="preregistrations")
    version = models.PositiveSmallIntegerField()
    # H1: overall SHS correlates positively with factual precision at r >= this.
    h1_threshold = models.FloatField(
        _("H1: minimum correlation of SHS with factual precision"),
        default=0.40,
        validators=_unit_interval(),
    )
    # The paper's falsification criterion: SHS fails to correlate at r >= this.
    falsification_threshold = models.FloatField(
        _("falsification: SHS fails to correlate with factual precision at r ≥"),
        default=0.20,
        validators=_unit_interval(),
    )
    alpha = models.FloatField(
        _("alpha level"),
        default=0.05,
        validators=[MinValueValidator(0.0001), MaxValueValidator(0.5)],
    )
    sidedness = models.CharField(
        _("sidedness of the tests"),
        max_length=10,
        choices=Sidedness.choices,
        default=Sidedness.ONE_SIDED,
    )
    planned_n = models.PositiveIntegerField(
        _("planned number of interactions"),
        default=200,
        validators=[MinValueValidator(1)],
    )
    primary_analysis = models.CharField(
        _("primary analysis"),
        max_length=12,
        choices=PrimaryAnalysis.choices,
        default=PrimaryAnalysis.CLUSTERED,
    )
    bootstrap_seed = models.PositiveIntegerField(_("seed of the cluster bootstrap"), default=20240)
    bootstrap_resamples = models.PositiveIntegerField(
        _("resamples of the cluster bootstrap"),
        default=2000,
        validators=[MinValueValidator(200), MaxValueValidator(20000)],
    )
    h3_predictor = models.CharField(
        _("H3: predictor of what factual precision leaves unexplained"),
        max_length=12,
        choices=H3Predictor.choices,
        default=H3Predictor.DECEPTIVENESS,
    )
    text = models.TextField(_("pre-registration text"), blank=True)

    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # When the first non-pilot session started while this was the current version.
    frozen_at = models.DateTimeField(null=True, blank=True)
    # Made when data collection had already begun: a deviation from the frozen version.
    after_data_collection = models.BooleanField(default=False)
    sha256 = models.CharField(max_length=64, editable=False)

    class Meta:
        ordering = ["study_id", "version"]
        constraints = [
            models.UniqueConstraint(fields=["study", "version"], name="one_preregistration_version")
        ]

    def __str__(self) -> str:
        return f"pre-registration v{self.version} of study {self.study_id}"

    def save(self, *args, **kwargs):
        self.sha256 = hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()
        super().save(*args, **kwargs)

    def registered(self) -> dict:
        return {name: getattr(self, name) for name in REGISTERED_FIELDS}

    def fingerprinted(self) -> dict:
        values = self.registered()
        for name, implicit in LATER_FIELDS.items():
            if values[name] == implicit:
                del values[name]
        return values

    def canonical_json(self) -> str:
        """The registered content as the fingerprint hashes it: sorted keys, no
        spaces, UTF-8, floats as Python writes them (0.4, not 0.40)."""
        return json.dumps(
            self.fingerprinted(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )


class Measure(models.TextChoices):
    """The objective measures of paper 8.2 (ii); a detector is named in the file
    as `detector:<name>`, e.g. `detector:semantic_entropy`."""

    FACTUAL_PRECISION = "factual_precision", _("factual precision (FActScore style)")
    CITATION_SUPPORT = "citation_support", _("citation-support rate (RAGTruth style)")
    # H3's stronger form (paper 8.2, 9.2): how confidently the transcript frames
    # what it gets wrong, 0 (errors hedged or flagged) to 1 (stated as certain).
    PRESENTATION = "presentation", _("presentation: confidence with which errors are framed")
    DETECTOR = "detector", _("model-side detector score")


DETECTOR_PREFIX = "detector:"


class AnnotationImport(models.Model):
    """The audit record of one annotator's file: what it brought and what it replaced."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="annotation_imports")
    annotator = models.CharField(_("annotator (pseudonym)"), max_length=40)
    file_name = models.CharField(max_length=200)
    file_sha256 = models.CharField(max_length=64)
    rows = models.PositiveIntegerField()
    # How many values of this annotator's earlier import(s) this one replaced.
    replaced = models.PositiveIntegerField(default=0)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    imported_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-imported_at"]

    def __str__(self) -> str:
        return f"annotations of {self.annotator} ({self.file_name})"


class Annotation(models.Model):
    """One annotator's value of one measure on one transcript."""

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="annotations")
    imported_in = models.ForeignKey(
        AnnotationImport, on_delete=models.CASCADE, related_name="annotations"
    )
    annotator = models.CharField(max_length=40)
    # "factual_precision", "citation_support" or "detector:<name>".
    measure = models.CharField(max_length=60)
    value = models.FloatField()

    class Meta:
        ordering = ["transcript_id", "measure", "annotator"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "annotator", "measure"], name="one_value_per_annotator"
            )
        ]

    def __str__(self) -> str:
        return f"{self.measure} = {self.value} by {self.annotator}"


class AutomatedResult(models.Model):
    """A system's result on an automated factuality benchmark (paper 9.2, step 1)."""

    system = models.ForeignKey(
        LLMSystem, on_delete=models.CASCADE, related_name="automated_results"
    )
    benchmark = models.CharField(_("benchmark (fixed task set)"), max_length=200)
    score = models.FloatField(_("score"))
    scale_min = models.FloatField(_("scale minimum"), default=0.0)
    scale_max = models.FloatField(_("scale maximum"), default=1.0)
    higher_is_better = models.BooleanField(_("higher is better"), default=True)
    measured_on = models.DateField(_("date"))
    source = models.CharField(_("source (paper, leaderboard, own run)"), max_length=500)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    recorded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["system_id", "benchmark", "-measured_on"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(scale_max__gt=models.F("scale_min"))
                & models.Q(score__gte=models.F("scale_min"))
                & models.Q(score__lte=models.F("scale_max")),
                name="automated_score_on_its_scale",
            )
        ]

    def __str__(self) -> str:
        return f"{self.benchmark}: {self.score} ({self.system_id})"

    def normalised(self) -> float:
        """The score on 0..1 with 1 the best end of its scale."""
        share = (self.score - self.scale_min) / (self.scale_max - self.scale_min)
        return share if self.higher_is_better else 1.0 - share
