"""What a block of the naturalistic protocol still lacks before it may end
(docs/design/remote.md §11.5): user messages and minutes, instead of the two
categories' prompt minimums of surveys.protocol.prompts."""

from __future__ import annotations

import math
from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from surveys.models import InteractionBlock, Study, StudySession, Turn
from surveys.protocol.chat_rules import TurnRow, answered_messages
from surveys.protocol.state import ProtocolError


def answered_turns(interaction: InteractionBlock) -> int:
    """The block's messages that got an answer (docs/design/remote.md §11.5): a
    message left without one (its call failed and no retry succeeded) was
    never part of the conversation, so it does not count towards the minimum."""
    return len(answered_turn_ids(Turn.objects.filter(transcript__interaction=interaction)))


def answered_turn_ids(turns) -> set[int]:
    """The pks of the user turns among `turns` (one transcript's) that got an answer."""
    fields = ("position", "role", "reply_to_id", "pk")
    values = turns.order_by("position").values_list(*fields)
    return answered_messages([TurnRow(pos, role, "", to, pk) for pos, role, to, pk in values])


def minutes_missing(study: Study, interaction: InteractionBlock, now: datetime) -> int:
    """Whole minutes (rounded up) until the block has run the study's minimum.

    Counted from the block's start, the moment its interaction step opened:
    that is when the page is first shown, and it needs no turn to have been sent.
    """
    left = study.min_minutes * 60 - (now - interaction.started_at).total_seconds()
    return max(0, math.ceil(left / 60))


def naturalistic_missing(
    study: Study, interaction: InteractionBlock, now: datetime, *, turns: int | None
) -> dict[str, int]:
    """{"turns": n, "minutes": m} of what is missing, only the parts that are.

    `turns`: the block's user messages, or None when they cannot be known yet
    (an external system's transcript is imported after the block).
    """
    missing = {}
    if turns is not None and turns < study.min_turns:
        missing["turns"] = study.min_turns - turns
    minutes = minutes_missing(study, interaction, now)
    if minutes:
        missing["minutes"] = minutes
    return missing


def missing_text(missing: dict[str, int]) -> str:
    """How many messages and minutes remain, in words."""
    parts = []
    if "turns" in missing:
        parts.append(
            ngettext("%(n)s more message", "%(n)s more messages", missing["turns"])
            % {"n": missing["turns"]}
        )
    if "minutes" in missing:
        parts.append(
            ngettext("%(n)s more minute", "%(n)s more minutes", missing["minutes"])
            % {"n": missing["minutes"]}
        )
    return _("Still needed: %(parts)s.") % {"parts": ", ".join(parts)}


def naturalistic_finish_check(
    session: StudySession, interaction: InteractionBlock, reason: str
) -> dict[str, int]:
    """What a naturalistic block lacks as it ends; refused below the minimums
    unless a supervised experimenter gives a reason. A remote participant has
    no one to answer to for a reason: they chat on, or withdraw."""
    system = session.system_for_block(interaction.block)
    # An external system's turns come with its transcript, imported after the block.
    turns = answered_turns(interaction) if system.is_connected else None
    missing = naturalistic_missing(session.study, interaction, timezone.now(), turns=turns)
    if missing and (session.remote or not reason):
        if session.remote:
            advice = _("Continue the chat; if you do not want to go on, you can withdraw.")
        else:
            advice = _("Continue, or give a reason to end the block anyway.")
        raise ProtocolError(
            _("The study minimum for this block is not reached yet.")
            + f" {missing_text(missing)} {advice}"
        )
    return missing
