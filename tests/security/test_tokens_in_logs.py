"""No log line of any level carries a link token.

The production web process (the compose file's gunicorn command, DEBUG=0, on
the test database), with every logger at DEBUG and gunicorn's access log on,
answers requests for real session, invitation and personal-link tokens, and
for allauth's password-reset and e-mail-confirmation links, with 4xx: Django
logs the path of each ("Forbidden (CSRF cookie not set.): /sessions/<token>/",
"Gone: /invitations/<token>/"). The whole of the process's output must hold
none of the tokens.
"""

import secrets
import subprocess
import urllib.error
import urllib.request
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from surveys.models import Invitation, PersonalLink
from surveys.models.studies import hash_token
from tests.scale.test_two_web_processes import _inherited, _wait_until_healthy, _web_command
from tests.services import database_is_postgres, redis_available, require_services
from tests.worker import ROOT, _database_url

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def web_process(tmp_path, personas):
    """The production web process; yields (base URL, file holding its whole output)."""
    if not (database_is_postgres() and redis_available()):
        if require_services():
            pytest.fail("the web process needs PostgreSQL and Redis")
        pytest.skip("needs DATABASE_URL=postgres://... and REDIS_URL (runs in CI)")
    from tests.llm_server import free_port

    port = free_port()
    command = _web_command(port)
    command[command.index("--access-logfile") + 1] = "-"  # even the access log
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.scale.web_settings",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "PLAIN_HTTP": "1",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
        "PRIVATE_STORAGE_ROOT": str(tmp_path),
        "WEB_CONCURRENCY": "1",
        "WEB_WORKER_CLASS": "sync",
        "LOG_LEVEL": "DEBUG",
    }
    log = tmp_path / "web.log"
    with open(log, "w") as output:
        server = subprocess.Popen(
            command, cwd=ROOT, env={**_inherited(), **env}, stdout=output, stderr=output,
            start_new_session=True,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(base, server, log)
        yield base, log
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def _status(base: str, path: str, *, post: bool = False) -> int:
    request = urllib.request.Request(base + path, data=b"x=1" if post else None)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _tokens(study, make_session, personas) -> dict[str, str]:
    session = make_session()
    invitation = secrets.token_urlsafe(32)
    Invitation.objects.create(
        study=study, email="late@example.org", role="experimenter",
        token_hash=hash_token(invitation), invited_by=personas["coordinator_a"],
        expires_at=timezone.now() - timedelta(days=1),
    )  # fmt: skip
    personal = secrets.token_urlsafe(24)
    PersonalLink.objects.create(study=study, token_hash=hash_token(personal))
    return {
        "session": session.token,
        "invitation": invitation,
        "personal": personal,
        "public code": secrets.token_urlsafe(12),
        "retest": secrets.token_urlsafe(24),
        "reset key": secrets.token_urlsafe(20),
        "confirmation key": secrets.token_urlsafe(30),
    }


def test_no_token_reaches_the_log(web_process, study_a, make_session, personas):
    base, log = web_process
    token = _tokens(study_a, make_session, personas)
    requests = [
        (f"/sessions/{token['session']}/", True),  # 403: no CSRF cookie
        (f"/sessions/{token['session']}/answer/", True),
        (f"/sessions/{token['session']}/chat/", True),
        (f"/invitations/{token['invitation']}/", False),  # 410: expired
        (f"/take/{token['public code']}/p/{token['personal']}/", False),  # 404
        (f"/retest/{token['retest']}/", False),  # 404
        (f"/accounts/password/reset/key/1-{token['reset key']}/", True),
        (f"/accounts/confirm-email/{token['confirmation key']}/", True),
    ]
    answers = {path: _status(base, path, post=post) for path, post in requests}

    assert all(400 <= status < 500 for status in answers.values()), answers
    assert 410 in answers.values() and 404 in answers.values() and 403 in answers.values()
    text = log.read_text()
    leaked = [name for name, value in token.items() if value in text]
    assert not leaked, f"{leaked} in the log:\n{text[-3000:]}"
    assert "Gone: /invitations/[token]/" in text  # the lines are there, masked
