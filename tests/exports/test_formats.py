"""Every format read back with the tools an analyst uses, and compared with the
database: rows, scores, the column contract of docs/design/exports.md §7, codebook and About."""

from datetime import date, datetime

import pytest
from django.utils import timezone, translation
from django.utils.translation import get_language_info

from exports.columns import DATA_SHEETS, EVALUATIONS
from exports.companion_columns import COMPANION_COLUMNS
from scoring.instruments.shs import CREDIT, INSTRUMENT_VERSION, ITEM_KEYS
from surveys.models import Evaluation, FeedbackResponse
from surveys.steps import TIMED_STEPS
from tests.exports.expected import expected_evaluations, included_sessions
from tests.exports.readers import (
    read_csv,
    read_csv_tables,
    read_json,
    read_sav,
    read_sav_tables,
    read_xlsx,
    sheet_dicts,
)

CONTRACT = [
    "evaluation_id", "participant_id", "session_id", "block", "system", "language",
    "instrument_version", "administrator",
    *[f"q{i}" for i in range(1, 11)],
    "s_FA", "s_SR", "s_LC", "s_DP", "s_RG", "c_FA", "c_SR", "c_LC", "c_DP", "c_RG",
    "shs", "shs100", "band", "flagged_pairs", "shs_seconds", "pilot",
]  # fmt: skip
NUMBERS = [*ITEM_KEYS, "s_FA", "s_SR", "s_LC", "s_DP", "s_RG"]
NUMBERS += ["c_FA", "c_SR", "c_LC", "c_DP", "c_RG", "shs", "shs100", "shs_seconds"]


def _as_date(value):
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(value)


FLAGS = ["flag_speeding", "flag_straight_lining", "flag_inconsistent_pairs", "flag_too_few_turns"]


def _flag(value) -> int | None:
    """A flag as read back: 0/1, or None for an empty cell (CSV ''; SPSS NaN)."""
    if value is None or value == "" or value != value:
        return None
    return int(float(value))


def _holds(row: dict, want: dict) -> bool:
    """The exported row holds the values the oracle worked out for one evaluation."""
    return (
        all(float(row[key]) == pytest.approx(want[key]) for key in NUMBERS)
        and all(
            row[key] == want[key]
            for key in ("system", "language", "instrument_version", "administrator", "band")
        )
        and (row["flagged_pairs"] or "") == want["flagged_pairs"]
        and int(row["pilot"]) == want["pilot"]
        and row["protocol"] == want["protocol"]
        and int(row["session_complete"]) == want["session_complete"]
        and _as_date(row["date"]) == want["date"]
        and all(_flag(row[key]) == want[key] for key in FLAGS)
    )


def assert_matches_database(rows: list[dict], study, *, include_pilot=False):
    """Each exported evaluation row against the oracle worked out from the database.

    Session numbers are export-local and in random order, so each exported
    session is matched to a database session whose evaluations it holds."""
    expected = expected_evaluations(study, include_pilot)
    assert len(rows) == len(expected)
    exported: dict[int, dict[int, dict]] = {}
    for row in rows:
        session_id, block = int(row["session_id"]), int(row["block"])
        assert int(row["evaluation_id"]) == 2 * session_id - 2 + block
        assert block not in exported.setdefault(session_id, {})
        exported[session_id][block] = row
    unmatched = {pk for pk, _block in expected}
    for blocks in exported.values():
        match = next(
            pk
            for pk in sorted(unmatched)
            if {b for p, b in expected if p == pk} == set(blocks)
            and all(_holds(row, expected[(pk, block)]) for block, row in blocks.items())
        )
        unmatched.remove(match)
        # One participant ID per session, the same for both blocks.
        assert len({row["participant_id"] for row in blocks.values()}) == 1
    participants = [next(iter(blocks.values()))["participant_id"] for blocks in exported.values()]
    assert len(set(participants)) == len(participants)


def test_csv_has_the_contract_columns_and_the_database_values(populated, run_export):
    job = run_export(populated.study, "csv")

    assert job.status == "succeeded", job.error_message
    header, rows = read_csv(job.absolute_path)
    assert header[: len(CONTRACT)] == CONTRACT
    # The study gives no companion scale: none of their columns is written.
    unchosen = {c.key for c in COMPANION_COLUMNS}
    assert header == [c.key for c in EVALUATIONS.active_columns(False) if c.key not in unchosen]
    assert_matches_database(rows, populated.study)
    # The abandoned session's submitted block is in, its half-filled block is not.
    assert sum(1 for row in rows if row["session_complete"] == "0") == 1
    assert Evaluation.objects.filter(submitted_at__isnull=True).count() == 1


def test_an_unscored_evaluation_is_exported_with_its_scores(populated, run_export):
    assert Evaluation.objects.submitted().filter(scored_at__isnull=True).count() == 1

    header, rows = read_csv(run_export(populated.study, "csv").absolute_path)

    assert all(row["shs"] != "" and row["band"] for row in rows)


def test_pilot_sessions_only_on_request(populated, run_export):
    _h, without = read_csv(run_export(populated.study, "csv").absolute_path)
    _h, with_pilot = read_csv(run_export(populated.study, "csv", include_pilot=True).absolute_path)

    assert {row["pilot"] for row in without} == {"0"}
    assert [row["pilot"] for row in with_pilot].count("1") == 2
    assert_matches_database(with_pilot, populated.study, include_pilot=True)


def test_xlsx_sheets_read_back_match_the_database(populated, run_export):
    job = run_export(populated.study, "xlsx")

    sheets = read_xlsx(job.absolute_path)
    assert list(sheets) == [
        "Evaluations", "Items", "Sessions", "Prompt log", "Administrator feedback",
        "Demographics", "Codebook", "About",
    ]  # fmt: skip
    evaluations = sheet_dicts(sheets["Evaluations"])
    assert sheets["Evaluations"][0][: len(CONTRACT)] == CONTRACT
    assert_matches_database(evaluations, populated.study)

    # Items: long format, ten rows per evaluation, the same answers.
    items = sheet_dicts(sheets["Items"])
    assert len(items) == 10 * len(evaluations)
    by_id = {row["evaluation_id"]: row for row in evaluations}
    for item in items:
        assert item["answer"] == by_id[item["evaluation_id"]][f"q{item['item']}"]

    sessions = included_sessions(populated.study)
    session_rows = sheet_dicts(sheets["Sessions"])
    assert len(session_rows) == len(sessions)
    complete = [row for row in session_rows if row["status"] == "complete"]
    assert len(complete) == len(populated.complete_sessions)
    assert all(row["block1_shs_seconds"] > 0 for row in complete)
    participant_of = {row["session_id"]: row["participant_id"] for row in session_rows}
    assert all(participant_of[row["session_id"]] == row["participant_id"] for row in evaluations)

    prompt_log = sheet_dicts(sheets["Prompt log"])
    assert len(prompt_log) == 2 * len(sessions)
    assert {(row["verified_prompts"], row["glatteis_prompts"]) for row in prompt_log} == {(3, 3)}
    assert sum(row["minimum_override"] for row in prompt_log) == len(populated.override_reasons)

    feedback = sheet_dicts(sheets["Administrator feedback"])
    assert len(feedback) == FeedbackResponse.objects.filter(session__is_pilot=False).count()
    assert {row["administrator"] for row in feedback} == {"A01", "A02", "A03"}
    assert len(sheet_dicts(sheets["Demographics"])) == len(populated.complete_sessions)


def test_the_codebook_documents_every_column_of_every_sheet(populated, run_export):
    sheets = read_xlsx(run_export(populated.study, "xlsx").absolute_path)

    codebook = sheet_dicts(sheets["Codebook"])
    documented = {(row["sheet"], row["variable"]) for row in codebook}
    for title, rows in sheets.items():
        for column in rows[0]:
            assert (title, column) in documented, (title, column)
    assert all(row["label"] for row in codebook)
    likert = next(
        row for row in codebook if row["sheet"] == "Evaluations" and row["variable"] == "q1"
    )
    assert "-2 = Strongly disagree" in likert["values"] and "2 = Strongly agree" in likert["values"]
    assert "The response was factually reliable." in likert["label"]
    gender = next(row for row in codebook if row["variable"] == "gender")
    assert "9 = Prefer not to say" in gender["values"]


def test_the_about_sheet_states_what_the_export_is(populated, run_export):
    study = populated.study
    rows = sheet_dicts(read_xlsx(run_export(study, "xlsx").absolute_path)["About"])
    about = {row["field"]: row["value"] for row in rows}

    assert about["Instrument"] == "System Hallucination Scale (SHS)"
    assert about["Instrument version"] == INSTRUMENT_VERSION
    assert about["Study"] == study.title
    assert about["Prompting regime"] == study.prompting_regime
    assert about["Languages offered"] == "English, German, French"
    assert about["Export date"] == timezone.localdate().isoformat()
    assert about["Pilot sessions"].startswith("excluded (1 pilot")
    assert about["Excluded: withdrawn"].startswith("1 ")
    assert about["Excluded: screened out"].startswith("1 ")
    assert about["Excluded: incomplete"].startswith("1 SHS forms opened but not submitted")
    assert about["Free text"] == "not included (counts only)"
    assert about["SHS credit"] == CREDIT["en"]
    assert about["Evaluations"] == str(len(expected_evaluations(study)))


def test_json_holds_about_codebook_and_tables(populated, run_export):
    job = run_export(populated.study, "json")

    document = read_json(job.absolute_path)
    assert document["format"] == "shs-export-1"
    assert document["about"]["Study"] == populated.study.title
    tables = document["tables"]
    assert list(tables) == ["evaluations", "sessions", "prompt_log", "feedback", "demographics"]
    assert list(tables["evaluations"][0])[: len(CONTRACT)] == CONTRACT
    assert_matches_database(tables["evaluations"], populated.study)
    documented = {(row["sheet"], row["variable"]) for row in document["codebook"]}
    for sheet in DATA_SHEETS:
        if sheet.key in tables:
            for key in tables[sheet.key][0]:
                assert (sheet.title, key) in documented


def test_spss_file_has_variable_and_value_labels(populated, run_export):
    pytest.importorskip("pyreadstat")
    job = run_export(populated.study, "sav")

    assert job.status == "succeeded", job.error_message
    frame, meta = read_sav(job.absolute_path)
    assert list(frame.columns)[: len(CONTRACT)] == CONTRACT
    rows = frame.to_dict("records")
    for row in rows:
        row["date"] = row["date"].date()
    assert_matches_database(rows, populated.study)
    labels = meta.column_names_to_labels
    assert labels["q1"].startswith("Q1 (FA, +): The response was factually reliable.")
    assert meta.variable_value_labels["q1"][-2.0] == "Strongly disagree"
    assert meta.variable_value_labels["band"]["high"] == "High perceived reliability"
    assert any("System Hallucination Scale" in line for line in meta.notes)


def test_language_names_are_english_whatever_the_ui_language(populated, run_export, settings):
    # Given a coordinator whose pages are in German
    with translation.override("de"):
        job = run_export(populated.study, "xlsx")

    # Then the file still names every language of the platform in English.
    sheets = read_xlsx(job.absolute_path)
    about = {row["field"]: row["value"] for row in sheet_dicts(sheets["About"])}
    assert about["Languages offered"] == "English, German, French"
    codebook = sheet_dicts(sheets["Codebook"])
    language = next(row for row in codebook if row["variable"] == "language")
    assert language["values"] == "; ".join(
        f"{code} = {get_language_info(code)['name']}" for code, _name in settings.LANGUAGES
    )


def test_the_sessions_sheet_times_every_step_of_the_protocol(populated, run_export):
    header = read_xlsx(run_export(populated.study, "xlsx").absolute_path)["Sessions"][0]

    assert [key for key in header if key.endswith("_seconds") and key != "total_seconds"] == [
        f"{step}_seconds" for step in TIMED_STEPS
    ]


def test_the_prompt_log_counts_every_flag(populated, run_export):
    # The factory logs six prompts per block: one follow-up, two source requests, one challenge.
    rows = sheet_dicts(read_xlsx(run_export(populated.study, "xlsx").absolute_path)["Prompt log"])

    flags = {(r["follow_ups"], r["source_requests"], r["challenges"]) for r in rows}
    assert flags == {(1, 2, 1)}


TABLE_FILES = [
    "evaluations", "items", "sessions", "prompt_log", "feedback", "demographics",
]  # fmt: skip


def test_csv_every_table_is_a_zip_of_one_csv_per_sheet(populated, run_export):
    job = run_export(populated.study, "csv-tables")

    assert job.status == "succeeded", job.error_message
    assert job.absolute_path.suffix == ".zip" and job.content_type == "application/zip"
    tables = read_csv_tables(job.absolute_path)
    assert list(tables) == [f"{key}.csv" for key in [*TABLE_FILES, "codebook", "about"]]
    workbook = read_xlsx(run_export(populated.study, "xlsx").absolute_path)
    for sheet in DATA_SHEETS:
        header, rows = tables[f"{sheet.key}.csv"]
        assert [header, len(rows)] == [workbook[sheet.title][0], len(workbook[sheet.title]) - 1]
    assert_matches_database(tables["evaluations.csv"][1], populated.study)
    documented = {(row["sheet"], row["variable"]) for row in tables["codebook.csv"][1]}
    for sheet in DATA_SHEETS:
        for key in tables[f"{sheet.key}.csv"][0]:
            assert (sheet.title, key) in documented
    about = {row["field"]: row["value"] for row in tables["about.csv"][1]}
    assert about["Study"] == populated.study.title
    # One session, one number, in every table of the export.
    sessions = {row["session_id"] for row in tables["sessions.csv"][1]}
    for key in ("evaluations", "prompt_log", "feedback", "demographics"):
        assert {row["session_id"] for row in tables[f"{key}.csv"][1]} <= sessions


def test_spss_every_table_is_a_zip_of_one_sav_per_table(populated, run_export):
    pytest.importorskip("pyreadstat")
    job = run_export(populated.study, "sav-tables")

    assert job.status == "succeeded", job.error_message
    tables = read_sav_tables(job.absolute_path)
    assert list(tables) == [f"{key}.sav" for key in TABLE_FILES]
    workbook = read_xlsx(run_export(populated.study, "xlsx").absolute_path)
    for sheet in DATA_SHEETS:
        frame, meta = tables[f"{sheet.key}.sav"]
        assert list(frame.columns) == workbook[sheet.title][0]
        assert len(frame) == len(workbook[sheet.title]) - 1
        assert set(meta.column_names_to_labels) == set(frame.columns)
        assert any("System Hallucination Scale" in line for line in meta.notes)
    frame, _meta = tables["evaluations.sav"]
    rows = frame.to_dict("records")
    for row in rows:
        row["date"] = row["date"].date()
    assert_matches_database(rows, populated.study)
    assert tables["feedback.sav"][1].variable_value_labels["clarity"][1.0] == "Yes"


@pytest.mark.parametrize(
    "table, variable, level",
    [
        ("evaluations", "q1", "ordinal"),
        ("evaluations", "q10", "ordinal"),
        ("items", "answer", "ordinal"),
        ("feedback", "clarity", "ordinal"),
        ("feedback", "explanation_needed", "ordinal"),
        ("feedback", "demographics_length", "nominal"),  # too long / too short: no order
        ("feedback", "administrator_form", "ordinal"),  # a rank: 1 = earliest
        ("evaluations", "block", "nominal"),
        ("evaluations", "band", "nominal"),
        ("evaluations", "shs", "scale"),
        ("sessions", "total_seconds", "scale"),
    ],
)
def test_spss_measure_levels(populated, run_export, table, variable, level):
    pytest.importorskip("pyreadstat")
    tables = read_sav_tables(run_export(populated.study, "sav-tables").absolute_path)

    assert tables[f"{table}.sav"][1].variable_measure[variable] == level
    if table == "evaluations":  # the one-file export says the same
        _frame, meta = read_sav(run_export(populated.study, "sav").absolute_path)
        assert meta.variable_measure[variable] == level


def test_spss_document_lines_are_wrapped_between_characters(populated, run_export):
    pytest.importorskip("pyreadstat")
    study = populated.study
    study.title = "Überprüfung früher Größen " * 4 + "Ärzteübergänge" * 5  # 85 bytes, one word
    study.prompting_regime = "ä" * 100
    study.save(update_fields=["title", "prompting_regime"])

    _frame, meta = read_sav(run_export(study, "sav").absolute_path)

    assert all(len(line.encode()) <= 80 for line in meta.notes)
    assert not [line for line in meta.notes if "\ufffd" in line]
    document = "".join(line.strip() for line in meta.notes)
    assert "Study:" + study.title.replace(" ", "") in document.replace(" ", "")
    assert "ä" * 100 in document


# The authors' released wording of the five answers (SHS reference implementation):
# the same anchors in every language, no "somewhat" / "eher" / "plutôt".
RELEASED_WORDING = {
    "en": ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"],
    "de": ["Stimme gar nicht zu", "Stimme nicht zu", "Neutral", "Stimme zu", "Stimme voll zu"],
    "fr": [
        "Pas du tout d'accord",
        "Pas d'accord",
        "Neutre",
        "D'accord",
        "Tout à fait d'accord",
    ],
}


def test_answer_labels_are_the_released_wording_at_the_source_and_in_the_files(
    populated, run_export
):
    from scoring.instruments.shs import SCALE

    for language, wording in RELEASED_WORDING.items():
        assert [option.label[language] for option in SCALE] == wording, language

    # The codebook labels the codes in English, and the About text (the SPSS
    # file's document note too) gives the wording participants saw in each language.
    sheets = read_xlsx(run_export(populated.study, "xlsx").absolute_path)
    about = {row["field"]: row["value"] for row in sheet_dicts(sheets["About"])}
    for code, *labels in zip((-2, -1, 0, 1, 2), *RELEASED_WORDING.values(), strict=True):
        sign = f"{code:+d}" if code else "0"
        assert f"{sign} = {' / '.join(labels)}" in about["Answers"]
    codebook = sheet_dicts(sheets["Codebook"])
    q1 = next(row for row in codebook if row["variable"] == "q1")
    assert q1["values"] == "; ".join(
        f"{code} = {label}"
        for code, label in zip((-2, -1, 0, 1, 2), RELEASED_WORDING["en"], strict=True)
    )
    band = next(row for row in codebook if row["variable"] == "band")
    assert "perceived reliability" in band["label"]

    pytest.importorskip("pyreadstat")
    _frame, meta = read_sav(run_export(populated.study, "sav").absolute_path)
    note = " ".join(" ".join(meta.notes).split())  # the note wraps lines at 80 bytes
    for labels in RELEASED_WORDING.values():
        for label in labels:
            assert label in note
    assert meta.variable_value_labels["q1"] == {
        float(code): label
        for code, label in zip((-2, -1, 0, 1, 2), RELEASED_WORDING["en"], strict=True)
    }
