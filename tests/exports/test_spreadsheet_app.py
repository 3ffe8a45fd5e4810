"""The workbook opens cleanly in a real spreadsheet program, not only in
openpyxl: LibreOffice Calc (headless, Debian's libreoffice-calc-nogui, which
CI installs) converts every sheet of an export to CSV, and what it shows must
be what the export holds, formula-like text included, shown and not run."""

import csv
import shutil
import subprocess
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from shs_platform.spreadsheet_cells import looks_like_formula, neutralize
from tests.exports.conftest import INJECTIONS
from tests.exports.factories import populate_study
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


def _convert(soffice, source: Path, folder: Path, target: str, infilter: str | None = None):
    completed = subprocess.run(
        [
            soffice,
            f"-env:UserInstallation=file://{folder / 'profile'}",  # its own, throwaway profile
            "--headless",
            *(["--infilter=" + infilter] if infilter else []),
            "--convert-to",
            target,
            "--outdir",
            str(folder),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed


def _open_in_libreoffice(soffice, workbook, folder, titles) -> dict[str, list[list[str]]]:
    completed = _convert(soffice, workbook, folder, CSV_EVERY_SHEET)
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


# Text that is harmless read with the file's own separator (","), but starts a
# formula once a spreadsheet splits it at another one: ";" in German, Austrian
# and French locales, tab, or a line break (which ends the row there).
SEPARATED_INJECTIONS = [
    "ok;=2+3;",
    "ok,=2+3,",
    "tab\t=2+3",
    'quoted;"=2+3"',
    "spaced; =2+3",
    "list;@SUM(1;2)",
]
# LibreOffice's CSV import options: separator, double quote, UTF-8, from line 1,
# standard columns, default language, quoted fields not forced to text, no
# special numbers, (three export options), and "evaluate formulas" on, as Excel does.
CSV_IMPORT = "{separator},34,76,1,,0,false,false,false,false,false,-1,true"


def _cells_opened_with(soffice, paths: list[Path], separator: str, folder: Path):
    """Every cell LibreOffice makes of the CSV files read with `separator`."""
    from openpyxl import load_workbook

    folder.mkdir()
    infilter = "Text - txt - csv (StarCalc):" + CSV_IMPORT.format(separator=ord(separator))
    cells = []
    for path in paths:
        _convert(soffice, path, folder, "xlsx", infilter)
        workbook = load_workbook(folder / f"{path.stem}.xlsx")
        cells += [cell for sheet in workbook for row in sheet.iter_rows() for cell in row]
    return cells


def _csv_files(job, folder: Path) -> list[Path]:
    if job.format == "csv":
        return [job.absolute_path]
    with zipfile.ZipFile(job.absolute_path) as archive:
        names = ["evaluations.csv", "prompt_log.csv", "about.csv"]
        return [Path(archive.extract(name, folder)) for name in names]


@pytest.mark.parametrize("fmt", ["csv", "csv-tables"])
@pytest.mark.parametrize("separator", [";", ",", "\t"])
def test_libreoffice_runs_no_formula_whatever_separator_it_reads_a_csv_with(
    personas, study_a, run_export, soffice, tmp_path, separator, fmt
):
    # Given prompts, systems and a study named by people, with formulas after separators
    study_a.title = "Pilot;=1+1"
    study_a.save(update_fields=["title"])
    populate_study(
        study_a,
        sessions=3,  # six blocks: each text leads one block's prompts
        extras=False,
        prompt_texts=SEPARATED_INJECTIONS,
        system_names=["GPT;=2+3", "tab\t@SUM(1)"],
    )
    job = run_export(study_a, fmt, include_free_text=True)

    # When a spreadsheet opens the CSV files with that separator
    paths = _csv_files(job, tmp_path / "files")
    cells = _cells_opened_with(soffice, paths, separator, tmp_path / "opened")

    # Then no cell is a formula, and the texts are all there to read.
    assert len(cells) > 20
    assert [c.value for c in cells if c.data_type == "f"] == []
    shown = "\n".join(str(c.value) for c in cells if c.value is not None)
    assert "'=2+3" in shown and "GPT" in shown
    if fmt == "csv-tables":
        assert "'=1+1" in shown  # the study's title, in about.csv
    if separator == ",":  # the file's own: each text whole, with its quote marks
        for text in [*SEPARATED_INJECTIONS, "GPT;=2+3"]:
            assert neutralize(text) in shown
