"""The self-description every export carries: the About sheet (or JSON
object, or SPSS file note) and the codebook, both written from the data."""

from django.utils import timezone

from exports.columns import ABOUT, CODEBOOK, LANGUAGE_NAMES, Sheet
from exports.companion_columns import companion_about
from exports.dataset_types import ExportDataset
from scoring.instruments.shs import (
    INSTRUMENT_VERSION,
    INTERPRETATION_NOTE,
    SCALE,
    attribution,
)

FREE_TEXT_WARNING = (
    "WARNING: this export includes free text (prompt texts, override reasons and the "
    "transcripts of the blocks) exactly as typed or answered during the sessions. Free text "
    "can contain names, places or other details that identify a person. Read it and remove "
    "such details before sharing the file."
)


def instrument_notes() -> dict[str, str]:
    """How every export and the study report explain, credit and cite the SHS
    (in English, like every other text of an export)."""
    credit = attribution("en")
    return {
        "interpretation": INTERPRETATION_NOTE["en"],
        "credit": credit["credit"],
        "licence": f"{credit['licence_name']}, {credit['licence_url']}",
        "citation": credit["citation"],
    }


WORDING_LANGUAGES = ("en", "de", "fr")


def answer_wording() -> str:
    """The five answers as participants saw them in each language: the files code
    them -2..+2 with English labels, the forms worded them like this."""
    wordings = (
        f"{option.code:+d} = {' / '.join(option.label[code] for code in WORDING_LANGUAGES)}"
        for option in SCALE
    )
    names = " / ".join(LANGUAGE_NAMES.get(code, code) for code in WORDING_LANGUAGES)
    # "+0" reads oddly: the middle answer is plain 0.
    return "; ".join(wordings).replace("+0 =", "0 =") + f" ({names})"


# The About fields in reading order: each text is filled in from the export's
# figures (about_values) with str.format, so that only the figures change.
ABOUT_TEXT = (
    ("Instrument", "System Hallucination Scale (SHS)"),
    ("Instrument version", "{versions}"),
    ("Study", "{title}"),
    ("Prompting regime", "{regime}"),
    ("Prompt minimum per block", "{min_verified} Verified Knowledge, {min_glatteis} Glatteis"),
    ("Protocol", "{protocol} (the column protocol records each evaluation's)"),
    ("Languages offered", "{languages}"),
    ("Consent versions", "{consent_versions}"),
    ("Export date", "{export_date}"),
    ("Export format", "{format_label}"),
    ("Evaluations", "{evaluations}"),
    ("Sessions", "{sessions}"),
    ("Participants", "{sessions}"),
    ("Administrators", "{administrators}"),
    ("Pilot sessions", "{pilot_sessions}"),
    (
        "Excluded: withdrawn",
        "{withdrawn} sessions; their data was deleted when the participant "
        "withdrew, during the session or at their request afterwards",
    ),
    ("Excluded: screened out", "{ineligible} people not eligible; only this count is kept"),
    (
        "Excluded: incomplete",
        "{unsubmitted_evaluations} SHS forms opened but not submitted. "
        "Submitted evaluations of {abandoned} abandoned and "
        "{in_progress} unfinished sessions are included, marked "
        "session_complete = 0.",
    ),
    ("Free text", "{free_text}"),
    ("Transcripts", "{transcripts}"),
    ("Retests", "{retests}"),
    (
        "Anonymisation",
        "participant_id is random and made up for this export only; session_id and "
        "evaluation_id are export-local numbers in a random order, not database keys; "
        "experimenters appear as pseudonyms (A01, A02, ...); times are reduced to dates "
        "and durations. No names, e-mail addresses, IP addresses, participant codes or "
        "session links.",
    ),
    ("Stable across exports", "{stable}"),
    (
        "Scoring",
        "s_i = (a − b) / 4 and c_i = (a + b) / 4 per dimension; a pair is flagged when "
        "|c_i| > 0.25; SHS = mean of s_i; SHS100 = 50 × (SHS + 1). Only submitted "
        "evaluations are exported.",
    ),
    (
        "Quality flags",
        "flag_speeding: the SHS took under {speeding_seconds} s (the study's threshold; "
        "0 = off); flag_straight_lining: ten equal answers; flag_inconsistent_pairs: "
        "flagged_pairs not empty; flag_too_few_turns: fewer user turns (or logged prompts "
        "without a transcript) than {min_prompts} per block ({min_turns} turns under the "
        "naturalistic protocol), empty when nothing was "
        "recorded. Markers for the analyst; no evaluation is left out of this file.",
    ),
    ("Answers", "{answers}"),
    (
        "Interpretation bands (band)",
        "high, moderate, low, very_low (paper Table 2; labels in the codebook): the "
        "perceived reliability the raters reported, not a measurement of the system.",
    ),
    ("Interpretation", "{interpretation}"),
    (
        "Spreadsheet safety",
        "Text cells starting with =, +, -, @, tab or carriage return are stored as text "
        "(CSV: prefixed with a single quote) so that no spreadsheet runs them as formulas. "
        "In CSV files the same quote also goes before such a start after a comma, "
        "semicolon, tab or line break inside a text, where a spreadsheet set to another "
        "separator would split it into cells.",
    ),
    ("SHS credit", "{credit}"),
    ("Licence of the SHS items", "{licence}"),
    ("Cite the SHS as", "{citation}"),
)


STABLE = (
    "Stable: administrator pseudonyms, system names, answers, scores and dates. "
    "Different in every export: participant_id, session_id, evaluation_id and the "
    "order of the rows, so two exports cannot be joined row by row or by ID."
)
# transcript_id is the annotators' key, so it must not change (docs/design/transcripts.md §10.2).
STABLE_WITH_FREE_TEXT = (
    "Stable: administrator pseudonyms, system names, answers, scores, dates and "
    "transcript_id. Different in every export: participant_id, session_id, evaluation_id "
    "and the order of the rows. transcript_id is random but the same in every export "
    "with free text, so two such exports can be joined by it: treat them as one."
)
TRANSCRIPTS_TEXT = (
    "{turns} turns in the Transcripts table, one row per turn of each block's transcript, "
    "joined to Evaluations on transcript_id. A redacted turn holds the coordinator's "
    "replacement text (redacted = 1); who imported a transcript or redacted a turn is not "
    "exported. Turn times are reduced to dates and durations. The SPSS files carry no "
    "transcripts."
)


RETESTS_TEXT = (
    "{rows} rows in the Retests table: the SHS given again {days} days after the session "
    "(the retest wave), one row per block, joined to Evaluations on evaluation_id "
    "(or participant_id and block) within this export; retest_days is the time since "
    "the first SHS."
)


def retests_text(dataset: ExportDataset) -> str:
    if "retests" not in dataset.tables:
        return "none" if dataset.study.retest_after_days is None else "none submitted yet"
    days = dataset.study.retest_after_days or "some"
    return RETESTS_TEXT.format(rows=dataset.table("retests").count, days=days)


def transcripts_text(dataset: ExportDataset) -> str:
    if "transcripts" not in dataset.tables:
        return "not included (free text: exported only when asked for)"
    return TRANSCRIPTS_TEXT.format(turns=dataset.table("transcripts").count)


def about_fields(dataset: ExportDataset, format_label: str) -> list[tuple[str, str]]:
    """(field, value) pairs describing the export, in reading order."""
    values = about_values(dataset, format_label)
    fields = [(field, text.format_map(values)) for field, text in ABOUT_TEXT]
    return fields + companion_about(dataset.study)


def about_values(dataset: ExportDataset, format_label: str) -> dict[str, object]:
    """The figures and texts of this export that the About fields name."""
    study, excluded = dataset.study, dataset.exclusions
    pilot = (
        f"included and marked pilot = 1 ({excluded['pilot']} pilot sessions)"
        if dataset.include_pilot
        else f"excluded ({excluded['pilot']} pilot sessions left out)"
    )
    free_text = FREE_TEXT_WARNING if dataset.include_free_text else "not included (counts only)"
    languages = ", ".join(LANGUAGE_NAMES.get(code, code) for code in study.languages)
    return {
        **excluded,
        **instrument_notes(),
        "versions": ", ".join(dataset.instrument_versions) or INSTRUMENT_VERSION,
        "title": study.title,
        "regime": study.prompting_regime,
        "min_verified": study.min_verified_prompts,
        "min_glatteis": study.min_glatteis_prompts,
        "speeding_seconds": study.speeding_seconds,
        "min_prompts": study.min_verified_prompts + study.min_glatteis_prompts,
        "min_turns": study.min_turns,
        "protocol": study.protocol,
        "languages": languages or "-",
        "consent_versions": consent_versions_text(dataset),
        "export_date": timezone.localdate().isoformat(),
        "format_label": format_label,
        "evaluations": dataset.table("evaluations").count,
        "sessions": len(dataset.sessions),
        "administrators": dataset.administrators,
        "pilot_sessions": pilot,
        "free_text": free_text,
        "stable": STABLE_WITH_FREE_TEXT if dataset.include_free_text else STABLE,
        "transcripts": transcripts_text(dataset),
        "retests": retests_text(dataset),
        "answers": answer_wording(),
    }


def consent_versions_text(dataset: ExportDataset) -> str:
    """Which versions of the consent text the exported sessions agreed to, per language
    (each session's own version is the Sessions column consent_version)."""
    if not dataset.consent_versions:
        return "-"
    return "; ".join(
        f"{LANGUAGE_NAMES.get(language, language)} {version or '(none)'}: "
        f"{count} session{'s' if count != 1 else ''}"
        for language, version, count in dataset.consent_versions
    )


def codebook_rows(sheets: list[tuple[Sheet, tuple]]) -> list[tuple[str, str, str, str, str]]:
    """(sheet, variable, label, type, values) for every column of every given sheet,
    including the Codebook and About sheets themselves."""
    documented = [*sheets, (CODEBOOK, CODEBOOK.columns), (ABOUT, ABOUT.columns)]
    return [
        (sheet.title, column.key, column.label, column.kind, column.values_text)
        for sheet, columns in documented
        for column in columns
    ]
