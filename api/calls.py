"""Every call made with a token, in the audit log: one row, on the chain of
the study it reached (the site's when it reached none), naming the method,
the endpoint's route and the answer's status; and the token's last use."""

from django.db import transaction
from django.utils import timezone

from api.models import ApiToken
from api.tokens import audit_target
from audit.log import record
from audit.models import AuditEntry


def api_call_record(*, token: ApiToken, request, status: int, study_id: int | None) -> None:
    match = request.resolver_match
    with transaction.atomic():
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
        record(
            AuditEntry.Kind.API_TOKEN_USED,
            actor=token.user,
            study_id=study_id,
            target=audit_target(token),
            details={
                "method": request.method,
                # The route, not the path: a path may hold a job's download token.
                "endpoint": match.route if match else "",
                "status": status,
            },
        )
