"""Models of the surveys app, split by feature; import them from here."""

from surveys.models.accounts import User
from surveys.models.companions import CompanionResponse
from surveys.models.evaluations import (
    DemographicsResponse,
    Evaluation,
    EvaluationCorrection,
    FeedbackResponse,
)
from surveys.models.panel import PanelEntry
from surveys.models.personal_links import PersonalLink
from surveys.models.retests import Retest, RetestEvaluation
from surveys.models.sessions import (
    ConsentRecord,
    InteractionBlock,
    Participant,
    PromptEntry,
    SessionErasure,
    StepRecord,
    StudySession,
)
from surveys.models.studies import (
    ConsentText,
    ConsentTextInUse,
    Invitation,
    Study,
    StudyMembership,
)
from surveys.models.systems import LLMSystem
from surveys.models.task_texts import TaskText
from surveys.models.transcripts import Transcript, Turn, TurnRedaction

__all__ = [
    "CompanionResponse",
    "ConsentRecord",
    "ConsentText",
    "ConsentTextInUse",
    "DemographicsResponse",
    "Evaluation",
    "EvaluationCorrection",
    "FeedbackResponse",
    "InteractionBlock",
    "Invitation",
    "LLMSystem",
    "PanelEntry",
    "Participant",
    "PersonalLink",
    "PromptEntry",
    "Retest",
    "RetestEvaluation",
    "SessionErasure",
    "StepRecord",
    "Study",
    "StudyMembership",
    "StudySession",
    "TaskText",
    "Transcript",
    "Turn",
    "TurnRedaction",
    "User",
]
