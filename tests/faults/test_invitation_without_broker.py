"""The broker is down when a coordinator invites someone: the invitation is
stored and marked "sending failed" at once (the coordinator sends it again
later), instead of a 500 after the commit and an invitation that waits forever
for an e-mail that was never queued."""

import os
import subprocess
import sys

import pytest
from django.core import mail

from surveys.models import Invitation
from tests.faults.redis_server import free_port
from tests.worker import ROOT, _database_url

# transaction=True and PostgreSQL: what the test creates is committed, so the
# subprocess sees it.
pytestmark = pytest.mark.django_db(transaction=True)


def test_an_invitation_made_while_the_broker_is_down_is_marked_failed(
    postgres_only, personas, study_a
):
    nothing_listens = f"redis://127.0.0.1:{free_port()}/0"
    env = {**os.environ, "DATABASE_URL": _database_url(), "REDIS_URL": nothing_listens}

    result = subprocess.run(
        [sys.executable, "-m", "tests.faults.invite", study_a.slug,
         personas["coordinator_a"].email, "new.person@example.org"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr[-3000:]
    status, seconds = result.stdout.split()[-2:]
    assert status == "302", result.stdout + result.stderr[-3000:]
    assert float(seconds) < 10  # the coordinator is not kept waiting on the broker
    invitation = Invitation.objects.get(study=study_a)
    assert invitation.sent_at is None
    assert invitation.send_failed_at is not None
    assert mail.outbox == []
