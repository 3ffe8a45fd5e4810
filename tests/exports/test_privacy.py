"""Nothing that identifies a person leaves through an export (docs/design/anonymisation.md §6)."""

import re

import pytest

from scoring.instruments.shs import ITEM_KEYS
from surveys.models import Evaluation
from tests.exports.factories import make_experimenters, populate_study
from tests.exports.readers import all_text, read_csv, read_json, read_xlsx, sheet_dicts

FORMATS = ["csv", "csv-tables", "xlsx", "json", "sav", "sav-tables"]


@pytest.mark.parametrize("free_text", [False, True])
@pytest.mark.parametrize("fmt", FORMATS)
def test_no_code_token_email_or_name_in_any_cell(populated, run_export, fmt, free_text):
    if fmt.startswith("sav"):
        pytest.importorskip("pyreadstat")
    job = run_export(populated.study, fmt, include_free_text=free_text, include_pilot=True)
    assert job.status == "succeeded", job.error_message

    text = all_text(job.absolute_path, fmt).lower()

    assert len(populated.secrets) > 20
    leaked = sorted(secret for secret in populated.secrets if secret.lower() in text)
    assert leaked == []


def test_ids_are_export_local_not_database_keys(personas, study_a, study_b, run_export):
    """Primary keys would let rows of different exports be joined back together."""
    # Study B's data takes the low keys, so study A's keys cannot be 1, 2, 3...
    populate_study(
        study_b, sessions=5, extras=False, experimenters=make_experimenters(study_b, tag="b")
    )
    data = populate_study(study_a, sessions=4, extras=False)

    header, rows = read_csv(run_export(study_a, "csv").absolute_path)

    assert sorted({int(row["session_id"]) for row in rows}) == [1, 2, 3, 4]
    assert sorted(int(row["evaluation_id"]) for row in rows) == list(range(1, 9))
    evaluation_keys = set(
        Evaluation.objects.filter(session__study=study_a).values_list("pk", flat=True)
    )
    assert evaluation_keys.isdisjoint(range(1, 9))
    assert {s.pk for s in data.sessions}.isdisjoint(range(1, 5))


def _sessions_by_answers(rows: list[dict]) -> dict[int, tuple]:
    """session_id -> the answers of its evaluations (which tell sessions apart)."""
    sessions: dict[int, list] = {}
    for row in sorted(rows, key=lambda row: int(row["block"])):
        sessions.setdefault(int(row["session_id"]), []).extend(row[key] for key in ITEM_KEYS)
    return {number: tuple(answers) for number, answers in sessions.items()}


def test_session_numbers_are_random_and_new_in_every_export(personas, study_a, run_export):
    """Numbered by start, session_id would join two exports row by row."""
    populate_study(study_a, sessions=12, extras=False)
    by_start = [
        tuple(str(answer) for evaluation in session.evaluations.order_by("block")
              for answer in (getattr(evaluation, key) for key in ITEM_KEYS))
        for session in study_a.sessions.order_by("created_at", "pk")
    ]  # fmt: skip
    assert len(set(by_start)) == 12  # the answers tell the sessions apart

    first = read_csv(run_export(study_a, "csv").absolute_path)[1]
    second = read_csv(run_export(study_a, "csv").absolute_path)[1]

    numbered = _sessions_by_answers(first)
    assert sorted(numbered) == list(range(1, 13))
    in_number_order = [numbered[number] for number in sorted(numbered)]
    assert sorted(in_number_order) == sorted(by_start)
    assert in_number_order != by_start
    renumbered = _sessions_by_answers(second)
    assert [renumbered[number] for number in sorted(renumbered)] != in_number_order
    # Each file lists its sessions by their (random) number, not by start.
    for rows in (first, second):
        numbers = [int(row["session_id"]) for row in rows]
        assert numbers == sorted(numbers)


def test_every_sheet_lists_sessions_in_session_id_order(populated, run_export):
    sheets = read_xlsx(run_export(populated.study, "xlsx").absolute_path)

    for title in ("Evaluations", "Sessions", "Prompt log", "Administrator feedback"):
        rows = sheet_dicts(sheets[title])
        numbers = [row["session_id"] for row in rows]
        assert len(numbers) > 1 and numbers == sorted(numbers), title


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_two_exports_give_different_participant_ids(populated, run_export, fmt):
    def participant_ids(job):
        if fmt == "csv":
            return [row["participant_id"] for row in read_csv(job.absolute_path)[1]]
        return [
            row["participant_id"] for row in read_json(job.absolute_path)["tables"]["evaluations"]
        ]

    first = participant_ids(run_export(populated.study, fmt))
    second = participant_ids(run_export(populated.study, fmt))

    assert len(first) == len(second) > 0
    assert set(first).isdisjoint(second)


def test_administrator_pseudonyms_are_stable_between_exports(populated, run_export):
    def pseudonyms(job):
        # Rows come in an order of each export's own: compare evaluation by evaluation.
        rows = read_csv(job.absolute_path)[1]
        return sorted((*(row[key] for key in ITEM_KEYS), row["administrator"]) for row in rows)

    assert pseudonyms(run_export(populated.study, "csv")) == pseudonyms(
        run_export(populated.study, "csv", include_pilot=False)
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_free_text_only_when_asked(populated, run_export, fmt):
    if fmt.startswith("sav"):
        pytest.importorskip("pyreadstat")
    free = [*populated.prompt_texts, *populated.override_reasons]

    without = all_text(run_export(populated.study, fmt).absolute_path, fmt)
    with_text = all_text(
        run_export(populated.study, fmt, include_free_text=True).absolute_path, fmt
    )

    assert not [text for text in free if text in without]
    assert "What is the area of Austria? (0)" in with_text
    assert populated.override_reasons[0] in with_text


def test_free_text_comes_with_a_warning(populated, run_export):
    job = run_export(populated.study, "xlsx", include_free_text=True)

    about = {
        row["field"]: row["value"] for row in sheet_dicts(read_xlsx(job.absolute_path)["About"])
    }
    assert about["Free text"].startswith("WARNING")
    json_job = run_export(populated.study, "json", include_free_text=True)
    assert read_json(json_job.absolute_path)["about"]["Free text"].startswith("WARNING")


def test_times_are_reduced_to_dates(populated, run_export):
    text = all_text(run_export(populated.study, "json").absolute_path, "json")
    header, rows = read_csv(run_export(populated.study, "csv").absolute_path)

    assert "T" not in rows[0]["date"] and len(rows[0]["date"]) == 10
    # No ISO timestamps with a time of day anywhere in the document.
    assert not re.search(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d", text)


def test_the_codebook_says_what_is_stable_across_exports(populated, run_export):
    sheets = read_xlsx(run_export(populated.study, "xlsx").absolute_path)
    labels = {
        (row["sheet"], row["variable"]): row["label"] for row in sheet_dicts(sheets["Codebook"])
    }
    about = {row["field"]: row["value"] for row in sheet_dicts(sheets["About"])}

    for variable in ("participant_id", "session_id", "evaluation_id"):
        assert "different in every export" in labels[("Evaluations", variable)], variable
    assert "stable across exports" in labels[("Evaluations", "administrator")]
    assert "session_id" in about["Stable across exports"].split("Different")[1]
