"""When a study is deleted, its audit chain goes with it, in the same
transaction (docs/design/audit.md §15.5): the log is kept as long as the
study's data, and no longer."""

from django.db.models.signals import post_delete

from audit.retention import study_chain_delete
from surveys.models import Study


def connect() -> None:
    post_delete.connect(study_deleted, sender=Study, dispatch_uid="surveys_study_chain_delete")


def study_deleted(sender, instance: Study, **kwargs) -> None:
    study_chain_delete(instance.pk)
