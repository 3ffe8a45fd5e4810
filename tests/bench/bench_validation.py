"""The validation programme's speed: CFA, invariance across three
languages, convergent validity with SUS, SCS and trust, test-retest and the
nested-data figures with 2,000 bootstrap resamples, on 386 evaluations (the
paper's study) and on 10,000. Targets: < 10 s and < 60 s.

Data: simulated studies of validation/simulation/latent.py (three languages,
the three companion scales, a retest wave for a third of the participants).
The first run in the process pays semopy's and statsmodels' imports; it is
printed apart ("cold") from a second run ("warm").

Baseline, in the same run: the participant-cluster bootstrap written the way
an analyst would script it, a loop over resamples that re-indexes the rows of
the drawn participants and recomputes alpha and the correlations with numpy
(timed over 200 resamples and scaled to 2,000; it is linear in resamples).
Convergent validity (18 pairs, clustered intervals of r, the reliabilities and
the disattenuated r) is also timed on its own.

Run: .venv/bin/python -m tests.bench validation
"""

import time

import numpy as np

RESAMPLES = 2000
BASELINE_RESAMPLES = 200
TARGETS = {386: 10.0, 10_000: 60.0}


def _data(evaluations: int):
    from validation.simulation.latent import simulate_latent, to_validation_data

    sample = simulate_latent(evaluations // 2, seed=evaluations, retest_share=1 / 3)
    return to_validation_data(sample)


def _analysis_seconds(data) -> tuple[float, dict]:
    from scoring.stats.validation import validation_analysis

    started = time.perf_counter()
    result = validation_analysis(data, resamples=RESAMPLES, seed=1)
    return time.perf_counter() - started, result


def _loop_bootstrap_seconds(data) -> float:
    """Alpha and the dimension correlations per resample, rows re-indexed each time."""
    keyed = data.answers.astype(float).copy()
    keyed[:, 1::2] *= -1
    participants, rows_of = np.unique(data.participant, return_inverse=True)
    members = [np.flatnonzero(rows_of == index) for index in range(len(participants))]
    rng = np.random.default_rng(1)
    started = time.perf_counter()
    for _ in range(BASELINE_RESAMPLES):
        drawn = rng.integers(0, len(participants), len(participants))
        rows = np.concatenate([members[index] for index in drawn])
        sample = keyed[rows]
        k = sample.shape[1]
        _alpha = (
            k / (k - 1) * (1 - sample.var(axis=0, ddof=1).sum() / sample.sum(axis=1).var(ddof=1))
        )
        dimensions = (sample[:, 0::2] + sample[:, 1::2]) / 4
        np.corrcoef(np.column_stack([dimensions, dimensions.mean(axis=1)]), rowvar=False)
    return (time.perf_counter() - started) * RESAMPLES / BASELINE_RESAMPLES


def _convergent_seconds(data) -> tuple[float, int]:
    """Convergent validity alone: every SHS score x every companion scale, with the
    clustered intervals of r, both reliabilities and the disattenuated r."""
    from scoring.stats.validity.convergent import convergent_validity

    started = time.perf_counter()
    result = convergent_validity(data, resamples=RESAMPLES, seed=1)
    pairs = sum(len(by_companion) for by_companion in result["pairs"].values())
    return time.perf_counter() - started, pairs


def run() -> None:
    for evaluations, target in TARGETS.items():
        data = _data(evaluations)
        cold, _ = _analysis_seconds(data)
        warm, result = _analysis_seconds(data)
        baseline = _loop_bootstrap_seconds(data)
        convergent, pairs = _convergent_seconds(data)
        parts = ", ".join(
            part
            for part in ("cfa", "invariance", "convergent", "retest", "nested")
            if part in result
        )
        bootstrap = result["nested"]["bootstrap"]["seconds"]
        print(
            f"{data.n:,} evaluations ({result['participants']:,} participants, "
            f"{data.retest.n:,} retest pairs; parts: {parts})"
        )
        print(
            f"  whole analysis: cold {cold:.2f} s, warm {warm:.2f} s "
            f"(target < {target:.0f} s: {'PASS' if max(cold, warm) < target else 'FAIL'})"
        )
        print(
            f"  cluster bootstrap, {RESAMPLES:,} resamples: {bootstrap:.2f} s; "
            f"loop-per-resample baseline {baseline:.2f} s -> {baseline / bootstrap:.0f}x"
        )
        print(
            f"  convergent validity with clustered intervals, {pairs} pairs x "
            f"{RESAMPLES:,} resamples: {convergent:.2f} s"
        )
