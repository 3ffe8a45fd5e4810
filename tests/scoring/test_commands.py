"""shs_score and shs_analyze: the command-line contract of docs/design/command-line.md §9."""

import codecs
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]
ITEMS = [f"q{k}" for k in range(1, 11)]
HEADER = "evaluation_id,system," + ",".join(ITEMS)
SCORE_COLUMNS = [
    "s_FA", "s_SR", "s_LC", "s_DP", "s_RG", "c_FA", "c_SR", "c_LC", "c_DP", "c_RG",
    "shs", "shs100", "band", "flagged_pairs",
]  # fmt: skip
GOOD_ROWS = [
    "1,Mistral,2,-2,1,-1,0,0,2,-2,1,-1",
    "2,Gemini,0,0,0,0,0,0,0,0,0,0",
    "3,Claude,1,1,-1,-1,2,-2,0,1,-2,2",
]


def run(command, *args):
    """Call a command in-process; returns (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    call_command(command, *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def run_failing(command, *args):
    """Call a command that must fail; returns (error message, stderr)."""
    err = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(command, *map(str, args), stdout=io.StringIO(), stderr=err)
    return str(raised.value), err.getvalue()


def read_csv(path, delimiter=","):
    with open(path, encoding="utf-8-sig", newline="") as stream:
        return list(csv.DictReader(stream, delimiter=delimiter))


@pytest.fixture
def answers_csv(tmp_path):
    path = tmp_path / "answers.csv"
    path.write_text(HEADER + "\n" + "\n".join(GOOD_ROWS) + "\n", encoding="utf-8")
    return path


# --- shs_score ------------------------------------------------------------------


def test_shs_score_appends_the_score_columns_after_the_input_columns(answers_csv, tmp_path):
    output = tmp_path / "scored.csv"
    stdout, _ = run("shs_score", answers_csv, "-o", output)
    rows = read_csv(output)
    assert list(rows[0]) == HEADER.split(",") + SCORE_COLUMNS
    assert "scored 3 rows" in stdout
    first, neutral, mixed = rows
    assert (first["evaluation_id"], first["system"], first["q1"]) == ("1", "Mistral", "2")
    assert [first[f"s_{key}"] for key in ("FA", "SR", "LC", "DP", "RG")] == [
        "1.0", "0.5", "0.0", "1.0", "0.5"
    ]  # fmt: skip
    assert (first["shs"], first["shs100"], first["band"], first["flagged_pairs"]) == (
        "0.6",
        "80.0",
        "high",
        "",
    )
    assert (neutral["shs"], neutral["band"], neutral["flagged_pairs"]) == ("0.0", "moderate", "")
    # FA (1, 1) and SR (-1, -1) agree with both of their opposite items: flagged.
    assert mixed["flagged_pairs"] == "FA;SR"
    assert mixed["c_FA"] == "0.5"
    assert mixed["s_RG"] == "-1.0"


@pytest.mark.parametrize(
    ("bad_row", "expected"),
    [
        ("4,X,2,-2,1,-1,0,0,2,-2,1,3", "row 4, column q10, value '3': 3 is out of range"),
        ("4,X,2,-2,1,-1,0,0,2,-2,1,-5", "row 4, column q10, value '-5': -5 is out of range"),
        ("4,X,2,-2,1,-1,0,0,2.5,-2,1,1", "row 4, column q7, value '2.5': '2.5' is not an integer"),
        ("4,X,2,-2,1,-1,0,0,yes,-2,1,1", "row 4, column q7, value 'yes': 'yes' is not an integer"),
        ("4,X,2,-2,,-1,0,0,2,-2,1,1", "row 4, column q3, value '': answer is missing"),
        ("4,X,2,-2,1,-1,0,0,2", "row 4, column q8, value '': answer is missing"),
    ],
    ids=["above-range", "below-range", "fraction", "word", "blank", "short-row"],
)
@pytest.mark.parametrize("command", ["shs_score", "shs_analyze"])
def test_one_bad_row_stops_the_command_and_writes_nothing(tmp_path, command, bad_row, expected):
    source = tmp_path / "answers.csv"
    source.write_text("\n".join([HEADER, *GOOD_ROWS, bad_row]) + "\n")
    output = tmp_path / "out"
    message, stderr = run_failing(command, source, "-o", output)
    assert expected in stderr
    assert message.startswith("1 of 4 data rows are invalid; no output was written")
    assert "--skip-invalid" in message
    assert not output.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]


def test_every_bad_row_is_named(tmp_path):
    source = tmp_path / "answers.csv"
    source.write_text(
        "\n".join(
            [
                HEADER,
                "1,A,9,0,0,0,0,0,0,0,0,0",
                GOOD_ROWS[0],
                "3,B,0,0,0,x,0,0,0,0,0,",
                GOOD_ROWS[1],
            ]
        )
    )
    message, stderr = run_failing("shs_score", source, "-o", tmp_path / "out.csv")
    assert stderr.splitlines() == [
        "row 1, column q1, value '9': 9 is out of range (answers are -2..+2)",
        "row 3, column q4, value 'x': 'x' is not an integer answer",
        "row 3, column q10, value '': answer is missing",
    ]
    assert message.startswith("2 of 4 data rows are invalid")


def test_skip_invalid_writes_the_valid_rows_and_reports_the_rest(tmp_path):
    source = tmp_path / "answers.csv"
    source.write_text("\n".join([HEADER, GOOD_ROWS[0], "2,B,5,0,0,0,0,0,0,0,0,0", GOOD_ROWS[2]]))
    output = tmp_path / "scored.csv"
    stdout, stderr = run("shs_score", source, "-o", output, "--skip-invalid")
    assert "row 2, column q1, value '5': 5 is out of range" in stderr
    assert "skipped 1 invalid of 3 data rows" in stderr
    assert [row["evaluation_id"] for row in read_csv(output)] == ["1", "3"]
    assert "scored 2 rows" in stdout


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "answers.csv is empty"),
        (HEADER.encode() + b"\n", "answers.csv has a header but no data rows"),
        (
            b"evaluation_id,q1,q2,q3,q4,q5,q6,q7,q8,q9\n1,0,0,0,0,0,0,0,0,0\n",
            "answers.csv is missing the column q10",
        ),
        (
            (HEADER + "\n1,Müller,0,0,0,0,0,0,0,0,0,0\n").encode("cp1252"),
            "answers.csv is not UTF-8 text (byte 0xfc on line 2",
        ),
    ],
    ids=["empty-file", "header-only", "missing-column", "wrong-encoding"],
)
@pytest.mark.parametrize("command", ["shs_score", "shs_analyze"])
def test_unreadable_files_stop_both_commands(tmp_path, command, content, expected):
    source = tmp_path / "answers.csv"
    source.write_bytes(content)
    output = tmp_path / "out"
    message, _ = run_failing(command, source, "-o", output)
    assert expected in message
    assert not output.exists()


def test_bom_and_semicolons_from_excel_are_kept_in_the_output(tmp_path):
    source = tmp_path / "excel.csv"
    text = "\n".join([HEADER, *GOOD_ROWS]).replace(",", ";") + "\n"
    source.write_bytes(codecs.BOM_UTF8 + text.encode())
    output = tmp_path / "scored.csv"
    run("shs_score", source, "-o", output)
    data = output.read_bytes()
    assert data.startswith(codecs.BOM_UTF8)
    rows = read_csv(output, delimiter=";")
    assert list(rows[0])[:2] == ["evaluation_id", "system"]
    # flagged_pairs contains the separator, so the writer quotes it.
    assert rows[2]["flagged_pairs"] == "FA;SR"
    assert b'"FA;SR"' in data


def test_xlsx_input(tmp_path):
    source = tmp_path / "answers.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.append(["evaluation_id", *[k.upper() for k in ITEMS]])
    workbook.active.append([1, 2, -2, 1, -1, 0, 0, 2, -2, 1, -1])
    workbook.active.append([2, 2, -2, 1, -1, 0, 0, 2, -2, 1, "four"])
    workbook.save(source)
    output = tmp_path / "scored.csv"
    message, stderr = run_failing("shs_score", source, "-o", output)
    assert "row 2, column Q10, value 'four': 'four' is not an integer answer" in stderr
    run("shs_score", source, "-o", output, "--skip-invalid")
    rows = read_csv(output)
    assert [(row["evaluation_id"], row["shs"]) for row in rows] == [("1", "0.6")]


def test_scoring_a_scored_file_recomputes_its_score_columns(answers_csv, tmp_path):
    once, twice = tmp_path / "once.csv", tmp_path / "twice.csv"
    run("shs_score", answers_csv, "-o", once)
    _, stderr = run("shs_score", once, "-o", twice)
    assert "recomputed the existing columns s_FA" in stderr
    assert once.read_bytes() == twice.read_bytes()


def test_output_that_cannot_be_written_is_an_error(answers_csv, tmp_path):
    message, _ = run_failing("shs_score", answers_csv, "-o", tmp_path / "no" / "such" / "dir.csv")
    assert message.startswith("cannot write")


def test_exit_status_is_non_zero_from_the_shell(tmp_path):
    source = tmp_path / "answers.csv"
    source.write_text(HEADER + "\n1,A,3,0,0,0,0,0,0,0,0,0\n")
    output = tmp_path / "out.csv"
    result = subprocess.run(
        [sys.executable, "manage.py", "shs_score", str(source), "-o", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "row 1, column q1, value '3': 3 is out of range" in result.stderr
    assert not output.exists()


# --- shs_analyze ----------------------------------------------------------------


@pytest.fixture
def study_csv(tmp_path):
    rng = np.random.default_rng(11)
    perceived = rng.normal(size=(120, 1))
    answers = np.clip(
        np.rint(perceived * np.array([1, -1] * 5) + rng.normal(size=(120, 10))), -2, 2
    )
    path = tmp_path / "study.csv"
    lines = [HEADER] + [
        f"{i},S{i % 5}," + ",".join(str(int(v)) for v in row) for i, row in enumerate(answers)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path, answers.astype(int)


def test_shs_analyze_writes_the_spec_4_json(study_csv, tmp_path):
    from scoring.stats.reliability.analysis import analyze

    source, answers = study_csv
    output = tmp_path / "report.json"
    stdout, _ = run("shs_analyze", source, "-o", output)
    report = json.loads(output.read_text())
    assert report.pop("input") == {
        "file": "study.csv",
        "rows": 120,
        "analysed": 120,
        "skipped": 0,
        "problems": [],
    }
    assert report == json.loads(json.dumps(analyze(answers)))
    assert report["n"] == 120
    assert "analysed 120 evaluations" in stdout
    assert not (tmp_path / "report.html").exists()


def test_shs_analyze_html_report(study_csv, tmp_path):
    source, _ = study_csv
    output, page = tmp_path / "report.json", tmp_path / "report.html"
    run("shs_analyze", source, "-o", output, "--html", page, "--language", "de", "--title", "Pilot")
    html = page.read_text()
    assert html.count('src="data:image/png;base64,') == 3
    assert "<title>Pilot</title>" in html
    assert "Die Antwort war sachlich zuverlässig." in html  # item text in German
    assert "Quelle: study.csv." in html  # the report speaks the chosen language
    assert output.exists()


def test_shs_analyze_with_bad_rows_writes_neither_file(tmp_path):
    source = tmp_path / "answers.csv"
    source.write_text("\n".join([HEADER, *GOOD_ROWS, "4,X,0,0,0,0,0,0,0,0,0,7"]))
    output, page = tmp_path / "report.json", tmp_path / "report.html"
    message, stderr = run_failing("shs_analyze", source, "-o", output, "--html", page)
    assert "row 4, column q10, value '7': 7 is out of range" in stderr
    assert "no output was written" in message
    assert not output.exists() and not page.exists()


def test_shs_analyze_of_too_few_rows_reports_nulls_with_reasons(tmp_path):
    source = tmp_path / "answers.csv"
    source.write_text("\n".join([HEADER, GOOD_ROWS[0]]))
    output = tmp_path / "report.json"
    _, stderr = run("shs_analyze", source, "-o", output)
    report = json.loads(output.read_text())
    assert report["cronbach_alpha"] == {"alpha": None, "ci95": None}
    assert "note: Cronbach's alpha: needs at least 3 evaluations, got 1" in stderr
    assert "omega_total" not in stderr


def test_shs_analyze_skip_invalid_records_the_left_out_rows_in_the_report(tmp_path):
    source = tmp_path / "answers.csv"
    rows = [*GOOD_ROWS, "4,X,0,0,0,0,0,0,0,0,0,7", "5,Y,x,0,0,0,0,0,0,0,0,0"]
    source.write_text("\n".join([HEADER, *rows]))
    output, page = tmp_path / "report.json", tmp_path / "report.html"
    run("shs_analyze", source, "-o", output, "--html", page, "--skip-invalid")
    report = json.loads(output.read_text())
    assert report["n"] == 3
    assert report["input"] == {
        "file": "answers.csv",
        "rows": 5,
        "analysed": 3,
        "skipped": 2,
        "problems": [
            {
                "row": 4,
                "column": "q10",
                "value": "7",
                "reason": "7 is out of range (answers are -2..+2)",
            },
            {"row": 5, "column": "q1", "value": "x", "reason": "'x' is not an integer answer"},
        ],
    }
    html = page.read_text()
    assert "2 of 5 data rows were left out as invalid" in html
    assert "7 is out of range (answers are -2..+2)" in html


@pytest.mark.parametrize("command", ["shs_analyze", "shs_score"])
def test_a_file_whose_rows_are_all_invalid_fails_even_with_skip_invalid(tmp_path, command):
    source = tmp_path / "answers.csv"
    source.write_text("\n".join([HEADER, "1,X,0,0,0,0,0,0,0,0,0,7", "2,Y,9,0,0,0,0,0,0,0,0,0"]))
    output = tmp_path / "out"
    message, _ = run_failing(command, source, "-o", output, "--skip-invalid")
    assert message == "all 2 data rows are invalid; no output was written"
    assert not output.exists()


def test_shs_analyze_small_sample_threshold_is_an_option(study_csv, tmp_path):
    source, _ = study_csv
    output = tmp_path / "report.json"
    run("shs_analyze", source, "-o", output)
    assert json.loads(output.read_text())["small_sample"] == {"threshold": 30, "caution": False}
    _, stderr = run("shs_analyze", source, "-o", output, "--small-sample", "200")
    assert json.loads(output.read_text())["small_sample"] == {"threshold": 200, "caution": True}
    assert "note: Cronbach's alpha: based on 120 evaluations, fewer than the 200" in stderr
