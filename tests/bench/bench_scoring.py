"""Scoring (issue 3, Speed), each figure next to a baseline measured in the same run.

1. Vectorised scoring (scoring.engine.score_array) of 1,000,000 evaluations,
   against a per-row pure-Python scorer written the way a reference
   calculator does it: a loop over rows held as dicts, Python arithmetic, one
   result dict per row. Targets: >= 1,000,000 evaluations/s and >= 30x.
2. `manage.py shs_score` end to end (a fresh process, Django start-up
   included) on a generated 100,000-row CSV; baseline: the same job as a plain
   csv.DictReader -> reference scorer -> csv.DictWriter script. Target < 5 s.
3. `manage.py shs_analyze` end to end on the same file, plots excluded;
   baseline: the analysis written per statistic with scipy.stats and loops,
   as a researcher would script it. Target < 3 s.

Run: .venv/bin/python -m tests.bench scoring
"""

import csv
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SCORE_N = 1_000_000
# The dict-per-row baseline would need about a gigabyte for 10^6 rows; its
# rate is measured on a fifth of them (it is linear: one row at a time).
BASELINE_N = 200_000
FILE_ROWS = 100_000
TARGET_RATE, TARGET_SPEEDUP = 1_000_000, 30
TARGET_SCORE_SECONDS, TARGET_ANALYZE_SECONDS = 5.0, 3.0
ITEMS = [f"q{k}" for k in range(1, 11)]
PAIRS = {"FA": ("q1", "q2"), "SR": ("q3", "q4"), "LC": ("q5", "q6"), "DP": ("q7", "q8"),
         "RG": ("q9", "q10")}  # fmt: skip


def reference_score(responses: dict) -> dict:
    """One evaluation, the way a reference calculator scores it: plain Python per row."""
    scores, consistency, flagged = {}, {}, []
    for key, (positive, negative) in PAIRS.items():
        a, b = responses[positive], responses[negative]
        scores[key] = (a - b) / 4
        consistency[key] = (a + b) / 4
        if abs(consistency[key]) > 0.25:
            flagged.append(key)
    shs = sum(scores.values()) / len(scores)
    if shs >= 0.5:
        band = "high"
    elif shs >= 0:
        band = "moderate"
    elif shs >= -0.5:
        band = "low"
    else:
        band = "very_low"
    return {
        **{f"s_{k}": v for k, v in scores.items()},
        **{f"c_{k}": v for k, v in consistency.items()},
        "shs": shs,
        "shs100": 50 * (shs + 1),
        "band": band,
        "flagged_pairs": ";".join(flagged),
    }


def best_of(repeat: int, work) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def line(name: str, value: str, comparison: str) -> None:
    print(f"  {name:<44} {value:>16}   {comparison}")


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


def bench_vectorised(rng: np.random.Generator) -> None:
    from scoring.engine import score_array

    answers = rng.integers(-2, 3, size=(SCORE_N, 10), dtype=np.int8)
    vector_seconds = best_of(3, lambda: score_array(answers))
    rows = [dict(zip(ITEMS, map(int, row), strict=True)) for row in answers[:BASELINE_N]]
    baseline_seconds = best_of(1, lambda: [reference_score(row) for row in rows])
    # Both must give the same numbers before their speed means anything.
    scored = score_array(answers[:1000])
    for index in range(1000):
        expected = reference_score(rows[index])
        assert scored.shs[index] == expected["shs"]
        assert scored.bands[index] == expected["band"]
        assert scored.flagged_pairs[index] == expected["flagged_pairs"]
    rate = SCORE_N / vector_seconds
    baseline_rate = BASELINE_N / baseline_seconds
    print("Vectorised scoring")
    line(f"score_array, {SCORE_N:,} evaluations", f"{vector_seconds * 1000:.0f} ms", "")
    line("  rate", f"{rate:,.0f}/s", f"target {TARGET_RATE:,}/s: {verdict(rate >= TARGET_RATE)}")
    line(
        f"per-row Python baseline ({BASELINE_N:,} rows)",
        f"{baseline_rate:,.0f}/s",
        f"{baseline_seconds:.2f} s",
    )
    speedup = rate / baseline_rate
    line("  speed-up over baseline", f"{speedup:.0f}x", f"target {TARGET_SPEEDUP}x: "
         f"{verdict(speedup >= TARGET_SPEEDUP)}")  # fmt: skip


def write_answer_file(path: Path, rng: np.random.Generator) -> np.ndarray:
    perceived = rng.normal(0.2, 1.0, size=(FILE_ROWS, 1))
    noise = rng.normal(size=(FILE_ROWS, 10))
    answers = np.clip(np.rint(perceived * np.array([1, -1] * 5) + noise), -2, 2).astype(int)
    systems = ["ChatGPT", "Claude", "Gemini", "Mistral", "DeepSeek"]
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["evaluation_id", "system", "language", *ITEMS])
        for index, row in enumerate(answers):
            writer.writerow([index + 1, systems[index % 5], "de", *row.tolist()])
    return answers


def manage(*args: str) -> float:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "shs_platform.settings"}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return time.perf_counter() - started


def baseline_score_file(source: Path, target: Path) -> None:
    """The plain-script way: DictReader, int() per cell, reference scorer, DictWriter."""
    with open(source, newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    scored = []
    for row in rows:
        answers = {key: int(row[key]) for key in ITEMS}
        if any(not -2 <= value <= 2 for value in answers.values()):
            raise ValueError("out of range")
        scored.append({**row, **reference_score(answers)})
    with open(target, "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(scored[0]))
        writer.writeheader()
        writer.writerows(scored)


def baseline_analysis(answers: np.ndarray) -> dict:
    """SPEC 4 the straightforward way: one scipy.stats call or loop per figure."""
    from scipy import stats

    items = answers * np.array([1, -1] * 5)

    def alpha(columns: np.ndarray) -> float:
        k = columns.shape[1]
        return (
            k / (k - 1) * (1 - columns.var(axis=0, ddof=1).sum() / columns.sum(axis=1).var(ddof=1))
        )

    result = {"alpha": alpha(items)}
    result["item_total"] = [
        stats.pearsonr(items[:, k], items.sum(axis=1) - items[:, k])[0] for k in range(10)
    ]
    result["alpha_if_deleted"] = [alpha(np.delete(items, k, axis=1)) for k in range(10)]
    dimensions = (answers[:, ::2] - answers[:, 1::2]) / 4
    result["correlations"] = [
        stats.pearsonr(dimensions[:, i], dimensions[:, j])
        for i in range(5)
        for j in range(i + 1, 5)
    ]
    result["paired"] = [stats.pearsonr(items[:, 2 * i], items[:, 2 * i + 1])[0] for i in range(5)]
    counts = [(answers == value).sum() for value in range(-2, 3)]
    result["chi2"] = stats.chisquare(counts)
    shs = dimensions.mean(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's note that p is unvalidated above n = 5000
        result["shapiro"] = stats.shapiro(shs)
    result["skew"], result["kurtosis"] = (
        stats.skew(shs, bias=False),
        stats.kurtosis(shs, bias=False),
    )
    return result


def bench_files(rng: np.random.Generator) -> None:
    from scoring.analysis import analyze

    with tempfile.TemporaryDirectory(prefix="shs-bench-scoring-") as folder:
        workdir = Path(folder)
        source = workdir / "answers.csv"
        answers = write_answer_file(source, rng)
        size = source.stat().st_size / 1e6

        score_seconds = min(manage("shs_score", str(source), "-o", str(workdir / "scored.csv"))
                            for _ in range(3))  # fmt: skip
        baseline_seconds = best_of(1, lambda: baseline_score_file(source, workdir / "baseline.csv"))
        print(f"shs_score end to end, {FILE_ROWS:,}-row CSV ({size:.1f} MB), fresh process")
        line("manage.py shs_score (best of 3)", f"{score_seconds:.2f} s",
             f"target < {TARGET_SCORE_SECONDS:.0f} s: "
             f"{verdict(score_seconds < TARGET_SCORE_SECONDS)}")  # fmt: skip
        line("plain csv + per-row Python script (in-process)", f"{baseline_seconds:.2f} s",
             f"{baseline_seconds / score_seconds:.1f}x the command's time")  # fmt: skip

        analyze_seconds = min(manage("shs_analyze", str(source), "-o", str(workdir / "report.json"))
                              for _ in range(3))  # fmt: skip
        core_seconds = best_of(3, lambda: analyze(answers))
        baseline_core = best_of(1, lambda: baseline_analysis(answers))
        print(f"shs_analyze, {FILE_ROWS:,} evaluations, plots excluded")
        line("manage.py shs_analyze (best of 3)", f"{analyze_seconds:.2f} s",
             f"target < {TARGET_ANALYZE_SECONDS:.0f} s: "
             f"{verdict(analyze_seconds < TARGET_ANALYZE_SECONDS)}")  # fmt: skip
        line("  of which analyze() itself", f"{core_seconds * 1000:.0f} ms", "")
        line("per-statistic scipy.stats baseline", f"{baseline_core * 1000:.0f} ms",
             f"{baseline_core / core_seconds:.1f}x analyze()")  # fmt: skip


def run() -> None:
    rng = np.random.default_rng(20260213)
    print(f"Python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    bench_vectorised(rng)
    bench_files(rng)
