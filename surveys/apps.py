from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SurveysConfig(AppConfig):
    name = "surveys"
    verbose_name = _("Studies and sessions")

    def ready(self):
        from surveys import study_deletion

        study_deletion.connect()
        # The demo's periodic tasks (only in runserver, with DEMO_SCHEDULER on and
        # no broker: shs_platform/scheduler.py says why).
        from shs_platform.scheduler import start_if_wanted

        start_if_wanted()
