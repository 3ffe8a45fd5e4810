"""Writing a block's transcript after the fact: importing an external system's
exchange and a coordinator's redaction of a turn (docs/design/transcripts.md §10.2, §10.4).

Both refuse with ProtocolError and change nothing when the request does not
fit; an import's text is parsed whole before anything is locked or stored.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.log import record
from audit.models import AuditEntry
from surveys.access import COORDINATOR
from surveys.models import (
    InteractionBlock,
    PromptEntry,
    StudyMembership,
    StudySession,
    Transcript,
    Turn,
    TurnRedaction,
    User,
)
from surveys.protocol.state import ANY_STEP, ProtocolError, locked_session
from surveys.transcript_import import parse_transcript

# What a redacted turn reads, stored in one language-neutral form (exports carry
# it as it is) and translated on the pages by `redaction_marker_display`.
REDACTED = "[redacted]"
REDACTED_DISPLAY = gettext_lazy("[redacted by the coordinator]")


def redaction_marker_display(text: str) -> str:
    return str(REDACTED_DISPLAY) if text == REDACTED else text


def may_import(session: StudySession, user: User, role: str | None) -> bool:
    """The session's own experimenter and the study's coordinators see and import
    its transcripts; `role` is the user's in the session's study."""
    return role == COORDINATOR or (role is not None and session.experimenter_id == user.pk)


def import_offered(block, transcript, *, redacted: bool, role: str | None) -> bool:
    """Whether a block's import is offered: the refusals of `transcript_import`
    that can be foreseen (a connected or running block, what the chat
    recorded, a redaction (`redacted`) for anyone but a coordinator). The
    transcripts page and the API both ask this."""
    if block.system.is_connected or block.ended_at is None:
        return False
    if transcript is None:
        return True
    if transcript.source == Transcript.Source.CHAT:
        return False
    return role == COORDINATOR or not redacted


def viewer_role(session: StudySession, user: User) -> str | None:
    """The user's role in the session's study: None for a remote participant
    (whose check sets it so), the role the staff check read where it read it
    (a study requiring TOTP of its coordinators), or one query."""
    if hasattr(session, "member_role"):
        return session.member_role
    return role_in_study(user, session.study_id)


def role_in_study(user: User, study_id: int) -> str | None:
    return (
        StudyMembership.objects.filter(study_id=study_id, user=user)
        .values_list("role", flat=True)
        .first()
    )


def transcript_import(
    *, session_id: int, block: int, text: str, fmt: str, user: User
) -> Transcript:
    """Store an external block's transcript, replacing an earlier import of it.

    A second import keeps the transcript's `code` (the analysts' key, maybe
    exported already) and records the new importer and time; the old turns
    and their redactions go, so over a redaction only a coordinator imports.
    """
    parsed = parse_transcript(text, fmt)  # TranscriptError: nothing locked, nothing stored
    with locked_session(session_id, expected_step=ANY_STEP) as session:
        role = role_in_study(user, session.study_id)
        if not may_import(session, user, role):
            raise ProtocolError(
                _("Only the session's experimenter or a coordinator can import its transcripts.")
            )
        interaction = _ended_external_block(session, block)
        now = timezone.now()
        transcript, created = Transcript.objects.select_for_update().get_or_create(
            interaction=interaction,
            defaults={"source": Transcript.Source.IMPORT, "created_at": now},
        )
        _check_replaceable(transcript, role)
        transcript.import_format = fmt
        transcript.imported_by = user
        transcript.imported_at = now
        transcript.save(update_fields=["import_format", "imported_by", "imported_at"])
        if not created:
            transcript.turns.all().delete()
        Turn.objects.bulk_create(
            Turn(transcript=transcript, position=position, role=turn.role, text=turn.text)
            for position, turn in enumerate(parsed, start=1)
        )
        record(
            AuditEntry.Kind.TRANSCRIPT_IMPORTED,
            actor=user,
            study_id=session.study_id,
            target=f"transcript {transcript.pk}",
            details={"block": block, "format": fmt, "turns": len(parsed), "replaced": not created},
        )
    return transcript


def _check_replaceable(transcript: Transcript, role: str) -> None:
    """ProtocolError unless an import may replace this transcript's turns."""
    if transcript.source == Transcript.Source.CHAT:
        # The system was connected when the block ran: what the chat
        # recorded is not overwritten by a paste.
        raise ProtocolError(
            _("The built-in chat recorded this block's transcript; it cannot be replaced.")
        )
    if role != COORDINATOR and TurnRedaction.objects.filter(turn__transcript=transcript).exists():
        # The text the coordinator took out is what a paste would bring back.
        raise ProtocolError(
            _(
                "A coordinator redacted turns of this transcript. Only a coordinator can "
                "import it again; nothing was changed."
            )
        )


def _ended_external_block(session: StudySession, block: int) -> InteractionBlock:
    interaction = (
        InteractionBlock.objects.select_related("system")
        .filter(session=session, block=block)
        .first()
    )
    if interaction is None:
        # Not reached yet, or the participant's data was deleted.
        raise ProtocolError(
            _("Block %(block)d of this session holds no interaction to import a transcript for.")
            % {"block": block}
        )
    if interaction.system.is_connected:
        raise ProtocolError(
            _(
                "%(system)s is a connected system: the built-in chat records its transcript, "
                "it is not imported."
            )
            % {"system": interaction.system.name}
        )
    if interaction.ended_at is None:
        raise ProtocolError(
            _("Block %(block)d is still running: import its transcript after the interaction.")
            % {"block": block}
        )
    return interaction


def turn_redact(
    *, turn_id: int, user: User, reason: str, replacement: str | None = None
) -> TurnRedaction:
    """Replace a turn's text (a participant typed their own name, say), audited.

    The old text is kept nowhere: not in the audit, not in the prompt log
    entry the turn may be (its text is replaced too).
    """
    reason = (reason or "").strip()
    if not reason:
        raise ProtocolError(_("A redaction needs a reason; nothing was changed."))
    new_text = (replacement or "").strip() or REDACTED
    if "\x00" in new_text + reason:
        raise ProtocolError(_("The text contains a NUL byte; nothing was changed."))
    with transaction.atomic():
        turn = (
            Turn.objects.select_for_update(of=("self",))
            .select_related("transcript__interaction__session")
            .filter(pk=turn_id)
            .first()
        )
        if turn is None:  # its participant's data was deleted meanwhile
            raise ProtocolError(_("This turn no longer exists; nothing was changed."))
        study_id = turn.transcript.interaction.session.study_id
        if role_in_study(user, study_id) != COORDINATOR:
            raise ProtocolError(_("Only a coordinator of the study can redact a transcript."))
        if not turn.text:  # an error turn: there is nothing to take out
            raise ProtocolError(_("This turn has no text to redact; nothing was changed."))
        if turn.text == new_text:
            raise ProtocolError(_("The turn already reads so; nothing was changed."))
        turn.text = new_text
        turn.save(update_fields=["text"])
        if turn.prompt_id:
            PromptEntry.objects.filter(pk=turn.prompt_id).exclude(text="").update(text=new_text)
        redaction = TurnRedaction.objects.create(turn=turn, redacted_by=user, reason=reason)
        # The reason and both texts stay out: the log names the turn only.
        record(
            AuditEntry.Kind.TRANSCRIPT_REDACTED,
            actor=user,
            study_id=study_id,
            target=f"transcript {turn.transcript_id} turn {turn.pk}",
            details={
                "position": turn.position,
                "redaction": redaction.pk,
                "replaced_with_marker": new_text == REDACTED,
            },
        )
        return redaction
