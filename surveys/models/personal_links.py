"""Single-use personal links of a remote study (docs/design/remote.md §11.4)."""

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from surveys.models.sessions import StudySession
from surveys.models.studies import Study, hash_token


def new_link_token() -> str:
    # 192 random bits: a link cannot be guessed from the others of its batch.
    return secrets.token_urlsafe(24)


class PersonalLink(models.Model):
    """One link of a closed panel's batch: it starts at most one session.

    Only the hash of the link's token is stored, as for invitations: the
    coordinator downloads the links once, when they are made, and a copy of
    the database opens none of them.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="personal_links")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # The session the link started; SET_NULL keeps the link used if it goes.
    session = models.OneToOneField(
        StudySession, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"personal link {self.pk} of {self.study}"

    @classmethod
    def find(cls, study: Study, raw_token: str) -> "PersonalLink | None":
        return cls.objects.filter(study=study, token_hash=hash_token(raw_token)).first()
