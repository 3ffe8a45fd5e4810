"""The retest wave (docs/design/validation.md §14.2): a participant of a study with a
retest comes back after the study's number of days, by the link they were
given or with their participant code at the lab, and rates the same two
systems again with the SHS.

Here: scheduling the retest when a session ends (surveys.protocol calls it),
finding it by its link, and the link itself. Taking the participant through
the retest's steps is surveys.retest_steps.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone

from surveys.models import Retest, RetestEvaluation, Study, StudySession
from surveys.models.studies import hash_token

# The block each SHS step of the retest rates.
RETEST_BLOCKS = {Retest.Step.BLOCK1_SHS: 1, Retest.Step.BLOCK2_SHS: 2}
# What the retest pages read of its session, with the retest in one query.
SESSION_RELATED = ("session__study", "session__first_system", "session__second_system")


def new_retest_token() -> str:
    # 192 random bits, as a personal link (docs/design/remote.md §11.4).
    return secrets.token_urlsafe(24)


def retest_schedule(*, session: StudySession) -> str | None:
    """Schedule the retest of a session whose participant has given their last
    answer; the link's token, returned this once (only its hash is stored).

    None when there is no retest: a pilot, or a study without a retest wave.
    The caller holds the session's lock (the demographics' submission).
    """
    study = session.study
    if session.is_pilot or not study.has_retest:
        return None
    token = new_retest_token()
    now = timezone.now()
    Retest.objects.create(
        session=session,
        token_hash=hash_token(token),
        due_at=now + timedelta(days=study.retest_after_days),
        created_at=now,
    )
    return token


def with_session(queryset):
    """The retests of `queryset` whose session still has its participant."""
    # A session erased on request loses its retest with its data; the
    # participant guard keeps a half-erased state from ever opening one.
    return queryset.filter(session__participant__isnull=False).select_related(*SESSION_RELATED)


def retest_by_token(raw_token: str) -> Retest | None:
    """The retest a link opens, or None (an unknown, damaged or erased one)."""
    return with_session(Retest.objects.filter(token_hash=hash_token(raw_token))).first()


def retest_of_study(study: Study, pk: int) -> Retest | None:
    return with_session(Retest.objects.filter(session__study=study, pk=pk)).first()


def retest_is_due(retest: Retest) -> bool:
    return timezone.now() >= retest.due_at


def retest_evaluation_for_display(retest: Retest) -> RetestEvaluation:
    """The retest evaluation of the current step, created at its first display
    (which starts its completion clock, as the SHS step's evaluation does)."""
    block = RETEST_BLOCKS[retest.step]
    session = retest.session
    evaluation, _created = RetestEvaluation.objects.get_or_create(
        retest=retest,
        block=block,
        defaults={"system": session.system_for_block(block), "language": session.language},
    )
    if retest.started_at is None:
        # Conditional: two tabs opening the retest at once record one start.
        started = Retest.objects.filter(pk=retest.pk, started_at__isnull=True)
        started.update(started_at=evaluation.first_displayed_at)
        retest.started_at = evaluation.first_displayed_at
    return evaluation


# -- the link, shown once --------------------------------------------------------
#
# The token travels from the request that scheduled the retest to the page
# after it in a signed cookie of the participant's browser (or of the lab's
# device, until the experimenter takes it back), never through the database.

LINK_COOKIE = "shs_retest_link"
LINK_SALT = "surveys.retest-link"
# Long enough for reloads of the end page and a look back the same day.
LINK_COOKIE_SECONDS = 24 * 3600


def set_retest_link_cookie(response, session, token: str) -> None:
    response.set_signed_cookie(
        LINK_COOKIE,
        f"{session.token}:{token}",
        salt=LINK_SALT,
        max_age=LINK_COOKIE_SECONDS,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )


def forget_retest_link(response) -> None:
    """The experimenter takes the device back: the link leaves it."""
    response.delete_cookie(LINK_COOKIE, samesite="Lax")


def retest_notice(request, session) -> dict:
    """The retest's link and due time for the page closing `session`, when this
    browser was given them; {} otherwise (one query, only with the cookie)."""
    value = request.get_signed_cookie(
        LINK_COOKIE, default=None, salt=LINK_SALT, max_age=LINK_COOKIE_SECONDS
    )
    session_token, _sep, token = (value or "").partition(":")
    if not token or session_token != session.token:
        return {}
    retest = retest_by_token(token)
    if retest is None or retest.session_id != session.pk:
        return {}  # erased since, or a cookie of another session
    link = request.build_absolute_uri(reverse("surveys:retest", args=[token]))
    slip = reverse("surveys:retest_slip", args=[token])
    return {"retest_link": link, "retest_slip": slip, "retest_due": retest.due_at}


def retest_counts(study: Study) -> dict[str, int]:
    """Retests of the study's counted sessions: scheduled, due and not yet
    done, and completed (one query)."""
    open_and_due = Q(due_at__lte=timezone.now()) & ~Q(step=Retest.Step.COMPLETE)
    return Retest.objects.filter(session__study=study, session__is_pilot=False).aggregate(
        scheduled=Count("pk"),
        due=Count("pk", filter=open_and_due),
        completed=Count("pk", filter=Q(step=Retest.Step.COMPLETE)),
    )
