"""The replication script's sections on the SHS itself: the scores and the
sample, internal consistency, omega, the correlations, the answers, and the
normality and shape of the SHS's distribution (the figures of scoring.stats.reliability.analysis
that the study report shows, and its table of systems); then those on how the
study was conducted: completion time, administrators' feedback, the prompt
log, the quality flags and the sessions by status.

The report's `items`, `dimensions` and `table6` are left out on purpose: they
are copies of `analysis` figures (exports.report.build) that the report does
not show itself (it shows `analysis` through scoring.web.report); comparing
the copies would count every figure twice.

Left out because the package's data do not hold them: the withdrawals and
screen-outs (their sessions leave no data), the pilot sessions left out and
the SHS forms never submitted (counted by the platform, not exported). The
administrators' shares of each feedback answer and their table of answers
take each administrator's most recent questionnaire: feedback.csv's
administrator_form numbers them by submission. The mean and SD of the
completion time are compared to one rounding step: the report averages exact
times, shs_seconds is rounded to 0.1 s.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from exports.replication.sections import RSection
from scoring.stats.reliability.analysis import MIN_EVALUATIONS, SHAPIRO_VALIDATED_N

R_FOLDER = Path(__file__).resolve().parent / "r"
CLOSED = "closed_form"


def _analysis(report: Mapping[str, Any]) -> Mapping[str, Any]:
    analysis: Mapping[str, Any] = report.get("analysis") or {}
    return analysis


def _always(_report: Mapping[str, Any]) -> bool:
    return True


def _has_alpha(report: Mapping[str, Any]) -> bool:
    """Alpha and every item's figures: psych::alpha cannot run on an item
    without variance, whose figures the report leaves empty."""
    analysis = _analysis(report)
    alpha = (analysis.get("cronbach_alpha") or {}).get("alpha")
    item_total = analysis.get("item_total") or {}
    return alpha is not None and bool(item_total) and None not in item_total.values()


def _has_omega(report: Mapping[str, Any]) -> bool:
    return (_analysis(report).get("additions") or {}).get("omega_total") is not None


def _has_correlations(report: Mapping[str, Any]) -> bool:
    return (_analysis(report).get("n") or 0) >= MIN_EVALUATIONS


def _has_answers(report: Mapping[str, Any]) -> bool:
    return (_analysis(report).get("response_chi2") or {}).get("chi2") is not None


def _has_normality(report: Mapping[str, Any]) -> bool:
    """The Shapiro-Wilk test, up to the sample size R's shapiro.test accepts
    (beyond it the report gives W and p with a caveat of its own)."""
    analysis = _analysis(report)
    tested = (analysis.get("shapiro") or {}).get("W") is not None
    return tested and (analysis.get("n") or 0) <= SHAPIRO_VALIDATED_N


def _has_shape(report: Mapping[str, Any]) -> bool:
    return _analysis(report).get("skewness") is not None


def _systems(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    names = [system["name"] for system in report.get("systems", [])]
    return {
        "systems": (
            names,
            "the study's systems, in the order of the report's table "
            '"Evaluations per system" (systems.0, systems.1, ...)',
        )
    }


SCORES = RSection(
    key="scores",
    script=R_FOLDER / "scores.R",
    applies=_always,
    figures=(
        ("n", CLOSED),
        ("analysis.n", CLOSED),
        ("participants", CLOSED),
        ("administrators", CLOSED),
        ("languages.*", CLOSED),
        ("analysis.dimension_profile.*.mean", CLOSED),
        ("analysis.dimension_profile.*.sd", CLOSED),
        ("analysis.overall.mean", CLOSED),
        ("analysis.overall.sd", CLOSED),
        ("analysis.consistent_share.*", CLOSED),
        ("analysis.item_agreement.*", CLOSED),
        ("systems.*.evaluations", CLOSED),
        ("systems.*.shs_mean", CLOSED),
        ("systems.*.shs_sd", CLOSED),
    ),
    parameters=_systems,
)

RELIABILITY = RSection(
    key="reliability",
    script=R_FOLDER / "reliability.R",
    applies=_has_alpha,
    figures=(
        ("analysis.cronbach_alpha.alpha", CLOSED),
        ("analysis.cronbach_alpha.ci95.*", CLOSED),
        ("analysis.item_total.*", CLOSED),
        ("analysis.alpha_if_deleted.*", CLOSED),
    ),
    packages=("psych",),
)

OMEGA = RSection(
    key="omega",
    script=R_FOLDER / "omega.R",
    applies=_has_omega,
    # The loadings come from an iterative fit (minres), stopped at R's criterion.
    figures=(("analysis.additions.omega_total", "iterative"),),
    packages=("psych",),
)

CORRELATIONS = RSection(
    key="correlations",
    script=R_FOLDER / "correlations.R",
    applies=_has_correlations,
    figures=(
        ("analysis.dimension_correlations.*.r", CLOSED),
        ("analysis.dimension_correlations.*.p", CLOSED),
        ("analysis.paired_item_r.*", CLOSED),
        ("analysis.paired_item_p.*", CLOSED),
        ("analysis.additions.spearman_brown.*", CLOSED),
    ),
)

ANSWERS = RSection(
    key="answers",
    script=R_FOLDER / "answers.R",
    applies=_has_answers,
    figures=(
        ("analysis.response_chi2.chi2", CLOSED),
        ("analysis.response_chi2.df", CLOSED),
        ("analysis.response_chi2.p", CLOSED),
        ("analysis.response_chi2.counts.*", CLOSED),
    ),
)

NORMALITY = RSection(
    key="normality",
    script=R_FOLDER / "normality.R",
    applies=_has_normality,
    figures=(
        ("analysis.shapiro.W", CLOSED),
        # scipy takes the normal quantiles behind W's coefficients from an
        # approximation (AS 111), R from qnorm: the same W, a p a little apart.
        ("analysis.shapiro.p", "approximation"),
    ),
)

SHAPE = RSection(
    key="shape",
    script=R_FOLDER / "shape.R",
    applies=_has_shape,
    figures=(
        ("analysis.skewness", CLOSED),
        ("analysis.kurtosis", CLOSED),
    ),
)


def _has_completion(report: Mapping[str, Any]) -> bool:
    return bool((report.get("completion") or {}).get("n"))


def _has_feedback(report: Mapping[str, Any]) -> bool:
    return bool((report.get("feedback") or {}).get("sessions"))


def _feedback_options(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    questions = report["feedback"]["questions"]
    codes = {
        question["key"]: [option["code"] for option in question["options"]]
        for question in questions
    }
    return {
        "feedback_options": (
            codes,
            "the feedback questions and the codes of their answers, in the order of "
            '"Acceptance by administrators" (questions.0, questions.0.options.0, ...)',
        )
    }


def _has_prompts(report: Mapping[str, Any]) -> bool:
    return bool((report.get("prompts") or {}).get("blocks"))


def _has_quality(report: Mapping[str, Any]) -> bool:
    return bool((report.get("quality") or {}).get("n"))


def _quality_settings(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    quality = report["quality"]
    return {
        "speeding_seconds": (
            quality["speeding_seconds"],
            "the study's speeding threshold: an SHS submitted in fewer seconds is flagged",
        ),
        "quality_flags": (
            [flag["key"] for flag in quality["flags"]],
            'the flags in the order of "Quality flags" (flags.0, flags.1, ...)',
        ),
        "quality_figures": (
            [row["figure"] for row in quality["figures"]],
            'the figures in the order of "Quality flags" (figures.0, figures.1, ...)',
        ),
    }


# The sessions by status that data/sessions.csv holds (see the module's docstring).
SESSION_STATUSES = ("complete", "abandoned", "in_progress")


def _has_sessions(report: Mapping[str, Any]) -> bool:
    exclusions = report.get("exclusions") or {}
    return any(exclusions.get(status) for status in SESSION_STATUSES)


COMPLETION = RSection(
    key="completion",
    script=R_FOLDER / "completion.R",
    applies=_has_completion,
    # The mean and SD are not compared: the report's come from exact times,
    # data/evaluations.csv has them rounded to 0.1 s.
    figures=(
        ("completion.n", CLOSED),
        ("completion.mean_minutes", "rounded_seconds"),
        ("completion.sd_minutes", "rounded_seconds"),
    ),
)

FEEDBACK = RSection(
    key="feedback",
    script=R_FOLDER / "feedback.R",
    applies=_has_feedback,
    figures=(
        ("feedback.sessions", CLOSED),
        ("feedback.administrators", CLOSED),
        ("feedback.questions.*.options.*.sessions", CLOSED),
        ("feedback.questions.*.options.*.administrators", CLOSED),
        ("feedback.questions.*.options.*.share", CLOSED),
        ("feedback.questions.*.most_frequent_share", CLOSED),
        ("feedback.by_administrator.*.answers.*", CLOSED),
    ),
    parameters=_feedback_options,
)

PROMPTS = RSection(
    key="prompts",
    script=R_FOLDER / "prompts.R",
    applies=_has_prompts,
    figures=(("prompts.*", CLOSED),),
)

# The flags are recomputed from the answers and shs_seconds; the columns decide
# only what the data cannot: a time within the 0.05 s shs_seconds rounds away
# from the threshold, and too few turns (it counts a transcript's answered turns).
QUALITY = RSection(
    key="quality",
    script=R_FOLDER / "quality.R",
    applies=_has_quality,
    figures=(
        ("quality.n", CLOSED),
        ("quality.kept", CLOSED),
        ("quality.left_out", CLOSED),
        ("quality.flags.*.flagged", CLOSED),
        ("quality.flags.*.judged", CLOSED),
        ("quality.figures.*.all", CLOSED),
        ("quality.figures.*.kept", CLOSED),
    ),
    parameters=_quality_settings,
)

EXCLUSIONS = RSection(
    key="exclusions",
    script=R_FOLDER / "exclusions.R",
    applies=_has_sessions,
    figures=tuple((f"exclusions.{status}", CLOSED) for status in SESSION_STATUSES),
)

# "scores" first: the others work on the `scores` and `keyed` it makes.
SECTIONS = (
    SCORES,
    RELIABILITY,
    OMEGA,
    CORRELATIONS,
    ANSWERS,
    NORMALITY,
    SHAPE,
    COMPLETION,
    FEEDBACK,
    PROMPTS,
    QUALITY,
    EXCLUSIONS,
)
