"""The study the export tests get, session by session.

`study_plan` lists the sessions in allocation order: complete sessions, then
(with extras) the edge cases an export must treat specially. Each entry says
how far its session got; tests/exports/factories.py turns it into rows.
"""

from dataclasses import dataclass, replace

from surveys.steps import Step

# Two quirks fall on sessions by their position in the study, whatever their kind:
# every fifth session from the fourth on (numbers 3, 8, 13, ...) had its second
# block ended early by the experimenter, who gave a reason ...
STOPPED_EARLY_EVERY, STOPPED_EARLY_FIRST = 5, 3
# ... and, with the edge cases, the second SHS of session number 1 was submitted
# but is not scored yet: the scoring sweep has not reached it.
UNSCORED_SESSION = 1


@dataclass(frozen=True)
class SessionPlan:
    """How far one session got, and so which rows it left behind."""

    step: str
    blocks: int = 2  # interaction blocks reached; 0: it ended before the first
    submitted: int = 2  # SHS forms submitted, one per block from the first
    half_filled: bool = False  # left while filling the SHS of the next block
    pilot: bool = False
    second_block_stopped_early: bool = False
    second_shs_unscored: bool = False

    @property
    def has_participant(self) -> bool:
        # A withdrawal erases the participant; the session stays as a tombstone.
        return self.step != Step.WITHDRAWN

    @property
    def minutes(self) -> int:
        return 48 if self.step == Step.COMPLETE else 45

    def has_form(self, block: int) -> bool:
        return block <= self.submitted or (self.half_filled and block == self.submitted + 1)


def complete_session() -> SessionPlan:
    return SessionPlan(step=Step.COMPLETE)


def pilot_session() -> SessionPlan:
    """Complete, but a pilot: exports leave it out unless asked for."""
    return SessionPlan(step=Step.COMPLETE, pilot=True)


def withdrawn_session() -> SessionPlan:
    return SessionPlan(step=Step.WITHDRAWN, blocks=0, submitted=0)


def screened_out_session() -> SessionPlan:
    """The eligibility screening ended it before any interaction."""
    return SessionPlan(step=Step.INELIGIBLE, blocks=0, submitted=0)


def abandoned_session() -> SessionPlan:
    """Left after submitting the first SHS, with the second one half-filled."""
    return SessionPlan(step=Step.ABANDONED, submitted=1, half_filled=True)


def edge_cases() -> list[SessionPlan]:
    return [pilot_session(), withdrawn_session(), screened_out_session(), abandoned_session()]


def study_plan(sessions: int, *, extras: bool) -> list[SessionPlan]:
    """The study's sessions in allocation order: `sessions` complete ones, then the
    edge cases, with the positional quirks above."""
    plans = [complete_session() for _ in range(sessions)] + (edge_cases() if extras else [])
    return [
        replace(
            plan,
            second_block_stopped_early=number % STOPPED_EARLY_EVERY == STOPPED_EARLY_FIRST,
            second_shs_unscored=extras and number == UNSCORED_SESSION,
        )
        for number, plan in enumerate(plans)
    ]
