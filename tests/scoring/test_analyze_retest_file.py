"""shs_analyze --retest FILE (docs/design/command-line.md §9.3): the retest file joined to the
answer file on participant and block (or system), its rows counted and its bad
cells named; the pairs reach scoring.stats.retest.stability as written."""

import json

import numpy as np
import openpyxl
import pytest

from scoring.answers.files import parse_answers, read_answer_file
from scoring.answers.validation import ValidationFileError, retest_pairs
from scoring.stats.retest.stability import retest_report
from scoring.stats.validation_data import RetestPairs
from tests.scoring.validation_files import (
    ITEMS,
    analyze,
    refused,
    report,
    retest_rows,
    write_csv,
    write_retest,
)


def test_retest_flag_joins_the_second_file_on_participant_and_block(
    validation_csv, tmp_path, study_data
):
    retest = write_retest(tmp_path / "retest.csv", retest_rows(study_data, 12, shift=1))
    output = tmp_path / "report.json"
    analyze(validation_csv, "-o", output, "--retest", retest)
    result = report(output)
    assert result["input"]["validation"]["parts"] == ["retest"]
    # The same pairs built by hand from the numbers written to the files.
    rows = retest_rows(study_data, 12, shift=1)
    pairs = RetestPairs(
        first=study_data["answers"][:12].astype(np.int8),
        second=np.array([row[3:] for row in rows], dtype=np.int8),
        participant=np.array(study_data["participant_id"][:12]),
        days=np.arange(7.0, 19.0),
    )
    # shs_analyze's bootstrap defaults: seed 0, 2000 resamples.
    expected = json.loads(json.dumps(retest_report(pairs, resamples=2000, seed=0)))
    assert result["validation"]["retest"] == expected
    assert result["input"]["validation"]["retest"] == {
        "file": "retest.csv",
        "rows": 12,
        "skipped": 0,
        "pairs": 12,
        "joined_on": ["participant_id", "block"],
        "unmatched": 0,
        "unmatched_rows": [],
    }


def test_unmatched_retest_rows_are_counted_and_named(validation_csv, tmp_path, study_data):
    rows = retest_rows(study_data, 6) + [["P999", 1, 3, *([0] * 10)], ["P000", 3, 3, *([0] * 10)]]
    retest = write_retest(tmp_path / "retest.csv", rows)
    output = tmp_path / "report.json"
    _, stderr = analyze(validation_csv, "-o", output, "--retest", retest)
    assert (
        "retest.csv: 2 of 8 retest rows match no evaluation by participant_id and block "
        "and are left out (rows 7, 8)" in stderr
    )
    record = report(output)["input"]["validation"]["retest"]
    assert (record["pairs"], record["unmatched"], record["unmatched_rows"]) == (6, 2, [7, 8])


def test_a_duplicate_retest_row_is_refused_naming_both_rows(validation_csv, tmp_path, study_data):
    rows = retest_rows(study_data, 5)
    retest = write_retest(tmp_path / "retest.csv", rows + [rows[1]])
    output = tmp_path / "report.json"
    error, _ = refused(validation_csv, "-o", output, "--retest", retest)
    assert "retest file: rows 2 and 6 are both participant P000, block 2: each may appear once" in (
        str(error)
    )
    assert not output.exists()


def test_a_duplicate_evaluation_in_the_answer_file_is_refused(tmp_path, study_data):
    study_data["block"][3] = "1"  # P001 now has block 1 twice (rows 3 and 4)
    source = write_csv(tmp_path / "study.csv", study_data)
    retest = write_retest(tmp_path / "retest.csv", retest_rows(study_data, 4))
    error, _ = refused(source, "-o", tmp_path / "r.json", "--retest", retest)
    assert "answer file: rows 3 and 4 are both participant P001, block 1" in str(error)


def test_without_a_block_column_the_retest_is_joined_on_system(
    validation_csv, tmp_path, study_data
):
    rows = retest_rows(study_data, 8, key="system", days=False)
    retest = write_retest(tmp_path / "retest.csv", rows, key="system", days=False)
    output = tmp_path / "report.json"
    analyze(validation_csv, "-o", output, "--retest", retest)
    record = report(output)["input"]["validation"]["retest"]
    assert (record["joined_on"], record["pairs"]) == (["participant_id", "system"], 8)


def test_bad_retest_cells_are_named_with_the_file(validation_csv, tmp_path, study_data):
    rows = retest_rows(study_data, 5)
    rows[1][2] = "a week"
    rows[3][0] = ""
    retest = write_retest(tmp_path / "retest.csv", rows)
    output = tmp_path / "report.json"
    error, stderr = refused(validation_csv, "-o", output, "--retest", retest)
    assert stderr.splitlines() == [
        "retest.csv: row 2, column days, value 'a week': days must be a number, 0 or more",
        "retest.csv: row 4, column participant_id, value '': participant_id is needed to "
        "group the evaluations",
    ]
    assert "retest.csv: 2 of 5 data rows are invalid" in str(error)
    _, stderr = analyze(validation_csv, "-o", output, "--retest", retest, "--skip-invalid")
    assert report(output)["input"]["validation"]["retest"]["pairs"] == 3


def test_an_export_workbook_is_its_own_retest_file(tmp_path, study_data):
    """Evaluations and Retests sheets as the export writes them (retest_days, one unknown)."""
    evaluations = write_csv(tmp_path / "study.csv", study_data).read_text().splitlines()
    rows = retest_rows(study_data, 6, shift=1)
    rows[5][2] = ""
    workbook = openpyxl.Workbook()
    workbook.active.title = "About"
    for title, lines in (
        ("Evaluations", evaluations),
        ("Retests", [",".join(["participant_id", "block", "retest_days", *ITEMS])]
         + [",".join(map(str, row)) for row in rows]),
    ):  # fmt: skip
        sheet = workbook.create_sheet(title)
        for line in lines:
            sheet.append([int(v) if v.lstrip("-").isdigit() else v for v in line.split(",")])
    workbook.save(tmp_path / "export.xlsx")
    output = tmp_path / "report.json"
    analyze(tmp_path / "export.xlsx", "-o", output, "--retest", tmp_path / "export.xlsx")
    result = report(output)
    assert result["input"]["validation"]["retest"]["pairs"] == 6
    pairs = RetestPairs(
        first=study_data["answers"][:6].astype(np.int8),
        second=np.array([row[3:] for row in rows], dtype=np.int8),
        participant=np.array(study_data["participant_id"][:6]),
        days=np.array([7.0, 8.0, 9.0, 10.0, 11.0, np.nan]),
    )
    expected = retest_report(pairs, resamples=2000, seed=0)
    assert result["validation"]["retest"] == json.loads(json.dumps(expected))


def test_joining_a_retest_to_an_answer_file_without_participants_is_refused_by_name(
    tmp_path, study_data
):
    # shs_analyze checks this first; the join itself refuses too, for any other caller.
    answers = read_answer_file(write_csv(tmp_path / "a.csv", study_data, drop=("participant_id",)))
    retest = read_answer_file(write_retest(tmp_path / "r.csv", retest_rows(study_data, 4)))
    with pytest.raises(ValidationFileError, match="answer file has no such column"):
        retest_pairs(answers, parse_answers(answers), retest, parse_answers(retest))
