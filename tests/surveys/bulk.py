"""Many sessions at once, straight into the database, for query-count tests."""

import itertools

from django.utils import timezone

from surveys.models import Evaluation, Participant, StudySession
from surveys.steps import Step

STATES = [
    Step.COMPLETE,
    Step.COMPLETE,
    Step.BLOCK1_INTERACTION,
    Step.BLOCK2_SHS,
    Step.WITHDRAWN,
    Step.INELIGIBLE,
]


def add_sessions(study, experimenters, count):
    systems = list(study.systems.all())
    pairs = list(itertools.permutations(systems, 2))
    participants = Participant.objects.bulk_create([Participant(study=study) for _ in range(count)])
    now = timezone.now()
    offset = study.sessions.count()
    sessions = StudySession.objects.bulk_create(
        [
            StudySession(
                study=study,
                participant=participant,
                experimenter=experimenters[i % len(experimenters)],
                language="en",
                step=STATES[i % len(STATES)],
                first_system=pairs[i % len(pairs)][0],
                second_system=pairs[i % len(pairs)][1],
                allocation_number=offset + i + 1,
                is_pilot=i % 17 == 0,
                ended_at=now
                if STATES[i % len(STATES)] in (Step.COMPLETE, Step.WITHDRAWN)
                else None,
            )
            for i, participant in enumerate(participants)
        ]
    )
    Evaluation.objects.bulk_create(
        [
            Evaluation(
                session=session,
                block=block,
                system=session.system_for_block(block),
                language="en",
                submitted_at=now,
                **{f"q{k}": 1 for k in range(1, 11)},
            )
            for session in sessions
            if session.step == Step.COMPLETE
            for block in (1, 2)
        ]
    )
    return sessions
