"""Nested data (docs/design/validation-analysis.md §14.7): the participant-clustered intervals,
alpha by group, the participant's share of SHS variance, the per-language table.

Expected figures come another way: the bootstrap by a plain loop over resamples,
alpha and r by numpy's var and corrcoef, the ICC by the one-way ANOVA written
out per participant, Shrout & Fleiss's (1979) Table 2 as a published example.
"""

import math

import numpy as np
import pytest
from scipy import stats

from scoring.instruments.shs import DIMENSION_KEYS, ITEMS
from scoring.scores.engine import score_array
from scoring.stats.nested.clustered import BLOCK, nested_report
from scoring.stats.nested.icc import anova_icc, participant_share
from scoring.stats.reliability.analysis import analyze
from scoring.stats.validation_data import ValidationData

POLARITY = np.array([item.polarity for item in ITEMS])


def simulated(
    participants=60,
    *,
    person_sd=1.0,
    evaluation_sd=1.0,
    item_sd=0.8,
    copies=False,
    languages=("en", "de"),
    seed=1,
) -> ValidationData:
    """Two evaluations per participant (systems A/B/C): latent = person + evaluation
    effect; each item is the latent (reversed for negative items) plus noise, rounded
    to -2..+2. With `copies` the second evaluation repeats the first answer for answer."""
    rng = np.random.default_rng(seed)
    person = np.repeat(rng.normal(0.0, person_sd, participants), 2)
    latent = person + rng.normal(0.0, evaluation_sd, 2 * participants)
    items = latent[:, None] * POLARITY + rng.normal(0.0, item_sd, (2 * participants, 10))
    answers = np.clip(np.rint(items), -2, 2).astype(int)
    if copies:
        answers[1::2] = answers[0::2]
    ids = np.repeat([f"p{i:03d}" for i in range(participants)], 2)
    systems = np.array([rng.choice(["A", "B", "C"], 2, replace=False) for _ in range(participants)])
    language = np.repeat(rng.choice(languages, participants), 2)
    return ValidationData(
        answers=answers, participant=ids, system=systems.ravel(), language=language
    )


def hand_alpha(answers: np.ndarray) -> float:
    keyed = answers * POLARITY
    k = keyed.shape[1]
    return k / (k - 1) * (1 - keyed.var(axis=0, ddof=1).sum() / keyed.sum(axis=1).var(ddof=1))


def hand_correlations(answers: np.ndarray) -> np.ndarray:
    """alpha, then r of the ten dimension pairs (FA-SR, FA-DP, ...), then SHS with each."""
    scored = score_array(answers)
    matrix = np.corrcoef(np.column_stack([scored.dimension_scores, scored.shs]), rowvar=False)
    pairs = [matrix[i, j] for i in range(5) for j in range(i + 1, 5)]
    return np.array([hand_alpha(answers), *pairs, *matrix[5, :5]])


def figures_in_order(report: dict) -> list[dict]:
    return [
        report["alpha"],
        *report["dimension_correlations"].values(),
        *report["shs_dimension_correlations"].values(),
    ]


def test_clustered_intervals_match_a_plain_loop_over_the_same_draws():
    # Given 25 participants, two evaluations each, and 150 resamples
    data = simulated(25, seed=3)
    resamples, seed = 150, 11
    # When the report draws its resamples
    report = nested_report(data, resamples=resamples, seed=seed)
    # Then a loop that rebuilds each resample row by row (participants in sorted
    # order, resample b = row b of integers(0, G, (B, G))) gives the same percentiles
    keys = np.unique(data.participant)
    draws = np.random.default_rng(seed).integers(0, len(keys), size=(resamples, len(keys)))
    rows_of = {key: np.flatnonzero(data.participant == key) for key in keys}
    replicates = np.array(
        [
            hand_correlations(data.answers[np.concatenate([rows_of[keys[i]] for i in draw])])
            for draw in draws
        ]
    )
    for figure, column in zip(figures_in_order(report), replicates.T, strict=True):
        finite = column[np.isfinite(column)]
        expected = np.quantile(finite, [0.025, 0.975])
        assert figure["ci95_clustered"]["interval"] == pytest.approx(expected, abs=1e-9)
        assert figure["ci95_clustered"]["valid_replicates"] == len(finite)
    assert report["bootstrap"] | {"seconds": 0} == {
        "method": report["bootstrap"]["method"],
        "seed": seed,
        "resamples": resamples,
        "clusters": 25,
        "confidence": 0.95,
        "seconds": 0,
    }


def test_estimates_and_naive_intervals_are_the_textbook_ones():
    data = simulated(40, seed=5)
    report = nested_report(data, resamples=50)
    n = data.n
    expected = hand_correlations(data.answers)
    for figure, value in zip(figures_in_order(report), expected, strict=True):
        assert figure["estimate"] == pytest.approx(value, abs=1e-12)
        assert figure["n"] == n and figure["method"]
    # Feldt (1965): 1 - (1 - alpha) F quantiles with (n - 1, 9(n - 1)) df
    alpha = expected[0]
    upper, lower = stats.f.ppf([0.975, 0.025], n - 1, 9 * (n - 1))
    feldt = [1 - (1 - alpha) * upper, 1 - (1 - alpha) * lower]
    assert report["alpha"]["ci95_naive"]["interval"] == pytest.approx(feldt)
    # Fisher: tanh(atanh r -/+ 1.96 / sqrt(n - 3))
    r = report["dimension_correlations"]["FA-SR"]["estimate"]
    half = stats.norm.ppf(0.975) / math.sqrt(n - 3)
    fisher = [math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)]
    assert report["dimension_correlations"]["FA-SR"]["ci95_naive"]["interval"] == pytest.approx(
        fisher
    )


def width(interval) -> float:
    return interval[1] - interval[0]


def test_clustered_interval_is_wider_when_a_participants_evaluations_agree():
    # Given participants whose second evaluation repeats the first (n counts each twice)
    repeated = nested_report(simulated(150, copies=True, seed=8), resamples=600)
    # and, as a control, participants whose two evaluations are independent
    independent = nested_report(simulated(150, person_sd=0.0, seed=8), resamples=600)

    def ratios(report):
        return [
            width(figure["ci95_clustered"]["interval"]) / width(figure["ci95_naive"]["interval"])
            for figure in figures_in_order(report)
        ]

    # Then the clustered interval is about sqrt(2) times the naive one (half the
    # information), over alpha and the fifteen correlations; the control's about as wide
    assert np.mean(ratios(repeated)) > 1.25 and min(ratios(repeated)) > 1.1
    assert 0.85 < np.mean(ratios(independent)) < 1.15


def test_progress_is_reported_after_every_block():
    calls = []
    nested_report(simulated(10), resamples=2 * BLOCK + 7, progress=lambda *a: calls.append(a))
    total = 2 * BLOCK + 7
    assert calls == [(BLOCK, total), (2 * BLOCK, total), (total, total)]


def test_small_groups_are_named_and_not_estimated():
    # Given 40 participants in English and 5 in French (10 evaluations)
    big, small = simulated(40, languages=("en",), seed=2), simulated(5, languages=("fr",), seed=4)
    data = ValidationData(
        answers=np.vstack([big.answers, small.answers]),
        participant=np.concatenate([big.participant, np.char.add("fr-", small.participant)]),
        system=np.concatenate([big.system, small.system]),
        language=np.concatenate([big.language, small.language]),
    )
    report = nested_report(data, resamples=20)
    by_language = report["alpha_by_language"]
    assert by_language["too_small"] == ["fr"]
    assert by_language["groups"]["fr"]["estimate"] is None
    assert "too few evaluations (10); a group needs 30" in by_language["groups"]["fr"]["reason"]
    english = data.language == "en"
    assert by_language["groups"]["en"]["estimate"] == pytest.approx(
        hand_alpha(data.answers[english])
    )
    table = report["language_table"]
    assert table["too_small"] == ["fr"] and table["languages"]["fr"]["alpha"] is None
    row = table["languages"]["en"]
    assert row["n"] == 80 and row["participants"] == 40
    assert row["omega"]["estimate"] == pytest.approx(
        analyze(data.answers[english])["additions"]["omega_total"]
    )
    shs = score_array(data.answers[english]).shs
    assert row["shs"]["mean"] == pytest.approx(shs.mean())
    assert row["shs"]["sd"] == pytest.approx(shs.std(ddof=1))
    # Systems: named when below 30 evaluations, else alpha as by hand
    systems = report["alpha_by_system"]
    counts = {system: int((data.system == system).sum()) for system in ("A", "B", "C")}
    assert systems["too_small"] == [system for system, n in counts.items() if n < 30]
    for system, figure in systems["groups"].items():
        assert figure["n"] == counts[system]
        if counts[system] >= 30:
            expected = hand_alpha(data.answers[data.system == system])
            assert figure["estimate"] == pytest.approx(expected)


def test_constant_answers_give_reasons_and_no_numbers():
    data = simulated(40)
    constant = ValidationData(
        answers=np.zeros_like(data.answers),
        participant=data.participant,
        system=data.system,
        language=data.language,
    )
    report = nested_report(constant, resamples=30)
    for figure in figures_in_order(report):
        assert figure["estimate"] is None and figure["ci95_clustered"] is None
        assert figure["reason"]
    assert report["alpha"]["reason"] == "the total of the ten items has zero variance"
    assert report["dimension_correlations"]["FA-SR"]["reason"] == "zero variance: FA, SR"
    share = report["participant_share"]
    assert share["intercept_only"] is None and share["anova"] is None
    assert share["reason"] == "SHS has zero variance: no variance to share"
    for group in report["alpha_by_language"]["groups"].values():
        assert group["estimate"] is None and group["reason"]


# Shrout & Fleiss (1979), Table 2: six targets rated by four judges. They report
# BMS = 11.24, WMS = 6.26 and ICC(1,1) = .17.
SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
)


def test_anova_icc_reproduces_shrout_and_fleiss_table_2():
    targets = np.repeat(np.arange(6), 4)
    figure = anova_icc(SHROUT_FLEISS.ravel().astype(float), targets, 0.95)
    assert figure["msb"] == pytest.approx(11.24, abs=0.005)
    assert figure["msw"] == pytest.approx(6.26, abs=0.005)
    assert round(figure["icc"], 2) == 0.17
    assert figure["balanced"] and figure["n0"] == 4
    # the mixed model's REML estimate on these balanced data is the ANOVA one
    share = participant_share(SHROUT_FLEISS.ravel(), targets, np.zeros(24))
    assert share["intercept_only"]["converged"]
    assert share["intercept_only"]["icc"] == pytest.approx(figure["icc"], abs=1e-4)
    assert share["with_system"]["reason"] == "one system only: no system effect to add"


def one_way_icc(y: np.ndarray, groups: np.ndarray) -> tuple[float, float, float]:
    """ICC(1) = (MSB - MSW) / (MSB + (k - 1) MSW) for k evaluations per participant,
    sums of squares written out per participant; also MSB and MSW."""
    labels = sorted(set(groups))
    k = len(y) // len(labels)
    grand = y.mean()
    between = within = 0.0
    for label in labels:
        own = y[groups == label]
        between += k * (own.mean() - grand) ** 2
        within += ((own - own.mean()) ** 2).sum()
    msb, msw = between / (len(labels) - 1), within / (len(y) - len(labels))
    return (msb - msw) / (msb + (k - 1) * msw), msb, msw


def test_mixed_model_icc_recovers_known_variance_components():
    # Given 400 participants with tau^2 = 1 and sigma^2 = 1 (ICC 0.5), two evaluations each
    rng = np.random.default_rng(20260801)
    groups = np.repeat(np.arange(400), 2)
    y = np.repeat(rng.normal(0.0, 1.0, 400), 2) + rng.normal(0.0, 1.0, 800)
    systems = np.tile(["A", "B"], 400)
    share = participant_share(y, groups, systems)
    fit = share["intercept_only"]
    icc, msb, msw = one_way_icc(y, groups)
    assert fit["converged"] and fit["reason"] is None
    # REML on balanced data is the ANOVA estimator; both near the simulated values
    assert fit["icc"] == pytest.approx(icc, abs=1e-4)
    assert fit["icc"] == pytest.approx(0.5, abs=0.1)
    assert fit["participant_variance"] == pytest.approx(1.0, abs=0.25)
    assert fit["residual_variance"] == pytest.approx(1.0, abs=0.2)
    anova = share["anova"]
    assert anova["icc"] == pytest.approx(icc) and anova["msw"] == pytest.approx(msw)
    # The F interval of Shrout & Fleiss (1979), Table 4, ICC(1,1)
    f = msb / msw
    low = f / stats.f.ppf(0.975, 399, 400)
    high = f * stats.f.ppf(0.975, 400, 399)
    assert anova["ci95"] == pytest.approx([(low - 1) / (low + 1), (high - 1) / (high + 1)])
    assert anova["ci95"][0] < 0.5 < anova["ci95"][1]
    assert share["with_system"]["converged"] and share["with_system"]["fixed_effects"] == 2


def profiled_reml_icc(y: np.ndarray, groups: np.ndarray) -> float:
    """REML ICC of y = mu + u_g + e written out: with lambda = tau^2 / sigma^2 a group of
    size n has V = I + lambda 11', 1'V^-1 1 = n / (1 + n lambda), log|V| = log(1 + n lambda);
    -2 l_REML = sum log|V| + log(1'V^-1 1) + (N - 1) log(r'V^-1 r) up to a constant."""
    from scipy.optimize import minimize_scalar

    labels = sorted(set(groups))
    members = [y[groups == label] for label in labels]

    def deviance(log_ratio):
        ratio = math.exp(log_ratio)
        shrink = [ratio / (1 + len(own) * ratio) for own in members]
        information = sum(len(own) / (1 + len(own) * ratio) for own in members)
        mu = sum(own.sum() / (1 + len(own) * ratio) for own in members) / information
        quadratic = sum(
            ((own - mu) ** 2).sum() - c * (own - mu).sum() ** 2
            for own, c in zip(members, shrink, strict=True)
        )
        determinant = sum(math.log(1 + len(own) * ratio) for own in members)
        return determinant + math.log(information) + (len(y) - 1) * math.log(quadratic)

    ratio = math.exp(minimize_scalar(deviance, bounds=(-8, 4), method="bounded").x)
    return ratio / (1 + ratio)


def test_mixed_model_icc_on_unbalanced_data_is_the_reml_one():
    # Given participants with one, two or three evaluations (REML is not ANOVA here)
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 4, 150)
    groups = np.repeat(np.arange(150), sizes)
    y = np.repeat(rng.normal(0.0, 0.8, 150), sizes) + rng.normal(0.0, 1.0, len(groups))
    share = participant_share(y, groups, np.zeros(len(y)))
    assert share["intercept_only"]["icc"] == pytest.approx(profiled_reml_icc(y, groups), abs=1e-4)
    assert not share["anova"]["balanced"]


def test_no_repeated_participant_gives_a_reason():
    share = participant_share(np.arange(10.0), np.arange(10), np.zeros(10))
    assert share["intercept_only"] is None
    assert "no participant gave two evaluations" in share["reason"]


def test_report_through_the_mixed_model_on_simulated_evaluations():
    data = simulated(120, person_sd=1.0, evaluation_sd=0.5, seed=9)
    share = nested_report(data, resamples=20)["participant_share"]
    shs = score_array(data.answers).shs
    icc, _, _ = one_way_icc(shs, data.participant)
    assert share["n"] == 240 and share["participants"] == 120
    assert share["intercept_only"]["icc"] == pytest.approx(icc, abs=1e-3)
    assert share["anova"]["balanced"]
    assert set(DIMENSION_KEYS) == set(
        nested_report(data, resamples=5)["shs_dimension_correlations"]
    )
