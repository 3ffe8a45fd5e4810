"""The replication script's sections on how the study was conducted
(exports.replication.study: completion, feedback, prompts, quality, sessions),
run in R on a study with their edge cases: a pilot session and an abandoned
one, three administrators, blocks ended below the prompt minimum or never
logged, speeding (once on either side of the threshold within the 0.1 s that
shs_seconds rounds away) and straight-lining. Each of their figures equals the
report's."""

from datetime import timedelta

from exports.replication.study import COMPLETION, EXCLUSIONS, FEEDBACK, PROMPTS, QUALITY
from scoring.scores.engine import score_answers
from surveys.models import Evaluation, PromptEntry
from surveys.scores import set_scores
from tests.exports.factories import populate_study
from tests.replication.package import export_package, recomputed, run_r

CONDUCT = {section.key for section in (COMPLETION, FEEDBACK, PROMPTS, QUALITY, EXCLUSIONS)}


def _time(evaluation, seconds):
    evaluation.submitted_at = evaluation.first_displayed_at + timedelta(seconds=seconds)
    evaluation.save(update_fields=["submitted_at"])


def _answer_all(evaluation, answer):
    answers = [answer] * 10
    for number, value in enumerate(answers, start=1):
        setattr(evaluation, f"q{number}", value)
    set_scores(evaluation, score_answers(answers))
    evaluation.save()


def _edge_cases(study):
    data = populate_study(study, sessions=12)
    evaluations = list(
        Evaluation.objects.filter(session__study=study, session__is_pilot=False)
        .exclude(submitted_at=None)
        .order_by("pk")
    )
    # Speeding under a 20 s threshold: 19.97 s and 20.03 s are both 20.0 in
    # shs_seconds, only the first is flagged.
    _time(evaluations[0], 5)
    _time(evaluations[1], 19.97)
    _time(evaluations[2], 20.03)
    _answer_all(evaluations[3], 0)  # straight-lined, consistent
    _answer_all(evaluations[4], 2)  # straight-lined, inconsistent too
    # Too few prompts logged in one block, none at all in another (which
    # cannot be judged: nothing says it was ever logged).
    blocks = [session.blocks.get(block=1) for session in data.sessions[5:7]]
    PromptEntry.objects.filter(interaction=blocks[0]).exclude(category="verified").delete()
    PromptEntry.objects.filter(interaction=blocks[1]).delete()
    return data


def test_the_conduct_sections_replicate_their_edge_cases_in_r(study_a, personas, tmp_path):
    _edge_cases(study_a)
    folder = export_package(study_a, tmp_path / "conduct")
    figures = recomputed(folder)["figures"]
    assert CONDUCT <= {figure["section"] for figure in figures.values()}
    ours = {path for path, figure in figures.items() if figure["section"] in CONDUCT}

    run = run_r(folder)
    assert run.results is not None, run.output[-6000:]
    statuses = {row["figure"]: row["status"] for row in run.results["comparison"]}
    assert {path: statuses[path] for path in ours} == dict.fromkeys(ours, "equal")
    # The edge cases are in the figures: each flag marks, some block is not judged.
    flagged = {path: figures[path]["value"] for path in ours if path.endswith(".flagged")}
    assert all(value > 0 for value in flagged.values()), flagged
    assert figures["quality.flags.3.judged"]["value"] < figures["quality.n"]["value"]
    assert figures["exclusions.abandoned"]["value"] == 1
    assert figures["prompts.overrides"]["value"] > 0
    assert figures["feedback.administrators"]["value"] == 3
