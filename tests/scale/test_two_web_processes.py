"""Horizontal scale (docs/design/deployment.md §12.1): the web tier keeps no state of its
own, so any web process can serve any request of a study.

Two real web processes, started with the compose file's web command (gunicorn
with shs_platform/gunicorn_conf.py) on two ports, share the test's PostgreSQL
database, its Redis and one private storage folder. One tablet's requests
alternate between them for a whole supervised session, logins and CSRF tokens
included; an export started through one is downloaded through the other.
"""

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

import pytest
from django.conf import settings

from exports.models import ExportJob
from surveys.models import (
    ConsentRecord,
    DemographicsResponse,
    Evaluation,
    FeedbackResponse,
    LLMSystem,
    PromptEntry,
    StepRecord,
    StudyMembership,
    StudySession,
    Turn,
    User,
)
from surveys.steps import TIMED_STEPS, Step
from surveys.views.chat import STREAM
from tests.llm_server import free_port
from tests.personas import PASSWORD, make_study, make_user
from tests.security.production import compose_service
from tests.services import database_is_postgres, redis_available, require_services
from tests.surveys.runner import DEMOGRAPHICS, ELIGIBLE, NEUTRAL_FEEDBACK, answers
from tests.worker import ROOT, WorkerProcess, _database_url

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

BLOCK1 = answers(2, -2, 2, -2, 2, -2, 2, -2, 2, -2)
BLOCK2 = answers(1, -1, 0, 0, 1, -1, 2, -2, 0, 1)
_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _web_command(port: int) -> list[str]:
    """The compose file's web command, on a loopback port of this machine."""
    command = shlex.split(compose_service("web")["command"])
    assert command[0] == "gunicorn" and command[command.index("--bind") + 1] == "0.0.0.0:8000"
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    return [sys.executable, "-m", *command, "--access-logfile", "/dev/null"]


@pytest.fixture(scope="module")
def web_processes(django_db_setup, tmp_path_factory, llm_server):
    """Two web processes and a Celery worker sharing the database, Redis and
    storage; started once for the tests of this module (about 15 s)."""
    if not (database_is_postgres() and redis_available()):
        if require_services():
            pytest.fail("two web processes need PostgreSQL and Redis")
        pytest.skip("needs DATABASE_URL=postgres://... and REDIS_URL (runs in CI)")
    logs = tmp_path_factory.mktemp("web-processes")
    private = logs / "private"
    private.mkdir()
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.scale.web_settings",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),  # one key for all: cookies are signed
        "ALLOWED_HOSTS": "127.0.0.1",
        "PLAIN_HTTP": "1",
        "TRUSTED_PROXY_COUNT": "0",
        "SECURE_PROXY_SSL_HEADER": "0",
        "DATABASE_URL": _database_url(),  # the test database
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
        "PRIVATE_STORAGE_ROOT": str(private),
        "LLM_ALLOW_HTTP_LOOPBACK": "1",  # the demo LLM server of block 2
        "WEB_CONCURRENCY": "1",  # one gunicorn worker each: two processes, no more
        "DB_POOL_MAX_SIZE": "2",
        "LOG_LEVEL": "WARNING",
    }
    ports, servers = [free_port(), free_port()], []
    for port in ports:
        servers.append(
            subprocess.Popen(
                _web_command(port),
                cwd=ROOT,
                env={**_inherited(), **env},
                stdout=open(logs / f"web-{port}.log", "w"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    worker = WorkerProcess(logs, {"PRIVATE_STORAGE_ROOT": str(private)})
    try:
        _start(worker)  # meanwhile the web processes start
        for port, server in zip(ports, servers, strict=True):
            _wait_until_healthy(f"http://127.0.0.1:{port}", server, logs / f"web-{port}.log")
        yield [f"http://127.0.0.1:{port}" for port in ports]
    finally:
        for server in servers:
            server.terminate()  # all three stop at once
        worker.stop()
        for server in servers:
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


def _start(worker: WorkerProcess) -> None:
    from shs_platform.celery import app

    # The worker answers a ping before it counts as started: publish it, for real.
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    try:
        worker.start()
    finally:
        app.conf.task_always_eager = eager


def _inherited() -> dict:
    """This run's environment less the web tier's sizing (set above)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("WEB_", "DB_"))}


def _wait_until_healthy(base, server, log):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text()[-4000:]
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"{base} did not become healthy:\n" + log.read_text()[-4000:])


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Tablet:
    """One browser whose requests go to the web processes in turn, one each.

    A form is posted with the token of the page it came from, so a token one
    process issued is checked by the other.
    """

    def __init__(self, bases: list[str]):
        self.bases = bases
        self.sent = 0
        self.served = []  # (process index, method, path, status)
        self.token = ""
        self.token_from = None
        self.crossed_posts = 0
        jar = CookieJar()  # cookies of 127.0.0.1 go to every port, as behind one proxy
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(jar), _NoRedirect()
        )

    def request(self, path, data=None, *, via=None, token=None, accept="text/html"):
        index = self.sent % len(self.bases) if via is None else via
        self.sent += 1
        body = None
        if data is not None:
            body = urllib.parse.urlencode(
                {**data, "csrfmiddlewaretoken": token or self.token}, doseq=True
            ).encode()
            self.crossed_posts += token is None and self.token_from not in (None, index)
        try:
            response = self.opener.open(
                urllib.request.Request(self.bases[index] + path, body, {"Accept": accept}),
                timeout=60,
            )
        except urllib.error.HTTPError as error:
            response = error
        with response:
            status, content = response.status, response.read().decode()
            location = response.headers.get("Location", "")
        self.served.append((index, "POST" if body else "GET", path, status))
        if found := _TOKEN.search(content):
            self.token, self.token_from = found[1], index
        return status, content, location

    def page(self, path) -> str:
        status, content, _location = self.request(path)
        assert status == 200, (path, status, content[-2000:])
        return content

    def submit(self, path, data, *, status=302, via=None) -> str:
        code, content, location = self.request(path, data, via=via)
        assert code == status, (path, code, content[-2000:])
        return location

    def log_in(self, email):
        self.page("/accounts/login/")
        location = self.submit("/accounts/login/", {"login": email, "password": PASSWORD})
        assert not location.startswith("/accounts/"), location


@pytest.fixture
def study(settings):
    # The web processes check passwords with the production hasher.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    study = make_study("scale", systems=2)
    experimenter = make_user("exp@scale.example")
    coordinator = User.objects.create(email="coord@scale.example", password=experimenter.password)
    StudyMembership.objects.create(
        user=experimenter, study=study, role=StudyMembership.Role.EXPERIMENTER
    )
    StudyMembership.objects.create(
        user=coordinator, study=study, role=StudyMembership.Role.COORDINATOR
    )
    return study


def _start_session(tablet, study, llm_server) -> tuple[str, StudySession]:
    tablet.page(f"/studies/{study.slug}/")
    url = tablet.submit(f"/studies/{study.slug}/sessions/start/", {"language": "en"})
    session = StudySession.objects.get(token=url.rstrip("/").rsplit("/", 1)[-1])
    # Block 2's system answers in the built-in chat (the shipped demo server).
    LLMSystem.objects.filter(pk=session.second_system_id).update(
        kind=LLMSystem.Kind.CONNECTED, base_url=llm_server, model_name="demo"
    )
    return url, session


def _shs(tablet, url, step, values):
    tablet.page(url)
    for sequence, (item, value) in enumerate(values.items(), start=1):
        data = {"step": step, "item": item, "value": value, "sequence": str(sequence)}
        tablet.submit(url + "answer/", data, status=200)
    tablet.submit(url, {"step": step, **values})


def _chat(tablet, url, text):
    status, body, _location = tablet.request(
        url + "chat/", {"step": "block2_interaction", "text": text}, accept=STREAM
    )
    assert status == 200, body[-2000:]
    assert json.loads(body.strip().splitlines()[-1]).get("done"), body[-2000:]


def _run_session(tablet, url, session):
    consent = tablet.page(url)
    shown = re.search(r'name="shown_text" value="([^"]+)"', consent)[1]
    tablet.submit(url, {"step": "consent", **ELIGIBLE, "consent": "on", "shown_text": shown})
    tablet.page(url)
    tablet.submit(url, {"step": "handback"})
    # Block 1: the experimenter logs the prompts.
    logged = [{"category": "verified"}] * 3 + [
        {"category": "glatteis", "is_source_request": "on"}
    ] * 3
    for prompt in logged:
        tablet.page(url)
        tablet.submit(url + "prompts/", {"step": "block1_interaction", **prompt})
    tablet.submit(url, {"step": "block1_interaction", "override_reason": ""})
    _shs(tablet, url, "block1_shs", BLOCK1)
    tablet.page(url)
    tablet.submit(url, {"step": "handback"})
    # Block 2: the built-in chat, each message tagged as a prompt of the log.
    for text, category in (("Who wrote Faust?", "verified"), ("Cite a source.", "glatteis")):
        tablet.page(url)
        _chat(tablet, url, text)
        turn = Turn.objects.filter(role=Turn.Role.USER, transcript__interaction__session=session)
        turn = turn.order_by("-position").first()
        tablet.submit(
            url + f"chat/turns/{turn.pk}/tag/", {"step": "block2_interaction", "category": category}
        )
    tablet.page(url)
    tablet.submit(url, {"step": "block2_interaction", "override_reason": "two prompts (test)"})
    _shs(tablet, url, "block2_shs", BLOCK2)
    tablet.page(url)
    tablet.submit(url, {"step": "demographics", **DEMOGRAPHICS})
    tablet.page(url)
    tablet.submit(url, {"step": "handback"})
    tablet.page(url)
    return tablet.submit(url, {"step": "feedback", **NEUTRAL_FEEDBACK})


def test_one_session_alternating_between_two_web_processes(web_processes, study, llm_server):
    tablet = Tablet(web_processes)
    tablet.log_in("exp@scale.example")
    url, session = _start_session(tablet, study, llm_server)

    finished = _run_session(tablet, url, session)

    assert finished == f"/studies/{study.slug}/"
    # Every request went to the other process than the one before it...
    assert [index for index, *_ in tablet.served] == [n % 2 for n in range(len(tablet.served))]
    # ...so most forms were posted with a token the other process had issued.
    assert tablet.crossed_posts >= 20
    assert not [s for s in tablet.served if s[3] >= 400]
    session.refresh_from_db()
    assert session.step == Step.COMPLETE and session.ended_at is not None
    evaluations = Evaluation.objects.filter(session=session).order_by("block")
    assert [(e.block, e.answers, e.scored_at is not None) for e in evaluations] == [
        (1, {k: int(v) for k, v in BLOCK1.items()}, True),
        (2, {k: int(v) for k, v in BLOCK2.items()}, True),
    ]
    assert (evaluations[0].shs, evaluations[0].band) == (1.0, "high")
    # Nothing stored twice.
    assert ConsentRecord.objects.filter(session=session).count() == 1
    assert PromptEntry.objects.filter(interaction__session=session).count() == 8
    assert Turn.objects.filter(transcript__interaction__session=session).count() == 4
    assert FeedbackResponse.objects.filter(session=session).count() == 1
    assert DemographicsResponse.objects.filter(session=session).count() == 1
    steps = StepRecord.objects.filter(session=session).values_list("step", flat=True)
    assert sorted(steps) == sorted(TIMED_STEPS)


def test_a_csrf_token_of_one_process_is_checked_by_the_other(web_processes, study):
    tablet = Tablet(web_processes)
    tablet.log_in("exp@scale.example")
    page = f"/studies/{study.slug}/"
    start = f"/studies/{study.slug}/sessions/start/"

    tablet.page(page)  # process 0 issues the token
    refused, _body, _location = tablet.request(start, {"language": "en"}, token="x" * 64, via=1)
    assert refused == 403
    assert tablet.token_from == 0
    tablet.submit(start, {"language": "en"}, via=1)
    assert StudySession.objects.filter(study=study).count() == 1


def test_an_export_started_through_one_process_downloads_through_the_other(web_processes, study):
    tablet = Tablet(web_processes)
    tablet.log_in("coord@scale.example")
    exports = f"/studies/{study.slug}/exports/"
    tablet.page(exports)  # process 0

    job_url = tablet.submit(exports, {"format": "csv"}, via=0)
    job = ExportJob.objects.get(study=study)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = json.loads(tablet.page(job_url + "status/"))
        if status["finished"]:
            break
        time.sleep(0.2)
    assert status["status"] == "succeeded", status

    code, body, _location = tablet.request(status["download_url"], via=1)
    assert code == 200 and body.strip(), body[:200]
    job.refresh_from_db()
    assert job.events.filter(kind="downloaded").count() == 1
