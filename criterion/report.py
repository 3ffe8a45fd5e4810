"""The criterion section of the study report and of `shs_criterion`
(docs/design/criterion.md §13.3): the frozen pre-registration, the annotators'
agreement, H1-H3 with their unclustered and participant-clustered results,
the falsification verdict and the joint-use table, as one JSON-safe dict.

The study report and the command build it through here, so the two cannot
show different figures.
"""

from dataclasses import asdict

from django.utils import timezone

from criterion.dataset import criterion_rows, ratings, transcript_measures
from criterion.figures import criterion_figures
from criterion.joint_use.table import joint_use_table
from criterion.models import Annotation, AutomatedResult, PreRegistration
from criterion.preregistration.services import plan_for_report
from exports.report.sections import ReportSection
from scoring.stats.retest.agreement import measure_agreement
from scoring.stats.validity.criterion import criterion_analysis
from scoring.stats.validity.plan import Plan


def holds_criterion_data(study) -> bool:
    """Whether the study has begun the criterion study or the joint-use report:
    a study without either gets no section (the SHS report stays as it was)."""
    return (
        PreRegistration.objects.filter(study=study).exists()
        or AutomatedResult.objects.filter(system__study=study).exists()
        or Annotation.objects.filter(imported_in__study=study).exists()
    )


def criterion_report(study, as_of=None, language: str = "en") -> dict:
    """`as_of`: the moment of the sample the analysis and the joint-use table
    count (now by default), so that a report counts what was submitted by its
    moment, as the other sections do; `language`: the one the figures are drawn in."""
    as_of = as_of or timezone.now()
    preregistration = plan_for_report(study)
    if preregistration:
        plan = Plan(**preregistration["plan_kwargs"])
    else:
        # No pre-registration on record: the paper's values, and the report says
        # that nothing was pre-registered (the template reads `preregistration`).
        plan = Plan()
    by_transcript = transcript_measures(study)
    measures = sorted({measure for by in by_transcript.values() for measure in by})
    agreement = {
        measure: measure_agreement(ratings(by_transcript, measure)) for measure in measures
    }
    iccs = {measure: by["icc_2_1"]["value"] for measure, by in agreement.items()}
    rows = criterion_rows(study, by_transcript, as_of=as_of)
    analysis = criterion_analysis(rows, plan, iccs).as_dict()
    analysis["falsification"]["threshold_source"] = threshold_source(preregistration)
    return {
        "preregistration": preregistration,
        "plan": asdict(plan),
        "measures": measures,
        "agreement": agreement,
        "analysis": analysis,
        "joint_use": joint_use_table(study, as_of),
        "figures": criterion_figures(rows, analysis, language),
    }


def threshold_source(preregistration: dict) -> str:
    """Where the thresholds the verdicts use come from, as the report words them:
    "paper" (nothing registered: the paper's values), "registered_late" (the
    version followed was made after data collection began) or "preregistered"."""
    if not preregistration:
        return "paper"
    if preregistration["followed"]["after_data_collection"]:
        return "registered_late"
    return "preregistered"


def _criterion_section(study, as_of, *, advance, language) -> dict:
    return criterion_report(study, as_of, language)


# The study report's section (registered by CriterionConfig.ready), paper 8.2
# and 9.2: only for a study that began the criterion study or the joint-use table.
SECTION = ReportSection(
    key="criterion",
    applies=lambda study, report: holds_criterion_data(study),
    build=_criterion_section,
)
