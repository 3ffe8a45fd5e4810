"""Formula injection (docs/design/anonymisation.md §6.4): text a spreadsheet would run as a formula
is exported so that it is shown as text, in CSV and in XLSX."""

import pytest

from shs_platform.spreadsheet_cells import looks_like_formula, neutralize
from tests.exports.conftest import INJECTIONS
from tests.exports.factories import populate_study
from tests.exports.readers import read_csv, read_xlsx, sheet_dicts, xlsx_cells


@pytest.mark.parametrize(
    "text, formula",
    [
        ("=1+1", True),
        ('=HYPERLINK("http://x")', True),
        ("+43 660 1234567", True),
        ("-2+3", True),
        ("@SUM(A1)", True),
        ("\tcmd", True),
        ("\r=1", True),
        ("-0.25", False),
        ("+2", False),
        ("1e-3", False),
        ("ChatGPT", False),
        ("", False),
    ],
)
def test_what_counts_as_a_formula(text, formula):
    assert looks_like_formula(text) is formula
    assert neutralize(text).startswith("'" + text[:1] if formula else text[:1])


@pytest.mark.parametrize(
    "text, neutralized",
    [
        ("ok;=2+3;", "ok;'=2+3;"),
        ("ok,=2+3", "ok,'=2+3"),
        ("tab\t+2+3", "tab\t'+2+3"),
        ("first prompt\n@SUM(1)", "first prompt\n'@SUM(1)"),
        ("\r=1", "'\r'=1"),
        ('quoted;"=2+3"', 'quoted;\'"=2+3"'),
        ("spaced; -2+3", "spaced;' -2+3"),
        ("=1;=2", "'=1;'=2"),
        # Numbers, and text without a formula after a separator, stay as they are.
        ("a;-2;+3,4", "a;-2;+3,4"),
        ("FA;SR", "FA;SR"),
        ("Graz, Linz; Wien", "Graz, Linz; Wien"),
    ],
)
def test_every_piece_a_spreadsheet_may_split_off_is_neutralized(text, neutralized):
    # A ";" locale splits "ok;=2+3;" into cells whatever the quotes say, and runs "=2+3".
    assert neutralize(text) == neutralized


@pytest.fixture
def injected(personas, study_a):
    # A system name is text a coordinator typed, too.
    return populate_study(
        study_a, sessions=4, prompt_texts=INJECTIONS, system_names=["=cmd|' /C calc'!A0"]
    )


def test_csv_prefixes_formula_text_with_a_quote(injected, run_export):
    job = run_export(injected.study, "csv", include_free_text=True)

    header, rows = read_csv(job.absolute_path)
    first_prompts = {row["prompt_texts"].split("\n")[0] for row in rows}
    for text in INJECTIONS:
        assert "'" + text in first_prompts
    assert not [row for row in rows for value in row.values() if looks_like_formula(value)]
    assert "'=cmd|' /C calc'!A0" in {row["system"] for row in rows}
    # Numbers stay numbers.
    assert any(row["s_FA"].startswith("-") for row in rows)


def test_xlsx_stores_formula_text_as_quoted_text_cells(injected, run_export):
    job = run_export(injected.study, "xlsx", include_free_text=True)

    cells = list(xlsx_cells(job.absolute_path))
    assert not [cell.coordinate for cell in cells if cell.data_type == "f"]
    risky = [c for c in cells if isinstance(c.value, str) and looks_like_formula(c.value)]
    assert risky
    for cell in risky:
        assert cell.data_type == "s" and cell.quotePrefix, (cell.parent.title, cell.coordinate)
    evaluations = sheet_dicts(read_xlsx(job.absolute_path)["Evaluations"])
    first_prompts = {row["prompt_texts"].split("\n")[0] for row in evaluations}
    assert set(INJECTIONS) <= first_prompts
