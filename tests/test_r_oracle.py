"""The R oracle helper (tests/r_oracle.py): data reach R unrounded, and an R
error fails the test with R's own message."""

import numpy as np
import pandas as pd
import pytest

from tests.r_oracle import ROracleError, run_r

ECHO = r"""
x <- read.csv("x.csv")
y <- read.csv("y.csv")
jsonlite::write_json(list(x = x$V2, label = y$label, y = y$value),
                     "result.json", digits = NA, auto_unbox = TRUE)
"""


def test_tables_reach_r_with_every_digit():
    x = np.array([[1.0, 1 / 3], [2.0, np.pi]])
    y = pd.DataFrame({"label": ["en", "de"], "value": [0.1, 2 / 7]})
    echoed = run_r(ECHO, {"x": x, "y": y})
    # jsonlite writes 15 significant digits with digits = NA
    assert echoed["x"] == pytest.approx(x[:, 1], rel=1e-14)
    assert echoed["y"] == pytest.approx([0.1, 2 / 7], rel=1e-14)
    assert echoed["label"] == ["en", "de"]


def test_an_r_error_fails_with_r_s_message():
    with pytest.raises(ROracleError, match="(?s)exited with 1.*no such model"):
        run_r('stop("no such model")', {})


def test_code_that_writes_no_result_fails():
    with pytest.raises(ROracleError, match="wrote no result.json"):
        run_r('cat("forgot to write\\n")', {})
