"""The Transcripts table: one row per turn of every exported block's
transcript (docs/design/transcripts.md §10.6). It is free text as a whole, so an export
has it only when the coordinator asks for free text; the annotation file
(exports.writers.jsonlines) is made of the same rows, grouped per transcript.

The codes of source, format, role and category are the models' own; their
English labels are here, and a code without one fails at import (as the step
labels of exports.columns do).
"""

from exports.columns import (
    BLOCK_VALUES,
    DATA_SHEETS,
    DATE,
    INTEGER,
    LANGUAGE_VALUES,
    NUMBER,
    SESSION_ID,
    SYSTEM,
    TEXT,
    YES_NO,
    Column,
    Sheet,
)
from exports.retest_records import RETESTS
from surveys.models import PromptEntry, Transcript, Turn


def _coded(choices, labels: dict) -> tuple[tuple[str, str], ...]:
    return tuple((code, labels[code]) for code in choices.values)


SOURCE_VALUES = _coded(
    Transcript.Source,
    {
        "chat": "written by the built-in chat as it ran (connected system)",
        "import": "imported by the experimenter after the block (external system)",
    },
)
IMPORT_FORMAT_VALUES = _coded(
    Transcript.Format,
    {
        "text": "plain text with User: / Assistant: turns",
        "markdown": "Markdown",
        "json": "JSON list of {role, content}",
    },
)
ROLE_VALUES = _coded(
    Turn.Role,
    {
        "system": "system prompt sent to the system",
        "user": "what the participant (or experimenter) typed",
        "assistant": "the system's answer",
        "error": "a call to the system that failed (error_cause says why)",
    },
)
CATEGORY_VALUES = _coded(
    PromptEntry.Category,
    {"verified": "Verified Knowledge", "glatteis": "Glatteis (trap)"},
)
_UNTAGGED = "; empty for a turn that is not in the prompt log"

# The columns that describe a transcript as a whole; the annotation file puts
# them once on its line, the others in each of its turns.
TRANSCRIPT_COLUMNS = ("transcript_id", "system", "block", "language", "source", "import_format")
# Export-local numbers: they mean something only beside the other tables of the
# same export, so the annotation file (an export of its own) leaves them out.
EXPORT_LOCAL_COLUMNS = ("session_id", "evaluation_id")

TRANSCRIPTS = Sheet(
    "transcripts",
    "Transcripts",
    "One row per turn of each block's transcript, in order (free text: exported only when "
    "asked for). Joined to Evaluations on transcript_id.",
    (
        Column(
            "transcript_id",
            "Transcript of the block: random, the same in every export of this study; the "
            "Evaluations row of the block has the same transcript_id",
            TEXT,
        ),
        SESSION_ID,
        Column(
            "evaluation_id",
            "Evaluation of the block (as in Evaluations); empty when its SHS was not submitted",
        ),
        Column("block", "Block of the session", INTEGER, BLOCK_VALUES),
        SYSTEM,
        Column("language", "Language of the session", TEXT, LANGUAGE_VALUES),
        Column("source", "How the transcript was recorded", TEXT, SOURCE_VALUES),
        Column(
            "import_format",
            "Format an imported transcript was pasted or uploaded in; empty for the chat",
            TEXT,
            IMPORT_FORMAT_VALUES,
        ),
        Column("position", "Place of the turn in the transcript (turns are listed in order)"),
        Column("role", "Who the turn is from", TEXT, ROLE_VALUES),
        Column(
            "text",
            "The turn's text as typed or answered (free text); a redacted turn holds the "
            "coordinator's replacement text, the original is not kept",
            TEXT,
        ),
        Column(
            "redacted",
            "A coordinator redacted the turn: text is the replacement (who did it is not exported)",
            INTEGER,
            YES_NO,
        ),
        Column("date", "Date the turn started (no time of day); empty when not recorded", DATE),
        Column(
            "start_seconds",
            "Seconds from the start of the block to the start of the turn; empty when not recorded",
            NUMBER,
        ),
        Column(
            "duration_seconds",
            "Seconds from the start of the turn to its end; empty when not recorded",
            NUMBER,
        ),
        Column(
            "first_token_ms",
            "Milliseconds from sending the prompt to the answer's first token, as the platform "
            "measured it; empty when not measured",
        ),
        Column(
            "latency_ms",
            "Milliseconds from sending the prompt to the answer's last token, as the platform "
            "measured it; empty when not measured",
        ),
        Column("model", "Model name as the system's API reported it; empty if not reported", TEXT),
        Column("prompt_tokens", "Prompt tokens as the API reported them; empty if not reported"),
        Column(
            "completion_tokens", "Completion tokens as the API reported them; empty if not reported"
        ),
        Column(
            "finish_reason",
            "Why the answer ended, as the API reported it (e.g. stop, length, content_filter); "
            "empty if not reported",
            TEXT,
        ),
        Column(
            "error_cause",
            "What failed, for an error turn (e.g. timeout, rate_limited, too_long: the answer "
            "was cut at the system's size limit, interrupted: the participant left); empty for "
            "other turns",
            TEXT,
        ),
        Column(
            "answers_position",
            "For an answer or error turn of the built-in chat: position of the user turn it "
            "answers; empty otherwise",
        ),
        Column(
            "sent_positions",
            "For an answer or error turn of the built-in chat: positions of the turns sent to the "
            "system with its call, separated by ';' (a message left unanswered is not sent "
            "again); empty otherwise",
            TEXT,
        ),
        Column(
            "cleaned_characters",
            "Control characters (e.g. NUL) taken out of the text before it was stored",
            INTEGER,
        ),
        Column(
            "category",
            "Prompt-log category of a tagged user turn" + _UNTAGGED,
            TEXT,
            CATEGORY_VALUES,
        ),
        Column("follow_up", "Prompt marked as follow-up" + _UNTAGGED, INTEGER, YES_NO),
        Column("source_request", "Prompt marked as source request" + _UNTAGGED, INTEGER, YES_NO),
        Column("challenge", "Prompt marked as challenge" + _UNTAGGED, INTEGER, YES_NO),
    ),
)

# Every data sheet in workbook order: the Retests sheet of a study with a
# retest wave (docs/design/validation.md §14.2), then the Transcripts sheet last, and only
# in exports with free text. The SPSS files leave it out (docs/design/transcripts.md §10.6).
SHEETS_WITH_TRANSCRIPTS = (*DATA_SHEETS, RETESTS, TRANSCRIPTS)
