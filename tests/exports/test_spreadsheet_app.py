"""The workbook opens cleanly in a real spreadsheet program, not only in
openpyxl: LibreOffice Calc (headless, Debian's libreoffice-calc-nogui, which
CI installs) converts every sheet of an export to CSV, and what it shows must
be what the export holds, formula-like text included, shown and not run."""

import csv
import shutil
import subprocess
from datetime import datetime

import pytest

from exports.anonymize import looks_like_formula
from tests.exports.conftest import INJECTIONS
from tests.exports.readers import read_xlsx
from tests.services import require_services

# Comma, double quote, UTF-8, from line 1, values rather than formulas, and
# every sheet to its own file (<name>-<sheet>.csv): LibreOffice's CSV filter
# options, in its positional syntax.
CSV_EVERY_SHEET = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"


@pytest.fixture(scope="module")
def soffice():
    path = shutil.which("soffice")
    if path is None:
        if require_services():
            pytest.fail("LibreOffice is required (apt install libreoffice-calc-nogui)")
        pytest.skip("LibreOffice is not installed (apt install libreoffice-calc-nogui); runs in CI")
    return path


def _open_in_libreoffice(soffice, workbook, folder, titles) -> dict[str, list[list[str]]]:
    completed = subprocess.run(
        [
            soffice,
            f"-env:UserInstallation=file://{folder / 'profile'}",  # its own, throwaway profile
            "--headless",
            "--convert-to",
            CSV_EVERY_SHEET,
            "--outdir",
            str(folder),
            str(workbook),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    sheets = {}
    for title in titles:
        path = folder / f"{workbook.stem}-{title}.csv"
        assert path.exists(), (title, completed.stdout, completed.stderr)
        with open(path, encoding="utf-8", newline="") as handle:
            sheets[title] = list(csv.reader(handle))
    return sheets


def _shown_as(value, shown: str) -> bool:
    if value is None:
        return shown == ""
    if isinstance(value, datetime):  # a date cell: openpyxl reads it as midnight
        return shown == value.date().isoformat()
    if isinstance(value, int | float):
        return float(shown) == pytest.approx(value)
    return shown == value


def test_libreoffice_shows_every_sheet_as_exported(populated, run_export, soffice, tmp_path):
    job = run_export(populated.study, "xlsx", include_free_text=True)
    expected = read_xlsx(job.absolute_path)

    shown = _open_in_libreoffice(soffice, job.absolute_path, tmp_path, list(expected))

    for title, rows in expected.items():
        assert len(shown[title]) == len(rows), title
        for number, (row, shown_row) in enumerate(zip(rows, shown[title], strict=True), 1):
            # LibreOffice leaves off trailing empty cells.
            shown_row += [""] * (len(row) - len(shown_row))
            mismatches = [
                (column, value, text)
                for column, (value, text) in enumerate(zip(row, shown_row, strict=True), 1)
                if not _shown_as(value, text)
            ]
            assert not mismatches, (title, number, mismatches)

    # The prompt texts that would be formulas arrive as the text typed, unrun.
    prompt_texts = "\n".join(row[-1] for row in shown["Evaluations"][1:])
    for text in INJECTIONS:
        assert text in prompt_texts
    assert any(looks_like_formula(row[-1]) for row in shown["Evaluations"][1:])
