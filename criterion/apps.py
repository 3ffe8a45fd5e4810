from django.apps import AppConfig


class CriterionConfig(AppConfig):
    """The criterion-validity study of paper section 8.2 and the joint-use
    report of section 9.2 (docs/design/criterion.md §13)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "criterion"
    verbose_name = "Criterion validity"

    def ready(self):
        # The receiver that freezes a pre-registration when data collection begins.
        from criterion.preregistration import signals  # noqa: F401
        from exports.replication.sections import (
            register_package_files,
            register_r_section,
            register_report_filter,
        )
        from exports.report.sections import register_section

        # The study report's criterion section, imported when a report is built.
        register_section("criterion.report.SECTION")
        # The replication script's criterion section (exports.replication).
        register_r_section("criterion.replication.SECTIONS")
        # The package's report names annotators as its data do (annotator-1, ...).
        register_report_filter("criterion.replication.scrub.pseudonymous_report")
        register_package_files("criterion.preregistration.files.preregistration_files")
