"""50 concurrent participants submitting the SHS against gunicorn and PostgreSQL.

Each simulated participant holds the tablet at the block 1 SHS: the page is
shown, the ten answers are saved one by one as they are given, 1-3 s apart
(ten times faster than the paper's 4.2 minutes per form, so the load is
conservative), then the form is submitted and the next page is loaded.
Target (issue 4): p95 under 250 ms, zero errors, zero evaluations lost.
A second round fires all 50 submissions at the same instant (the worst case).
"""

import json
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import Cookie, CookieJar

from tests.bench.protocol_server import ROOT, services_missing, stack

PARTICIPANTS = 50
EXPERIMENTERS = 10

SETUP = """
import json, sys
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from surveys import protocol
from surveys.models import LLMSystem, Study, StudyMembership, User
from scoring.instruments.eligibility import ELIGIBILITY

participants, experimenters, label = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
study = Study.objects.create(title="Bench", slug=label, languages=["en", "de"], status="active")
for name in ("ChatGPT", "Claude", "Gemini", "Mistral", "DeepSeek"):
    LLMSystem.objects.create(study=study, name=name)
users = []
for i in range(experimenters):
    user = User.objects.create_user(email=f"exp{i}@{label}.example", password=None)
    StudyMembership.objects.create(user=user, study=study, role="experimenter")
    users.append(user)
runs = []
for i in range(participants):
    user = users[i % experimenters]
    session = protocol.session_start(study=study, experimenter=user, language="de")
    protocol.consent_submit(session_id=session.pk, consent_version="1",
        eligibility={c.key: c.eligible_answer for c in ELIGIBILITY}, consented=True)
    for category in ["verified"] * 3 + ["glatteis"] * 3:
        protocol.prompt_add(session_id=session.pk, step="block1_interaction", category=category)
    protocol.interaction_finish(session_id=session.pk, step="block1_interaction")
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    runs.append({"token": session.token, "cookie": store.session_key})
print(json.dumps(runs))
"""

COUNT = """
from surveys.models import Evaluation
print(Evaluation.objects.submitted().count(), Evaluation.objects.filter(scored_at__isnull=False).count())
"""  # noqa: E501


def _manage_shell(env, code, *args):
    script = f"import sys; sys.argv = ['x', *{list(args)!r}]\n" + code
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


class Participant:
    def __init__(self, base, token, session_cookie):
        self.base = base
        self.url = f"{base}/sessions/{token}/"
        self.jar = CookieJar()
        self.jar.set_cookie(_cookie("sessionid", session_cookie))
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()
        )
        self.timings: list[tuple[str, float, int]] = []

    def _csrf(self):
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def request(self, kind, url, data=None):
        body = None
        if data is not None:
            body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": self._csrf()}).encode()
        started = time.perf_counter()
        try:
            response = self.opener.open(urllib.request.Request(url, data=body), timeout=30)
            status = response.status
            response.read()
        except urllib.error.HTTPError as error:
            status = error.code
        except OSError:
            status = 0
        self.timings.append((kind, time.perf_counter() - started, status))
        return status

    def fill_and_submit(self, answers, think, barrier=None, start_delay=0.0):
        time.sleep(start_delay)
        self.request("page", self.url)
        for item, value in answers.items():
            time.sleep(think())
            self.request(
                "autosave",
                self.url + "answer/",
                {"step": "block1_shs", "item": item, "value": value},
            )
        if barrier is not None:
            barrier.wait()
        self.request("submit", self.url, {"step": "block1_shs", **answers})
        self.request("page", self.url)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None

    def http_error_302(self, req, fp, code, msg, headers):
        return fp


def _cookie(name, value):
    return Cookie(0, name, value, None, False, "127.0.0.1", False, False, "/", True, False,
                  None, False, None, None, {})  # fmt: skip


def _percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def _warm_up(base, runs):
    """Let every gunicorn worker load its templates and connections, as a running
    server would have, before anything is measured."""
    warm = Participant(base, runs[0]["token"], runs[0]["cookie"])
    for _ in range(40):
        warm.request("page", warm.url)


def _round(base, runs, *, burst):
    rng = random.Random(1)
    participants = [Participant(base, run["token"], run["cookie"]) for run in runs]
    barrier = threading.Barrier(len(participants)) if burst else None
    threads = []
    started = time.perf_counter()
    for participant in participants:
        answers = {f"q{i}": str(rng.choice([-2, -1, 0, 1, 2])) for i in range(1, 11)}
        pace = random.Random(rng.random())
        think = (lambda: 0.0) if burst else (lambda pace=pace: pace.uniform(1.0, 3.0))

        # Participants reach the SHS at different moments, as in a lab; the
        # burst round starts them together instead.
        delay = 0.0 if burst else rng.uniform(0.0, 10.0)
        thread = threading.Thread(
            target=participant.fill_and_submit, args=(answers, think, barrier, delay)
        )
        threads.append(thread)
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    return [t for p in participants for t in p.timings], elapsed


def _report(label, timings, elapsed):
    print(f"{label}: {len(timings)} requests in {elapsed:.1f} s")
    errors = [t for t in timings if t[2] not in (200, 302)]
    for kind in ("submit", "autosave", "page"):
        values = [t[1] * 1000 for t in timings if t[0] == kind]
        if values:
            print(
                f"  {kind:8s} n={len(values):4d}  p50 {statistics.median(values):6.1f} ms  "
                f"p95 {_percentile(values, 0.95):6.1f} ms  max {max(values):6.1f} ms"
            )
    submits = [t[1] * 1000 for t in timings if t[0] == "submit"]
    p95 = _percentile(submits, 0.95)
    print(f"  errors: {len(errors)}  submit p95 / 250 ms target = {p95 / 250:.2f}")
    return p95, len(errors)


def run():
    missing = services_missing()
    if missing:
        print(f"skipped: {missing}")
        return
    with stack() as (base, env):
        runs = json.loads(_manage_shell(env, SETUP, str(PARTICIPANTS), str(EXPERIMENTERS), "paced"))
        _warm_up(base, runs)
        timings, elapsed = _round(base, runs, burst=False)
        _report(
            f"{PARTICIPANTS} participants reaching the SHS within 10 s, one answer every 1-3 s",
            timings,
            elapsed,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            stored, scored = map(int, _manage_shell(env, COUNT).split())
            if scored >= stored:
                break
            time.sleep(1)
        print(f"  stored evaluations: {stored} of {PARTICIPANTS} (lost: {PARTICIPANTS - stored}); "
              f"scored by the worker: {scored}")  # fmt: skip

        runs = json.loads(_manage_shell(env, SETUP, str(PARTICIPANTS), str(EXPERIMENTERS), "burst"))
        timings, elapsed = _round(base, runs, burst=True)
        _report(f"{PARTICIPANTS} submissions fired at the same instant", timings, elapsed)
        stored, _scored = map(int, _manage_shell(env, COUNT).split())
        print(f"  stored evaluations (both rounds): {stored} of {2 * PARTICIPANTS}")
