"""shs_analyze's validation flags (docs/design/command-line.md §9.3): the file's columns reach
the validation analyses intact, bad files are refused whole, and the plain
command stays as it was, without the model-fitting imports."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import openpyxl
import pytest

from scoring.answers.files import parse_answers, read_answer_bytes
from scoring.instruments.companions import COMPANION_SCALES
from scoring.stats.validation_data import ValidationData
from scoring.stats.validity.convergent import convergent_validity
from tests.scoring.validation_files import (
    FAST,
    ITEMS,
    SUS,
    analyze,
    refused,
    report,
    retest_rows,
    write_csv,
    write_retest,
)

ROOT = Path(__file__).resolve().parents[2]


# --- each flag, its part -------------------------------------------------------------


@pytest.mark.parametrize(
    "flag, part",
    [("--cfa", "cfa"), ("--invariance", "invariance"), ("--convergent", "convergent"),
     ("--nested", "nested")],
)  # fmt: skip
def test_each_flag_runs_its_part_and_only_it(validation_csv, tmp_path, flag, part):
    output = tmp_path / "report.json"
    analyze(validation_csv, "-o", output, flag, *FAST)
    result = report(output)
    assert part in result["validation"]
    assert not {"cfa", "invariance", "convergent", "retest", "nested"} - {part} & set(
        result["validation"]
    )
    assert result["input"]["validation"]["parts"] == [part]
    assert result["input"]["validation"]["evaluations"] == 120


def test_convergent_receives_the_files_numbers_intact(validation_csv, tmp_path, study_data):
    output = tmp_path / "report.json"
    analyze(validation_csv, "-o", output, "--convergent")
    # Brooke's rule computed here, not by the scale: odd items code - 1, even 5 - code.
    sus = study_data["sus"].astype(float)
    brooke = 2.5 * ((sus[:, 0::2] - 1).sum(axis=1) + (5 - sus[:, 1::2]).sum(axis=1))
    by_hand = ValidationData(
        answers=study_data["answers"].astype(np.int8),
        participant=np.array(study_data["participant_id"]),
        system=np.array(study_data["system"]),
        language=np.array(study_data["language"]),
        companion_items={"sus": sus},
        companion_scores={"sus": brooke},
    )
    # shs_analyze bootstraps with its own default seed, 0, and 2,000 resamples.
    expected = json.loads(json.dumps(convergent_validity(by_hand, seed=0, resamples=2000)))
    assert report(output)["validation"]["convergent"] == expected


def test_xlsx_input_with_the_companion_scale(tmp_path, study_data):
    csv_file = write_csv(tmp_path / "study.csv", study_data)
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Evaluations"
    for line in csv_file.read_text().splitlines():
        sheet.append([int(v) if v.lstrip("-").isdigit() else v for v in line.split(",")])
    workbook.save(tmp_path / "study.xlsx")
    analyze(csv_file, "-o", tmp_path / "from_csv.json", "--convergent")
    analyze(tmp_path / "study.xlsx", "-o", tmp_path / "from_xlsx.json", "--convergent")
    from_csv, from_xlsx = report(tmp_path / "from_csv.json"), report(tmp_path / "from_xlsx.json")
    assert from_xlsx["validation"] == from_csv["validation"]
    assert from_xlsx["input"]["validation"]["companion_scales"] == ["sus"]


def test_validation_runs_every_part_the_file_supports(validation_csv, tmp_path, study_data):
    retest = write_retest(tmp_path / "retest.csv", retest_rows(study_data, 10, shift=1))
    output = tmp_path / "report.json"
    analyze(
        validation_csv,
        "-o",
        output,
        "--validation",
        "--retest",
        retest,
        "--group",
        "age_band",
        *FAST,
    )
    record = report(output)["input"]["validation"]
    assert record["parts"] == ["cfa", "invariance", "convergent", "retest", "nested"]
    assert (record["group"], record["resamples"], record["seed"]) == ("age_band", 50, 7)
    assert set(record["parts"]) <= set(report(output)["validation"])
    bare = write_csv(
        tmp_path / "bare.csv", study_data, columns=["system"], drop=SUS
    )  # one file, nothing to compare
    analyze(bare, "-o", output, "--validation")
    assert report(output)["input"]["validation"]["parts"] == ["cfa"]


def test_the_nested_bootstrap_gets_the_seed_and_resamples(validation_csv, tmp_path):
    output = tmp_path / "report.json"
    analyze(validation_csv, "-o", output, "--nested", "--resamples", "40", "--seed", "11")
    bootstrap = report(output)["validation"]["nested"]["bootstrap"]
    assert (bootstrap["resamples"], bootstrap["seed"]) == (40, 11)
    assert report(output)["validation"]["nested"]["participants"] == 60


def test_the_plain_report_is_the_same_with_a_flag(validation_csv, tmp_path):
    analyze(validation_csv, "-o", tmp_path / "plain.json")
    analyze(validation_csv, "-o", tmp_path / "flagged.json", "--convergent")
    plain, flagged = report(tmp_path / "plain.json"), report(tmp_path / "flagged.json")
    assert "validation" not in plain and "validation" not in plain["input"]
    del flagged["validation"], flagged["input"]["validation"]
    assert flagged == plain


def test_every_registered_scale_is_read_by_its_item_keys_and_scored_by_its_rule():
    """The trust scale's twelve seven-point items under a `participant` column."""
    from scoring.answers.validation import validation_data_from_table

    trust = COMPANION_SCALES["trust"]
    header = ["participant", "language", *ITEMS, *trust.item_keys]
    given = [[1 + (row + item) % 7 for item in range(12)] for row in range(3)]
    lines = [",".join(header)] + [
        ",".join([f"P{row}", "fr", *["0"] * 10, *map(str, given[row])]) for row in range(3)
    ]
    lines.append(",".join(["P3", "fr", *["1"] * 10, *[""] * 12]))  # the scale not given
    table = read_answer_bytes("\n".join(lines).encode(), name="trust.csv")
    study_data = validation_data_from_table(table, parse_answers(table), group_column=None)
    assert list(study_data.participant) == ["P0", "P1", "P2", "P3"]
    assert np.array_equal(study_data.companion_items["trust"][:3], given)
    assert np.isnan(study_data.companion_items["trust"][3]).all()
    # Jian et al.'s checklist: items 1-5 (distrust) turned round as 8 - code, then the mean.
    expected = [(sum(8 - c for c in row[:5]) + sum(row[5:])) / 12 for row in given]
    assert study_data.companion_scores["trust"][:3] == pytest.approx(expected)
    assert np.isnan(study_data.companion_scores["trust"][3])


# --- missing columns -----------------------------------------------------------------


@pytest.mark.parametrize(
    "flag, drop, message",
    [
        ("--convergent", SUS, "--convergent needs a companion scale's item columns (sus1..sus10"),
        ("--nested", ["participant_id"], "--nested needs a participant_id column"),
        ("--invariance", ["language"], "it needs a language column with at least two languages"),
        ("--convergent", ["sus9", "sus10"], "not sus9, sus10: a scale is read only with all"),
    ],
)
def test_a_part_without_its_columns_stops_the_command(tmp_path, study_data, flag, drop, message):
    source = write_csv(tmp_path / "study.csv", study_data, drop=drop)
    output = tmp_path / "report.json"
    error, _ = refused(source, "-o", output, flag, "--html", tmp_path / "report.html")
    assert message in str(error)
    assert error.returncode == 1
    assert not output.exists() and not (tmp_path / "report.html").exists()


def test_a_group_column_the_file_lacks_is_named(validation_csv, tmp_path):
    error, _ = refused(
        validation_csv, "-o", tmp_path / "r.json", "--invariance", "--group", "gender"
    )
    assert "--group names the column gender, which the file lacks" in str(error)


def test_retest_needs_a_block_or_system_in_the_answer_file(tmp_path, study_data):
    source = write_csv(tmp_path / "study.csv", study_data, drop=["block", "system"])
    retest = write_retest(tmp_path / "retest.csv", retest_rows(study_data, 4))
    error, _ = refused(source, "-o", tmp_path / "r.json", "--retest", retest)
    assert "--retest needs a block or system column in the answer file" in str(error)


# --- bad cells ---------------------------------------------------------------------


def bad_cells(study_data):
    """Row 3: sus2 out of range and sus3 empty; row 5: a NUL in sus7; row 8: no
    participant."""
    study_data["sus"] = study_data["sus"].astype(object)
    study_data["sus"][2, 1], study_data["sus"][2, 2], study_data["sus"][4, 6] = 7, "", "\x00"
    study_data["participant_id"][7] = ""
    return study_data


def test_every_bad_companion_cell_is_named_and_nothing_is_written(tmp_path, study_data):
    source = write_csv(tmp_path / "study.csv", bad_cells(study_data))
    output = tmp_path / "report.json"
    output.write_text("the earlier report\n")
    error, stderr = refused(source, "-o", output, "--convergent", "--nested")
    assert stderr.splitlines() == [
        "row 3, column sus2, value '7': sus answers are 1, 2, 3, 4, 5",
        "row 3, column sus3, value '': answer is missing (the row answers other sus items)",
        "row 5, column sus7, value '\\x00': sus answers are 1, 2, 3, 4, 5",
        "row 8, column participant_id, value '': participant_id is needed to group the evaluations",
    ]
    assert "3 of 120 data rows are invalid; no output was written" in str(error)
    assert output.read_text() == "the earlier report\n"


def test_skip_invalid_leaves_the_rows_with_bad_cells_out_and_counts_them(tmp_path, study_data):
    source = write_csv(tmp_path / "study.csv", bad_cells(study_data))
    output = tmp_path / "report.json"
    _, stderr = analyze(source, "-o", output, "--convergent", "--nested", "--skip-invalid", *FAST)
    result = report(output)
    assert "skipped 3 invalid of 120 data rows" in stderr
    assert (result["input"]["analysed"], result["input"]["skipped"]) == (117, 3)
    assert [p["row"] for p in result["input"]["problems"]] == [3, 3, 5, 8]
    assert result["n"] == result["input"]["validation"]["evaluations"] == 117
    assert result["validation"]["convergent"]["n"] == 117


def test_a_bad_answer_and_a_bad_companion_cell_are_reported_together(tmp_path, study_data):
    study_data["answers"] = study_data["answers"].astype(object)
    study_data["answers"][0, 0] = 3
    study_data["sus"] = study_data["sus"].astype(object)
    study_data["sus"][0, 9] = 0
    source = write_csv(tmp_path / "study.csv", study_data)
    _, stderr = refused(source, "-o", tmp_path / "r.json", "--convergent")
    assert stderr.splitlines() == [
        "row 1, column q1, value '3': 3 is out of range (answers are -2..+2)",
        "row 1, column sus10, value '0': sus answers are 1, 2, 3, 4, 5",
    ]


# --- usage, exit codes and the plain path ------------------------------------------------


def test_validation_options_without_a_flag_are_wrong_usage(validation_csv, tmp_path):
    error, _ = refused(validation_csv, "-o", tmp_path / "r.json", "--group", "age_band")
    assert error.returncode == 2
    assert "--group goes with the validation flags" in str(error)


IMPORTS = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shs_platform.settings")
import django
django.setup()
from django.core.management import call_command
call_command("shs_analyze", *sys.argv[1:])
heavy = ("semopy", "statsmodels", "scoring.answers.validation", "scoring.stats.validation")
print(json.dumps([name for name in heavy if name in sys.modules]))
"""


def run_in_python(*args, code=None):
    command = [sys.executable, *(["-c", code] if code else ["manage.py"]), *map(str, args)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_plain_command_does_not_import_the_model_fitting_libraries(validation_csv, tmp_path):
    plain = run_in_python(validation_csv, "-o", tmp_path / "plain.json", code=IMPORTS)
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout.splitlines()[-1]) == []
    # The same wrapper sees them once a flag asks for a fit.
    fitted = run_in_python(validation_csv, "-o", tmp_path / "cfa.json", "--cfa", code=IMPORTS)
    assert fitted.returncode == 0, fitted.stderr
    loaded = set(json.loads(fitted.stdout.splitlines()[-1]))
    assert {"semopy", "scoring.answers.validation"} <= loaded


@pytest.mark.parametrize(
    "args, status",
    [
        (["--convergent"], 0),
        (["--nested"], 1),  # no participant_id column in this file
        (["--resamples", "0", "--nested"], 2),
        (["--seed", "3"], 2),
    ],
)
def test_exit_codes_from_the_shell(tmp_path, study_data, args, status):
    source = write_csv(tmp_path / "study.csv", study_data, drop=["participant_id"])
    output = tmp_path / "report.json"
    result = run_in_python("shs_analyze", source, "-o", output, *args)
    assert result.returncode == status, result.stderr
    assert output.exists() == (status == 0)


def test_an_empty_group_label_is_no_group_not_a_bad_cell(tmp_path, study_data):
    study_data["age_band"][4] = ""
    source = write_csv(tmp_path / "study.csv", study_data)
    output = tmp_path / "report.json"
    _, stderr = analyze(source, "-o", output, "--invariance", "--group", "age_band")
    result = report(output)
    assert result["input"]["skipped"] == 0 and "row 5" not in stderr
    assert result["validation"]["invariance"]["age_band"]["without_group"] == 1
