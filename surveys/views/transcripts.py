"""A session's transcripts (docs/design/systems.md §10): the page that shows them,
importing an external block's exchange, and a coordinator's redaction.

The session's own experimenter and the study's coordinators see them; any
other user, and any session outside the user's studies, gets a 404. The
same section is included on the experimenter's step pages and the
coordinator's session record (`surveys.templatetags.transcripts`).
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from surveys.access import COORDINATOR, get_session_for_user
from surveys.models import InteractionBlock, Transcript, Turn, TurnRedaction
from surveys.protocol.state import ProtocolError
from surveys.protocol.transcripts import (
    import_offered,
    may_import,
    transcript_import,
    turn_redact,
    viewer_role,
)
from surveys.transcript_import import MAX_CHARACTERS, TranscriptError, decode_upload

# Bytes, for the upload: UTF-8 takes up to four per character.
MAX_UPLOAD_BYTES = 4 * MAX_CHARACTERS


class TranscriptImportForm(forms.Form):
    fmt = forms.ChoiceField(label=gettext_lazy("format"), choices=Transcript.Format.choices)
    text = forms.CharField(
        label=gettext_lazy("transcript (paste it here)"),
        widget=forms.Textarea(attrs={"rows": 12}),
        required=False,
        strip=False,
    )
    upload = forms.FileField(
        label=gettext_lazy("or upload a file (.txt, .md, .json)"), required=False
    )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("upload") is not None and cleaned.get("text", "").strip():
            # Which one was meant is a guess: ask rather than drop one of them.
            raise forms.ValidationError(
                _("Paste the transcript or upload a file, not both; nothing was stored.")
            )
        return cleaned

    def transcript_text(self) -> str:
        """The pasted text, or the uploaded file's; TranscriptError if unreadable."""
        upload = self.cleaned_data.get("upload")
        if upload is None:
            return self.cleaned_data["text"]
        if upload.size > MAX_UPLOAD_BYTES:
            raise TranscriptError(
                _("The file is larger than %(limit)d MB; nothing was stored.")
                % {"limit": MAX_UPLOAD_BYTES // 1_000_000}
            )
        return decode_upload(upload.read())


def import_form(block: int, *args) -> TranscriptImportForm:
    # One form per block on a page: the ids differ, the field names do not.
    return TranscriptImportForm(*args, auto_id=f"id_block{block}_%s")


class RedactionForm(forms.Form):
    reason = forms.CharField(label=gettext_lazy("reason (required)"), max_length=500)
    replacement = forms.CharField(
        label=gettext_lazy("replacement text (optional; empty: the turn reads “redacted”)"),
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
    )


def transcripts_context(session, role, *, next_url, failed=None) -> dict:
    """What the transcripts section shows: one row per block with a transcript or
    waiting for one, in four statements whatever the number of turns.

    `failed`: (block, bound form) of an import that did not parse, shown again
    with its error and text.
    """
    turns = (
        Turn.objects.folded()
        .select_related("prompt")
        .prefetch_related(
            Prefetch("redactions", queryset=TurnRedaction.objects.select_related("redacted_by"))
        )
    )
    blocks = (
        InteractionBlock.objects.filter(session=session)
        .select_related("system", "transcript__imported_by")
        .prefetch_related(Prefetch("transcript__turns", queryset=turns))
    )
    failed_block, failed_form = failed or (None, None)
    rows = []
    for block in blocks:
        transcript = getattr(block, "transcript", None)
        turns = list(transcript.turns.all()) if transcript else []
        redacted = any(turn.redactions.all() for turn in turns)
        importable = import_offered(block, transcript, redacted=redacted, role=role)
        if transcript is None and not importable:
            continue
        rows.append(
            {
                "block": block,
                "transcript": transcript,
                "turns": turns,
                "importable": importable,
                "form": failed_form if block.block == failed_block else import_form(block.block),
            }
        )
    return {
        "session": session,
        "transcript_rows": rows,
        "is_coordinator": role == COORDINATOR,
        "redaction_form": RedactionForm(),
        "next_url": next_url,
    }


def _session_and_role(request, token):
    """The session if the user may see its transcripts (404 otherwise), and their role."""
    session = get_session_for_user(request, token)
    role = viewer_role(session, request.user)
    if not may_import(session, request.user, role):
        raise Http404
    return session, role


def _next_url(request, session) -> str:
    """Where the form came from (the step page, the session record), if it is ours."""
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return reverse("surveys:session_transcripts", args=[session.token])


def _back(request, session):
    return redirect(_next_url(request, session))


@login_required
def transcript_page(request, token):
    session, role = _session_and_role(request, token)
    return _render_page(request, session, role)


def _render_page(request, session, role, *, failed=None, status=200):
    # A failed import is shown here; once it succeeds, back to where it started.
    next_url = _next_url(request, session)
    context = transcripts_context(session, role, next_url=next_url, failed=failed)
    context["study"] = session.study
    rows = context["transcript_rows"]
    if failed and not any(r["importable"] and r["block"].block == failed[0] for r in rows):
        # No import form of that block on the page (not reached, its data deleted
        # or redacted meanwhile): its errors go above the page instead of nowhere.
        for errors in failed[1].errors.values():
            for error in errors:
                messages.error(request, error)
    return render(request, "surveys/transcripts/page.html", context, status=status)


@login_required
@require_POST
def transcript_import_view(request, token, block):
    session, role = _session_and_role(request, token)
    form = import_form(block, request.POST, request.FILES)
    if not form.is_valid():
        return _render_page(request, session, role, failed=(block, form), status=400)
    text = ""
    try:
        text = form.transcript_text()
        transcript = transcript_import(
            session_id=session.pk,
            block=block,
            text=text,
            fmt=form.cleaned_data["fmt"],
            user=request.user,
        )
    except TranscriptError as error:
        # The text stays in the form, the uploaded file's too, to be corrected.
        if form.cleaned_data.get("upload") is not None:
            form.data = form.data.copy()
            form.data["text"] = text
        form.add_error(None, str(error))
        return _render_page(request, session, role, failed=(block, form), status=400)
    except ProtocolError as error:
        messages.error(request, str(error))
        return _back(request, session)
    messages.success(
        request,
        _("Transcript of block %(block)d stored (%(turns)d turns, %(code)s).")
        % {"block": block, "turns": transcript.turns.count(), "code": transcript.code},
    )
    return _back(request, session)


@login_required
@require_POST
def turn_redact_view(request, token, pk):
    session, role = _session_and_role(request, token)
    if role != COORDINATOR:
        raise Http404
    turn = get_object_or_404(Turn, pk=pk, transcript__interaction__session=session)
    form = RedactionForm(request.POST)
    if not form.is_valid():  # no reason, or one longer than the field takes
        messages.error(
            request,
            _("A redaction needs a reason of at most 500 characters; nothing was changed."),
        )
        return _back(request, session)
    try:
        turn_redact(
            turn_id=turn.pk,
            user=request.user,
            reason=form.cleaned_data["reason"],
            replacement=form.cleaned_data["replacement"],
        )
    except ProtocolError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Turn redacted; the redaction is recorded."))
    return _back(request, session)
