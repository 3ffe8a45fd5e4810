"""Faults of the real services: nothing a participant submitted is lost.

- Redis stops during an SHS submission: the evaluation is stored at once, and
  scored by a real worker once Redis is back (the periodic sweep).
- PostgreSQL drops the app's connections: the next request succeeds without a
  restart (connection health checks).
The third fault, a worker killed mid-export, is tested in tests/exports.
"""

import os
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest
from django.conf import settings
from django.db import connection

from scoring.instruments.eligibility import ELIGIBILITY
from surveys.models import ConsentText, Evaluation
from surveys.protocol import flow
from surveys.steps import Step
from tests.faults.redis_server import ThrowawayRedis, free_port
from tests.services import database_is_postgres, redis_available, require_services
from tests.worker import ROOT, _database_url

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def real_services():
    if not (database_is_postgres() and redis_available() and shutil.which("redis-server")):
        if require_services():
            pytest.fail("fault tests need PostgreSQL, Redis and redis-server")
        pytest.skip("needs PostgreSQL, Redis and redis-server (runs in CI)")


def _session_at_shs(make_session):
    session = make_session()
    flow.consent_submit(
        session_id=session.pk,
        eligibility={criterion.key: criterion.eligible_answer for criterion in ELIGIBILITY},
        consented=True,
        shown_text=ConsentText.current(session.study_id, session.language).fingerprint,
    )
    flow.interaction_finish(
        session_id=session.pk, step=Step.BLOCK1_INTERACTION, override_reason="fault test"
    )
    return session


def test_redis_down_during_submission_loses_nothing(real_services, make_session, tmp_path):
    # transaction=True: what the test creates is committed, so the subprocess sees it.
    session = _session_at_shs(make_session)
    broker = ThrowawayRedis(tmp_path)
    broker.start()
    broker.stop()  # Redis goes down just before the participant submits
    env = {**os.environ, "DATABASE_URL": _database_url(), "REDIS_URL": broker.url}

    result = subprocess.run(
        [sys.executable, "-m", "tests.faults.submit_shs", session.token],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr[-3000:]
    status, seconds = result.stdout.split()[-2:]
    assert status == "302", result.stdout + result.stderr
    assert float(seconds) < 10  # the participant is not kept waiting on the broker
    evaluation = Evaluation.objects.get(session=session, block=1)
    assert evaluation.is_submitted
    assert evaluation.answers == {f"q{i}": 1 for i in range(1, 11)}
    # Scored with the submission, in its transaction: the broker is not needed.
    assert evaluation.scored_at is not None
    assert evaluation.shs == 0.0


def test_the_app_recovers_when_postgres_drops_its_connections(real_services, tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "DEBUG": "1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "shs_platform.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def get(path):
        try:
            with urllib.request.urlopen(base + path, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    try:
        for _ in range(100):
            try:
                if get("/healthz") == 200:
                    break
            except OSError:
                time.sleep(0.2)
        assert get("/accounts/login/") == 200

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            dropped = cursor.fetchone()[0]

        assert dropped >= 1  # the server's persistent connection was cut
        assert get("/healthz") == 200
        assert get("/accounts/login/") == 200
    finally:
        server.terminate()
        server.wait(timeout=20)
