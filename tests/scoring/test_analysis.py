"""The analysis of docs/design/analysis.md §8, figure by figure, against a test-only oracle.

The oracle works on plain Python lists with the `statistics` module and
loops, with the formulas as the paper and docs/design/analysis.md state them; scipy.stats is
used only where a test is named after a scipy function. Nothing here shares
code with scoring.stats.reliability.analysis.
"""

import itertools
import json
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import optimize, stats

from scoring.stats.reliability.analysis import analyze

ITEMS = [f"q{k}" for k in range(1, 11)]
DIMENSIONS = ["FA", "SR", "LC", "DP", "RG"]
PAIRS = {"FA": (0, 1), "SR": (2, 3), "LC": (4, 5), "DP": (6, 7), "RG": (8, 9)}
ANALYSIS_KEYS = {
    "n",
    "cronbach_alpha",
    "item_total",
    "alpha_if_deleted",
    "dimension_correlations",
    "paired_item_r",
    "response_chi2",
    "shapiro",
    "skewness",
    "kurtosis",
    "dimension_profile",
    "overall",
    "consistent_share",
    "item_agreement",
}
TOLERANCE = 1e-6


def generated_answers(n: int, seed: int) -> np.ndarray:
    """Answers from a one-factor model: the shape a validation study produces."""
    rng = np.random.default_rng(seed)
    perceived = rng.normal(0.3, 1.0, size=(n, 1))
    polarity = np.array([1, -1] * 5)
    loadings = rng.uniform(0.5, 1.2, size=10)
    noise = rng.normal(size=(n, 10))
    return np.clip(np.rint(perceived * loadings * polarity + noise), -2, 2).astype(int)


# --- the oracle ---------------------------------------------------------------


def reversed_rows(answers):
    return [[value if k % 2 == 0 else -value for k, value in enumerate(row)] for row in answers]


def column(rows, k):
    return [row[k] for row in rows]


def oracle_alpha(rows, keep):
    k = len(keep)
    item_variances = sum(statistics.variance(column(rows, j)) for j in keep)
    totals = [sum(row[j] for j in keep) for row in rows]
    return k / (k - 1) * (1 - item_variances / statistics.variance(totals))


def dimension_scores(answers, key):
    a, b = PAIRS[key]
    return [(row[a] - row[b]) / 4 for row in answers]


def oracle(answers: np.ndarray) -> dict:
    raw = answers.tolist()
    rows = reversed_rows(raw)
    n = len(raw)
    everything = list(range(10))
    shs = [sum(row[a] - row[b] for a, b in PAIRS.values()) / 20 for row in raw]
    item_total, if_deleted = {}, {}
    for k, key in enumerate(ITEMS):
        rest = [sum(row) - row[k] for row in rows]
        item_total[key] = statistics.correlation(column(rows, k), rest)
        if_deleted[key] = oracle_alpha(rows, [j for j in everything if j != k])
    correlations = {}
    for first, second in itertools.combinations(DIMENSIONS, 2):
        x, y = dimension_scores(raw, first), dimension_scores(raw, second)
        correlations[f"{first}-{second}"] = {
            "r": statistics.correlation(x, y),
            "p": stats.pearsonr(x, y).pvalue,
        }
    paired = {
        key: statistics.correlation(column(raw, a), [-value for value in column(raw, b)])
        for key, (a, b) in PAIRS.items()
    }
    counts = {str(value): sum(row.count(value) for row in raw) for value in range(-2, 3)}
    expected = 10 * n / 5
    chi2 = sum((count - expected) ** 2 / expected for count in counts.values())
    return {
        "n": n,
        "alpha": oracle_alpha(rows, everything),
        "item_total": item_total,
        "alpha_if_deleted": if_deleted,
        "dimension_correlations": correlations,
        "paired_item_r": paired,
        "chi2": chi2,
        "chi2_p": stats.chi2.sf(chi2, 4),
        "counts": counts,
        "shapiro": stats.shapiro(shs),
        "skewness": stats.skew(shs, bias=False),
        "kurtosis": stats.kurtosis(shs, bias=False),
        "dimension_profile": {
            key: {
                "mean": statistics.mean(dimension_scores(raw, key)),
                "sd": statistics.stdev(dimension_scores(raw, key)),
            }
            for key in DIMENSIONS
        },
        "overall": {"mean": statistics.mean(shs), "sd": statistics.stdev(shs)},
        "consistent_share": {
            key: sum(1 for row in raw if abs(row[a] + row[b]) <= 1) / n
            for key, (a, b) in PAIRS.items()
        },
        "item_agreement": {
            key: sum(1 for row in raw if row[k] >= 1) / n for k, key in enumerate(ITEMS)
        },
        "spearman_brown": {key: 2 * r / (1 + r) for key, r in paired.items()},
        "omega_total": oracle_omega(rows),
    }


def oracle_omega(rows):
    """Omega total from a one-factor ULS fit found by a general least-squares solver."""
    matrix = [
        [statistics.correlation(column(rows, i), column(rows, j)) for j in range(10)]
        for i in range(10)
    ]
    upper = [(i, j) for i in range(10) for j in range(i + 1, 10)]
    fit = optimize.least_squares(
        lambda loadings: [loadings[i] * loadings[j] - matrix[i][j] for i, j in upper],
        [0.5] * 10,
        xtol=1e-15,
        ftol=1e-15,
        gtol=1e-15,
    )
    loadings = fit.x
    common = sum(loadings) ** 2
    return common / (common + sum(1 - value**2 for value in loadings))


# --- the figures against the oracle --------------------------------------------


@pytest.fixture(scope="module", params=[(386, 1), (120, 2), (1000, 3)], ids=lambda p: f"n{p[0]}")
def case(request):
    n, seed = request.param
    answers = generated_answers(n, seed)
    return answers, analyze(answers), oracle(answers)


def test_result_has_exactly_the_spec_keys_plus_marked_additions(case):
    _, result, _ = case
    assert set(result) == ANALYSIS_KEYS | {"additions", "warnings", "paired_item_p", "small_sample"}
    assert set(result["cronbach_alpha"]) == {"alpha", "ci95"}
    assert list(result["item_total"]) == ITEMS
    assert list(result["alpha_if_deleted"]) == ITEMS
    assert list(result["dimension_correlations"]) == [
        "FA-SR", "FA-LC", "FA-DP", "FA-RG", "SR-LC", "SR-DP", "SR-RG", "LC-DP", "LC-RG", "DP-RG"
    ]  # fmt: skip
    assert all(set(v) == {"r", "p"} for v in result["dimension_correlations"].values())
    assert list(result["paired_item_r"]) == DIMENSIONS
    assert list(result["paired_item_p"]) == DIMENSIONS
    assert result["small_sample"] == {"threshold": 30, "caution": False}
    assert set(result["response_chi2"]) == {"chi2", "df", "p", "counts"}
    assert list(result["response_chi2"]["counts"]) == ["-2", "-1", "0", "1", "2"]
    assert set(result["shapiro"]) == {"W", "p"}
    assert all(set(v) == {"mean", "sd"} for v in result["dimension_profile"].values())
    assert list(result["dimension_profile"]) == DIMENSIONS
    assert set(result["overall"]) == {"mean", "sd"}
    assert list(result["consistent_share"]) == DIMENSIONS
    assert list(result["item_agreement"]) == ITEMS
    assert set(result["additions"]) == {"note", "omega_total", "spearman_brown"}
    assert "beyond the paper" in result["additions"]["note"]
    assert result["warnings"] == []


def test_n_counts_the_evaluations(case):
    answers, result, expected = case
    assert result["n"] == expected["n"] == len(answers)


def test_result_is_plain_json(case):
    _, result, _ = case
    assert json.loads(json.dumps(result, allow_nan=False)) == result


def test_cronbach_alpha_and_feldt_interval(case):
    _, result, expected = case
    alpha = result["cronbach_alpha"]["alpha"]
    assert alpha == pytest.approx(expected["alpha"], abs=TOLERANCE)
    n, df2 = expected["n"] - 1, (expected["n"] - 1) * 9
    lower, upper = result["cronbach_alpha"]["ci95"]
    assert lower == pytest.approx(1 - (1 - alpha) * stats.f.ppf(0.975, n, df2), abs=TOLERANCE)
    assert upper == pytest.approx(1 - (1 - alpha) * stats.f.ppf(0.025, n, df2), abs=TOLERANCE)


@pytest.mark.parametrize("figure", ["item_total", "alpha_if_deleted", "paired_item_r"])
def test_item_level_figures(case, figure):
    _, result, expected = case
    for key, value in expected[figure].items():
        assert result[figure][key] == pytest.approx(value, abs=TOLERANCE), key


def test_dimension_correlations_with_two_sided_p(case):
    _, result, expected = case
    for pair, figures in expected["dimension_correlations"].items():
        assert result["dimension_correlations"][pair]["r"] == pytest.approx(
            figures["r"], abs=TOLERANCE
        )
        assert result["dimension_correlations"][pair]["p"] == pytest.approx(
            figures["p"], abs=TOLERANCE
        )


def test_response_chi2_against_uniform(case):
    _, result, expected = case
    chi2 = result["response_chi2"]
    assert chi2["counts"] == expected["counts"]
    assert sum(chi2["counts"].values()) == 10 * expected["n"]
    assert chi2["df"] == 4
    assert chi2["chi2"] == pytest.approx(expected["chi2"], abs=TOLERANCE)
    assert chi2["p"] == pytest.approx(expected["chi2_p"], abs=TOLERANCE)


def test_distribution_of_overall_shs(case):
    _, result, expected = case
    assert result["shapiro"]["W"] == pytest.approx(expected["shapiro"].statistic, abs=TOLERANCE)
    assert result["shapiro"]["p"] == pytest.approx(expected["shapiro"].pvalue, abs=TOLERANCE)
    assert result["skewness"] == pytest.approx(expected["skewness"], abs=TOLERANCE)
    assert result["kurtosis"] == pytest.approx(expected["kurtosis"], abs=TOLERANCE)


@pytest.mark.parametrize("figure", ["dimension_profile", "overall"])
def test_means_and_sample_sds(case, figure):
    _, result, expected = case
    flat = expected[figure] if figure == "overall" else None
    pairs = {"": flat}.items() if flat else expected[figure].items()
    for key, values in pairs:
        got = result[figure] if not key else result[figure][key]
        assert got["mean"] == pytest.approx(values["mean"], abs=TOLERANCE)
        assert got["sd"] == pytest.approx(values["sd"], abs=TOLERANCE)


@pytest.mark.parametrize("figure", ["consistent_share", "item_agreement"])
def test_shares(case, figure):
    _, result, expected = case
    assert result[figure] == pytest.approx(expected[figure], abs=1e-12)


def test_additions_omega_and_spearman_brown(case):
    _, result, expected = case
    assert result["additions"]["omega_total"] == pytest.approx(
        expected["omega_total"], abs=TOLERANCE
    )
    for key, value in expected["spearman_brown"].items():
        assert result["additions"]["spearman_brown"][key] == pytest.approx(value, abs=TOLERANCE)


def test_item_statistics_use_the_reverse_scored_negative_items():
    # Every negative item answered as the mirror of its positive item: after
    # reverse-scoring all ten items are identical, so alpha is 1 and every
    # paired-item r is +1 (not -1).
    rng = np.random.default_rng(5)
    positive = rng.integers(-2, 3, size=(50, 1))
    answers = np.hstack([positive, -positive] * 5)
    result = analyze(answers)
    assert result["cronbach_alpha"]["alpha"] == pytest.approx(1.0)
    assert result["paired_item_r"] == pytest.approx(dict.fromkeys(DIMENSIONS, 1.0))
    assert result["item_total"]["q2"] == pytest.approx(1.0)


def test_item_agreement_counts_raw_answers_of_plus_one_and_two():
    answers = np.array([[2] * 10, [1] * 10, [0] * 10, [-1] * 10])
    assert analyze(answers)["item_agreement"] == dict.fromkeys(ITEMS, 0.5)


# --- degenerate input: null with a reason, never NaN, never a crash ------------


def null_paths(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from null_paths(item, f"{path}.{key}".lstrip("."))
    elif value is None:
        yield path


def assert_every_null_explained(result):
    figures = [warning["figure"] for warning in result["warnings"]]
    for path in null_paths({k: v for k, v in result.items() if k != "warnings"}):
        assert any(path == f or path.startswith(f + ".") for f in figures), path
    json.dumps(result, allow_nan=False)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_too_few_evaluations(n):
    answers = generated_answers(max(n, 1), 1)[:n]
    result = analyze(answers)
    assert result["n"] == n
    assert result["cronbach_alpha"] == {"alpha": None, "ci95": None}
    assert set(result["item_total"].values()) == {None}
    assert all(v == {"r": None, "p": None} for v in result["dimension_correlations"].values())
    assert result["shapiro"] == {"W": None, "p": None}
    assert result["skewness"] is None and result["kurtosis"] is None
    assert result["additions"]["omega_total"] is None
    reasons = {w["figure"]: w["reason"] for w in result["warnings"]}
    assert reasons["cronbach_alpha"] == f"needs at least 3 evaluations, got {n}"
    assert_every_null_explained(result)


def test_no_evaluations_at_all():
    result = analyze(np.zeros((0, 10), dtype=int))
    assert result["response_chi2"]["chi2"] is None
    assert result["response_chi2"]["counts"] == {"-2": 0, "-1": 0, "0": 0, "1": 0, "2": 0}
    assert result["overall"] == {"mean": None, "sd": None}
    assert set(result["consistent_share"].values()) == {None}
    assert_every_null_explained(result)


def test_one_evaluation_has_means_but_no_sd():
    result = analyze(np.array([[2, -2] * 5]))
    assert result["overall"] == {"mean": 1.0, "sd": None}
    assert result["dimension_profile"]["FA"] == {"mean": 1.0, "sd": None}
    assert_every_null_explained(result)


def test_an_item_without_variance():
    answers = generated_answers(60, 4)
    answers[:, 3] = 1  # q4, the negative item of SR, always "agree"
    result = analyze(answers)
    reasons = {w["figure"]: w["reason"] for w in result["warnings"]}
    assert result["item_total"]["q4"] is None
    assert reasons["item_total.q4"] == "zero variance: q4"
    assert result["paired_item_r"]["SR"] is None
    assert reasons["paired_item_r.SR"] == "zero variance: q4"
    assert result["additions"]["omega_total"] is None
    assert result["additions"]["spearman_brown"]["SR"] is None
    # Everything that does not need q4 to vary is still reported.
    assert result["cronbach_alpha"]["alpha"] is not None
    assert result["item_total"]["q3"] is not None
    assert result["dimension_correlations"]["FA-SR"]["r"] is not None
    assert_every_null_explained(result)


def test_identical_evaluations():
    result = analyze(np.tile([1, -1, 2, 0, 0, 1, -2, 2, 1, 1], (20, 1)))
    reasons = {w["figure"]: w["reason"] for w in result["warnings"]}
    assert result["cronbach_alpha"]["alpha"] is None
    assert reasons["cronbach_alpha"] == "the total of the ten items has zero variance"
    assert reasons["shapiro"] == "overall SHS has zero variance"
    assert result["overall"]["sd"] == 0.0
    assert result["dimension_correlations"]["FA-SR"] == {"r": None, "p": None}
    assert_every_null_explained(result)


def test_a_constant_dimension_score_nulls_only_its_correlations():
    answers = generated_answers(80, 6)
    answers[:, 8] = answers[:, 9]  # q9 == q10, so s_RG = 0 always
    result = analyze(answers)
    reasons = {w["figure"]: w["reason"] for w in result["warnings"]}
    assert result["dimension_correlations"]["DP-RG"] == {"r": None, "p": None}
    assert reasons["dimension_correlations.DP-RG"] == "zero variance in the dimension scores: RG"
    assert result["dimension_correlations"]["FA-SR"]["r"] is not None
    assert_every_null_explained(result)


def test_large_samples_carry_the_shapiro_caveat():
    answers = np.random.default_rng(1).integers(-2, 3, size=(5001, 10))
    result = analyze(answers)
    assert result["shapiro"]["p"] is not None
    assert {
        "figure": "shapiro",
        "reason": "p is an approximation not validated for n > 5000",
        "message": "p is an approximation not validated for n > {limit}",
        "params": {"limit": 5000},
    } in result["warnings"]


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.int8,
        st.tuples(st.integers(0, 8), st.just(10)),
        elements=st.integers(-2, 2),
    )
)
def test_any_small_input_gives_json_without_nan(answers):
    result = analyze(answers)
    assert_every_null_explained(result)


@pytest.mark.parametrize(
    "answers",
    [np.zeros((5, 9), dtype=int), np.full((5, 10), 3), np.full((5, 10), 0.5)],
    ids=["shape", "range", "fraction"],
)
def test_unvalidated_input_is_refused(answers):
    with pytest.raises(ValueError):
        analyze(answers)


# --- paired-item p, degenerate pairs, small samples ------------------------------


def test_paired_item_p_is_pearsons_two_sided_p(case):
    answers, result, _ = case
    for key, (a, b) in PAIRS.items():
        expected = stats.pearsonr(answers[:, a], -answers[:, b])
        assert result["paired_item_r"][key] == pytest.approx(expected.statistic, abs=TOLERANCE)
        assert result["paired_item_p"][key] == pytest.approx(expected.pvalue, rel=1e-6, abs=1e-300)


def test_a_null_paired_r_has_a_null_p_with_a_reason():
    answers = generated_answers(60, 4)
    answers[:, 3] = 1
    result = analyze(answers)
    assert result["paired_item_p"]["SR"] is None
    assert result["paired_item_p"]["FA"] is not None
    assert_every_null_explained(result)


def test_omega_is_reported_when_an_item_pair_correlates_at_minus_one():
    # q6 answered exactly like q5: q5 and the reversed q6 correlate at r = -1 and
    # the correlation matrix is singular. The one-factor fit still exists.
    answers = generated_answers(60, 19)
    answers[:, 5] = answers[:, 4]
    result = analyze(answers)
    assert result["paired_item_r"]["LC"] == pytest.approx(-1.0)
    assert result["additions"]["omega_total"] == pytest.approx(
        oracle_omega(reversed_rows(answers.tolist())), abs=1e-4
    )
    assert result["additions"]["spearman_brown"]["LC"] is None
    assert_every_null_explained(result)


def test_a_spearman_brown_value_below_minus_one_is_flagged_not_interpretable():
    # q2 nearly repeats q1 (raw), so q1 and the reversed q2 correlate near -0.9:
    # 2r / (1 + r) is far below -1, which no reliability can be.
    answers = generated_answers(200, 8)
    answers[:100, 1] = answers[:100, 0]
    result = analyze(answers)
    r = result["paired_item_r"]["FA"]
    value = result["additions"]["spearman_brown"]["FA"]
    assert r < -1 / 3 and value == pytest.approx(2 * r / (1 + r))
    flags = [w for w in result["warnings"] if w["figure"] == "additions.spearman_brown.FA"]
    assert len(flags) == 1 and "not interpretable" in flags[0]["reason"]
    assert not [w for w in result["warnings"] if w["figure"] == "additions.spearman_brown.SR"]


@pytest.mark.parametrize(
    ("n", "threshold", "caution"), [(29, 30, True), (30, 30, False), (40, 50, True)]
)
def test_small_samples_carry_a_caution_on_alpha_correlations_and_normality(n, threshold, caution):
    result = analyze(generated_answers(n, 3), small_sample_n=threshold)
    assert result["small_sample"] == {"threshold": threshold, "caution": caution}
    cautioned = {w["figure"] for w in result["warnings"] if w["message"].startswith("based on {n}")}
    expected = {"cronbach_alpha", "dimension_correlations", "paired_item_r", "shapiro"}
    assert cautioned == (expected if caution else set())
    if caution:
        reason = next(w["reason"] for w in result["warnings"] if w["figure"] == "shapiro")
        assert reason.startswith(f"based on {n} evaluations, fewer than the {threshold}")
