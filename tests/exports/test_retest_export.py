"""The Retests table (docs/design/exports.md §7.4, docs/design/validation.md §14.2): one row per
retest SHS, joined to the Evaluations table of the same export, without identifiers,
safe in a spreadsheet, at a query count that does not grow with the study."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from exports.retest_records import RETESTS
from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import score_answers
from shs_platform.spreadsheet_cells import looks_like_formula
from surveys.models import Evaluation, Retest, RetestEvaluation, StudySession
from surveys.models.studies import hash_token
from surveys.retests import new_retest_token
from surveys.scores import set_scores
from surveys.steps import Step
from tests.exports.factories import make_experimenters, populate_study
from tests.exports.readers import (
    all_text,
    read_csv_tables,
    read_json,
    read_sav_tables,
    read_xlsx,
    sheet_dicts,
)
from tests.surveys.retests import with_retest

SCORE_KEYS = ("s_FA", "s_SR", "s_LC", "s_DP", "s_RG", "shs", "shs100", "band", "flagged_pairs")


def add_retests(study, *, scored: bool = True) -> list[str]:
    """A completed retest for every complete session of the study, each with
    answers of its own; the raw tokens (which must never be exported)."""
    tokens = []
    now = timezone.now()
    sessions = StudySession.objects.filter(study=study, step=Step.COMPLETE).order_by("pk")
    for number, session in enumerate(sessions):
        token = new_retest_token()
        tokens.append(token)
        retest = Retest.objects.create(
            session=session,
            token_hash=hash_token(token),
            due_at=now - timedelta(days=1),
            step=Retest.Step.COMPLETE,
            completed_at=now - timedelta(hours=1),
        )
        for block in (1, 2):
            # Distinct per session and block: the answers name the row.
            answers = [((number * 2 + block) // 5**item) % 5 - 2 for item in range(10)]
            evaluation = RetestEvaluation(
                retest=retest,
                block=block,
                system=session.system_for_block(block),
                language=session.language,
                first_displayed_at=now - timedelta(hours=2, seconds=block * 100),
                submitted_at=now - timedelta(hours=1, minutes=number),
                **dict(zip(ITEM_KEYS, answers, strict=True)),
            )
            if scored:
                set_scores(evaluation, score_answers(answers))
                evaluation.scored_at = now
            evaluation.save()
    return tokens


@pytest.fixture
def retested(personas, study_a):
    data = populate_study(study_a, sessions=5, system_names=["=cmd|' /C calc'!A0"])
    with_retest(study_a)
    data.secrets.update(add_retests(study_a))
    data.secrets.update(Retest.objects.values_list("token_hash", flat=True))
    return data


def _answers(row) -> tuple[int, ...]:
    return tuple(int(row[key]) for key in ITEM_KEYS)


def expected_pairs() -> set[tuple]:
    """(first answers, retest answers, block, system, days) as the database holds them,
    days worked out here in Python from the two submission times."""
    pairs = set()
    exported = RetestEvaluation.objects.filter(retest__session__is_pilot=False)
    for again in exported.select_related("retest", "system"):
        first = Evaluation.objects.get(session_id=again.retest.session_id, block=again.block)
        days = (again.submitted_at - first.submitted_at).total_seconds() / 86400
        answers = (tuple(first.answers.values()), tuple(again.answers.values()))
        pairs.add((*answers, again.block, again.system.name, round(days, 1)))
    return pairs


def test_the_retest_rows_join_the_evaluations_of_the_same_export(retested, run_export):
    # Given a study whose participants came back, exported as a workbook
    job = run_export(retested.study, "xlsx")
    sheets = read_xlsx(job.absolute_path)

    # When each Retests row is joined to Evaluations on evaluation_id
    evaluations = {row["evaluation_id"]: row for row in sheet_dicts(sheets["Evaluations"])}
    retests = sheet_dicts(sheets["Retests"])
    joined = set()
    for row in retests:
        first = evaluations[row["evaluation_id"]]
        assert (first["participant_id"], first["session_id"], first["block"]) == (
            row["participant_id"],
            row["session_id"],
            row["block"],
        )
        assert first["system"] == row["system"]
        answers = (_answers(first), _answers(row))
        joined.add((*answers, row["block"], row["system"], row["retest_days"]))

    # Then every retest meets its own first SHS, as the database pairs them
    assert len(retests) == 2 * len(retested.complete_sessions)
    assert joined == expected_pairs()
    assert list(sheets)[-3:] == ["Retests", "Codebook", "About"]


def test_the_retest_scores_are_the_engines(retested, run_export):
    rows = read_json(run_export(retested.study, "json").absolute_path)["tables"]["retests"]
    for row in rows:
        expected = score_answers(_answers(row)).stored_values()
        for key in SCORE_KEYS:
            assert row[key] == pytest.approx(expected[key]), key


def test_unscored_retests_are_scored_on_the_fly(personas, study_a, run_export):
    populate_study(study_a, sessions=2, extras=False)
    with_retest(study_a)
    add_retests(study_a, scored=False)
    rows = read_json(run_export(study_a, "json").absolute_path)["tables"]["retests"]
    assert rows and all(row["shs"] is not None and row["band"] for row in rows)


@pytest.mark.parametrize("fmt", ["csv-tables", "xlsx", "json", "sav-tables"])
def test_no_token_hash_code_or_date_leaves_with_the_retests(retested, run_export, fmt):
    job = run_export(retested.study, fmt)
    assert job.status == "succeeded", job.error_message
    text = all_text(job.absolute_path, fmt)
    for secret in retested.secrets:
        assert secret not in text
    assert not [column for column in RETESTS.columns if column.kind == "date"]


def test_the_codebook_documents_every_retest_column(retested, run_export):
    tables = read_csv_tables(run_export(retested.study, "csv-tables").absolute_path)
    header, rows = tables["retests.csv"]
    assert header == [column.key for column in RETESTS.columns]
    _codebook_header, codebook = tables["codebook.csv"]
    documented = [row["variable"] for row in codebook if row["sheet"] == "Retests"]
    assert documented == header
    # A system name a spreadsheet would run is written as text
    assert {row["system"] for row in rows} & {"'=cmd|' /C calc'!A0"}
    assert not [value for row in rows for value in row.values() if looks_like_formula(value)]


def test_the_spss_files_carry_the_retests(retested, run_export):
    tables = read_sav_tables(run_export(retested.study, "sav-tables").absolute_path)
    frame, meta = tables["retests.sav"]
    assert len(frame) == 2 * len(retested.complete_sessions)
    assert meta.column_names_to_labels["retest_days"].startswith("Days from")


def test_a_study_without_a_retest_wave_has_no_retests_table(personas, study_a, run_export):
    populate_study(study_a, sessions=2, extras=False)
    sheets = read_xlsx(run_export(study_a, "xlsx").absolute_path)
    assert "Retests" not in sheets
    assert "retests" not in read_json(run_export(study_a, "json").absolute_path)["tables"]


def test_pilot_retests_only_when_pilots_are_exported(retested, run_export):
    session = StudySession.objects.filter(retest__isnull=False).first()
    StudySession.objects.filter(pk=session.pk).update(is_pilot=True)
    without = read_json(run_export(retested.study, "json").absolute_path)["tables"]["retests"]
    with_pilots = read_json(run_export(retested.study, "json", include_pilot=True).absolute_path)[
        "tables"
    ]["retests"]
    assert len(with_pilots) - len(without) == 2


@pytest.mark.parametrize("fmt", ["csv-tables", "xlsx", "json"])
def test_the_query_count_does_not_grow_with_the_retests(
    personas, study_a, study_b, run_export, fmt
):
    populate_study(study_a, sessions=3, seed=1, extras=False)
    populate_study(
        study_b,
        sessions=30,
        seed=2,
        extras=False,
        experimenters=make_experimenters(study_b, tag="b"),
    )
    for study in (study_a, study_b):
        with_retest(study)
        add_retests(study)

    counts = []
    for study in (study_a, study_b):
        with CaptureQueriesContext(connection) as captured:
            job = run_export(study, fmt)
        assert job.status == "succeeded", job.error_message
        counts.append(len(captured))

    assert counts[0] == counts[1]


def test_the_about_sheet_says_what_the_retests_table_holds(retested, personas, study_b, run_export):
    about = read_json(run_export(retested.study, "json").absolute_path)["about"]
    rows = len(read_json(run_export(retested.study, "json").absolute_path)["tables"]["retests"])
    days = retested.study.retest_after_days
    assert about["Retests"].startswith(f"{rows} rows in the Retests table")
    assert f"again {days} days after" in about["Retests"]
    populate_study(
        study_b, sessions=1, extras=False, experimenters=make_experimenters(study_b, tag="b")
    )
    assert read_json(run_export(study_b, "json").absolute_path)["about"]["Retests"] == "none"
