from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ExportsConfig(AppConfig):
    name = "exports"
    verbose_name = _("Exports and reports")

    def ready(self):
        from exports import checks  # noqa: F401  (registers the storage check)
