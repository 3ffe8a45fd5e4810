"""The study's questionnaires as data: one definition each, read by forms,
scoring, exports and codebooks alike. Nothing here imports Django."""

from scoring.instruments.common import LANGUAGES, Option, Question, Questionnaire

__all__ = ["LANGUAGES", "Option", "Question", "Questionnaire"]
