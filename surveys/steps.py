"""The steps of the supervised session protocol (docs/design/protocol.md §4), in order.

This module is the single definition of which steps exist, their order,
who acts on each (participant or experimenter), and their default target
durations. Models, the state machine and the monitor all read from here.

A session's states, as `StudySession.step` stores them (P: the participant
holds the device, E: the experimenter)::

    consent (P) --screened out--------------------> ineligible
       | consents
       v
    block1_interaction (E) --> block1_shs (P) --+
                                                |
       +----------------------------------------+
       v
    block2_interaction (E) --> block2_shs (P) --+
                                                |
       +----------------------------------------+
       v
    demographics (P) --> feedback (E) --> complete

    A remote session (docs/design/remote.md §11) has no experimenter: the participant
    acts on every step, and demographics lead straight to complete.

    any step from consent to feedback --withdraws---> withdrawn
    any step from consent to feedback --idle--------> abandoned
    complete or abandoned --erased on request-------> withdrawn

Ineligible: the screening on the consent page rules the person out; their
answers are not kept, the session only counts as a screen-out.
Withdrawn: the participant withdraws at any step, or, after a complete or
abandoned session, asks for their data to be deleted; the data goes, the
session stays as a counted withdrawal.
Abandoned: a running session without activity beyond its study's inactivity
timeout is ended by the periodic sweep; its data is kept.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Step(models.TextChoices):
    CONSENT = "consent", _("Consent")
    BLOCK1_INTERACTION = "block1_interaction", _("Block 1: interaction")
    BLOCK1_SHS = "block1_shs", _("Block 1: SHS")
    BLOCK2_INTERACTION = "block2_interaction", _("Block 2: interaction")
    BLOCK2_SHS = "block2_shs", _("Block 2: SHS")
    FEEDBACK = "feedback", _("Administrator feedback")
    DEMOGRAPHICS = "demographics", _("Demographics")
    COMPLETE = "complete", _("Complete")
    # Side exits: a session that leaves the protocol early ends in one of these.
    INELIGIBLE = "ineligible", _("Ineligible (screened out)")
    WITHDRAWN = "withdrawn", _("Withdrawn")
    ABANDONED = "abandoned", _("Abandoned")


# The protocol path, in order. COMPLETE ends it.
PROTOCOL: list[Step] = [
    Step.CONSENT,
    Step.BLOCK1_INTERACTION,
    Step.BLOCK1_SHS,
    Step.BLOCK2_INTERACTION,
    Step.BLOCK2_SHS,
    # The administrator feedback asks how long the demographics section was,
    # so it comes after it: nobody judges a section that has not happened yet.
    Step.DEMOGRAPHICS,
    Step.FEEDBACK,
    Step.COMPLETE,
]
# A remote session (docs/design/remote.md §11) has no experimenter, so no feedback.
REMOTE_PROTOCOL: list[Step] = [step for step in PROTOCOL if step != Step.FEEDBACK]
TIMED_STEPS = PROTOCOL[:-1]
ENDED = {Step.COMPLETE, Step.INELIGIBLE, Step.WITHDRAWN, Step.ABANDONED}
IN_PROGRESS = set(TIMED_STEPS)
# Sessions that hold their two systems for the balance of the allocation.
HOLDS_ALLOCATION = IN_PROGRESS | {Step.COMPLETE}

# Target durations in minutes (paper 6.3); a study may change each.
# Keyed by step; looked up with the stored value, a plain str.
DEFAULT_TARGET_MINUTES: dict[str, int] = {
    Step.CONSENT: 5,
    Step.BLOCK1_INTERACTION: 15,
    Step.BLOCK1_SHS: 5,
    Step.BLOCK2_INTERACTION: 15,
    Step.BLOCK2_SHS: 5,
    Step.DEMOGRAPHICS: 2,
    Step.FEEDBACK: 5,
}

# Who holds the device at each step: participant pages show nothing else.
PARTICIPANT_STEPS = {Step.CONSENT, Step.BLOCK1_SHS, Step.BLOCK2_SHS, Step.DEMOGRAPHICS}

BLOCK_OF_STEP: dict[str, int] = {
    Step.BLOCK1_INTERACTION: 1,
    Step.BLOCK1_SHS: 1,
    Step.BLOCK2_INTERACTION: 2,
    Step.BLOCK2_SHS: 2,
}
INTERACTION_STEPS = {Step.BLOCK1_INTERACTION, Step.BLOCK2_INTERACTION}
SHS_STEPS = {Step.BLOCK1_SHS, Step.BLOCK2_SHS}


def next_step(step: str, *, remote: bool = False) -> Step:
    path = REMOTE_PROTOCOL if remote else PROTOCOL
    index = path.index(Step(step))
    return path[index + 1]


def hands_back_after(step: str, *, remote: bool = False) -> bool:
    """Whether the participant gives the device back to the experimenter after `step`."""
    if remote:
        return False  # the participant's own device: nothing to hand back
    return step in PARTICIPANT_STEPS and next_step(step) not in PARTICIPANT_STEPS | ENDED
