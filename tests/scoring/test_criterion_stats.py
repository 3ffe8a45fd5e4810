"""The criterion-validity statistics (docs/design/criterion.md §13.3) against independent
computations: scipy.stats for the correlations, statsmodels for the OLS steps,
and a cluster bootstrap written out here with plain loops; Steiger's Z against
published worked examples.
"""

import json
import math

import numpy as np
import pytest
from scipy import stats

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.correlations import steiger_z
from scoring.stats.validity.criterion import CriterionRow, criterion_analysis
from scoring.stats.validity.plan import Plan

FAST = Plan(resamples=300)


def study(n_participants=120, rho=0.6, seed=7, sr_support=0.7, other_support=0.1, detectors=True):
    """Two evaluations per participant with a shared participant effect.

    Factual precision correlates with SHS at about `rho`; citation support
    (first evaluation of each participant only) with SR at about `sr_support`
    and with the other dimensions at about `other_support`.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_participants):
        effect = rng.normal(scale=0.5)
        for block in range(2):
            latent = rng.normal() + effect
            support = rng.normal()
            dims = {}
            for key in DIMENSION_KEYS:
                weight = sr_support if key == "SR" else other_support
                dims[key] = float(latent + weight * 2.5 * support + rng.normal())
            shs = float(np.mean(list(dims.values())))
            precision = float(rho * latent + math.sqrt(1 - rho**2) * rng.normal())
            rows.append(
                CriterionRow(
                    participant=f"P{p:03d}",
                    shs=shs,
                    dimensions=dims,
                    factual_precision=precision,
                    citation_support=float(support) if block == 0 else None,
                    detectors={"semantic_entropy": float(-latent + rng.normal())}
                    if detectors
                    else {},
                )
            )
    return rows


def columns(rows, *names):
    get = {
        "shs": lambda r: r.shs,
        "fp": lambda r: r.factual_precision,
        "cs": lambda r: r.citation_support,
        **{k: (lambda r, k=k: r.dimensions[k]) for k in DIMENSION_KEYS},
    }
    kept = [r for r in rows if all(get[n](r) is not None for n in names)]
    return [np.array([get[n](r) for r in kept]) for n in names], [r.participant for r in kept]


def loop_bootstrap(participants, statistic, seed=FAST.seed, resamples=FAST.resamples):
    """The cluster bootstrap written out: a dict of each participant's rows,
    the drawn participants' rows concatenated in draw order."""
    keys = sorted(set(participants))
    rows_of = {key: [i for i, p in enumerate(participants) if p == key] for key in keys}
    draws = np.random.default_rng(seed).integers(0, len(keys), size=(resamples, len(keys)))
    out = []
    for draw in draws:
        index = [i for g in draw for i in rows_of[keys[g]]]
        out.append(statistic(np.array(index)))
    return np.array(out)


def test_h1_matches_scipy_and_the_fisher_z_test():
    rows = study()
    result = criterion_analysis(rows, FAST).as_dict()["h1"]
    (shs, fp), _ = columns(rows, "shs", "fp")
    expected = stats.pearsonr(shs, fp)
    ci = expected.confidence_interval(confidence_level=0.95)  # scipy's Fisher-z interval
    got = result["unclustered"]
    assert result["n"] == 240 and result["n_participants"] == 120
    assert got["r"] == pytest.approx(expected.statistic, abs=1e-12)
    assert 0.45 < got["r"] < 0.75  # the correlation the data were built with, about .6
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((ci.low, ci.high), abs=1e-10)
    assert got["p_zero"] == pytest.approx(expected.pvalue, rel=1e-8)
    z = (np.arctanh(expected.statistic) - np.arctanh(0.40)) * np.sqrt(240 - 3)
    assert got["test"]["z"] == pytest.approx(z, abs=1e-10)
    assert got["test"]["p"] == pytest.approx(stats.norm.sf(z), rel=1e-8)
    rank = stats.spearmanr(shs, fp)
    assert got["spearman"]["rho"] == pytest.approx(rank.statistic, abs=1e-12)
    assert got["spearman"]["p"] == pytest.approx(rank.pvalue, rel=1e-6)
    # The rule of docs/design/criterion-verdicts.md §13.6: supported when the one-sided test
    # rejects rho <= .40, not supported when its mirror rejects rho >= .40.
    expected_verdict = (
        "supported"
        if stats.norm.sf(z) < 0.05
        else "not_supported"
        if stats.norm.cdf(z) < 0.05
        else "inconclusive"
    )
    assert got["verdict"] == expected_verdict


def test_h1_clustered_matches_a_loop_bootstrap():
    rows = study()
    result = criterion_analysis(rows, FAST).as_dict()["h1"]["clustered"]
    (shs, fp), participants = columns(rows, "shs", "fp")
    reps = loop_bootstrap(
        participants,
        lambda i: (stats.pearsonr(shs[i], fp[i])[0], stats.spearmanr(shs[i], fp[i])[0]),
    )
    low, high = np.percentile(reps[:, 0], [2.5, 97.5])
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((low, high), abs=1e-10)
    se = np.std(np.arctanh(reps[:, 0]), ddof=1)
    z = (np.arctanh(stats.pearsonr(shs, fp)[0]) - np.arctanh(0.4)) / se
    assert result["test"]["se"] == pytest.approx(se, rel=1e-10)
    assert result["test"]["p"] == pytest.approx(stats.norm.sf(z), rel=1e-8)
    rank_low, rank_high = np.percentile(reps[:, 1], [2.5, 97.5])
    assert result["spearman"]["ci_low"] == pytest.approx(rank_low, abs=1e-10)
    assert result["spearman"]["ci_high"] == pytest.approx(rank_high, abs=1e-10)
    assert result["valid_resamples"] == FAST.resamples


def test_the_clustered_interval_is_wider_when_participants_drive_the_correlation():
    # Both evaluations of a participant nearly equal: n = 240 holds about 120
    # independent observations, which only the clustered interval knows.
    rows = []
    rng = np.random.default_rng(3)
    for p in range(120):
        x = rng.normal()
        y = 0.3 * x + rng.normal()
        for _ in range(2):
            dims = dict.fromkeys(DIMENSION_KEYS, x)
            rows.append(CriterionRow(f"P{p}", x + rng.normal(scale=0.01), dims, y, None, {}))
    h1 = criterion_analysis(rows, FAST).as_dict()["h1"]
    width = {k: h1[k]["ci_high"] - h1[k]["ci_low"] for k in ("unclustered", "clustered")}
    assert width["clustered"] > 1.15 * width["unclustered"]  # about sqrt(2) in theory


def test_the_same_seed_gives_the_same_output_and_another_seed_does_not():
    rows = study(n_participants=40)
    first = criterion_analysis(rows, Plan(resamples=200, seed=5)).as_dict()
    again = criterion_analysis(rows, Plan(resamples=200, seed=5)).as_dict()
    other = criterion_analysis(rows, Plan(resamples=200, seed=6)).as_dict()
    assert json.dumps(first) == json.dumps(again)
    assert first["h1"]["clustered"]["ci_low"] != other["h1"]["clustered"]["ci_low"]
    assert first["bootstrap"]["seed"] == 5 and first["bootstrap"]["resamples"] == 200


def test_steiger_z_reproduces_steiger_1980_case_a():
    # Steiger, J. H. (1980). Tests for comparing elements of a correlation matrix.
    # Psychological Bulletin, 87, 245-251, p. 249, case A: N = 103, r_jk = .4,
    # r_jh = .5, r_kh = .1; the paper reports Z1* = -.8913, computed with the
    # covariance rounded to four places; unrounded it is -.8887.
    assert steiger_z(0.4, 0.5, 0.1, 103) == pytest.approx(-0.8913, abs=0.003)
    assert steiger_z(0.4, 0.5, 0.1, 103) == pytest.approx(-0.88872, abs=1e-5)


def test_steiger_z_reproduces_depcor():
    # Silver, N. C., Hittner, J. B., & May, K. (2006). A FORTRAN 77 program for
    # comparing dependent correlations. Applied Psychological Measurement, 30,
    # 152-153: r_jk = .3, r_jh = .4, r_kh = .5, n = 100 gives Z = -1.0718, p = .2838.
    z = steiger_z(0.3, 0.4, 0.5, 100)
    assert z == pytest.approx(-1.0718, abs=5e-5)
    assert 2 * stats.norm.sf(abs(z)) == pytest.approx(0.2838, abs=5e-5)


def steiger_by_covariance(r_jk, r_jh, r_kh, n):
    """Steiger's Z1* from the asymptotic covariance of two correlations sharing j
    (Pearson and Filon's formula with the pooled r), divided by the variances of
    r: the correlation of the two Fisher z's."""
    r = (r_jk + r_jh) / 2
    covariance = r_kh * (1 - 2 * r**2) - 0.5 * r**2 * (1 - 2 * r**2 - r_kh**2)
    correlation_of_zs = covariance / (1 - r**2) ** 2
    variance = (2 - 2 * correlation_of_zs) / (n - 3)
    return (np.arctanh(r_jk) - np.arctanh(r_jh)) / np.sqrt(variance)


def test_h2_correlations_and_steiger_comparisons():
    rows = study()
    h2 = criterion_analysis(rows, FAST).as_dict()["h2"]
    (cs, *dims), _ = columns(rows, "cs", *DIMENSION_KEYS)
    by_key = dict(zip(DIMENSION_KEYS, dims, strict=True))
    assert h2["n"] == 120
    for key in DIMENSION_KEYS:
        expected = stats.pearsonr(by_key[key], cs)
        assert h2["unclustered"]["correlations"][key]["r"] == pytest.approx(
            expected.statistic, abs=1e-12
        )
        assert h2["unclustered"]["correlations"][key]["p"] == pytest.approx(
            expected.pvalue, rel=1e-8
        )
    for key in ("FA", "LC", "DP", "RG"):
        comparison = h2["unclustered"]["comparisons"][key]
        r_sr, r_other = stats.pearsonr(by_key["SR"], cs)[0], stats.pearsonr(by_key[key], cs)[0]
        between = stats.pearsonr(by_key["SR"], by_key[key])[0]
        z = steiger_by_covariance(r_sr, r_other, between, 120)
        assert comparison["z"] == pytest.approx(z, abs=1e-10)
        assert comparison["p"] == pytest.approx(stats.norm.sf(z), rel=1e-8)
        assert comparison["r_between"] == pytest.approx(between, abs=1e-12)
        assert "Steiger" in comparison["method"]
    assert h2["unclustered"]["verdict"] == "supported"
    assert h2["clustered"]["verdict"] == "supported"


def test_h2_clustered_matches_a_loop_bootstrap():
    rows = study()
    h2 = criterion_analysis(rows, FAST).as_dict()["h2"]["clustered"]
    (cs, sr, lc), participants = columns(rows, "cs", "SR", "LC")
    reps = loop_bootstrap(
        participants, lambda i: (stats.pearsonr(sr[i], cs[i])[0], stats.pearsonr(lc[i], cs[i])[0])
    )
    low, high = np.percentile(reps[:, 0], [2.5, 97.5])
    assert h2["correlations"]["SR"]["ci_low"] == pytest.approx(low, abs=1e-10)
    assert h2["correlations"]["SR"]["ci_high"] == pytest.approx(high, abs=1e-10)
    se = np.std(np.arctanh(reps[:, 0]) - np.arctanh(reps[:, 1]), ddof=1)
    difference = np.arctanh(stats.pearsonr(sr, cs)[0]) - np.arctanh(stats.pearsonr(lc, cs)[0])
    assert h2["comparisons"]["LC"]["se"] == pytest.approx(se, rel=1e-10)
    assert h2["comparisons"]["LC"]["z"] == pytest.approx(difference / se, rel=1e-10)
    diff_low, diff_high = np.percentile(reps[:, 0] - reps[:, 1], [2.5, 97.5])
    assert h2["comparisons"]["LC"]["ci_low"] == pytest.approx(diff_low, abs=1e-10)
    assert h2["comparisons"]["LC"]["ci_high"] == pytest.approx(diff_high, abs=1e-10)


def test_h2_is_inconclusive_when_another_dimension_tracks_citations_as_well():
    # SR no better than the others, but not significantly worse either: the data
    # decide nothing, and "not supported" would claim they spoke against H2.
    rows = study(sr_support=0.5, other_support=0.5)
    h2 = criterion_analysis(rows, FAST).as_dict()["h2"]
    assert h2["unclustered"]["verdict"] == "inconclusive"
    assert h2["clustered"]["verdict"] == "inconclusive"
    assert h2["verdict"] == "inconclusive"


def test_h2_is_not_supported_when_other_dimensions_track_citations_better():
    rows = study(sr_support=0.0, other_support=0.7)
    h2 = criterion_analysis(rows, FAST).as_dict()["h2"]
    comparisons = h2["unclustered"]["comparisons"].values()
    assert all(c["z"] < 0 and stats.norm.cdf(c["z"]) < 0.05 for c in comparisons)
    assert h2["unclustered"]["verdict"] == "not_supported"
    assert h2["clustered"]["verdict"] == "not_supported"


def test_detectors_are_described_with_both_intervals():
    rows = study()
    detector = criterion_analysis(rows, FAST).as_dict()["detectors"]["by_name"]["semantic_entropy"]
    shs = np.array([r.shs for r in rows])
    values = np.array([r.detectors["semantic_entropy"] for r in rows])
    assert detector["unclustered"]["r"] == pytest.approx(stats.pearsonr(shs, values)[0], abs=1e-12)
    assert detector["unclustered"]["r"] < 0
    reps = loop_bootstrap(
        [r.participant for r in rows], lambda i: stats.pearsonr(shs[i], values[i])[0]
    )
    assert detector["clustered"]["ci_low"] == pytest.approx(np.percentile(reps, 2.5), abs=1e-10)
    assert detector["n"] == 240


@pytest.mark.parametrize(
    ("rho", "primary", "verdict"),
    [(0.7, "clustered", "not_falsified"), (0.0, "unclustered", "falsified")],
)
def test_falsification_follows_the_primary_analysis(rho, primary, verdict):
    rows = study(rho=rho)
    result = criterion_analysis(rows, Plan(resamples=300, primary=primary)).as_dict()
    falsification = result["falsification"]
    assert falsification["verdict"] == verdict
    assert falsification["decided"] is True and falsification["evaluations_needed"] is None
    assert falsification["analysis"] == primary
    assert falsification["ci_low"] == result["h1"][primary]["ci_low"]
    assert falsification["underpowered"] is False  # 240 evaluations, 200 planned
    assert "renamed or restructured" in falsification["criterion"]


def test_falsification_near_the_threshold_is_inconclusive_and_small_samples_underpowered():
    rows = study(n_participants=20, rho=0.2, seed=11)
    falsification = criterion_analysis(rows, FAST).as_dict()["falsification"]
    assert falsification["ci_low"] < 0.2 < falsification["ci_high"]
    assert falsification["verdict"] == "inconclusive" and falsification["decided"] is False
    assert falsification["underpowered"] is True
    assert falsification["n"] == 40


def test_two_sided_h1_needs_r_above_the_threshold():
    rows = study(rho=0.05)
    h1 = criterion_analysis(rows, Plan(resamples=200, sidedness="two_sided")).as_dict()["h1"]
    test = h1["unclustered"]["test"]
    assert test["z"] < 0 and test["p"] < 0.05  # significantly different from .40, but below it
    assert test["p"] == pytest.approx(2 * stats.norm.sf(abs(test["z"])), rel=1e-10)
    assert h1["unclustered"]["verdict"] == "not_supported"
    assert h1["null_hypothesis"] == "rho = 0.4"


def test_counts():
    rows = study(n_participants=30)
    counts = criterion_analysis(rows, FAST).as_dict()["counts"]
    assert counts == {
        "n_evaluations": 60,
        "n_participants": 30,
        "n_factual_precision": 60,
        "n_citation_support": 30,
    }


def nulls_have_reasons(result):
    text = json.dumps(result, allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text
    return {entry["figure"] for entry in result["warnings"]}


def test_three_evaluations_give_no_figures_but_reasons():
    rows = study(n_participants=2)[:3]
    result = criterion_analysis(rows, FAST).as_dict()
    figures = nulls_have_reasons(result)
    assert result["h1"]["unclustered"]["r"] is None
    assert result["h1"]["verdict"] == "not_computable"
    assert result["h2"]["verdict"] == "not_computable"
    assert result["h3"]["unclustered"]["beta_std"] is None
    assert result["falsification"]["verdict"] == "not_computable"
    assert {"h1.r", "h2.r", "h3.beta", "falsification.verdict"} <= figures


def test_no_rows_at_all():
    result = criterion_analysis([], FAST).as_dict()
    nulls_have_reasons(result)
    assert result["counts"]["n_evaluations"] == 0
    assert result["detectors"]["by_name"] == {}


def test_constant_factual_precision_and_missing_citations_give_reasons():
    rows = [
        CriterionRow(r.participant, r.shs, r.dimensions, 0.5, None, {"flat": 1.0})
        for r in study(n_participants=20)
    ]
    result = criterion_analysis(rows, FAST).as_dict()
    figures = nulls_have_reasons(result)
    assert result["h1"]["unclustered"]["r"] is None
    assert result["h2"]["n"] == 0 and result["h2"]["verdict"] == "not_computable"
    assert result["detectors"]["by_name"]["flat"]["unclustered"]["r"] is None
    assert {"h1.r", "h2.r", "h3.beta", "detectors.flat"} <= figures
    reasons = " ".join(entry["reason"] for entry in result["warnings"])
    assert "factual precision does not vary" in reasons


def test_missing_and_not_finite_measures_are_left_out():
    rows = study(n_participants=30)
    rows[0] = CriterionRow(
        rows[0].participant, rows[0].shs, rows[0].dimensions, float("nan"), None, {}
    )
    rows[1] = CriterionRow(rows[1].participant, rows[1].shs, {}, None, 0.5, {})
    result = criterion_analysis(rows, FAST).as_dict()
    nulls_have_reasons(result)
    assert result["counts"]["n_factual_precision"] == 58
    assert result["h1"]["n"] == 58
    assert result["h2"]["n"] == 29  # the row without dimension scores is not a complete case


def test_a_perfect_correlation_reports_r_without_an_infinite_interval():
    rows = [
        CriterionRow(f"P{i // 2}", i / 10, dict.fromkeys(DIMENSION_KEYS, 0.0), i / 20, None, {})
        for i in range(10)
    ]
    result = criterion_analysis(rows, FAST).as_dict()
    nulls_have_reasons(result)
    assert result["h1"]["unclustered"]["r"] == pytest.approx(1.0)
    assert result["h1"]["unclustered"]["ci_low"] is None


@pytest.mark.parametrize(
    "change",
    [
        {"sidedness": "left"},
        {"primary": "both"},
        {"alpha": 0.0},
        {"resamples": 1},
        {"h1_threshold": 1.0},
    ],
)
def test_a_plan_outside_its_domain_is_refused(change):
    with pytest.raises(ValueError):
        Plan(**change)


def test_three_participants_give_unclustered_figures_but_no_clustered_ones():
    rows = [
        CriterionRow(
            f"P{i % 3}",
            float(v),
            dict(zip(DIMENSION_KEYS, [v, -v, v * v, v / 2, 1 - v], strict=True)),
            float(f),
            None,
            {},
        )
        for i, (v, f) in enumerate(
            zip(
                [0.1, 0.4, -0.2, 0.5, 0.3, -0.6, 0.0, 0.2],
                [0.3, 0.7, 0.2, 0.8, 0.4, 0.1, 0.3, 0.6],
                strict=True,
            )
        )
    ]
    result = criterion_analysis(rows, FAST).as_dict()
    figures = nulls_have_reasons(result)
    assert result["h1"]["unclustered"]["r"] is not None
    assert result["h1"]["clustered"]["ci_low"] is None and result["h1"]["clustered"]["test"] is None
    assert result["h3"]["unclustered"]["beta_std"] is not None
    assert result["h3"]["clustered"]["beta_std"] is None
    assert {"h1.clustered", "h3.clustered"} <= figures
