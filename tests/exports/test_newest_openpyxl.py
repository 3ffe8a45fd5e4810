"""The XLSX writer against the newest openpyxl on PyPI (installed once into
.venv/.newest-openpyxl): whichever way its sheets are written with it, rendered
rows or openpyxl's public cells, the sheet-row tests pass. Needs the network
the first time; without it this test fails, saying so."""

import subprocess
import sys

from tests.newest_openpyxl import ROOT, TARGET, environment, which_rows

TESTS = "tests/exports/test_sheet_rows.py"
# What only holds with openpyxl as pinned, or only for the rendered rows.
PINNED_ONLY = f"{TESTS}::test_the_rendered_rows_are_used_where_openpyxl_has_what_they_need"
RENDERED_ONLY = f"{TESTS}::test_sheet_files_are_written_in_the_run_folder_not_the_temporary_folder"


def test_the_sheet_row_tests_pass_with_the_newest_openpyxl(record_property):
    env = environment()
    used = which_rows(env)
    assert used["path"].startswith(str(TARGET)), used
    way = "rendered rows" if used["rendered"] else "openpyxl's public cells (fallback)"
    report = f"newest openpyxl {used['version']}: the XLSX sheets are written with {way}"
    record_property("newest_openpyxl", report)
    print(report)

    deselect = [PINNED_ONLY] + ([] if used["rendered"] else [RENDERED_ONLY])
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", TESTS, "-q", "-p", "no:cacheprovider"]
        + [f"--deselect={test}" for test in deselect],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, f"{report}\n{completed.stdout[-5000:]}"
    assert " passed" in completed.stdout.splitlines()[-1]
