"""Panel ids of a remote study (docs/design/remote.md §11.6): kept in a table of their
own, beside the study data rather than in it, so that no export or report
query reaches them; only the coordinators' payment list reads them."""

from django.db import models
from django.utils import timezone

from surveys.models.remote_fields import PANEL_ID_MAX_LENGTH
from surveys.models.sessions import StudySession
from surveys.models.studies import Study


class PanelEntry(models.Model):
    """The panel id a session was started with: one session per id and study."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="panel_entries")
    panel_id = models.CharField(max_length=PANEL_ID_MAX_LENGTH)
    # Withdrawal and erasure delete the entry itself; SET_NULL only guards a
    # session deleted some other way (the id then still counts as used).
    session = models.OneToOneField(
        StudySession, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            # The race of two starts with one id ends here: the second insert fails.
            models.UniqueConstraint(fields=["study", "panel_id"], name="one_entry_per_panel_id")
        ]

    def __str__(self) -> str:
        return f"panel entry {self.pk} of {self.study}"
