"""The study report as the replication package holds it (report.json,
report.html, figures.json): the annotators of the criterion section named by
the pseudonyms of the package's data (criterion.replication.data), not by the
names the coordinator imported, which may be real names.

The report names annotators only in the ICC panels of its agreement table
(criterion.agreement.<measure>.icc_2_1.annotators).
"""

from __future__ import annotations

from typing import Any

from criterion.models import Annotation
from criterion.replication.data import annotator_numbers, pseudonym


def pseudonymous_report(study, report: dict) -> dict:
    """`report` with every annotator's name in its criterion section replaced
    by annotator-k, k the name's place among the study's annotators in
    alphabetical order (the package's data number them so). A new dict: the
    report the platform shows keeps the names."""
    criterion = report.get("criterion") or {}
    agreement = criterion.get("agreement") or {}
    named = {name for by in agreement.values() for name in _panel(by)}
    if not named:
        return report
    # Every name the report shows is one of the study's annotators; adding them
    # keeps even a report of another origin from passing a name on.
    number = annotator_numbers({*_study_annotators(study), *named})
    renamed = {
        measure: _renamed(by, {name: pseudonym(number[name]) for name in _panel(by)})
        for measure, by in agreement.items()
    }
    return {**report, "criterion": {**criterion, "agreement": renamed}}


def _panel(by_measure: dict[str, Any]) -> list[str]:
    return list((by_measure.get("icc_2_1") or {}).get("annotators") or [])


def _renamed(by_measure: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    icc = by_measure.get("icc_2_1")
    if not icc or not icc.get("annotators"):
        return by_measure
    panel = [names[name] for name in icc["annotators"]]
    return {**by_measure, "icc_2_1": {**icc, "annotators": panel}}


def _study_annotators(study) -> list[str]:
    """The names of all the study's annotators, also those in no panel, whose
    numbers the data use too."""
    return list(
        Annotation.objects.filter(imported_in__study=study)
        .order_by()
        .values_list("annotator", flat=True)
        .distinct()
    )
