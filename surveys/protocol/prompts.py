"""The prompt log of a block's interaction, and the study minimum it is held to."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.utils.translation import gettext as _

from surveys.models import InteractionBlock, PromptEntry, Study, StudySession
from surveys.protocol.state import ProtocolError, locked_session
from surveys.steps import BLOCK_OF_STEP, INTERACTION_STEPS


def current_interaction(session: StudySession) -> InteractionBlock:
    return InteractionBlock.objects.get(session=session, block=BLOCK_OF_STEP[session.step])


def require_open_prompt_log(step: str) -> None:
    """A block's prompt log is open during its interaction step only.

    Once the block's SHS is open the log is what the participant rated, so
    a form from that page (or a step with no log at all) changes nothing.
    """
    if step not in INTERACTION_STEPS:
        raise ProtocolError(
            _(
                "Prompts are logged only while a block's interaction runs; this block's log "
                "is closed. Nothing was saved."
            )
        )


def prompt_add(
    *,
    session_id: int,
    step: str,
    category: str,
    text: str = "",
    is_follow_up: bool = False,
    is_source_request: bool = False,
    is_challenge: bool = False,
) -> PromptEntry:
    require_open_prompt_log(step)
    with locked_session(session_id, expected_step=step) as session:
        if session.study.is_naturalistic:
            raise ProtocolError(
                _(
                    "This study's protocol has no prompt categories: messages are not "
                    "tagged. Nothing was saved."
                )
            )
        return PromptEntry.objects.create(
            interaction=current_interaction(session),
            category=category,
            text=text.strip(),
            is_follow_up=is_follow_up,
            is_source_request=is_source_request,
            is_challenge=is_challenge,
        )


def prompt_remove(*, session_id: int, step: str, prompt_id: int) -> None:
    """Undo a mistaken entry of the current block's log."""
    require_open_prompt_log(step)
    with locked_session(session_id, expected_step=step) as session:
        deleted, _rows = PromptEntry.objects.filter(
            pk=prompt_id, interaction=current_interaction(session)
        ).delete()
        if not deleted:
            raise ProtocolError(_("That prompt is not part of this block's log."))


def prompt_counts(categories: Iterable[str]) -> dict[str, int]:
    """Prompts logged per category, every category present (zero when none)."""
    counts = {category: 0 for category in PromptEntry.Category.values}
    for category in categories:
        counts[category] += 1
    return counts


def minimum_prompts(study: Study) -> dict[str, int]:
    """The study minimum of prompts per category and block."""
    return {
        PromptEntry.Category.VERIFIED: study.min_verified_prompts,
        PromptEntry.Category.GLATTEIS: study.min_glatteis_prompts,
    }


def missing_prompts(study: Study, counts: Mapping[str, int]) -> dict[str, int]:
    """How many prompts of each category the block still lacks for the study minimum."""
    minimum = minimum_prompts(study)
    return {
        category: minimum[category] - counts.get(category, 0)
        for category in minimum
        if counts.get(category, 0) < minimum[category]
    }
