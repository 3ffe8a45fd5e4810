"""Freezing the pre-registration the moment data collection begins
(docs/design/criterion.md §13.1). `surveys` knows nothing of `criterion`: the receiver
listens to the session model from here, connected in CriterionConfig.ready().
The lazy freeze on every read stays the guarantee (sessions made with
bulk_create or .update() send no signal)."""

from django.db.models.signals import post_save
from django.dispatch import receiver

from criterion.preregistration.services import freeze_study_id
from surveys.models import StudySession


@receiver(post_save, sender=StudySession, dispatch_uid="criterion_freeze_preregistration")
def freeze_on_first_counted_session(sender, instance, created, raw=False, **kwargs):
    # Inside session_start's transaction, under its lock on the study row: a
    # pre-registration saved at the same moment waits for this freeze.
    if created and not raw and not instance.is_pilot:
        freeze_study_id(instance.study_id)
