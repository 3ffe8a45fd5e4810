"""A second oracle for the statistics tests: the same model fitted live by R
(lavaan, psych) on the test's own data.

`run_r(code, data)` writes every table of `data` as `<name>.csv` into a
fresh folder, runs `code` there with Rscript and returns what the code wrote
to `result.json`. The code reads its tables with `read.csv("<name>.csv")`
and ends with

    jsonlite::write_json(result, "result.json", digits = NA, auto_unbox = TRUE)

(`digits = NA` keeps every digit R has; the default of four would make every
comparison a comparison with a rounded number). There is no skip when R is
missing: CI installs R, and a missing oracle must not pass as a green test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

RESULT = "result.json"
# lavaan and psych take a second or two to load; a fit that takes longer than
# this has hung.
TIMEOUT_SECONDS = 120


class ROracleError(AssertionError):
    """R could not give its answer: the test fails with R's own words."""


def _table(name: str, values: Any) -> pd.DataFrame:
    if isinstance(values, pd.DataFrame):
        return values
    array = np.asarray(values)
    if array.ndim == 1:
        return pd.DataFrame({name: array})
    if array.ndim == 2:
        return pd.DataFrame(array, columns=[f"V{j + 1}" for j in range(array.shape[1])])
    raise ValueError(f"{name}: a table needs 1 or 2 dimensions, got shape {array.shape}")


def run_r(code: str, data: dict[str, Any]) -> dict[str, Any]:
    """Run `code` with Rscript next to `data` written as CSV; return its result.json."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        raise ROracleError("Rscript is not on PATH: the R oracle tests need R (CI installs it)")
    with tempfile.TemporaryDirectory(prefix="r-oracle-") as folder:
        where = Path(folder)
        for name, values in data.items():
            # 17 significant digits round-trip a double exactly.
            _table(name, values).to_csv(where / f"{name}.csv", index=False, float_format="%.17g")
        (where / "oracle.R").write_text(code, encoding="utf-8")
        done = subprocess.run(
            [rscript, "--vanilla", "oracle.R"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
        if done.returncode != 0:
            raise ROracleError(f"Rscript exited with {done.returncode}:\n{done.stderr.strip()}")
        written = where / RESULT
        if not written.exists():
            raise ROracleError(f"the R code wrote no {RESULT}; R said:\n{done.stderr.strip()}")
        result: dict[str, Any] = json.loads(written.read_text(encoding="utf-8"))
        return result
