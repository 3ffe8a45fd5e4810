"""200 participants chatting at once with a connected system while 50 others
submit the SHS, against the compose file's topology (nginx in front of
sync workers, and uvicorn workers for the chat's answers) and PostgreSQL.

The connected system is the shipped demo server with `--delay 2` (each answer
spread over two seconds), on a loopback port. Each chatting participant
loads the interaction page within the same ten seconds as the others, then
sends five messages, each streamed as the page's script asks for it (JSON
lines). Meanwhile 50 participants of another study give their SHS as in
bench_protocol. Two rounds, each on a stack of its own:

- *people's pace* (the target's round): between an answer's end and the next
  message, 10 to 30 s: reading an answer of about fifty words (some 12 s at
  250 words a minute) and typing the next question, a sentence (a few
  seconds for a short one at 40 words a minute, more for most);
- *stress*: 1 to 3 s, a pace nobody types at, so 200 participants ask for
  about seven times as many answers a second: the machine's ceiling.

The platform's added latency to the first token is, per answer, the time the
browser waited for the first piece of the answer minus the time the system
itself took to send it (the `first_token_ms` the platform measured from the
start of its call and stored on the turn). Targets: added p95 under 100 ms,
zero errors, SHS submission p95 under 250 ms.
"""

import json
import os
import random
import statistics
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from tests.bench.bench_protocol import SETUP as SHS_SETUP
from tests.bench.bench_protocol import _participant as shs_participant
from tests.bench.procs import cpu_of, run_threads, web_processes
from tests.bench.proxy import nginx_missing
from tests.bench.stack import (
    LOGIN_CODE,
    Browser,
    manage_shell,
    percentile,
    report,
    services_missing,
    stack,
)
from tests.llm_server import running_demo_server

CHATTERS = int(os.environ.get("BENCH_CHATTERS", "200"))
# The compose file's topology (nginx, sync workers, uvicorn workers for the
# chat; docs/design/deployment.md §12.2), or the image alone (BENCH_TOPOLOGY=single).
PROXY = os.environ.get("BENCH_TOPOLOGY", "proxy") == "proxy"
# Seconds between an answer's end and the next message, by round.
PACES = {"people's pace": (10.0, 30.0), "stress": (1.0, 3.0)}
TARGET = {"people's pace": " target", "stress": " (the target's, for scale)"}
ROUNDS = [name for name in PACES if os.environ.get("BENCH_CHAT_ROUND", name) == name]
MESSAGES = 5
SHS_PARTICIPANTS = int(os.environ.get("BENCH_SHS", "50"))
EXPERIMENTERS = 10

CHAT_SETUP = (
    LOGIN_CODE
    + """
import json, sys
from surveys.protocol import flow
from surveys.models import ConsentText, LLMSystem, Study, StudyMembership, User
from scoring.instruments.eligibility import ELIGIBILITY

participants, experimenters, base_url = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
study = Study.objects.create(title="Chat bench", slug="chat-bench", languages=["en"],
                             status="active")
for name in ("Demo A", "Demo B"):
    LLMSystem.objects.create(study=study, name=name, kind="connected", base_url=base_url,
                             model_name="demo", is_demo=True)
ConsentText.objects.create(study=study, language="en", information_sheet="Information",
                           consent_text="I agree.")
shown = ConsentText.current(study.pk, "en").fingerprint
users = []
for i in range(experimenters):
    user = User.objects.create_user(email=f"chat{i}@bench.example", password=None)
    StudyMembership.objects.create(user=user, study=study, role="experimenter")
    users.append(user)
runs = []
for i in range(participants):
    user = users[i % experimenters]
    session = flow.session_start(study=study, experimenter=user, language="en")
    flow.consent_submit(session_id=session.pk, shown_text=shown,
        eligibility={c.key: c.eligible_answer for c in ELIGIBILITY}, consented=True)
    runs.append({"token": session.token, "cookie": session_cookie(user)})
print(json.dumps(runs))
"""
)

# The system's own time to the first token, per answer, as the platform stored it.
FIRST_TOKENS = """
import json
from surveys.models import Turn
answers = Turn.objects.filter(role="assistant", transcript__interaction__session__study__slug=
                              "chat-bench").order_by("transcript", "position")
print(json.dumps([[a.transcript.interaction.session.token, a.first_token_ms]
                  for a in answers.select_related("transcript__interaction__session")]))
"""


def _stream(browser: Browser, path: str, text: str) -> tuple[float | None, str]:
    """One streamed answer: seconds to its first piece, and how it ended."""
    data = {"step": "block1_interaction", "text": text, "csrfmiddlewaretoken": browser._csrf()}
    request = urllib.request.Request(
        browser.base + path,
        data=urllib.parse.urlencode(data).encode(),
        headers={"Accept": "application/x-ndjson"},
    )
    started = time.perf_counter()
    first, ending = None, "no end"
    try:
        with browser.opener.open(request, timeout=60) as response:
            if response.status != 200:
                return None, f"HTTP {response.status}"
            for line in response:
                event = json.loads(line)
                if "delta" in event and first is None:
                    first = time.perf_counter() - started
                if "done" in event:
                    ending = "done"
                elif "error" in event:
                    ending = f"error {event['cause']}"
    except urllib.error.HTTPError as error:
        ending = f"HTTP {error.code}"
    except OSError as error:
        ending = f"{type(error).__name__}"
    return first, ending


def _chatter(browser, token, rng, results, pace):
    time.sleep(rng.uniform(0.0, 10.0))
    url = f"/sessions/{token}/"
    browser.request("page", url)
    for number in range(MESSAGES):
        time.sleep(rng.uniform(*pace))  # reading the page or the answer, typing
        first, ending = _stream(browser, url + "chat/", f"Question {number} of {token[:6]}")
        results.append((token, first, ending))


def _run_all(base, chat_runs, shs_runs, pace):
    rng = random.Random(13)
    chat_results: list[tuple] = []
    chatters = [Browser(base, run["cookie"]) for run in chat_runs]
    raters = [Browser(base, run["cookie"]) for run in shs_runs]
    threads = [
        threading.Thread(
            target=_chatter,
            args=(b, r["token"], random.Random(rng.random()), chat_results, pace),
        )
        for b, r in zip(chatters, chat_runs, strict=True)
    ]
    for browser, run in zip(raters, shs_runs, strict=True):
        answers = {f"q{i}": str(rng.choice([-2, -1, 0, 1, 2])) for i in range(1, 11)}
        pace = random.Random(rng.random())
        threads.append(
            threading.Thread(
                target=shs_participant,
                args=(browser, run["token"], answers, lambda p=pace: p.uniform(1.0, 3.0), None,
                      rng.uniform(2.0, 8.0)),
            )
        )  # fmt: skip
    elapsed = run_threads(threads)
    timings = [t for browser in chatters + raters for t in browser.timings]
    return chat_results, timings, elapsed


def _added_latency(chat_results, stored) -> list[float]:
    """Browser's wait for the first piece minus the system's own, answer by answer."""
    own: dict[str, list[int]] = {}
    for token, first_token_ms in stored:
        own.setdefault(token, []).append(first_token_ms)
    seen: dict[str, int] = {}
    added = []
    for token, first, ending in chat_results:
        if ending != "done" or first is None:
            continue
        index = seen.get(token, 0)
        seen[token] = index + 1
        if index < len(own.get(token, [])):
            added.append(first * 1000 - own[token][index])
    return added


def run():
    missing = services_missing() or (PROXY and nginx_missing())
    if missing:
        print(f"skipped: {missing}")
        return
    # The stack (DEBUG off) may call the demo server over plain http on loopback.
    os.environ["LLM_ALLOW_HTTP_LOOPBACK"] = "1"
    for name in ROUNDS:
        _round(name, PACES[name])


def _round(name: str, pace: tuple[float, float]):
    servers = stack(app="shs_platform.asgi", proxy=PROXY)
    with running_demo_server("--delay", "2") as llm, servers as (base, env):
        chat_runs = json.loads(
            manage_shell(env, CHAT_SETUP, str(CHATTERS), str(EXPERIMENTERS), llm.base_url)
        )
        shs_runs = json.loads(
            manage_shell(env, SHS_SETUP, str(SHS_PARTICIPANTS), str(EXPERIMENTERS), "chat-shs")
        )
        warm = Browser(base, chat_runs[0]["cookie"])
        for _ in range(20):
            warm.request("page", f"/sessions/{chat_runs[0]['token']}/")
        # CPU seconds of the run, by process: the machine is shared, so wall
        # times move with the neighbours' load; these much less.
        workers, system = web_processes(os.getpid()), [llm.process.pid]
        cpu_before = cpu_of(workers), cpu_of(system), time.process_time()
        chat_results, timings, elapsed = _run_all(base, chat_runs, shs_runs, pace)
        cpu_after = cpu_of(workers), cpu_of(system), time.process_time()
        stored = json.loads(manage_shell(env, FIRST_TOKENS))

    topology = "nginx, sync and uvicorn workers" if PROXY else "the image alone"
    print(f"\n{name} ({topology}): {CHATTERS} participants chatting ({MESSAGES} streamed "
          f"answers each, {pace[0]:.0f}-{pace[1]:.0f} s apart, demo server --delay 2) while "
          f"{SHS_PARTICIPANTS} give their SHS")  # fmt: skip
    endings = [ending for _t, _f, ending in chat_results]
    failed = [ending for ending in endings if ending != "done"]
    print(f"  answers: {len(endings)}, complete: {len(endings) - len(failed)}, "
          f"errors: {len(failed)} {sorted(set(failed)) if failed else ''}; "
          f"{len(endings) / elapsed:.1f} answers a second")  # fmt: skip
    firsts = [first * 1000 for _t, first, ending in chat_results if ending == "done" and first]
    own = [ms for _token, ms in stored if ms is not None]
    added = _added_latency(chat_results, stored)
    for label, values in (
        ("first token, browser", firsts),
        ("first token, system", own),
        ("added by platform", added),
    ):
        if values:
            print(
                f"  {label:22s} n={len(values):5d}  p50 {statistics.median(values):7.1f} ms  "
                f"p95 {percentile(values, 0.95):7.1f} ms  max {max(values):7.1f} ms"
            )
    if added:
        print(f"  added p95 / 100 ms{TARGET[name]} = {percentile(added, 0.95) / 100:.2f}")
    web, demo, load = (after - before for after, before in zip(cpu_after, cpu_before, strict=True))
    print(
        f"  CPU during the run ({elapsed:.1f} s): web workers {web:.1f} s, demo server "
        f"{demo:.1f} s, load generator {load:.1f} s; load average {os.getloadavg()[0]:.1f}"
    )
    if endings:
        print(
            f"  web worker CPU per answer (the SHS requests included): "
            f"{web / len(endings) * 1000:.0f} ms"
        )
    p95, _errors = report("SHS participants and page loads", timings, elapsed,
                          ["submit", "autosave", "page"])  # fmt: skip
    if "submit" in p95:
        print(f"  SHS submit p95 / 250 ms{TARGET[name]} = {p95['submit'] / 250:.2f}")
