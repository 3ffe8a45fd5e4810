"""The replication script's validation sections besides the factor models
(docs/design/exports.md, "The replication package"): the nested-data figures,
test-retest stability and convergent and discriminant validity, recomputed in
R from the package's data.

A participant-clustered interval is a bootstrap bound: R resamples the
participants as the platform does (all evaluations or retest pairs of a drawn
participant kept, the same number of resamples, percentile intervals) with its
own random numbers, so it is compared under the rule "bootstrap". Everything
else is arithmetic on the data ("closed_form"), except the mixed models' and
omega's iterative fits.

The nested-data section comes first: it defines the helpers (alpha, Feldt's
interval, the percentile interval, each participant's rows) that the other
two use, and the report has its figures whenever it has either of theirs
(scoring.stats.validation runs the nested part on every validation report).
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from exports.replication.sections import RSection
from scoring.instruments.companions import COMPANION_SCALES

HERE = Path(__file__).resolve().parent
CLOSED = "closed_form"
BOOTSTRAP = "bootstrap"
ITERATIVE = "iterative"


def _validation(report: Mapping[str, Any]) -> Mapping[str, Any]:
    return report.get("validation") or {}


def nested_applies(report: Mapping[str, Any]) -> bool:
    nested = _validation(report).get("nested") or {}
    return bool(nested.get("n"))


def retest_applies(report: Mapping[str, Any]) -> bool:
    retest = _validation(report).get("retest") or {}
    return nested_applies(report) and bool(retest.get("scores"))


def convergent_applies(report: Mapping[str, Any]) -> bool:
    convergent = _validation(report).get("convergent") or {}
    return nested_applies(report) and bool(convergent.get("companions"))


def _bootstrap(report: Mapping[str, Any], part: str) -> dict[str, tuple[Any, str]]:
    """The resample count and seed of one part's cluster bootstrap. R draws its
    own random numbers: the seed makes R's draws repeatable, not the platform's."""
    drawn = _validation(report)[part]["bootstrap"]
    return {
        f"{part}_resamples": (
            drawn["resamples"],
            "resamples of the participant-cluster bootstrap, as in the report",
        ),
        f"{part}_seed": (drawn["seed"], "the report's bootstrap seed, for R's own random numbers"),
    }


def nested_parameters(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    nested = _validation(report)["nested"]
    return {
        **_bootstrap(report, "nested"),
        "nested_confidence": (nested["bootstrap"]["confidence"], "confidence of every interval"),
        "nested_min_group_n": (
            (nested.get("alpha_by_system") or {}).get("min_n", 30),
            "the fewest evaluations a system or language needs for its own alpha",
        ),
    }


def retest_parameters(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    return {
        **_bootstrap(report, "retest"),
        "retest_confidence": (
            _validation(report)["retest"]["confidence"],
            "confidence of the retest intervals",
        ),
    }


def convergent_parameters(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """The companion scales in the report's order, each with its answer codes and
    reversed items (their keying for alpha)."""
    convergent = _validation(report)["convergent"]
    scales = [COMPANION_SCALES[key] for key in convergent["companions"]]
    return {
        **_bootstrap(report, "convergent"),
        "convergent_confidence": (convergent["confidence"], "confidence of the intervals"),
        "companion_scales": (
            [scale.key for scale in scales],
            "the companion scales given beside the SHS (their items are the columns "
            "<scale>1, <scale>2, ... of evaluations.csv)",
        ),
        "companion_items": (
            {scale.key: list(scale.item_keys) for scale in scales},
            "each scale's items",
        ),
        "companion_reversed": (
            {scale.key: [i.key for i in scale.items if i.reversed] for scale in scales},
            "each scale's reversed items (lowest + highest code - answer)",
        ),
        "companion_codes": (
            {scale.key: [scale.codes[0], scale.codes[-1]] for scale in scales},
            "each scale's lowest and highest answer code",
        ),
    }


def _interval(path: str, rule: str) -> tuple[tuple[str, str], ...]:
    return ((f"{path}.0", rule), (f"{path}.1", rule))


NESTED_FIGURES = (
    ("validation.nested.n", CLOSED),
    ("validation.nested.participants", CLOSED),
    ("validation.nested.alpha.estimate", CLOSED),
    ("validation.nested.alpha.n", CLOSED),
    *_interval("validation.nested.alpha.ci95_naive.interval", CLOSED),
    *_interval("validation.nested.alpha.ci95_clustered.interval", BOOTSTRAP),
    *(
        figure
        for table in ("dimension_correlations", "shs_dimension_correlations")
        for figure in (
            (f"validation.nested.{table}.*.estimate", CLOSED),
            (f"validation.nested.{table}.*.n", CLOSED),
            *_interval(f"validation.nested.{table}.*.ci95_naive.interval", CLOSED),
            *_interval(f"validation.nested.{table}.*.ci95_clustered.interval", BOOTSTRAP),
        )
    ),
    *(
        figure
        for grouping in ("system", "language")
        for figure in (
            (f"validation.nested.alpha_by_{grouping}.groups.*.n", CLOSED),
            (f"validation.nested.alpha_by_{grouping}.groups.*.estimate", CLOSED),
            *_interval(f"validation.nested.alpha_by_{grouping}.groups.*.ci95", CLOSED),
        )
    ),
    ("validation.nested.language_table.languages.*.n", CLOSED),
    ("validation.nested.language_table.languages.*.participants", CLOSED),
    ("validation.nested.language_table.languages.*.alpha.estimate", CLOSED),
    *_interval("validation.nested.language_table.languages.*.alpha.ci95", CLOSED),
    # Omega's loadings come from an iterative fit (minres), stopped at R's criterion.
    ("validation.nested.language_table.languages.*.omega.estimate", ITERATIVE),
    ("validation.nested.language_table.languages.*.shs.mean", CLOSED),
    ("validation.nested.language_table.languages.*.shs.sd", CLOSED),
    ("validation.nested.participant_share.n", CLOSED),
    ("validation.nested.participant_share.participants", CLOSED),
    ("validation.nested.participant_share.anova.msb", CLOSED),
    ("validation.nested.participant_share.anova.msw", CLOSED),
    ("validation.nested.participant_share.anova.n0", CLOSED),
    *_interval("validation.nested.participant_share.anova.df", CLOSED),
    ("validation.nested.participant_share.anova.icc", CLOSED),
    *_interval("validation.nested.participant_share.anova.ci95", CLOSED),
    # The mixed models are REML fits: iterative.
    *(
        figure
        for model in ("intercept_only", "with_system")
        for figure in (
            (f"validation.nested.participant_share.{model}.icc", ITERATIVE),
            (f"validation.nested.participant_share.{model}.participant_variance", ITERATIVE),
            (f"validation.nested.participant_share.{model}.residual_variance", ITERATIVE),
            (f"validation.nested.participant_share.{model}.fixed_effects", CLOSED),
        )
    ),
)

NESTED = RSection(
    key="nested",
    script=HERE / "nested.R",
    applies=nested_applies,
    figures=NESTED_FIGURES,
    parameters=nested_parameters,
    packages=("psych", "nlme"),
)

_SCORE = "validation.retest.scores.*"
RETEST_FIGURES = (
    ("validation.retest.n", CLOSED),
    ("validation.retest.participants", CLOSED),
    # The export rounds retest_days to 0.1 day; the report averages exact days.
    ("validation.retest.mean_days", "rounded_days"),
    ("validation.retest.unit.params.*", CLOSED),
    (f"{_SCORE}.n", CLOSED),
    *(
        figure
        for icc in ("icc2_1", "icc3_1")
        for figure in (
            (f"{_SCORE}.{icc}.value", CLOSED),
            *_interval(f"{_SCORE}.{icc}.ci", CLOSED),
            (f"{_SCORE}.{icc}.F", CLOSED),
            *_interval(f"{_SCORE}.{icc}.ci95_clustered.interval", BOOTSTRAP),
        )
    ),
    (f"{_SCORE}.anova.*.ss", CLOSED),
    (f"{_SCORE}.anova.*.df", CLOSED),
    (f"{_SCORE}.anova.*.ms", CLOSED),
    (f"{_SCORE}.bland_altman.n", CLOSED),
    (f"{_SCORE}.bland_altman.bias", CLOSED),
    (f"{_SCORE}.bland_altman.sd", CLOSED),
    (f"{_SCORE}.bland_altman.z", CLOSED),
    *_interval(f"{_SCORE}.bland_altman.bias_ci", CLOSED),
    (f"{_SCORE}.bland_altman.lower", CLOSED),
    (f"{_SCORE}.bland_altman.upper", CLOSED),
    *_interval(f"{_SCORE}.bland_altman.lower_ci", CLOSED),
    *_interval(f"{_SCORE}.bland_altman.upper_ci", CLOSED),
)

RETEST = RSection(
    key="retest",
    script=HERE / "retest.R",
    applies=retest_applies,
    figures=RETEST_FIGURES,
    parameters=retest_parameters,
    packages=("psych",),
)

_PAIR = "validation.convergent.pairs.*.*"
CONVERGENT_FIGURES = (
    (f"{_PAIR}.n", CLOSED),
    (f"{_PAIR}.excluded", CLOSED),
    (f"{_PAIR}.r", CLOSED),
    *_interval(f"{_PAIR}.ci", CLOSED),
    (f"{_PAIR}.p", CLOSED),
    *_interval(f"{_PAIR}.ci95_clustered.interval", BOOTSTRAP),
    *(
        figure
        for reliability in ("reliability_score", "reliability_companion")
        for figure in (
            (f"{_PAIR}.{reliability}.value", CLOSED),
            (f"{_PAIR}.{reliability}.n", CLOSED),
            *_interval(f"{_PAIR}.{reliability}.ci95_clustered.interval", BOOTSTRAP),
        )
    ),
    (f"{_PAIR}.disattenuated.r", CLOSED),
    (f"{_PAIR}.disattenuated.factor", CLOSED),
    *_interval(f"{_PAIR}.disattenuated.ci", CLOSED),
    *_interval(f"{_PAIR}.disattenuated.ci95_clustered.interval", BOOTSTRAP),
)

CONVERGENT = RSection(
    key="convergent",
    script=HERE / "convergent.R",
    applies=convergent_applies,
    figures=CONVERGENT_FIGURES,
    parameters=convergent_parameters,
)

SECTIONS = (NESTED, RETEST, CONVERGENT)
