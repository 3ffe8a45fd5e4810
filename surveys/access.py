"""Access checks: every view fetches its objects through these helpers, so an
object outside the user's studies answers 404 (never a 403 that would reveal
that it exists)."""

from functools import partial
from typing import cast

from allauth.mfa.models import Authenticator
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

    `light` loads only the session row and its study, for actions whose
    service loads what it needs under its own lock (prompt log).
    `for_update` locks the row in the same read, inside the caller's
    transaction: an autosave checks access, locks and reads the step with
    one statement instead of reading the session twice.

    A study that requires TOTP of its coordinators requires it here too
    (`_require_second_factor_in_session`); the session then carries the
    user's role as `member_role`, read for that check.
    """
    if not request.user.is_authenticated:
        raise Http404
    lookup = lookup_for(SESSION_OF_MEMBER, light=light, for_update=for_update)
    session = lookup.one(token=token, user_id=request.user.pk)
    if session is None:
        raise Http404
    _require_second_factor_in_session(request.user, session)
    return session


def _require_second_factor_in_session(user, session) -> None:
    """A coordinator of a study that requires TOTP has one, or SecondFactorRequired.

    Both facts are read on every request, never kept between requests: the
    study's rule comes with the session's own read (its study row is
    loaded in every shape), and only where the study has the rule is the
    user's role read, one statement on the membership's unique key. A role
    or a rule changed a moment ago therefore holds from the next request
    (docs/design/deployment.md §12.3).
    """
    study = session.study
    if not study.require_coordinator_mfa:
        return
    membership = cast(StudyMembership | None, MEMBERSHIP.one(study_id=study.pk, user_id=user.pk))
    # Gone since the session's read: no role, and no way in.
    if membership is None:
        raise Http404
    session.member_role = membership.role
    if membership.role == COORDINATOR:
        _require_second_factor(user, study)


def _session_of_member(token, user_id, *, light=False, for_update=False):
    # The study row comes in every shape: its TOTP rule decides whether the
    # role must be read (`_require_second_factor_in_session`). A prepared
    # lookup takes no annotation, so the role is not read here.
    queryset = StudySession.objects.filter(
        token=token, study__memberships__user_id=user_id
    ).select_related("study")
    return shaped_session_lookup(queryset, light=light, for_update=for_update)


def shaped_session_lookup(queryset, *, light: bool, for_update: bool):
    """What a session check loads: the row locked (`for_update`), the row alone
    (`light`), or the row with what its pages show (the staff check adds the
    study row to the first two)."""
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
# The user's membership of a study, read only where the study requires TOTP of
# its coordinators: in such a study every staff request, autosaves included,
# needs the role.
MEMBERSHIP = PreparedLookup(
    lambda study_id, user_id: StudyMembership.objects.filter(study_id=study_id, user_id=user_id),
    study_id=int,
    user_id=int,
)


def can_create_studies(user) -> bool:
    if not user.is_authenticated:
        return False
    return (
        user.has_perm("surveys.add_study")
        or StudyMembership.objects.filter(user=user, role=COORDINATOR).exists()
    )
