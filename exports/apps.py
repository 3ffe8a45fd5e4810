from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ExportsConfig(AppConfig):
    name = "exports"
    verbose_name = _("Exports and reports")

    def ready(self):
        from exports import checks  # noqa: F401  (registers the storage check)
        from exports.replication.sections import register_r_section

        # The replication script's sections on the SHS itself; the apps above
        # add theirs after these, which they may build on (scores.R's scores).
        register_r_section("exports.replication.study.SECTIONS")
