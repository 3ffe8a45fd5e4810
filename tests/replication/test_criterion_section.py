"""The criterion study's part of the replication package (criterion/replication):
its sections are in the script only when the report holds their figures, and
its tables join the exported evaluations without naming an annotator or a
transcript, read with a fixed number of queries; the package's report names
annotators as its tables do, and counts what was submitted by its moment."""

import copy
import csv
import io
import json
import random
from datetime import date, timedelta

import pytest
from django.db import connection
from django.db.models import Exists, OuterRef
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from criterion.annotations.services import annotations_import
from criterion.models import AutomatedResult
from criterion.replication import SECTIONS
from criterion.replication.data import (
    ANNOTATIONS,
    SYSTEMS,
    TRANSCRIPTS,
    annotation_files,
    system_files,
)
from criterion.replication.scrub import pseudonymous_report
from criterion.report import criterion_report
from exports.dataset import build_dataset
from surveys.models import Evaluation, LLMSystem, Transcript
from surveys.selection import submitted_evaluations
from tests.criterion.annotation_data import csv_bytes, pilot_codes, study_with_transcripts
from tests.replication.package import export_package

# Names as a coordinator may import them: real names, in an order that is not
# the order of the pseudonyms' numbers unless they are sorted.
ANNOTATORS = ("Zoë Realname", "Adam Example")


def _keys(report) -> set[str]:
    return {section.key for section in SECTIONS if section.applies(report)}


def test_sections_apply_only_to_the_figures_the_report_holds():
    # given reports without a criterion section, with one that has no
    # annotations yet, with annotations, and with a joint-use table
    plain = {"n": 40}
    begun = {"criterion": {"measures": [], "analysis": {"counts": {}}, "joint_use": None}}
    annotated = {"criterion": {"measures": ["factual_precision"], "analysis": {"counts": {}}}}
    joint_use = {"criterion": {"measures": [], "joint_use": {"systems": [{"id": 1}]}}}

    # then only the sections with figures are in the script
    assert _keys(plain) == set()
    assert _keys(begun) == set()
    assert _keys(annotated) == {"criterion_agreement", "criterion", "criterion_h3"}
    assert _keys(joint_use) == {"criterion_joint_use"}


def _annotate(study, user, seed: int = 7) -> list[tuple]:
    """Both annotators' factual precision of every transcript (the pilots' too)."""
    rng = random.Random(seed)
    codes = sorted(
        Transcript.objects.filter(interaction__session__study=study).values_list("code", flat=True)
    )
    rows = [
        (code, annotator, "factual_precision", round(rng.random(), 3))
        for code in codes
        for annotator in ANNOTATORS
    ]
    annotations_import(study=study, data=csv_bytes(rows), file_name="all.csv", user=user)
    return rows


def _table(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def annotated(personas, study_a):
    study_with_transcripts(study_a, sessions=5)
    return _annotate(study_a, personas["coordinator_a"])


def _files(study):
    dataset = build_dataset(study=study, include_pilot=False, include_free_text=False)
    return dataset, annotation_files(study, dataset, {})


def test_annotations_join_the_evaluations_without_a_name_or_a_code(annotated, study_a):
    # given two annotators with real names and every transcript annotated
    dataset, files = _files(study_a)
    text = files[ANNOTATIONS] + files[TRANSCRIPTS]

    # then neither a name nor a transcript's platform code leaves the platform
    codes = set(Transcript.objects.values_list("code", flat=True))
    for secret in (*ANNOTATORS, *codes):
        assert secret not in text
    rows = _table(files[ANNOTATIONS])
    # annotators are numbered in the alphabetical order of their names
    by_value = {(row["annotator"], float(row["value"])) for row in rows}
    for _code, name, _measure, value in annotated:
        assert (f"annotator-{sorted(ANNOTATORS).index(name) + 1}", value) in by_value

    # and each annotated evaluation joins evaluations.csv by evaluation_id, with
    # the values its transcript was given
    evaluations = {row["evaluation_id"]: row for row in dataset.table("evaluations").rows()}
    transcript_of = {
        (key.session_id, block): code
        for pk, key in dataset.sessions.items()
        for block, code in Transcript.objects.filter(interaction__session_id=pk).values_list(
            "interaction__block", "code"
        )
    }
    joined = [row for row in rows if row["evaluation_id"]]
    assert joined
    for row in joined:
        evaluation = evaluations[int(row["evaluation_id"])]
        code = transcript_of[(evaluation["session_id"], evaluation["block"])]
        values = {value for c, _name, _m, value in annotated if c == code}
        assert float(row["value"]) in values
    # every annotated transcript is there: a pilot's counts in the agreement,
    # joined to no evaluation
    assert {row["transcript"] for row in rows} == {
        row["transcript"] for row in _table(files[TRANSCRIPTS])
    }
    assert len({row["transcript"] for row in rows}) == len({code for code, *_ in annotated})
    unjoined = {row["transcript"] for row in rows if not row["evaluation_id"]}
    assert len(unjoined) >= len(pilot_codes(study_a)) > 0


def _queries(study) -> int:
    dataset = build_dataset(study=study, include_pilot=False, include_free_text=False)
    with CaptureQueriesContext(connection) as queries:
        annotation_files(study, dataset, {})
        system_files(study, dataset, {})
    return len(queries)


def test_the_tables_take_the_same_queries_however_many_rows(personas, study_a, study_b):
    # given a study with few sessions and one with many, each annotated and
    # with automated results
    study_with_transcripts(study_a, sessions=2)
    study_with_transcripts(study_b, sessions=9, tag="b")
    for study, user in ((study_a, "coordinator_a"), (study_b, "coordinator_b")):
        _annotate(study, personas[user])
        for system in LLMSystem.objects.filter(study=study):
            _result(system, 0.5)

    # then the tables cost the same queries: none per row
    assert _queries(study_a) == _queries(study_b)


def _result(system, score, *, benchmark="bench", day=1, higher_is_better=True, scale_max=1.0):
    return AutomatedResult.objects.create(
        system=system,
        benchmark=benchmark,
        score=score,
        scale_max=scale_max,
        higher_is_better=higher_is_better,
        measured_on=date(2026, 1, day),
        source="test",
    )


def test_systems_carry_the_latest_result_of_each_benchmark(personas, study_a):
    # given a system with an old and a new result of one benchmark and a
    # second benchmark, and a system without any
    first, second = LLMSystem.objects.filter(study=study_a).order_by("name", "pk")[:2]
    _result(first, 0.2, day=1)
    _result(first, 0.7, day=5)
    _result(first, 30.0, benchmark="another", higher_is_better=False, scale_max=100.0)

    # when the table is written
    rows = _table(system_files(study_a, None, {})[SYSTEMS])

    # then each system is in the table's order, with its latest results by benchmark
    mine = [(row["benchmark"], row["score"]) for row in rows if row["system"] == first.name]
    assert mine == [("another", "30.0"), ("bench", "0.7")]
    assert [row["benchmark"] for row in rows if row["system"] == second.name] == [""]
    assert rows[0]["position"] == "0"


# Alphabetically between the two others: the pseudonyms of the report's panel
# (annotator-1 and annotator-3) are the data's only if everyone is numbered.
LONE = "Mia Solo"


def _lone_detector(study, user) -> None:
    """A third annotator, alone on a detector's values: in no ICC panel."""
    codes = sorted(
        Transcript.objects.filter(interaction__session__study=study).values_list("code", flat=True)
    )
    rows = [(code, LONE, "detector:entropy", float(i)) for i, code in enumerate(codes[:6])]
    annotations_import(study=study, data=csv_bytes(rows), file_name="lone.csv", user=user)


def test_the_package_report_names_annotators_as_its_data_do(annotated, study_a, personas, tmp_path):
    # given two annotators with real names on factual precision and a third
    # who alone gave a detector's values
    _lone_detector(study_a, personas["coordinator_a"])

    # when the replication package is exported
    folder = export_package(study_a, tmp_path / "package")

    # then neither the report's data nor its page names an annotator
    for name in ("report/report.json", "report/report.html", "report/figures.json"):
        text = (folder / name).read_text(encoding="utf-8")
        for secret in (*ANNOTATORS, LONE):
            assert secret not in text, name
    # and the agreement table's panel names the data's annotators, numbered
    # among all the study's annotators in the alphabetical order of their names
    report = json.loads((folder / "report" / "report.json").read_text(encoding="utf-8"))
    panel = report["criterion"]["agreement"]["factual_precision"]["icc_2_1"]["annotators"]
    rows = _table((folder / "data" / ANNOTATIONS).read_text(encoding="utf-8-sig"))
    by_measure = {
        measure: sorted({row["annotator"] for row in rows if row["measure"] == measure})
        for measure in ("factual_precision", "detector:entropy")
    }
    assert panel == by_measure["factual_precision"] == ["annotator-1", "annotator-3"]
    assert by_measure["detector:entropy"] == ["annotator-2"]


def test_the_platform_report_keeps_the_names(annotated, study_a):
    # given the criterion section of a study whose annotators have real names
    report = {"criterion": criterion_report(study_a)}
    shown = copy.deepcopy(report)

    # when the package's copy is made
    packaged = pseudonymous_report(study_a, report)

    # then the platform's report still names them, the package's does not
    assert report == shown
    assert set(shown["criterion"]["agreement"]["factual_precision"]["icc_2_1"]["annotators"]) == {
        *ANNOTATORS
    }
    assert not any(name in json.dumps(packaged, ensure_ascii=False) for name in ANNOTATORS)


def _counted(study, as_of) -> int:
    return criterion_report(study, as_of)["analysis"]["counts"]["n_evaluations"]


def test_the_report_counts_what_was_submitted_by_its_moment(annotated, study_a):
    # given an analysed evaluation submitted after the report's moment
    as_of = timezone.now()
    counted = _counted(study_a, as_of)
    with_transcript = Transcript.objects.filter(
        interaction__session_id=OuterRef("session_id"), interaction__block=OuterRef("block")
    )
    analysed = submitted_evaluations(study_a, as_of, include_pilot=False).filter(
        Exists(with_transcript), scored_at__isnull=False
    )
    late = Evaluation.objects.filter(pk=analysed.values("pk")[:1])
    assert late.update(submitted_at=as_of + timedelta(hours=1)) == 1

    # then the report as of that moment leaves it out, and one after it counts it
    assert _counted(study_a, as_of) == counted - 1
    assert _counted(study_a, as_of + timedelta(hours=2)) == counted
