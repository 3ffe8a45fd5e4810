from django.apps import AppConfig


class ValidationConfig(AppConfig):
    """The rest of the validation programme of paper section 8.3: companion
    scales, convergent validity, test-retest, CFA, invariance and nested data
    (docs/design.md §14)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "validation"
    verbose_name = "Validation programme"
