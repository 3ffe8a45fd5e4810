"""Scoring speed, each figure next to a baseline measured in the same run.

1. Vectorised scoring (scoring.scores.engine.score_array) of 1,000,000 evaluations,
   against a per-row pure-Python scorer written the way a reference
   calculator does it: a loop over rows held as dicts, Python arithmetic, one
   result dict per row. Targets: >= 1,000,000 evaluations/s and >= 30x.
2. `manage.py shs_score` end to end (a fresh process, Django start-up
   included) on a generated 100,000-row CSV; baseline: the same job as a plain
   csv.DictReader -> reference scorer -> csv.DictWriter script. Target < 5 s.
3. `manage.py shs_analyze` end to end on the same file, plots excluded;
   baselines: the analysis written per statistic with scipy.stats and loops,
   as a researcher would script it, and the same command with the
   hand-written estimators it used before it called scipy.stats and
   scipy.optimize (tests/scoring/handwritten_estimators.py). Target < 3 s.
4. What those scipy calls cost: importing scipy.stats and scipy.optimize in
   a fresh interpreter (median of several), and each estimator on the
   100,000 overall SHS values against its hand-written version.

Run: .venv/bin/python -m tests.bench scoring
"""

import csv
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from functools import partial
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
    from scoring.scores.engine import score_array

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


# The command as manage.py runs it, optionally with the hand-written estimators
# put back in place of the scipy calls: the "before" of the same run.
_COMMAND = (
    "import os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'shs_platform.settings'); "
    "{swap}from django.core.management import execute_from_command_line; "
    "execute_from_command_line(['manage.py', *sys.argv[1:]])"
)
_HANDWRITTEN = (
    "import scoring.stats.estimators as app, tests.scoring.handwritten_estimators as old; "
    "app.shapiro_wilk, app.skewness, app.excess_kurtosis, app.one_factor_loadings = "
    "old.shapiro_wilk, old.skewness, old.excess_kurtosis, old.one_factor_loadings; "
)


def command_seconds(*args: str, handwritten: bool) -> tuple[float, float]:
    """(wall, CPU) seconds of the command in a fresh process. The CPU time (user +
    system) varies less than the wall time when other jobs share the machine."""
    code = _COMMAND.format(swap=_HANDWRITTEN if handwritten else "")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def after_and_before(*args: str) -> list[tuple[float, float]]:
    """Best (wall, CPU) of three runs with the scipy estimators and of three with the
    hand-written ones, taken in turns so that both meet the same load."""
    runs = [[command_seconds(*args, handwritten=old) for old in (False, True)] for _ in range(3)]
    return [
        (min(wall for wall, _ in times), min(cpu for _, cpu in times))
        for times in zip(*runs, strict=True)
    ]


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
    """The analysis of docs/design/analysis.md §8, done plainly: one scipy.stats call or loop per
    figure."""
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
    from scoring.stats.reliability.analysis import analyze

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

        analyze_args = ("shs_analyze", str(source), "-o", str(workdir / "report.json"))
        analyze_seconds = min(manage(*analyze_args) for _ in range(3))
        (library_wall, library_cpu), (before_wall, before_cpu) = after_and_before(*analyze_args)
        core_seconds = best_of(3, lambda: analyze(answers))
        baseline_core = best_of(1, lambda: baseline_analysis(answers))
        print(f"shs_analyze, {FILE_ROWS:,} evaluations, plots excluded")
        line("manage.py shs_analyze (best of 3)", f"{analyze_seconds:.2f} s",
             f"target < {TARGET_ANALYZE_SECONDS:.0f} s: "
             f"{verdict(analyze_seconds < TARGET_ANALYZE_SECONDS)}")  # fmt: skip
        line("  of which analyze() itself", f"{core_seconds * 1000:.0f} ms", "")
        line("same, scipy estimators: wall / CPU (best of 3)",
             f"{library_wall:.2f} / {library_cpu:.2f} s",
             f"{library_wall - before_wall:+.2f} / {library_cpu - before_cpu:+.2f} s "
             "against the next line")  # fmt: skip
        line("  with the hand-written ones (before)", f"{before_wall:.2f} / {before_cpu:.2f} s",
             "")  # fmt: skip
        line("per-statistic scipy.stats baseline", f"{baseline_core * 1000:.0f} ms",
             f"{baseline_core / core_seconds:.1f}x analyze()")  # fmt: skip


IMPORT_RUNS = 7
# The analysis module already has numpy and scipy.special loaded.
_IMPORT_TIMER = (
    "import time, numpy, scipy.special; started = time.perf_counter(); import {module}; "
    "print(time.perf_counter() - started)"
)


def import_seconds(module: str) -> float:
    """Median time to import `module` in a fresh interpreter, on top of scipy.special."""
    runs = []
    for _ in range(IMPORT_RUNS):
        timer = [sys.executable, "-c", _IMPORT_TIMER.format(module=module)]
        runs.append(float(subprocess.run(timer, check=True, capture_output=True).stdout))
    return statistics.median(runs)


def bench_estimators(rng: np.random.Generator) -> None:
    import scipy

    from scoring.stats import estimators
    from tests.scoring import handwritten_estimators as handwritten

    print(f"scipy {scipy.__version__}: import cost, median of {IMPORT_RUNS} fresh interpreters")
    for module in ("scipy.stats", "scipy.optimize", "scipy.stats, scipy.optimize"):
        line(f"import {module}", f"{import_seconds(module) * 1000:.0f} ms", "")
    answers = rng.integers(-2, 3, size=(FILE_ROWS, 10))
    shs = ((answers[:, ::2] - answers[:, 1::2]) / 4).mean(axis=1)
    items = answers * np.array([1, -1] * 5)
    correlations = np.corrcoef(items, rowvar=False)
    print(f"each estimator on {FILE_ROWS:,} evaluations, best of 5 (imports done)")
    for name, argument in (("shapiro_wilk", shs), ("skewness", shs), ("excess_kurtosis", shs),
                           ("one_factor_loadings", correlations)):  # fmt: skip
        library = best_of(5, partial(getattr(estimators, name), argument))
        before = best_of(5, partial(getattr(handwritten, name), argument))
        line(f"{name} (scipy)", f"{library * 1000:.1f} ms",
             f"hand-written: {before * 1000:.1f} ms")  # fmt: skip


def run() -> None:
    rng = np.random.default_rng(20260213)
    print(f"Python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    bench_vectorised(rng)
    bench_files(rng)
    bench_estimators(rng)
