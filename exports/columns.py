"""The one definition of every exported table: its columns, their labels and
value codes. Headers, the codebook and every format (CSV, XLSX, JSON, SPSS)
are written from these lists, so a column cannot be exported undocumented.

Labels are English on purpose: files from studies run in different UI
languages stay comparable, and the instrument text quoted in labels is the
published English wording.
"""

from django.conf import settings
from django.utils.translation import get_language_info

from exports.column_types import DATE, INTEGER, NUMBER, TEXT, Column, Sheet
from exports.companion_columns import COMPANION_COLUMNS
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import BANDS, DIMENSIONS_BY_KEY, ITEMS, SCALE
from surveys.steps import TIMED_STEPS, Step

SCALE_VALUES = tuple((option.code, option.label["en"]) for option in SCALE)
YES_NO = ((0, "no"), (1, "yes"))
# The platform's languages by their English names (Django's own table, not the
# translated names of settings.LANGUAGES: files and reports are in English).
LANGUAGE_NAMES = {code: get_language_info(code)["name"] for code, _name in settings.LANGUAGES}
LANGUAGE_VALUES = tuple(LANGUAGE_NAMES.items())
BLOCK_VALUES = ((1, "block 1 (first system)"), (2, "block 2 (second system)"))
SESSION_STATUS_VALUES = (
    ("complete", "completed the protocol"),
    ("abandoned", "ended early: no activity for the study's inactivity timeout"),
    ("in_progress", "still in progress when the export was made"),
)


def _item_label(item) -> str:
    sign = "+" if item.polarity > 0 else "−"
    return f"Q{item.number} ({item.dimension}, {sign}): {item.text['en']}"


def _questionnaire_columns(questionnaire, ordinal: tuple[str, ...] = ()) -> tuple[Column, ...]:
    unknown = set(ordinal) - set(questionnaire.keys)
    if unknown:  # a renamed question must not silently lose its measure level
        raise KeyError(f"no questions {sorted(unknown)} in {questionnaire.key}")
    return tuple(
        Column(
            question.key,
            question.text["en"],
            INTEGER,
            tuple(question.choices("en")),
            ordinal=question.key in ordinal,
        )
        for question in questionnaire
    )


# Feedback answers ordered from one end to the other (yes ... no, never ...
# always); "exactly right / too long / too short" has no order.
ORDERED_FEEDBACK = ("clarity", "relevance", "response_options", "explanation_needed")


PARTICIPANT_ID = Column(
    "participant_id",
    "Participant ID, export-local and random: different in every export, the same for both "
    "blocks of a session. Not the participant's code.",
    TEXT,
)
SESSION_ID = Column(
    "session_id",
    "Session number, export-local and random: 1..N in an order made up for this export, "
    "different in every export; rows are listed by it (sort by date for the order of "
    "sessions). Not a database key.",
)
ADMINISTRATOR = Column(
    "administrator",
    "Experimenter who ran the session, as a pseudonym (A01, A02, ... numbered by each "
    "experimenter's first session; stable across exports of this study).",
    TEXT,
)
PILOT = Column("pilot", "Pilot session (coordinator self-test)", INTEGER, YES_NO)
LANGUAGE = Column("language", "Language the SHS was administered in", TEXT, LANGUAGE_VALUES)
CONSENT_VERSION = Column(
    "consent_version",
    "Version of the information sheet and consent text (in the session's language) the "
    "participant agreed to; empty for a pilot session run without a consent text",
    TEXT,
)
PROTOCOL = Column(
    "protocol",
    "Protocol variant the block ran under (docs/design/remote.md §11.5), as recorded with the "
    "evaluation when its SHS was first shown",
    TEXT,
    (
        ("two_category", "two-category: Verified Knowledge and Glatteis prompts, with minimums"),
        ("naturalistic", "naturalistic: a task set by the coordinator, minimum turns and minutes"),
    ),
)
MODE = Column(
    "mode",
    "How the session ran (docs/design/remote.md §11)",
    TEXT,
    (
        ("supervised", "supervised: an experimenter ran the session"),
        ("remote", "remote: the participant took part alone from the study's link"),
    ),
)
SYSTEM = Column("system", "LLM system rated (name as registered in the study)", TEXT)
# Random and stable across exports (docs/design/transcripts.md §10.2), so only with free text:
# with it, two exports could be joined into one record.
TRANSCRIPT_ID = Column(
    "transcript_id",
    "The block's transcript: random, the same in every export of this study (the key that "
    "joins annotations of the transcript to its SHS ratings); empty when the block has no "
    "transcript. Exported with free text only.",
    TEXT,
    free_text=True,
)

# Quality flags (docs/design/analysis.md §8.10, rules in scoring.scores.quality): markers for the
# analyst, never a verdict on the response or on the system.
QUALITY_FLAGS = (
    Column(
        "flag_speeding",
        "Speeding: the SHS was submitted in fewer seconds than the study's speeding "
        "threshold (see About), timed exactly, before shs_seconds is rounded",
        INTEGER,
        YES_NO,
    ),
    Column(
        "flag_straight_lining",
        "Straight-lining: all ten answers q1..q10 are the same",
        INTEGER,
        YES_NO,
    ),
    Column(
        "flag_inconsistent_pairs",
        "Inconsistent pairs: at least one item pair is flagged (|c| > 0.25), i.e. "
        "flagged_pairs is not empty",
        INTEGER,
        YES_NO,
    ),
    Column(
        "flag_too_few_turns",
        "Too few turns: the block had fewer user turns (its transcript) or logged prompts "
        "(no transcript) than the study's prompt minimum (both categories together; under "
        "the naturalistic protocol, its minimum of turns); "
        "empty when the block recorded neither a transcript, a prompt nor an override",
        INTEGER,
        YES_NO,
    ),
)

EVALUATIONS = Sheet(
    "evaluations",
    "Evaluations",
    "One row per submitted SHS evaluation (one participant, one system, one block).",
    (
        Column(
            "evaluation_id",
            "Evaluation number, export-local: 2 × session_id − 2 + block, so different in "
            "every export like session_id. Not a database key.",
        ),
        PARTICIPANT_ID,
        SESSION_ID,
        Column("block", "Block of the session", INTEGER, BLOCK_VALUES),
        SYSTEM,
        LANGUAGE,
        Column("instrument_version", "SHS instrument version", TEXT),
        ADMINISTRATOR,
        *(
            Column(item.key, _item_label(item), INTEGER, SCALE_VALUES, ordinal=True)
            for item in ITEMS
        ),
        *(
            Column(
                f"s_{key}",
                f"Dimension score {dimension.label['en']} ({key}): (a − b) / 4, −1..+1, "
                "higher = more reliable as perceived",
                NUMBER,
            )
            for key, dimension in DIMENSIONS_BY_KEY.items()
        ),
        *(
            Column(
                f"c_{key}",
                f"Consistency {dimension.label['en']} ({key}): (a + b) / 4; "
                "the pair is flagged when |c| > 0.25",
                NUMBER,
            )
            for key, dimension in DIMENSIONS_BY_KEY.items()
        ),
        Column("shs", "SHS: mean of the five dimension scores, −1..+1", NUMBER),
        Column("shs100", "SHS100 = 50 × (SHS + 1), 0..100", NUMBER),
        Column(
            "band",
            "Interpretation band of the SHS, paper Table 2: the perceived reliability the "
            "raters reported (high, moderate, low, very_low), not a measurement of the system",
            TEXT,
            tuple((band.code, band.label["en"]) for band in BANDS),
        ),
        Column(
            "flagged_pairs",
            "Dimensions whose item pair is flagged (|c| > 0.25), separated by ';'; empty if none",
            TEXT,
        ),
        Column("shs_seconds", "Seconds from first display of the SHS to submission", NUMBER),
        PILOT,
        Column("date", "Date the SHS was submitted (no time of day)", DATE),
        Column(
            "session_complete",
            "The session completed the protocol (0: it ended early or is still in progress)",
            INTEGER,
            YES_NO,
        ),
        CONSENT_VERSION,
        PROTOCOL,
        *QUALITY_FLAGS,
        # Every registered companion scale's items and score (docs/design/validation.md §14.1).
        *COMPANION_COLUMNS,
        TRANSCRIPT_ID,
        Column(
            "override_reason",
            "Why the experimenter started this block's SHS below the prompt minimum "
            "(free text, as typed)",
            TEXT,
            free_text=True,
        ),
        Column(
            "prompt_texts",
            "This block's prompts as typed, one per line, in order (free text)",
            TEXT,
            free_text=True,
        ),
    ),
)

ITEM_ANSWERS = Sheet(
    "items",
    "Items",
    "Long format: one row per evaluation and item (raw answers, negative items not reversed).",
    (
        Column("evaluation_id", "Evaluation number (as in Evaluations)"),
        Column("item", "SHS item", INTEGER, tuple((i.number, _item_label(i)) for i in ITEMS)),
        Column("answer", "Raw answer", INTEGER, SCALE_VALUES, ordinal=True),
    ),
)

# English labels of the timed protocol steps; which steps there are, and their
# order, is surveys.steps' to say (a new step without a label fails here, at import).
# The companion scales' pages belong to their block's SHS step, so they are timed in it.
_STEP_LABELS = {
    Step.CONSENT: "consent and eligibility",
    Step.BLOCK1_INTERACTION: "block 1 interaction",
    Step.BLOCK1_SHS: "block 1 SHS, with the companion scales after it if the study gives any",
    Step.BLOCK2_INTERACTION: "block 2 interaction",
    Step.BLOCK2_SHS: "block 2 SHS, with the companion scales after it if the study gives any",
    Step.FEEDBACK: "administrator feedback",
    Step.DEMOGRAPHICS: "demographics",
}
STEP_DURATIONS = tuple((step.value, _STEP_LABELS[step]) for step in TIMED_STEPS)

SESSIONS = Sheet(
    "sessions",
    "Sessions",
    "One row per session that entered the data (screen-outs and withdrawals are only counted).",
    (
        SESSION_ID,
        PARTICIPANT_ID,
        ADMINISTRATOR,
        Column("language", "Language of the session", TEXT, LANGUAGE_VALUES),
        CONSENT_VERSION,
        PILOT,
        MODE,
        Column("status", "Where the session ended", TEXT, SESSION_STATUS_VALUES),
        Column("date", "Date the session started (no time of day)", DATE),
        Column("system_block1", "LLM system of block 1", TEXT),
        Column("system_block2", "LLM system of block 2", TEXT),
        *(
            Column(f"{step}_seconds", f"Seconds spent in the step: {label}", NUMBER)
            for step, label in STEP_DURATIONS
        ),
        Column("total_seconds", "Seconds from session start to its end", NUMBER),
    ),
)

PROMPT_LOG = Sheet(
    "prompt_log",
    "Prompt log",
    "Prompt-log counts per session and block (the prompts themselves are free text).",
    (
        SESSION_ID,
        Column("block", "Block of the session", INTEGER, BLOCK_VALUES),
        SYSTEM,
        Column("verified_prompts", "Prompts of the category Verified Knowledge"),
        Column("glatteis_prompts", "Prompts of the category Glatteis (trap)"),
        Column("follow_ups", "Prompts marked as follow-up"),
        Column("source_requests", "Prompts marked as source request"),
        Column("challenges", "Prompts marked as challenge"),
        Column(
            "minimum_override",
            "The experimenter started the SHS below the study's prompt minimum (reason recorded)",
            INTEGER,
            YES_NO,
        ),
    ),
)

FEEDBACK_SHEET = Sheet(
    "feedback",
    "Administrator feedback",
    "The administrator feedback questionnaire, one row per session (paper Table 5).",
    (
        SESSION_ID,
        ADMINISTRATOR,
        Column("date", "Date the feedback was given (no time of day)", DATE),
        Column(
            "administrator_form",
            "The questionnaire's number among its administrator's questionnaires in this "
            "export: 1 = their earliest, by the moment it was submitted (two at the same "
            "moment in the order the platform stored them); their highest is their most "
            "recent, the one the report's shares of administrators take. It gives only the "
            "order of one administrator's questionnaires, which date nearly gives already: "
            "no time of day.",
            INTEGER,
            ordinal=True,
        ),
        *_questionnaire_columns(FEEDBACK, ordinal=ORDERED_FEEDBACK),
    ),
)

DEMOGRAPHICS_SHEET = Sheet(
    "demographics",
    "Demographics",
    "The participant's demographics, one row per session; 9 = prefer not to say.",
    (SESSION_ID, PARTICIPANT_ID, *_questionnaire_columns(DEMOGRAPHICS)),
)

CODEBOOK = Sheet(
    "codebook",
    "Codebook",
    "Every column of every sheet, with its label and value codes.",
    (
        Column("sheet", "Sheet the column belongs to", TEXT),
        Column("variable", "Column name", TEXT),
        Column("label", "What the column holds", TEXT),
        Column("type", "integer, number, text or date", TEXT),
        Column("values", "Value codes and their labels", TEXT),
    ),
)

ABOUT = Sheet(
    "about",
    "About",
    "What this export is: instrument, study, sample, exclusions, anonymisation, credit.",
    (Column("field", "Item of the description", TEXT), Column("value", "Its value", TEXT)),
)

# Data sheets in workbook order. JSON leaves out the long Items table (it
# repeats q1..q10 of Evaluations); the one-table .sav has Evaluations only.
DATA_SHEETS = (EVALUATIONS, ITEM_ANSWERS, SESSIONS, PROMPT_LOG, FEEDBACK_SHEET, DEMOGRAPHICS_SHEET)
