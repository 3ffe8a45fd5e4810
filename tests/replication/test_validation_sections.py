"""The replication script's nested-data, retest and convergent sections: which
reports they apply to, which of the report's figures they recompute and under
which rule, and the settings they hand to R (validation/replication/retest.py).
R's own run on simulated studies is the end-to-end test's."""

import copy

import pytest

from exports.replication.figures import recomputed_figures
from exports.replication.sections import applying_sections
from validation.replication.retest import (
    CONVERGENT,
    NESTED,
    RETEST,
    SECTIONS,
    convergent_parameters,
    nested_parameters,
)

CLUSTERED = {"interval": [0.4, 0.6], "valid_replicates": 2000, "seed": 42, "resamples": 2000}


def _correlation(estimate):
    return {
        "estimate": estimate,
        "n": 320,
        "ci95_naive": {"interval": [0.4, 0.6]},
        "ci95_clustered": dict(CLUSTERED),
    }


def _icc(value):
    return {"value": value, "ci": [0.4, 0.6], "F": 3.7, "ci95_clustered": dict(CLUSTERED)}


def _bland_altman():
    return {
        "n": 256,
        "confidence": 0.95,
        "bias": -0.01,
        "sd": 0.3,
        "z": 1.96,
        "bias_ci": [-0.05, 0.03],
        "lower": -0.6,
        "upper": 0.6,
        "lower_ci": [-0.7, -0.5],
        "upper_ci": [0.5, 0.7],
    }


def _pair():
    return {
        "n": 320,
        "excluded": 0,
        "r": 0.38,
        "ci": [0.28, 0.47],
        "p": 1e-12,
        "ci95_clustered": dict(CLUSTERED),
        "reliability_score": {"value": 0.84, "n": 320, "ci95_clustered": dict(CLUSTERED)},
        "reliability_companion": {"value": 0.89, "n": 320, "ci95_clustered": dict(CLUSTERED)},
        "disattenuated": {
            "r": 0.44,
            "ci": [0.33, 0.54],
            "factor": 0.86,
            "ci95_clustered": {**CLUSTERED, "unbounded_replicates": 0},
        },
        "params": {"share": 31, "bound": 0.55, "ceiling": 0.85},
    }


def _mixed(icc):
    return {
        "icc": icc,
        "participant_variance": 0.026,
        "residual_variance": 0.088,
        "fixed_effects": 1,
    }


@pytest.fixture
def report():
    """The figures of a validation report with all three parts (a slim copy of
    what scoring.stats.validation gives for a study with a retest and the SUS)."""
    nested = {
        "n": 320,
        "participants": 160,
        "bootstrap": {"seed": 42, "resamples": 2000, "confidence": 0.95, "seconds": 0.06},
        "alpha": _correlation(0.84),
        "dimension_correlations": {"FA-SR": _correlation(0.54)},
        "shs_dimension_correlations": {"FA": _correlation(0.78)},
        "alpha_by_system": {
            "min_n": 30,
            "groups": {
                "System A": {"n": 64, "estimate": 0.84, "ci95": [0.78, 0.89]},
                "System B": {"n": 12, "estimate": None, "ci95": None},
            },
        },
        "alpha_by_language": {"min_n": 30, "groups": {"en": {"n": 108, "estimate": 0.83}}},
        "language_table": {
            "min_n": 30,
            "languages": {
                "en": {
                    "n": 108,
                    "participants": 54,
                    "alpha": {"estimate": 0.83, "ci95": [0.78, 0.87]},
                    "omega": {"estimate": 0.84},
                    "shs": {"mean": 0.22, "sd": 0.34},
                }
            },
        },
        "participant_share": {
            "n": 320,
            "participants": 160,
            "anova": {
                "msb": 0.14,
                "msw": 0.09,
                "n0": 2.0,
                "df": [159, 160],
                "icc": 0.23,
                "ci95": [0.08, 0.37],
            },
            "intercept_only": _mixed(0.23),
            "with_system": {**_mixed(0.22), "fixed_effects": 5},
        },
    }
    retest = {
        "n": 256,
        "participants": 128,
        "unit": {"params": {"pairs": 256, "participants": 128, "most": 2}},
        "mean_days": 15.7,
        "confidence": 0.95,
        "bootstrap": {"seed": 42, "resamples": 2000, "clusters": 128},
        "scores": {
            "shs": {
                "n": 256,
                "icc2_1": _icc(0.57),
                "icc3_1": _icc(0.57),
                "anova": {"rows": {"ss": 45.4, "df": 255, "ms": 0.18}},
                "bland_altman": _bland_altman(),
            }
        },
    }
    convergent = {
        "n": 320,
        "confidence": 0.95,
        "ceiling": 0.85,
        "bootstrap": {"seed": 42, "resamples": 2000},
        "companions": ["sus", "trust"],
        "pairs": {"shs": {"sus": _pair()}, "FA": {"sus": _pair()}},
    }
    return {
        "n": 320,
        "validation": {
            "n": 320,
            "skipped": {},
            "nested": nested,
            "retest": retest,
            "convergent": convergent,
        },
    }


def _figures(report, section):
    return recomputed_figures(report, (section,))["figures"]


def test_all_three_apply_to_a_report_with_their_figures(report):
    keys = {section.key for section in applying_sections(report)}
    assert {"nested", "retest", "convergent"} <= keys


def test_a_report_without_validation_has_none_of_them():
    assert not any(section.applies({"n": 20}) for section in SECTIONS)
    assert not any(section.applies({"n": 20, "validation": {}}) for section in SECTIONS)


def test_no_retest_section_without_retest_pairs(report):
    # Given a study without a retest wave: the report skips the part
    del report["validation"]["retest"]
    report["validation"]["skipped"]["retest"] = "no retest pairs"
    assert not RETEST.applies(report)
    assert NESTED.applies(report) and CONVERGENT.applies(report)


def test_no_convergent_section_without_companion_scales(report):
    del report["validation"]["convergent"]
    report["validation"]["skipped"]["convergent"] = "no companion scales were given"
    assert not CONVERGENT.applies(report)
    assert NESTED.applies(report) and RETEST.applies(report)


def test_retest_and_convergent_need_the_nested_section(report):
    # Their R code uses the helpers the nested-data section defines.
    del report["validation"]["nested"]
    assert not any(section.applies(report) for section in SECTIONS)


def test_clustered_bounds_are_bootstrap_figures_the_rest_closed_form(report):
    figures = _figures(report, NESTED)
    assert figures["validation.nested.alpha.ci95_clustered.interval.0"]["rule"] == "bootstrap"
    assert figures["validation.nested.alpha.ci95_naive.interval.1"]["rule"] == "closed_form"
    pair = "validation.nested.dimension_correlations.FA-SR"
    assert figures[f"{pair}.ci95_clustered.interval.1"]["rule"] == "bootstrap"
    assert figures[f"{pair}.estimate"]["rule"] == "closed_form"
    share = "validation.nested.participant_share"
    assert figures[f"{share}.anova.icc"]["rule"] == "closed_form"
    assert figures[f"{share}.intercept_only.icc"]["rule"] == "iterative"
    assert figures[f"{share}.with_system.residual_variance"]["rule"] == "iterative"
    language = "validation.nested.language_table.languages.en"
    assert figures[f"{language}.omega.estimate"]["rule"] == "iterative"


def test_a_group_too_small_for_alpha_is_compared_as_empty(report):
    figures = _figures(report, NESTED)
    small = "validation.nested.alpha_by_system.groups.System B.estimate"
    assert figures[small] == {"value": None, "rule": "closed_form", "section": "nested"}


def test_bootstrap_settings_and_timings_are_not_figures(report):
    chosen = set(_figures(report, NESTED)) | set(_figures(report, RETEST))
    chosen |= set(_figures(report, CONVERGENT))
    assert not [path for path in chosen if path.rsplit(".", 1)[-1] in {"seed", "resamples"}]
    assert not [path for path in chosen if "valid_replicates" in path or "seconds" in path]
    assert not [path for path in chosen if ".params.share" in path or path.endswith("ceiling")]


def test_retest_figures(report):
    figures = _figures(report, RETEST)
    score = "validation.retest.scores.shs"
    for path in (
        f"{score}.icc2_1.value",
        f"{score}.icc3_1.ci.0",
        f"{score}.icc2_1.F",
        f"{score}.anova.rows.ms",
        f"{score}.bland_altman.lower_ci.1",
        "validation.retest.unit.params.most",
    ):
        assert figures[path]["rule"] == "closed_form", path
    assert figures[f"{score}.icc3_1.ci95_clustered.interval.0"]["rule"] == "bootstrap"
    # The export gives the days between the ratings to 0.1 day only.
    assert figures["validation.retest.mean_days"]["rule"] == "rounded_days"


def test_convergent_figures(report):
    figures = _figures(report, CONVERGENT)
    pair = "validation.convergent.pairs.FA.sus"
    assert figures[f"{pair}.disattenuated.ci.0"]["rule"] == "closed_form"
    assert figures[f"{pair}.p"]["rule"] == "closed_form"
    assert figures[f"{pair}.reliability_companion.ci95_clustered.interval.1"]["rule"] == (
        "bootstrap"
    )
    assert figures[f"{pair}.disattenuated.ci95_clustered.interval.0"]["rule"] == "bootstrap"


def test_convergent_parameters_key_the_scales_in_the_reports_order(report):
    parameters = convergent_parameters(report)
    assert parameters["companion_scales"][0] == ["sus", "trust"]
    assert parameters["companion_reversed"][0]["sus"] == ["sus2", "sus4", "sus6", "sus8", "sus10"]
    assert parameters["companion_codes"][0] == {"sus": [1, 5], "trust": [1, 7]}
    assert len(parameters["companion_items"][0]["trust"]) == 12
    assert parameters["convergent_resamples"][0] == 2000


def test_nested_parameters_follow_the_report(report):
    changed = copy.deepcopy(report)
    changed["validation"]["nested"]["bootstrap"]["resamples"] = 500
    changed["validation"]["nested"]["alpha_by_system"]["min_n"] = 50
    parameters = nested_parameters(changed)
    assert parameters["nested_resamples"][0] == 500
    assert parameters["nested_min_group_n"][0] == 50
