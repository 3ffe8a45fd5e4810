"""The replication script's sections on how the study was conducted
(exports.replication.study: completion, feedback, prompts, quality, sessions),
run in R on a study with their edge cases: a pilot session and an abandoned
one, three administrators, blocks ended below the prompt minimum or never
logged, speeding (once on either side of the threshold within the 0.1 s that
shs_seconds rounds away) and straight-lining, and administrators who change
their answers from one feedback questionnaire to the next, all on one day and
in an order other than their sessions' (two at the same moment). Each of their
figures equals the report's."""

from datetime import timedelta

from django.utils import timezone

from exports.replication.study import COMPLETION, EXCLUSIONS, FEEDBACK, PROMPTS, QUALITY
from scoring.instruments.feedback import FEEDBACK as QUESTIONNAIRE
from scoring.scores.engine import score_answers
from surveys.models import Evaluation, FeedbackResponse, PromptEntry
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


def _in_submission_order(forms):
    # The platform's rule: by the moment submitted, two at the same moment in
    # the order stored.
    return sorted(forms, key=lambda form: (form.submitted_at, form.pk))


def _changing_minds(data):
    """Each administrator's questionnaires on one day, submitted in the reverse
    of their sessions' order (the first administrator's last two at the same
    moment), each with other answers: only the most recent one picks the first
    or the second answer of every question. Returns each administrator's
    first and most recent questionnaire."""
    noon = timezone.localtime().replace(hour=12, minute=0, second=0, microsecond=0)
    noon -= timedelta(days=1)
    ends = {}
    for number, experimenter in enumerate(data.experimenters):
        forms = list(
            FeedbackResponse.objects.filter(
                experimenter=experimenter, session__is_pilot=False
            ).order_by("-session__created_at")
        )
        assert len(forms) >= 3
        for minute, form in enumerate(forms):
            tied = number == 0 and minute == len(forms) - 1
            form.submitted_at = noon + timedelta(minutes=minute - 1 if tied else minute)
        ordered = _in_submission_order(forms)
        for rank, form in enumerate(ordered):
            latest = rank == len(ordered) - 1
            for question in QUESTIONNAIRE:
                pick = number % 2 if latest else 2 + (rank + number) % (len(question.codes) - 2)
                setattr(form, question.key, question.codes[pick])
            form.save()
        ends[experimenter.pk] = (ordered[0], ordered[-1])
    return ends


def _answers(form):
    return [getattr(form, key) for key in QUESTIONNAIRE.keys]


def test_the_conduct_sections_replicate_their_edge_cases_in_r(study_a, personas, tmp_path):
    data = _edge_cases(study_a)
    ends = _changing_minds(data)
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
    # Each administrator's table row holds their most recent answers, which
    # their first questionnaire's are not: a script that took the first (or
    # broke the tie the other way) would differ.
    questions = range(len(QUESTIONNAIRE.keys))
    table = [
        [figures[f"feedback.by_administrator.{row}.answers.{q}"]["value"] for q in questions]
        for row in range(len(ends))
    ]
    assert table == [_answers(last) for _first, last in ends.values()]
    assert not any(_answers(first) == _answers(last) for first, last in ends.values())
