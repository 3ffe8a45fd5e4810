"""The study report's validation section (docs/design/validation-analysis.md §14.8): the study's
data as of the report's moment, through `scoring.stats.validation`."""

from collections.abc import Callable
from datetime import datetime

from django.utils import translation

from exports.report.sections import ReportSection
from scoring.scores.engine import score_array
from scoring.stats.validation import PARTS, PROGRESS_STEPS, validation_analysis
from scoring.stats.validation_data import ValidationData
from scoring.web.bland_altman_plot import bland_altman_svg
from surveys.models import Study
from validation.dataset import validation_data

# Below this many evaluations the section is left out: the paper's "at least
# 30 users" for a questionnaire's statistics (a CFA says itself when it needs more).
MIN_EVALUATIONS = 30


def validation_report(
    study: Study,
    as_of: datetime,
    *,
    advance: Callable[[], None] | None = None,
    language: str = "en",
) -> dict:
    data = validation_data(study, as_of)
    result = validation_analysis(data, parts=PARTS, seed=study.random_seed, advance=advance)
    result["grouping"] = study.invariance_grouping
    result["scales"] = list(study.companion_scales)
    if result.get("retest", {}).get("scores", {}).get("shs", {}).get("estimable"):
        with translation.override(language):
            result["retest"]["plot_svg"] = retest_plot(data)
    return result


def retest_plot(data: ValidationData) -> str:
    """The Bland-Altman plot of the overall SHS over the retest pairs (an inline SVG)."""
    first, second = score_array(data.retest.first).shs, score_array(data.retest.second).shs
    return bland_altman_svg(first, second, score_label="SHS")


def holds_validation_data(n_evaluations: int) -> bool:
    return n_evaluations >= MIN_EVALUATIONS


# The study report's section (registered by ValidationConfig.ready), paper 8.3:
# CFA, invariance, nested data, and the companion scales and retest where the
# study has them.
SECTION = ReportSection(
    key="validation",
    applies=lambda study, report: holds_validation_data(report["n"]),
    build=validation_report,
    progress_steps=PROGRESS_STEPS,
)
