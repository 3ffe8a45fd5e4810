"""What a study adds for the validation programme (docs/design/validation.md §14):
companion scales after each SHS and a retest wave. Kept apart from the study
model so that it stays readable."""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

# The demographic questions with few enough groups to fit a model per group.
INVARIANCE_GROUPINGS = ("age_band", "gender", "education", "first_language", "llm_use")


class ValidationFields(models.Model):
    # Keys of scoring.instruments.companions.COMPANION_SCALES, in the order
    # they follow the SHS; the SHS always comes first (docs/design/validation.md §14.1).
    companion_scales = models.JSONField(
        _("companion scales"),
        default=list,
        blank=True,
        help_text=_("Given after the SHS of each block, in this order."),
    )
    retest_after_days = models.PositiveSmallIntegerField(
        _("retest after (days)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(365)],
        help_text=_("Empty: no retest. Otherwise participants rate the same systems again."),
    )

    # One demographic question whose groups the invariance models compare,
    # besides the languages (docs/design/validation-analysis.md §14.6); empty: languages only.
    invariance_grouping = models.CharField(
        _("invariance grouping"),
        max_length=20,
        blank=True,
        choices=[(key, key) for key in INVARIANCE_GROUPINGS],
        help_text=_("A demographic question to test measurement invariance across."),
    )

    class Meta:
        abstract = True

    @property
    def has_retest(self) -> bool:
        return self.retest_after_days is not None
