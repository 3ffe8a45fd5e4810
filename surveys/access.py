"""Access checks: every view fetches its objects through these helpers, so an
object outside the user's studies answers 404 (never a 403 that would reveal
that it exists)."""

from functools import partial

from allauth.mfa.models import Authenticator
from django.db.models import F
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from surveys.models import Study, StudyMembership, StudySession
from surveys.prepared import PreparedLookup

COORDINATOR = StudyMembership.Role.COORDINATOR
EXPERIMENTER = StudyMembership.Role.EXPERIMENTER


class SecondFactorRequired(Exception):
    """The study asks its coordinators to use TOTP and this user has none yet."""

    def __init__(self, study: Study):
        self.study = study
        super().__init__(
            _(
                "The study “%(study)s” requires coordinators to use a second factor. "
                "Set up an authenticator app to continue."
            )
            % {"study": study.title}
        )


def user_has_totp(user) -> bool:
    return Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists()


def get_study_for_user(request, slug: str, *, coordinator: bool = False) -> tuple[Study, str]:
    """The study with this slug and the user's role in it, or 404."""
    if not request.user.is_authenticated:
        raise Http404
    membership = get_object_or_404(
        StudyMembership.objects.select_related("study"), study__slug=slug, user=request.user
    )
    if coordinator and membership.role != COORDINATOR:
        raise Http404
    study = membership.study
    if membership.role == COORDINATOR and study.require_coordinator_mfa:
        _require_second_factor(request.user, study)
    return study, membership.role


def _require_second_factor(user, study: Study) -> None:
    if not user_has_totp(user):
        raise SecondFactorRequired(study)


def get_session_for_user(
    request, token: str, *, light: bool = False, for_update: bool = False
) -> StudySession:
    """A session of a study the user belongs to, or 404.

    `light` loads only the session row, for actions
    whose service loads what it needs under its own lock (prompt log).
    `for_update` locks the row in the same read, inside the caller's
    transaction: an autosave checks access, locks and reads the step with
    one statement instead of reading the session twice.
    """
    if not request.user.is_authenticated:
        raise Http404
    lookup = lookup_for(SESSION_OF_MEMBER, light=light, for_update=for_update)
    session = lookup.one(token=token, user_id=request.user.pk)
    if session is None:
        raise Http404
    if session.member_role == COORDINATOR and session.study_requires_totp:
        _require_second_factor(request.user, session.study)
    return session


def _session_of_member(token, user_id, *, light=False, for_update=False):
    # The membership row the filter joins also gives the user's role, and the
    # study row it joins through gives the study's TOTP rule: a coordinator of a
    # study that requires TOTP needs it on the session pages too, at no extra
    # query (an Exists subquery cost a millisecond of compiling per request).
    queryset = StudySession.objects.filter(
        token=token, study__memberships__user_id=user_id
    ).annotate(
        member_role=F("study__memberships__role"),
        study_requires_totp=F("study__require_coordinator_mfa"),
    )
    return shaped_session_lookup(queryset, light=light, for_update=for_update)


def shaped_session_lookup(queryset, *, light: bool, for_update: bool):
    """What a session check loads: the row locked (`for_update`), the row alone
    (`light`), or the row with what its pages show."""
    if for_update:
        # Only the session row: the membership and study rows stay unlocked.
        return queryset.select_for_update(of=("self",))
    if light:
        return queryset
    return queryset.select_related("study", "first_system", "second_system", "participant")


def session_lookups(build, **kinds) -> dict[str, PreparedLookup]:
    """The three shapes of a session check, each compiled once per thread
    (surveys/prepared.py): the check runs on every session request, and
    compiling it cost more than running it."""
    return {
        "page": PreparedLookup(build, **kinds),
        "light": PreparedLookup(partial(build, light=True), **kinds),
        "for_update": PreparedLookup(partial(build, for_update=True), **kinds),
    }


def lookup_for(lookups: dict[str, PreparedLookup], *, light: bool, for_update: bool):
    return lookups["for_update" if for_update else "light" if light else "page"]


SESSION_OF_MEMBER = session_lookups(_session_of_member, token=str, user_id=int)


def can_create_studies(user) -> bool:
    if not user.is_authenticated:
        return False
    return (
        user.has_perm("surveys.add_study")
        or StudyMembership.objects.filter(user=user, role=COORDINATOR).exists()
    )
