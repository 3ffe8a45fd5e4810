"""A whole mixed lab day, compressed: 20 experimenters run complete sessions
over HTTP (consent, prompt log, both SHS blocks, demographics, feedback) while
a coordinator keeps the monitor open and exports the study to XLSX twice,
against gunicorn, PostgreSQL, Redis and a Celery worker. Prints p50/p95 per
kind of request and the error count (target: zero errors).

Think times are 0.2-0.6 s between actions, far faster than people, so the
load is a stress test of a real day, not a model of it.
"""

import json
import random
import re
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

EXPERIMENTERS = 20
SESSIONS_EACH = 3
EXISTING_SESSIONS = 400

SETUP = (
    LOGIN_CODE
    + """
import json, sys
from surveys.models import ConsentText, LLMSystem, Study, StudyMembership, User
from tests.surveys.bulk import add_sessions

experimenters, existing = int(sys.argv[1]), int(sys.argv[2])
study = Study.objects.create(title="Lab day", slug="lab-day", languages=["de", "en", "fr"],
                             status="active")
for name in ("ChatGPT", "Claude", "Gemini", "Mistral", "DeepSeek"):
    LLMSystem.objects.create(study=study, name=name)
for language in study.languages:
    ConsentText.objects.create(study=study, language=language, information_sheet="Information",
                               consent_text="I agree.")
coordinator = User.objects.create_user(email="coordinator@lab.example", password=None)
StudyMembership.objects.create(user=coordinator, study=study, role="coordinator")
users = []
for i in range(experimenters):
    user = User.objects.create_user(email=f"exp{i}@lab.example", password=None)
    StudyMembership.objects.create(user=user, study=study, role="experimenter")
    users.append(user)
add_sessions(study, users, existing)  # the morning's sessions, already done
print(json.dumps({"coordinator": session_cookie(coordinator),
                  "experimenters": [session_cookie(user) for user in users]}))
"""
)
ELIGIBLE = {"adult": "1", "fluent": "1", "ai_professional": "0", "earlier_shs_study": "0",
            "llm_company": "0"}  # fmt: skip
FEEDBACK = {"clarity": "1", "relevance": "1", "response_options": "1",
            "explanation_needed": "2", "demographics_length": "1"}  # fmt: skip
DEMOGRAPHICS = {"age_band": "2", "gender": "9", "education": "4", "first_language": "1",
                "llm_use": "4"}  # fmt: skip


def _experimenter(browser: Browser, rng: random.Random, sessions: int):
    def pause():
        time.sleep(rng.uniform(0.2, 0.6))

    for _ in range(sessions):
        browser.request("study_page", "/studies/lab-day/")
        status, _body, location = browser.request(
            "session_start", "/studies/lab-day/sessions/start/",
            {"language": rng.choice(["de", "en", "fr"])},
        )  # fmt: skip
        if status != 302:
            continue
        url = location
        _status, page, _location = browser.request("participant_page", url)
        pause()
        # The consent page names the text it shows; the consent is recorded for that text.
        shown = re.search(rb'name="shown_text" value="([^"]*)"', page)
        consent = {"step": "consent", **ELIGIBLE, "consent": "on",
                   "shown_text": shown[1].decode() if shown else ""}  # fmt: skip
        browser.request("consent", url, consent)
        for block in (1, 2):
            browser.request("hand_back", url, {"step": "handback"})
            browser.request("experimenter_page", url)
            for category in ["verified"] * 3 + ["glatteis"] * 3:
                pause()
                browser.request(
                    "prompt_log", url + "prompts/",
                    {"step": f"block{block}_interaction", "category": category},
                )  # fmt: skip
            browser.request("interaction_finish", url, {"step": f"block{block}_interaction"})
            browser.request("participant_page", url)
            answers = {f"q{i}": str(rng.choice([-2, -1, 0, 1, 2])) for i in range(1, 11)}
            for sequence, (item, value) in enumerate(answers.items(), start=1):
                pause()
                browser.request(
                    "shs_autosave", url + "answer/",
                    {"step": f"block{block}_shs", "item": item, "value": value,
                     "sequence": str(sequence)},
                )  # fmt: skip
            browser.request("shs_submit", url, {"step": f"block{block}_shs", **answers})
        browser.request("participant_page", url)
        pause()
        browser.request("demographics", url, {"step": "demographics", **DEMOGRAPHICS})
        browser.request("participant_page", url)  # the hand-back page
        browser.request("hand_back", url, {"step": "handback"})
        browser.request("experimenter_page", url)
        pause()
        browser.request("feedback", url, {"step": "feedback", **FEEDBACK})


def _coordinator(browser: Browser, done: threading.Event, exports: int):
    browser.request("monitor", "/studies/lab-day/monitor/")
    for number in range(exports):
        status, _body, location = browser.request(
            "export_start", "/studies/lab-day/exports/",
            {"format": "xlsx"},
        )  # fmt: skip
        match = re.search(r"/exports/([\w-]+)/$", location or "")
        if status != 302 or not match:
            continue
        job = f"/studies/lab-day/exports/{match.group(1)}/"
        browser.request("export_page", job)
        download = None
        for _ in range(600):
            _status, body, _loc = browser.request("export_status", job + "status/")
            state = json.loads(body or b"{}")
            if state.get("finished"):
                download = state.get("download_url")
                break
            time.sleep(1)
            if int(time.time()) % 5 == 0:
                browser.request("monitor_refresh", "/studies/lab-day/monitor/?fragment=1")
        if download:
            browser.request("export_download", download)
        # The second export after the experimenters have been at it for a while.
        if number == 0:
            done.wait(timeout=20)
    while not done.is_set():
        browser.request("monitor_refresh", "/studies/lab-day/monitor/?fragment=1")
        done.wait(timeout=5)


def run():
    missing = services_missing()
    if missing:
        print(f"skipped: {missing}")
        return
    with stack() as (base, env):
        cookies = json.loads(manage_shell(env, SETUP, str(EXPERIMENTERS), str(EXISTING_SESSIONS)))
        warm = Browser(base, cookies["coordinator"])
        for _ in range(30):
            warm.request("warm", "/studies/lab-day/monitor/?fragment=1")
        rng = random.Random(7)
        browsers = [Browser(base, cookie) for cookie in cookies["experimenters"]]
        coordinator = Browser(base, cookies["coordinator"])
        done = threading.Event()
        threads = [
            threading.Thread(
                target=_experimenter, args=(browser, random.Random(rng.random()), SESSIONS_EACH)
            )
            for browser in browsers
        ]
        watcher = threading.Thread(target=_coordinator, args=(coordinator, done, 2))
        started = time.perf_counter()
        watcher.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        done.set()
        watcher.join()
        elapsed = time.perf_counter() - started
        timings = [t for b in [*browsers, coordinator] for t in b.timings]
        _p95, errors = report(
            f"{EXPERIMENTERS} experimenters x {SESSIONS_EACH} sessions, a coordinator exporting "
            f"and watching ({EXISTING_SESSIONS} earlier sessions in the study)",
            timings,
            elapsed,
        )
        counts = manage_shell(
            env,
            "from surveys.models import StudySession, Evaluation; "
            "print(StudySession.objects.filter(step='complete').count(), "
            "Evaluation.objects.filter(scored_at__isnull=False).count())",
        )
        print(f"  complete sessions, scored evaluations afterwards: {counts}")
        print(f"  zero errors: {'yes' if errors == 0 else 'NO'}")
