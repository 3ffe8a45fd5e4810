"""The criterion section of the study report and of `shs_criterion`
(docs/design.md §13.3): the frozen pre-registration, the annotators'
agreement, H1-H3 with their unclustered and participant-clustered results,
the falsification verdict and the joint-use table, as one JSON-safe dict.

The study report and the command build it through here, so the two cannot
show different figures.
"""

from dataclasses import asdict

from criterion.dataset import annotator_matrix, criterion_rows
from criterion.joint_use.table import joint_use_table
from criterion.models import Annotation, AutomatedResult, PreRegistration
from criterion.preregistration.services import plan_for_report
from scoring.agreement import measure_agreement
from scoring.criterion import Plan, criterion_analysis


def present_measures(study) -> list[str]:
    """The measures any annotator gave for this study's transcripts, sorted."""
    return sorted(
        Annotation.objects.filter(transcript__interaction__session__study=study)
        .values_list("measure", flat=True)
        # Ordered by the measure alone: the model's ordering would make DISTINCT
        # run over (transcript, measure, annotator) and list a measure per row.
        .order_by("measure")
        .distinct()
    )


def holds_criterion_data(study) -> bool:
    """Whether the study has begun the criterion study or the joint-use report:
    a study without either gets no section (the SHS report stays as it was)."""
    return (
        PreRegistration.objects.filter(study=study).exists()
        or AutomatedResult.objects.filter(system__study=study).exists()
        or present_measures(study) != []
    )


def criterion_report(study, as_of=None) -> dict:
    """`as_of`: the moment of the sample the joint-use table counts (now by default)."""
    preregistration = plan_for_report(study)
    if preregistration:
        plan = Plan(**preregistration["plan_kwargs"])
    else:
        # No pre-registration on record: the paper's values, and the report says
        # that nothing was pre-registered (the template reads `preregistration`).
        plan = Plan()
    measures = present_measures(study)
    return {
        "preregistration": preregistration,
        "plan": asdict(plan),
        "measures": measures,
        "agreement": {
            measure: measure_agreement(_by_transcript(annotator_matrix(study, measure)))
            for measure in measures
        },
        "analysis": criterion_analysis(criterion_rows(study), plan).as_dict(),
        "joint_use": joint_use_table(study, as_of),
    }


def _by_transcript(by_annotator: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """annotator -> transcript -> value, turned into transcript -> annotator -> value."""
    turned: dict[str, dict[str, float]] = {}
    for annotator, values in by_annotator.items():
        for transcript, value in values.items():
            turned.setdefault(transcript, {})[annotator] = value
    return turned
