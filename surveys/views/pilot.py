"""An experimenter asks a coordinator to mark a session as a pilot."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from surveys.access import get_session_for_user
from surveys.pilot import pilot_request
from surveys.protocol.state import ProtocolError


@login_required
@require_POST
def session_pilot_request(request, token):
    session = get_session_for_user(request, token)
    if not session.study.allow_pilot_sessions:
        messages.error(request, _("This study does not allow pilot sessions."))
        return redirect("surveys:study_detail", slug=session.study.slug)
    try:
        requested = pilot_request(session_id=session.pk, requested_by=request.user)
    except ProtocolError as error:
        messages.error(request, str(error))
        return redirect("surveys:study_detail", slug=session.study.slug)
    if requested:
        messages.success(
            request,
            _(
                "Your request is sent to the coordinator. "
                "Until they approve it, the session counts in the analyses."
            ),
        )
    else:
        messages.info(request, _("This session is a pilot already or awaits a decision."))
    return redirect("surveys:study_detail", slug=session.study.slug)
