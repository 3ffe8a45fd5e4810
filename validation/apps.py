from django.apps import AppConfig


class ValidationConfig(AppConfig):
    """The rest of the validation programme of paper section 8.3: companion
    scales, convergent validity, test-retest, CFA, invariance and nested data
    (docs/design/validation.md §14)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "validation"
    verbose_name = "Validation programme"

    def ready(self):
        from exports.replication.sections import register_r_section
        from exports.report.sections import register_section

        # The study report's validation section, imported when a report is built
        # (its model fitting loads semopy and statsmodels).
        register_section("validation.report.SECTION")
        # The replication script's validation sections (exports.replication).
        register_r_section("validation.replication.factors.SECTIONS")
        register_r_section("validation.replication.retest.SECTIONS")
