"""The XLSX data sheets (exports/writers/sheetrows.py): rendered rows against
openpyxl's public write-only cells (the fallback used where an openpyxl release
lacks the internals the rendering needs), with the openpyxl the project pins
and with the newest on PyPI (installed once into .venv/.newest-openpyxl).

No database: 20,000 rows of 40 values of the kinds a data sheet holds, written
into one sheet. Each openpyxl runs in a process of its own.

Run: .venv/bin/python -m tests.bench sheet_rows
"""

import json
import os
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROWS, REPEATS = 20_000, 3


def run() -> None:
    from tests.bench.child import child_figures
    from tests.newest_openpyxl import environment

    print(f"{ROWS:,} rows x 40 values into one sheet, best of {REPEATS}")
    for label, env in (("pinned", dict(os.environ)), ("newest", environment())):
        figures = child_figures("tests.bench.bench_sheet_rows", env=env, what=label)
        rendered, cells = figures["rendered"], figures["cells"]
        used = "rendered rows" if figures["uses_rendered"] else "public cells"
        print(
            f"openpyxl {figures['version']} ({label}): rendered rows {rendered:.2f} s, "
            f"public cells {cells:.2f} s -> {cells / rendered:.2f}x; used by exports: {used}"
        )


def _rows():
    """Rows shaped like the Evaluations sheet: ids, answers, scores, names, dates."""
    first = date(2026, 1, 1)
    for number in range(ROWS):
        day = first + timedelta(number % 90)
        answers = [(number + k) % 5 - 2 for k in range(20)]
        scores = [((number * 7 + k) % 9 - 4) / 4 for k in range(10)]
        yield [
            *(number, number // 2, f"P{number:06d}", "ChatGPT", "A01", day),
            *answers,
            *scores,
            *("high", None, 0.1 * (number % 11), "en"),
        ]


def _time(rendered: bool) -> float:
    from openpyxl import Workbook

    from exports.writers.sheetrows import WorkbookSheet

    best = float("inf")
    for _ in range(REPEATS):
        with tempfile.TemporaryDirectory(prefix="shs-bench-rows-") as name:
            folder = Path(name)
            started = time.perf_counter()
            workbook = Workbook(write_only=True)
            header = [f"column_{n}" for n in range(1, 41)]
            sheet = WorkbookSheet(workbook, "Evaluations", header, folder=folder, rendered=rendered)
            for row in _rows():
                sheet.append(row)
            workbook.save(folder / "rows.xlsx")
            best = min(best, time.perf_counter() - started)
    return best


def _measure_here() -> None:
    import django

    django.setup()
    import openpyxl

    from exports.writers.sheetrows import RENDERED_ROWS

    figures = {
        "version": openpyxl.__version__,
        "uses_rendered": RENDERED_ROWS,
        "rendered": _time(True),
        "cells": _time(False),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    _measure_here()
