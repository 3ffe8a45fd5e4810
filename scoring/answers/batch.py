"""Scoring a whole file of answers: the output of `shs_score` (docs/design/command-line.md §9.2).

The input columns come first, unchanged, then the SCORE_COLUMNS. Numbers are
written as Python writes floats ("0.25", "-1.0", "62.5"), the same text the
JSON outputs use. All values lie on small grids (dimension scores on quarters,
SHS on twentieths), so the text is looked up in tables instead of being
formatted cell by cell: 100,000 rows cost a few numpy operations.
"""

from __future__ import annotations

import codecs
import csv
import io

import numpy as np
from numpy.typing import NDArray

from scoring.answers.files import AnswerTable
from scoring.instruments.shs import DIMENSION_KEYS
from scoring.scores.engine import SCORE_COLUMNS, ScoredArray

# Text of every value a score can take, indexed from its lowest value.
_QUARTERS = np.array([repr(step / 4) for step in range(-4, 5)], dtype=object)  # s_i, c_i
_SHS_TEXT = np.array([repr(total / 20) for total in range(-40, 41)], dtype=object)
_SHS100_TEXT = np.array([repr(2.5 * (total + 20)) for total in range(-40, 41)], dtype=object)


def score_text_columns(scored: ScoredArray) -> NDArray[np.object_]:
    """The scores as an (n, len(SCORE_COLUMNS)) object array of text, in SCORE_COLUMNS order."""
    dimensions = len(DIMENSION_KEYS)
    text = np.empty((len(scored), len(SCORE_COLUMNS)), dtype=object)
    # Scores are exact multiples of 1/4 (and SHS of 1/20): rint only removes
    # the representation, never rounds a real value.
    text[:, :dimensions] = _QUARTERS[np.rint(scored.dimension_scores * 4).astype(int) + 4]
    text[:, dimensions : 2 * dimensions] = _QUARTERS[
        np.rint(scored.consistency * 4).astype(int) + 4
    ]
    totals = np.rint(scored.shs * 20).astype(int) + 40
    text[:, 2 * dimensions] = _SHS_TEXT[totals]
    text[:, 2 * dimensions + 1] = _SHS100_TEXT[totals]
    text[:, 2 * dimensions + 2] = scored.bands
    text[:, 2 * dimensions + 3] = scored.flagged_pairs
    return text


def replaced_columns(table: AnswerTable) -> list[int]:
    """Positions of input columns that carry a score name (a file scored before).

    They are dropped and computed afresh rather than duplicated, so that
    scoring a scored file (or a platform export) gives one column per name.
    """
    names = {name.lower() for name in SCORE_COLUMNS}
    items = set(table.item_columns)
    return [
        index
        for index, column in enumerate(table.columns)
        if column.lower() in names and index not in items
    ]


def scored_csv(table: AnswerTable, valid: NDArray[np.bool_], scored: ScoredArray) -> bytes:
    """The CSV of the valid rows of `table` with their scores appended.

    Written with the input's separator, and with a BOM when the input had one,
    so that the spreadsheet program that wrote the file opens the result the
    same way.
    """
    dropped = set(replaced_columns(table))
    keep = [index for index in range(len(table.columns)) if index not in dropped]
    rows = [row for row, ok in zip(table.rows, valid.tolist(), strict=True) if ok]
    if dropped:
        rows = [[row[index] for index in keep] for row in rows]
    scores = score_text_columns(scored).tolist()
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=table.separator, lineterminator="\r\n")
    writer.writerow([table.columns[index] for index in keep] + list(SCORE_COLUMNS))
    writer.writerows(row + extra for row, extra in zip(rows, scores, strict=True))
    data = buffer.getvalue().encode("utf-8")
    return codecs.BOM_UTF8 + data if table.bom else data
