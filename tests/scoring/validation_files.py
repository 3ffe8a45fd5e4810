"""Answer and retest files built in the tests of shs_analyze's validation flags."""

import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ITEMS = [f"q{k}" for k in range(1, 11)]
SUS = [f"sus{k}" for k in range(1, 11)]
# Positive items agree with perceived reliability, negative items disagree.
DIRECTION = np.array([1, -1] * 5)
FAST = ("--resamples", "50", "--seed", "7")


def study(participants=60, seed=3):
    """Two evaluations per participant, two languages, an age band and the SUS."""
    rng = np.random.default_rng(seed)
    n = 2 * participants
    perceived = np.repeat(rng.normal(size=participants), 2)[:, None] + rng.normal(size=(n, 1))
    noise = rng.normal(scale=0.8, size=(n, 10))
    answers = np.clip(np.rint(perceived * DIRECTION + noise), -2, 2).astype(int)
    usability = np.clip(np.rint(3 + perceived * DIRECTION + noise[:, ::-1]), 1, 5).astype(int)
    return {
        "participant_id": [f"P{index // 2:03d}" for index in range(n)],
        "block": [str(1 + index % 2) for index in range(n)],
        "system": [("Mistral", "Claude")[index % 2] for index in range(n)],
        "language": [("en", "de")[(index // 2) % 2] for index in range(n)],
        "age_band": [("18-29", "30-49")[(index // 4) % 2] for index in range(n)],
        "answers": answers,
        "sus": usability,
    }


LABELS = ("participant_id", "block", "system", "language", "age_band")


def write_csv(path, data, *, columns=LABELS, drop=()):
    """The study as an answer file: label columns, q1..q10, sus1..sus10, less `drop`."""
    header = [name for name in (*columns, *ITEMS, *SUS) if name not in drop]
    lines = [",".join(header)]
    for row in range(len(data["answers"])):
        cells = {name: data[name][row] for name in columns}
        cells |= dict(zip(ITEMS, data["answers"][row], strict=True))
        cells |= dict(zip(SUS, data["sus"][row], strict=True))
        lines.append(",".join(str(cells[name]) for name in header))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_retest(path, rows, *, key="block", days=True):
    header = ["participant_id", key] + (["days"] if days else []) + ITEMS
    lines = [",".join(header)] + [",".join(map(str, row)) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def retest_rows(data, count, *, shift=0, key="block", days=True):
    """The first `count` evaluations again, a little different, 7 + i days later."""
    rows = []
    for row in range(count):
        again = np.clip(data["answers"][row] + shift * (row % 3 - 1), -2, 2)
        days = [7 + row] if days else []
        rows.append([data["participant_id"][row], data[key][row], *days, *again])
    return rows


def analyze(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("shs_analyze", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refused(*args):
    err = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("shs_analyze", *map(str, args), stdout=io.StringIO(), stderr=err)
    return raised.value, err.getvalue()


def report(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))
