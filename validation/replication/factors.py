"""The replication script's factor-model sections (docs/design/exports.md, "The
replication package"): the confirmatory factor analysis of the SHS and its
measurement invariance across groups, refitted with lavaan.

lavaan's options that reproduce the report (scoring.stats.factors): ML with
likelihood = "normal" (covariances divided by N, chi-square N times the
minimum), a marker item per factor (not std.lv), expected information, the
five-point codes as continuous numbers; for invariance group = ..., with
group.equal adding loadings (metric), then intercepts (scalar).
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from exports.replication.sections import RSection
from scoring.instruments.demographics import DEMOGRAPHICS, PREFER_NOT_TO_SAY_CODE
from scoring.stats.factors.invariance import MIN_GROUP

HERE = Path(__file__).resolve().parent
MODELS = ("five", "one")


def _validation(report: Mapping[str, Any]) -> Mapping[str, Any]:
    return report.get("validation") or {}


def fitted(result: Mapping[str, Any] | None) -> bool:
    """Whether a model's or an invariance result's figures are in the report:
    a result with a `problem` has none."""
    return result is not None and bool(result) and result.get("problem") is None


def cfa_applies(report: Mapping[str, Any]) -> bool:
    cfa = _validation(report).get("cfa") or {}
    return any(fitted(cfa.get(model)) for model in MODELS)


def invariance_applies(report: Mapping[str, Any]) -> bool:
    groupings = _validation(report).get("invariance") or {}
    return any(fitted(result) for result in groupings.values())


CFA_FIGURES = (
    ("validation.cfa.n", "closed_form"),
    ("validation.cfa.*.n", "closed_form"),
    ("validation.cfa.*.chi2", "chi_square"),
    ("validation.cfa.*.df", "closed_form"),
    ("validation.cfa.*.p", "iterative"),
    ("validation.cfa.*.cfi", "iterative"),
    ("validation.cfa.*.tli", "iterative"),
    ("validation.cfa.*.rmsea", "iterative"),
    ("validation.cfa.*.rmsea_ci90.*", "iterative"),
    ("validation.cfa.*.srmr", "iterative"),
    ("validation.cfa.*.loadings.*.estimate", "iterative"),
    ("validation.cfa.*.loadings.*.se", "iterative"),
    ("validation.cfa.*.loadings.*.ci95.*", "iterative"),
    ("validation.cfa.*.factor_correlations.*.estimate", "iterative"),
    ("validation.cfa.*.factor_correlations.*.se", "iterative"),
    ("validation.cfa.*.factor_correlations.*.ci95.*", "iterative"),
)

CFA = RSection(
    key="cfa",
    script=HERE / "cfa.R",
    applies=cfa_applies,
    figures=CFA_FIGURES,
    packages=("lavaan",),
)


def invariance_parameters(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """The study's settings: its demographic grouping, with the English labels
    the report names its groups by, and the smallest group a model is fitted to."""
    grouping = _validation(report).get("grouping") or None
    labels = {}
    if grouping:
        labels = {
            str(option.code): option.label["en"]
            for option in DEMOGRAPHICS.question(grouping).options
            if option.code != PREFER_NOT_TO_SAY_CODE
        }
    return {
        "invariance_grouping": (
            grouping,
            "the demographic question whose groups are compared besides the languages "
            "(NA: the languages only)",
        ),
        "grouping_labels": (labels, "its answer codes and the English labels the report uses"),
        "prefer_not_to_say_code": (PREFER_NOT_TO_SAY_CODE, "the answer that forms no group"),
        "min_group_size": (MIN_GROUP, "the fewest evaluations a group needs to be fitted"),
    }


INVARIANCE_FIGURES = (
    ("validation.invariance.*.n", "closed_form"),
    ("validation.invariance.*.without_group", "closed_form"),
    ("validation.invariance.*.groups.*.n", "closed_form"),
    ("validation.invariance.*.too_small_groups.*.n", "closed_form"),
    ("validation.invariance.*.models.*.chi2", "chi_square"),
    ("validation.invariance.*.models.*.df", "closed_form"),
    ("validation.invariance.*.models.*.p", "iterative"),
    ("validation.invariance.*.models.*.cfi", "iterative"),
    ("validation.invariance.*.models.*.tli", "iterative"),
    ("validation.invariance.*.models.*.rmsea", "iterative"),
    ("validation.invariance.*.differences.*.delta_chi2", "chi_square"),
    ("validation.invariance.*.differences.*.delta_df", "closed_form"),
    ("validation.invariance.*.differences.*.p", "iterative"),
    ("validation.invariance.*.differences.*.delta_cfi", "iterative"),
    ("validation.invariance.*.differences.*.delta_rmsea", "iterative"),
)

INVARIANCE = RSection(
    key="invariance",
    script=HERE / "invariance.R",
    applies=invariance_applies,
    figures=INVARIANCE_FIGURES,
    parameters=invariance_parameters,
    packages=("lavaan",),
)

SECTIONS = (CFA, INVARIANCE)
