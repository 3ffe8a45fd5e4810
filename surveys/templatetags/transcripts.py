"""The transcripts section on the experimenter's step pages and the coordinator's
session record: `{% session_transcripts session %}` (docs/design/systems.md §10)."""

from django import template

from surveys.models.transcripts import FOLD_CHARS
from surveys.protocol.transcripts import may_import, redaction_marker_display, viewer_role
from surveys.views.transcripts import transcripts_context

register = template.Library()


@register.inclusion_tag("surveys/transcripts/_section.html", takes_context=True)
def session_transcripts(context, session):
    """Nothing for a user who may not see them; otherwise the section, which
    posts back to the page it is on."""
    request = context["request"]
    role = viewer_role(session, request.user)
    if not may_import(session, request.user, role):
        return {"transcript_rows": []}
    return transcripts_context(session, role, next_url=request.get_full_path())


@register.filter
def turn_text(text: str) -> str:
    """A turn's text as shown: the redaction marker in the reader's language."""
    return redaction_marker_display(text)


@register.filter
def is_folded(text_length: int | None) -> bool:
    """Whether a turn of this length is shown folded (`Turn.objects.folded()`)."""
    return (text_length or 0) > FOLD_CHARS
