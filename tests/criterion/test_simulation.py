"""Simulated annotations for the criterion-validity study (docs/design/criterion.md §13.5).

The statistics of the draws are checked on large synthetic samples against
numpy's and krippendorff's own computations; the command is checked on a
small simulated study run through the real protocol.
"""

import csv
import io

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from criterion.models import Annotation, AnnotationImport, AutomatedResult
from criterion.simulation import simulate_criterion_data
from criterion.simulation.measures import (
    AnnotationModel,
    AnnotationSimulationError,
    draw_measures,
    latent_correlation,
)
from scoring.scores.engine import score_array
from surveys.answer_model import CALIBRATED
from surveys.models import InteractionBlock, StudySession, Transcript
from surveys.pilot import pilot_decide

MEASURES = {"factual_precision", "citation_support", "detector:semantic_entropy"}


def _synthetic(n: int, seed: int, correlation: float, annotators: int = 2):
    """n evaluations from the paper-calibrated answer model, scored, and their measures."""
    rng = np.random.default_rng(seed)
    scored = score_array(CALIBRATED.answers(rng, n))
    measures = draw_measures(
        shs=scored.shs,
        source_reliability=scored.dimension_scores[:, 1],
        annotators=annotators,
        rng=rng,
        model=AnnotationModel(correlation=correlation),
    )
    return scored, measures


@pytest.mark.parametrize("target", [0.2, 0.5])
def test_the_observed_correlation_lands_at_the_target(target):
    # n = 20,000: the SE of r is (1 - r^2)/sqrt(n) <= .007, so .015 leaves room for
    # sampling error and none for a missing calibration (which lands ~.04 low at .5).
    scored, measures = _synthetic(20_000, seed=7, correlation=target)

    observed = np.corrcoef(scored.shs, measures.precision.mean(axis=1))[0, 1]
    assert observed == pytest.approx(target, abs=0.015)
    # The latent correlation is higher: the transform and the annotators attenuate.
    assert latent_correlation(AnnotationModel(correlation=target), 2) > target


def test_a_study_of_2000_interactions_is_within_sampling_error_of_the_target():
    scored, measures = _synthetic(2_000, seed=3, correlation=0.5)

    observed = np.corrcoef(scored.shs, measures.precision.mean(axis=1))[0, 1]
    # Three standard errors on Fisher's z scale.
    assert abs(np.arctanh(observed) - np.arctanh(0.5)) * np.sqrt(2_000 - 3) <= 3


def test_two_annotators_agree_well_but_not_perfectly():
    _, measures = _synthetic(1_000, seed=1, correlation=0.5)

    for values in (measures.precision, measures.citation):
        # Interval alpha equals the ICC of absolute agreement up to a small-sample term;
        # on two decimals, so that its matrix of distinct values stays small.
        alpha = krippendorff.alpha(
            reliability_data=np.round(values.T, 2), level_of_measurement="interval"
        )
        assert 0.7 <= alpha <= 0.88
    assert not np.array_equal(measures.precision[:, 0], measures.precision[:, 1])


def test_citation_support_follows_source_reliability_most_and_the_detector_runs_against():
    scored, measures = _synthetic(20_000, seed=2, correlation=0.5)

    citation = measures.citation.mean(axis=1)
    by_dimension = [np.corrcoef(column, citation)[0, 1] for column in scored.dimension_scores.T]
    source_reliability = by_dimension.pop(1)
    assert source_reliability > max(by_dimension) + 0.1  # H2 is plausible
    assert np.corrcoef(measures.detector, measures.precision.mean(axis=1))[0, 1] < -0.3


def test_values_stay_in_range():
    _, measures = _synthetic(20_000, seed=4, correlation=0.7)

    for values in (measures.precision, measures.citation):
        assert values.min() >= 0 and values.max() <= 1
    assert measures.detector.min() >= 0 and measures.detector.max() <= np.log(10)


def test_a_correlation_beyond_the_reach_of_the_annotators_is_refused():
    with pytest.raises(AnnotationSimulationError, match="at most"):
        latent_correlation(AnnotationModel(correlation=0.97), 2)


# -- the command on a simulated study ---------------------------------------------------


def _read(path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_simulate_study_writes_and_stores_annotations_of_every_transcript(
    study_a, personas, tmp_path
):
    path = tmp_path / "annotations.csv"
    call_command(
        "simulate_study", study_a.slug, "--participants", "30", "--seed", "5",
        "--annotators", "2", "--annotations-file", str(path), "--store-annotations",
        "--automated-results", stdout=io.StringIO(),
    )  # fmt: skip

    rows = _read(path)
    assert list(rows[0]) == ["transcript_id", "annotator", "measure", "value"]
    transcripts = Transcript.objects.filter(interaction__session__study=study_a)
    assert transcripts.count() == 60
    assert set(transcripts.values_list("source", "import_format")) == {("import", "text")}
    codes = set(transcripts.values_list("code", flat=True))
    precision = [row for row in rows if row["measure"] == "factual_precision"]
    assert {row["transcript_id"] for row in rows} == codes
    assert sorted(row["transcript_id"] for row in precision) == sorted(2 * list(codes))
    assert {row["annotator"] for row in rows} == {"annotator-1", "annotator-2"}
    assert {row["measure"] for row in rows} == MEASURES
    for row in rows:
        if row["measure"] != "detector:semantic_entropy":
            assert 0 <= float(row["value"]) <= 1
    # Stored as the file says, one import record per annotator.
    assert Annotation.objects.count() == len(rows)
    imports = AnnotationImport.objects.filter(study=study_a)
    assert sorted(imports.values_list("annotator", "file_name")) == [
        ("annotator-1", "simulated"),
        ("annotator-2", "simulated"),
    ]
    assert sum(imports.values_list("rows", flat=True)) == len(rows)
    used = set(study_a.sessions.values_list("first_system", "second_system").distinct())
    systems = {system for pair in used for system in pair}
    assert set(AutomatedResult.objects.values_list("system_id", flat=True)) == systems
    first = transcripts.first()
    assert [turn.role for turn in first.turns.all()][:2] == ["user", "assistant"]

    # Same sessions, same seed: the same file, and no transcript written twice.
    again = tmp_path / "again.csv"
    done = simulate_criterion_data(
        sessions=study_a.sessions.all(), seed=5, annotators=2, annotations_file=str(again)
    )
    assert done.transcripts_created == 0
    assert again.read_bytes() == path.read_bytes()


def test_without_annotators_nothing_new_happens(study_a, personas):
    call_command(
        "simulate_study", study_a.slug, "--participants", "4", "--seed", "1",
        stdout=io.StringIO(),
    )  # fmt: skip

    assert StudySession.objects.filter(study=study_a).count() == 4
    assert not Transcript.objects.exists()
    assert not Annotation.objects.exists() and not AnnotationImport.objects.exists()
    assert not AutomatedResult.objects.exists()


def test_pilot_sessions_get_no_transcript_and_no_annotation(study_a, personas, tmp_path):
    call_command(
        "simulate_study", study_a.slug, "--participants", "4", "--seed", "2",
        stdout=io.StringIO(),
    )  # fmt: skip
    pilot = StudySession.objects.filter(study=study_a).order_by("pk").first()
    pilot_decide(session_id=pilot.pk, is_pilot=True)
    path = tmp_path / "annotations.csv"

    simulate_criterion_data(
        sessions=study_a.sessions.all(), seed=2, annotators=2, annotations_file=str(path)
    )

    assert not Transcript.objects.filter(interaction__session=pilot).exists()
    assert Transcript.objects.count() == 6
    annotated = {row["transcript_id"] for row in _read(path)}
    assert annotated == set(Transcript.objects.values_list("code", flat=True))


def test_a_connected_systems_block_gets_the_chats_record(study_a, personas, tmp_path):
    call_command(
        "simulate_study", study_a.slug, "--participants", "2", "--seed", "4",
        stdout=io.StringIO(),
    )  # fmt: skip
    block = InteractionBlock.objects.filter(session__study=study_a).first()
    system = block.system
    system.kind, system.base_url, system.model_name = "connected", "http://x.test/v1", "m-1"
    system.save()

    simulate_criterion_data(
        sessions=study_a.sessions.all(), seed=4, annotators=1,
        annotations_file=str(tmp_path / "a.csv"),
    )  # fmt: skip

    transcript = Transcript.objects.get(interaction=block)
    assert transcript.source == Transcript.Source.CHAT
    assert {t.model for t in transcript.turns.filter(role="assistant")} == {"m-1"}


@pytest.mark.parametrize(
    "options",
    [
        ["--annotators", "2"],  # nowhere to put them
        ["--annotations-file", "x.csv"],  # no annotators
        ["--annotators", "2", "--store-annotations", "--annotation-correlation", "0.99"],
        ["--annotators", "2", "--annotations-file", "/no/such/folder/a.csv"],
    ],
)
def test_bad_options_are_refused_before_any_session_runs(study_a, personas, options):
    with pytest.raises(CommandError):
        call_command("simulate_study", study_a.slug, "--participants", "2", *options)

    assert not StudySession.objects.filter(study=study_a).exists()


def test_one_participant_says_why_r_is_not_computable_never_nan(study_a, personas, tmp_path):
    out = io.StringIO()
    call_command(
        "simulate_study", study_a.slug, "--participants", "1", "--seed", "3",
        "--annotators", "1", "--annotations-file", str(tmp_path / "a.csv"), stdout=out,
    )  # fmt: skip

    printed = out.getvalue()
    assert "nan" not in printed.lower()
    assert "r not computable: one participant (2 evaluations)" in printed


def test_a_study_of_several_participants_prints_its_r(study_a, personas, tmp_path):
    out = io.StringIO()
    path = tmp_path / "a.csv"
    call_command(
        "simulate_study", study_a.slug, "--participants", "3", "--seed", "3",
        "--annotators", "1", "--annotations-file", str(path), stdout=out,
    )  # fmt: skip

    rows = [row for row in _read(path) if row["measure"] == "factual_precision"]
    by_code = {row["transcript_id"]: float(row["value"]) for row in rows}
    transcripts = Transcript.objects.filter(interaction__session__study=study_a)
    pairs = [
        (block.session.evaluations.get(block=block.block).shs, by_code[transcript.code])
        for transcript in transcripts.select_related("interaction__session")
        for block in [transcript.interaction]
    ]
    shs, precision = np.array(pairs).T
    # The rounded file values, so compared at the printed two decimals' tolerance.
    expected = np.corrcoef(shs, precision)[0, 1]
    printed = out.getvalue().split("r(SHS, mean factual precision) = ")[1].split(" ")[0]
    assert float(printed) == pytest.approx(expected, abs=0.011)
