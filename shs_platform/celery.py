import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shs_platform.settings")

app = Celery("shs_platform")
# Every CELERY_* setting in the Django settings configures the app.
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="shs_platform.ping")
def ping(value: str = "pong") -> str:
    """Round trip used by the health check tests and operators."""
    return value
