"""Reading answer files: CSV dialects, encodings, XLSX, and what is wrong with a row."""

import codecs

import numpy as np
import openpyxl
import pytest

from scoring.answers.files import (
    AnswerFileError,
    parse_answers,
    read_answer_bytes,
    read_answer_file,
    write_atomically,
)

HEADER = "id,q1,q2,q3,q4,q5,q6,q7,q8,q9,q10"
GOOD = "1,2,-2,1,-1,0,0,2,-2,1,-1"


def table_of(text: str, **options):
    return read_answer_bytes(text.encode("utf-8"), name="answers.csv", **options)


def test_a_plain_csv():
    table = table_of(f"{HEADER}\n{GOOD}\n2,0,0,0,0,0,0,0,0,0,0\n")
    parsed = parse_answers(table)
    assert table.columns == HEADER.split(",")
    assert table.separator == ","
    assert parsed.problems == []
    assert parsed.answers.tolist() == [
        [2, -2, 1, -1, 0, 0, 2, -2, 1, -1],
        [0] * 10,
    ]


@pytest.mark.parametrize("separator", [";", "\t"])
def test_the_separator_is_taken_from_the_header(separator):
    text = f"{HEADER}\n{GOOD}\n".replace(",", separator)
    table = table_of(text)
    assert table.separator == separator
    assert parse_answers(table).answers.shape == (1, 10)


def test_semicolon_file_with_decimal_commas_in_other_columns():
    # Excel in a German locale: ';' separates, ',' is the decimal mark.
    table = table_of(f"note;{HEADER[3:].replace(',', ';')}\n3,5;{GOOD[2:].replace(',', ';')}\n")
    assert table.separator == ";"
    assert table.rows[0][0] == "3,5"


def test_bom_is_removed_and_remembered():
    table = read_answer_bytes(codecs.BOM_UTF8 + f"{HEADER}\n{GOOD}\n".encode())
    assert table.columns[0] == "id"
    assert table.bom is True


def test_header_names_are_case_insensitive_and_trimmed():
    table = table_of(f"ID, Q1 ,Q2,Q3,Q4,Q5,Q6,Q7,Q8,Q9,Q10\n{GOOD}\n")
    assert table.item_columns == tuple(range(1, 11))
    assert table.columns[1] == "Q1"


def test_quoted_fields_with_separators_and_newlines_pass_through():
    table = table_of(f'{HEADER},comment\n{GOOD},"one, two\nthree"\n')
    assert table.rows[0][-1] == "one, two\nthree"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "answers.csv is empty"),
        (b"  \n\n", "answers.csv is empty"),
        (f"{HEADER}\n".encode(), "answers.csv has a header but no data rows"),
        (f"{HEADER}\n\n,,\n".encode(), "answers.csv has a header but no data rows"),
        (
            b"id,q1,q2\n1,2,2\n",
            "answers.csv is missing the columns q3, q4, q5, q6, q7, q8, q9, q10",
        ),
        (
            f"{HEADER},Q3\n{GOOD},1\n".encode(),
            "answers.csv: column q3 appears more than once (columns 4 and 12)",
        ),
        ("id,q1\nä,1\n".encode("latin-1"), "answers.csv is not UTF-8 text (byte 0xe4 on line 2"),
        (f"{HEADER}\n{GOOD}\n".encode("utf-16"), "answers.csv is UTF-16 text"),
        (b"\xd0\xcf\x11\xe0" + b"\0" * 100, "answers.csv is an old Excel (.xls) workbook"),
        (b"PK\x03\x04 not really a zip", "answers.csv cannot be read as an XLSX workbook"),
        (
            f'{HEADER}\n1,"{"x" * 200_000}"\n'.encode(),
            "answers.csv is not a readable CSV file (line 2: field larger than field limit",
        ),
    ],
    ids=[
        "empty",
        "blank",
        "header-only",
        "blank-rows-only",
        "missing-columns",
        "duplicate-column",
        "latin-1",
        "utf-16",
        "xls",
        "broken-xlsx",
        "huge-field",
    ],
)
def test_files_that_cannot_be_read_say_why(data, message):
    with pytest.raises(AnswerFileError) as raised:
        read_answer_bytes(data, name="answers.csv")
    assert message in str(raised.value)


def test_every_bad_answer_is_named_by_row_column_and_value():
    text = (
        f"{HEADER}\n"
        f"{GOOD}\n"
        "2,3,x,,1,0,0,2,-2,1,-1\n"  # row 2: out of range, not an integer, blank
        "\n"  # row 3: an empty line is skipped but keeps its number
        "4,1,1,1,1,1,1,1,1,1,1.5\n"  # row 4
        "5,1,1,1,1,1,1,1,1\n"  # row 5: too short, so q9 and q10 are missing
        f"{GOOD},extra\n"  # row 6: a field more than the header
    )
    table = table_of(text)
    parsed = parse_answers(table)
    assert [str(problem) for problem in parsed.problems] == [
        "row 2, column q1, value '3': 3 is out of range (answers are -2..+2)",
        "row 2, column q2, value 'x': 'x' is not an integer answer",
        "row 2, column q3, value '': answer is missing",
        "row 4, column q10, value '1.5': '1.5' is not an integer answer",
        "row 5, column q9, value '': answer is missing",
        "row 5, column q10, value '': answer is missing",
        "row 6, column (column 12), value 'extra': the row has 12 fields but the header has 11",
    ]
    assert parsed.invalid_rows == [2, 4, 5, 6]
    assert parsed.valid.tolist() == [True, False, False, False, False]
    assert table.blank_rows == 1
    assert parsed.answers.tolist() == [[2, -2, 1, -1, 0, 0, 2, -2, 1, -1]]


def test_trailing_empty_cells_are_not_extra_fields():
    table = table_of(f"{HEADER},,\n{GOOD},,\n")
    assert len(table.columns) == 11
    assert parse_answers(table).problems == []


def test_size_and_row_limits(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text(f"{HEADER}\n" + f"{GOOD}\n" * 5)
    with pytest.raises(AnswerFileError, match="big.csv is 1.. bytes; files up to 100 bytes"):
        read_answer_file(path, max_bytes=100)
    with pytest.raises(AnswerFileError, match="big.csv has more than 4 rows"):
        read_answer_file(path, max_rows=4)
    assert len(read_answer_file(path, max_rows=5)) == 5


def test_missing_file(tmp_path):
    with pytest.raises(AnswerFileError, match="does not exist"):
        read_answer_file(tmp_path / "nope.csv")


def write_workbook(path, rows, sheets=("Sheet",)):
    workbook = openpyxl.Workbook()
    workbook.active.title = sheets[0]
    for name in sheets[1:]:
        workbook.create_sheet(name)
    for row in rows:
        workbook[sheets[-1]].append(row)
    workbook.save(path)


def test_xlsx_cells_are_read_as_the_text_a_person_sees(tmp_path):
    path = tmp_path / "answers.xlsx"
    header = ["id", *[f"Q{k}" for k in range(1, 11)], "rated"]
    write_workbook(
        path,
        [
            header,
            [1, 2, -2, 1.0, -1, 0, 0, 2, -2, 1, -1, True],
            [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2.5],
        ],
    )
    table = read_answer_file(path)
    parsed = parse_answers(table)
    assert table.rows[0][:4] == ["1", "2", "-2", "1"]
    assert table.rows[0][-1] == "TRUE"
    assert [str(problem) for problem in parsed.problems] == [
        "row 2, column Q10, value '2.5': '2.5' is not an integer answer"
    ]
    assert parsed.answers.tolist() == [[2, -2, 1, -1, 0, 0, 2, -2, 1, -1]]


def test_xlsx_prefers_the_evaluations_sheet_of_a_platform_export(tmp_path):
    path = tmp_path / "export.xlsx"
    write_workbook(
        path,
        [["evaluation_id", *[f"q{k}" for k in range(1, 11)]], [7, *[1] * 10]],
        sheets=("About", "Evaluations"),
    )
    parsed = parse_answers(read_answer_file(path))
    assert parsed.answers.tolist() == [[1] * 10]


def test_parsing_a_large_file_keeps_row_order(tmp_path):
    rng = np.random.default_rng(0)
    answers = rng.integers(-2, 3, size=(2000, 10))
    lines = [HEADER] + [f"{i}," + ",".join(map(str, row)) for i, row in enumerate(answers)]
    parsed = parse_answers(table_of("\n".join(lines)))
    assert np.array_equal(parsed.answers, answers)


def test_write_atomically_replaces_the_file_in_one_step(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old")
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_write_atomically_leaves_nothing_behind_when_it_fails(tmp_path, monkeypatch):
    import os

    def broken_replace(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomically(tmp_path / "out.csv", b"data")
    assert list(tmp_path.iterdir()) == []
