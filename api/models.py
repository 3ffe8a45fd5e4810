"""Personal API tokens (docs/design/api.md §16.2): a staff user's key for
scripts and pipelines, scoped to some of their studies, read-only or
read-write, expiring and revocable.

Only the SHA-256 of a token is stored. A token is 32 random bytes, so a hash
that is fast to compute is as safe as a slow one: nobody can guess the
preimage, and a fast hash lets every call find its token with one indexed read.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from surveys.models import Study


class ApiTokenQuerySet(models.QuerySet):
    def usable(self):
        """Neither revoked nor expired, now."""
        return self.filter(revoked_at__isnull=True, expires_at__gt=timezone.now())


class ApiToken(models.Model):
    class Access(models.TextChoices):
        READ = "read", _("Read only")
        READ_WRITE = "read-write", _("Read and write")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(_("name"), max_length=80)
    # The token's first characters, shown on the account page and in the audit
    # log so that a person can tell their tokens apart: never enough to use.
    prefix = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    access = models.CharField(_("access"), max_length=10, choices=Access.choices)
    # The studies it may reach; within each, never more than the owner's role
    # there at the moment of the call (api/access.py).
    studies = models.ManyToManyField(Study, related_name="+", verbose_name=_("studies"))
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(_("expires"))
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def may_write(self) -> bool:
        return self.access == self.Access.READ_WRITE

    @property
    def is_usable(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()
