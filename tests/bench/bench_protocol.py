"""50 concurrent participants submitting the SHS against gunicorn and PostgreSQL.

Each simulated participant holds the tablet at the block 1 SHS: the page is
shown, the ten answers are saved one by one as they are given, 1-3 s apart
(ten times faster than the paper's 4.2 minutes per form, so the load is
conservative), then the form is submitted and the next page is loaded.
Target: p95 under 250 ms, zero errors, zero evaluations lost.
A second round fires all 50 submissions at the same instant (the worst case).
"""

import json
import random
import threading
import time

from tests.bench.stack import (
    LOGIN_CODE,
    Browser,
    manage_shell,
    report,
    services_missing,
    stack,
)

PARTICIPANTS = 50
EXPERIMENTERS = 10

SETUP = (
    LOGIN_CODE
    + """
import json, sys
from surveys.protocol import flow, prompts
from surveys.models import ConsentText, LLMSystem, Study, StudyMembership, User
from scoring.instruments.eligibility import ELIGIBILITY

participants, experimenters, label = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
study = Study.objects.create(title="Bench", slug=label, languages=["en", "de"], status="active")
for name in ("ChatGPT", "Claude", "Gemini", "Mistral", "DeepSeek"):
    LLMSystem.objects.create(study=study, name=name)
for language in study.languages:
    ConsentText.objects.create(study=study, language=language, information_sheet="Information",
                               consent_text="I agree.")
shown = ConsentText.current(study.pk, "de").fingerprint
users = []
for i in range(experimenters):
    user = User.objects.create_user(email=f"exp{i}@{label}.example", password=None)
    StudyMembership.objects.create(user=user, study=study, role="experimenter")
    users.append(user)
runs = []
for i in range(participants):
    user = users[i % experimenters]
    session = flow.session_start(study=study, experimenter=user, language="de")
    flow.consent_submit(session_id=session.pk, shown_text=shown,
        eligibility={c.key: c.eligible_answer for c in ELIGIBILITY}, consented=True)
    for category in ["verified"] * 3 + ["glatteis"] * 3:
        prompts.prompt_add(session_id=session.pk, step="block1_interaction", category=category)
    flow.interaction_finish(session_id=session.pk, step="block1_interaction")
    runs.append({"token": session.token, "cookie": session_cookie(user)})
print(json.dumps(runs))
"""
)

COUNT = """
from surveys.models import Evaluation
submitted = Evaluation.objects.submitted()
print(submitted.count(), submitted.filter(scored_at__isnull=False).count())
"""


def _participant(browser, token, answers, think, barrier, start_delay):
    url = f"/sessions/{token}/"
    time.sleep(start_delay)
    browser.request("page", url)
    for sequence, (item, value) in enumerate(answers.items(), start=1):
        time.sleep(think())
        browser.request("autosave", url + "answer/", {"step": "block1_shs", "item": item,
                                                      "value": value,
                                                      "sequence": str(sequence)})  # fmt: skip
    if barrier is not None:
        barrier.wait()
    browser.request("submit", url, {"step": "block1_shs", **answers})
    browser.request("page", url)


def _warm_up(base, runs):
    """Let every gunicorn worker load its templates and connections, as a running
    server would have, before anything is measured."""
    warm = Browser(base, runs[0]["cookie"])
    for _ in range(40):
        warm.request("page", f"/sessions/{runs[0]['token']}/")


def _round(base, runs, *, burst):
    rng = random.Random(1)
    browsers = [Browser(base, run["cookie"]) for run in runs]
    barrier = threading.Barrier(len(runs)) if burst else None
    threads = []
    started = time.perf_counter()
    for browser, run in zip(browsers, runs, strict=True):
        answers = {f"q{i}": str(rng.choice([-2, -1, 0, 1, 2])) for i in range(1, 11)}
        pace = random.Random(rng.random())
        think = (lambda: 0.0) if burst else (lambda pace=pace: pace.uniform(1.0, 3.0))
        # Participants reach the SHS at different moments, as in a lab; the
        # burst round starts them together instead.
        delay = 0.0 if burst else rng.uniform(0.0, 10.0)
        thread = threading.Thread(
            target=_participant, args=(browser, run["token"], answers, think, barrier, delay)
        )
        threads.append(thread)
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    return [t for browser in browsers for t in browser.timings], elapsed


def run():
    missing = services_missing()
    if missing:
        print(f"skipped: {missing}")
        return
    kinds = ["submit", "autosave", "page"]
    with stack() as (base, env):
        runs = json.loads(manage_shell(env, SETUP, str(PARTICIPANTS), str(EXPERIMENTERS), "paced"))
        _warm_up(base, runs)
        timings, elapsed = _round(base, runs, burst=False)
        p95, _errors = report(
            f"{PARTICIPANTS} participants reaching the SHS within 10 s, one answer every 1-3 s",
            timings,
            elapsed,
            kinds,
        )
        print(f"  submit p95 / 250 ms target = {p95['submit'] / 250:.2f}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            stored, scored = map(int, manage_shell(env, COUNT).split())
            if scored >= stored:
                break
            time.sleep(1)
        print(f"  stored evaluations: {stored} of {PARTICIPANTS} (lost: {PARTICIPANTS - stored}); "
              f"scored by the worker: {scored}")  # fmt: skip

        runs = json.loads(manage_shell(env, SETUP, str(PARTICIPANTS), str(EXPERIMENTERS), "burst"))
        timings, elapsed = _round(base, runs, burst=True)
        p95, _errors = report(
            f"{PARTICIPANTS} submissions fired at the same instant", timings, elapsed, kinds
        )
        print(f"  submit p95 / 250 ms target = {p95['submit'] / 250:.2f}")
        stored, _scored = map(int, manage_shell(env, COUNT).split())
        print(f"  stored evaluations (both rounds): {stored} of {2 * PARTICIPANTS}")
