"""Remote participants at once through the whole flow of a remote study
against the compose file's topology (nginx in front of gunicorn's
sync workers, and uvicorn workers for the chat's answers; docs/design/deployment.md
§12.2), PostgreSQL, Redis and a Celery worker.

Each participant opens the study's public link, starts in English, consents,
chats in each block with a connected system (the shipped demo server,
`--delay 1`: each answer spread over a second), two messages per block,
each tagged with its category as the participant does (the study's minimum:
one of each), gives the SHS after each block (ten autosaves, then the
submission), the demographics, and reaches the end page with its completion
code. Nobody is logged in; only the participant's cookie opens the session.

Pacing: everyone starts within the first 30 seconds; typing a message takes
10 to 30 s (as in bench_chat's people's round), an SHS answer 1 to 3 s.

`BENCH_REMOTE` is the number of participants (default 300), or a comma list
to find the ceiling (`BENCH_REMOTE=300,400,500`: a round per count, each on a
stack of its own). Target: p95 of the platform's pages (every request but
the chat's streamed answer, whose time is mostly the system's) under 300 ms,
zero errors, every participant complete with two stored evaluations. The
public link is rate-limited per client, and all participants come from one
loopback address here: the stack raises the limit for the run.
"""

import json
import os
import random
import re
import threading
import time
import urllib.parse
import urllib.request

from tests.bench.procs import cpu_of, run_threads, web_processes
from tests.bench.proxy import nginx_missing
from tests.bench.stack import Browser, manage_shell, percentile, report, services_missing, stack
from tests.llm_server import running_demo_server

# The compose file's topology (docs/design/deployment.md §12.2), or BENCH_TOPOLOGY=single.
PROXY = os.environ.get("BENCH_TOPOLOGY", "proxy") == "proxy"
COUNTS = [int(n) for n in os.environ.get("BENCH_REMOTE", "300").split(",")]
# Seconds each participant spends between requests, by BENCH_REMOTE_PACE:
# - people (default): the pace of the paper's participants. The SHS took 4.2 min
#   (SD 1.8, paper 6.3), about 25 s an item; typing a prompt 10-30 s and reading
#   the answer 5-15 s before tagging it; reading the information sheet and
#   consent 30-90 s, the demographics 20-60 s. All start within the first minute:
#   every one of them is in the study at once for about 12 minutes.
# - stress: the same flow five times faster (SHS items 1-3 s apart, no reading),
#   for the ceiling: about 2.5 minutes per participant.
# - quick: a few seconds in all, to try the benchmark out.
PACES = {
    "people": {"starts": 60.0, "consent": (30.0, 90.0), "typing": (10.0, 30.0),
               "reading": (5.0, 15.0), "item": (15.0, 35.0), "demographics": (20.0, 60.0)},
    "stress": {"starts": 30.0, "consent": (0.0, 0.0), "typing": (10.0, 30.0),
               "reading": (0.0, 0.0), "item": (1.0, 3.0), "demographics": (0.0, 0.0)},
    "quick": {"starts": 2.0, "consent": (0.0, 0.0), "typing": (0.5, 1.0),
              "reading": (0.0, 0.0), "item": (0.1, 0.2), "demographics": (0.0, 0.0)},
}  # fmt: skip
PACE_NAME = os.environ.get("BENCH_REMOTE_PACE", "people")
PACE = PACES[PACE_NAME]
PAGE_TARGET_MS = 300

SETUP = """
import json, sys
from surveys.models import ConsentText, LLMSystem, Study

base_url = sys.argv[1]
study = Study.objects.create(title="Remote bench", slug="remote-bench", languages=["en"],
                             status="active", mode="remote", min_verified_prompts=1,
                             min_glatteis_prompts=1)
for name in ("Demo A", "Demo B"):
    LLMSystem.objects.create(study=study, name=name, kind="connected", base_url=base_url,
                             model_name="demo", is_demo=True)
ConsentText.objects.create(study=study, language="en", information_sheet="Information",
                           consent_text="I agree.")
print(json.dumps(study.public_code))
"""

COUNT = """
from surveys.models import Evaluation, StudySession
sessions = StudySession.objects.filter(study__slug="remote-bench")
evaluations = Evaluation.objects.submitted().filter(session__study__slug="remote-bench")
print(sessions.count(), sessions.filter(step="complete").count(), evaluations.count(),
      evaluations.filter(scored_at__isnull=False).count())
"""

ELIGIBLE = None  # read from the app once, in run()
DEMOGRAPHICS = {"age_band": "2", "gender": "9", "education": "4", "first_language": "1",
                "llm_use": "4"}  # fmt: skip
SHOWN_TEXT = re.compile(r'name="shown_text" value="([^"]+)"')
USER_TURN = re.compile(r'<li class="turn turn-user" id="turn-(\d+)"')


class Participant:
    def __init__(self, base: str, code: str, rng: random.Random):
        self.browser = Browser(base, "")
        self.code = code
        self.rng = rng
        self.url = ""
        self.ending = "not started"
        self.first_pieces: list[float] = []

    def run(self):
        try:
            self._run()
        except Exception as error:  # a participant's failure is a finding, not a crash
            self.ending = f"{type(error).__name__}: {error}"

    def _run(self):
        b = self.browser
        take = f"/take/{self.code}/"
        time.sleep(self.rng.uniform(0.0, PACE["starts"]))
        self._expect(b.request("page", take), 200)
        status, _body, location = b.request("start", take, {"action": "start", "language": "en"})
        self._expect((status, b"", location), 302)
        self.url = urllib.parse.urlparse(location).path
        page = self._page()
        shown = SHOWN_TEXT.search(page).group(1)
        self._pause("consent")
        self._post("consent", {**ELIGIBLE, "consent": "on", "shown_text": shown})
        for block in (1, 2):
            self._chat_block(block)
            self._shs(block)
        self._pause("demographics")
        self._post("demographics", DEMOGRAPHICS)
        self.ending = "complete" if "completion" in self._page().lower() else "no end page"

    def _pause(self, what: str) -> None:
        time.sleep(self.rng.uniform(*PACE[what]))

    def _expect(self, result, status):
        if result[0] != status:
            raise RuntimeError(f"HTTP {result[0]}")
        return result

    def _page(self) -> str:
        _status, body, _location = self._expect(self.browser.request("page", self.url), 200)
        return body.decode()

    def _post(self, step, data, kind="step"):
        self._expect(self.browser.request(kind, self.url, {"step": step, **data}), 302)
        self._page()

    def _chat_block(self, block):
        step = f"block{block}_interaction"
        for number, category in enumerate(("verified", "glatteis"), start=1):
            self._pause("typing")
            stored = self._stream(step, f"Question {number} of block {block}?")
            self._pause("reading")
            turn = USER_TURN.search(stored["turns"]).group(1)
            tag = f"{self.url}chat/turns/{turn}/tag/"
            self._expect(self.browser.request("tag", tag, {"step": step, "category": category}),
                         302)  # fmt: skip
            self._page()
        self._post(step, {"override_reason": ""})

    def _stream(self, step, text) -> dict:
        b = self.browser
        data = {"step": step, "text": text, "csrfmiddlewaretoken": b._csrf()}
        request = urllib.request.Request(
            b.base + self.url + "chat/",
            data=urllib.parse.urlencode(data).encode(),
            headers={"Accept": "application/x-ndjson"},
        )
        started = time.perf_counter()
        first, last = None, {}
        with b.opener.open(request, timeout=60) as response:
            for line in response:
                last = json.loads(line)
                if "delta" in last and first is None:
                    first = time.perf_counter() - started
                    self.first_pieces.append(first)
        b.timings.append(("chat (whole answer)", time.perf_counter() - started, 200))
        if "done" not in last:
            raise RuntimeError(f"answer ended {last}")
        return last["stored"]

    def _shs(self, block):
        step = f"block{block}_shs"
        answers = {f"q{i}": str(self.rng.choice([-2, -1, 0, 1, 2])) for i in range(1, 11)}
        for sequence, (item, value) in enumerate(answers.items(), start=1):
            self._pause("item")
            saved = self.browser.request("autosave", self.url + "answer/", {
                "step": step, "item": item, "value": value, "sequence": str(sequence)})  # fmt: skip
            self._expect(saved, 200)
        self._post(step, answers, kind="submit")


def _round(count: int):
    servers = stack(app="shs_platform.asgi", proxy=PROXY)
    with running_demo_server("--delay", "1") as llm, servers as (base, env):
        code = json.loads(manage_shell(env, SETUP, llm.base_url))
        rng = random.Random(14)
        participants = [Participant(base, code, random.Random(rng.random())) for _ in range(count)]
        workers = web_processes(os.getpid())
        cpu_before = cpu_of(workers)
        elapsed = run_threads([threading.Thread(target=p.run) for p in participants])
        web_cpu = cpu_of(workers) - cpu_before
        sessions, complete, evaluations, scored = map(int, manage_shell(env, COUNT).split())

    print(f"\n{count} remote participants through the whole flow at the {PACE_NAME} pace "
          "(demo server --delay 1)")  # fmt: skip
    endings = [p.ending for p in participants]
    failed = sorted({e for e in endings if e != "complete"})
    done = endings.count("complete")
    print(f"  complete: {done} of {count}; failed: {count - done} {failed[:5] if failed else ''}")
    print(f"  in the database: {sessions} sessions, {complete} complete, {evaluations} "
          f"evaluations stored ({scored} scored); lost: {2 * count - evaluations}")  # fmt: skip
    timings = [t for p in participants for t in p.browser.timings]
    pages = [(kind, t, s) for kind, t, s in timings if kind != "chat (whole answer)"]
    p95s, errors = report("  platform pages", pages, elapsed)
    everything = [t * 1000 for _kind, t, _s in pages]
    if everything:
        p95 = percentile(everything, 0.95)
        print(f"  all platform pages p95 {p95:.1f} ms / {PAGE_TARGET_MS} ms target = "
              f"{p95 / PAGE_TARGET_MS:.2f}")  # fmt: skip
    firsts = [f * 1000 for p in participants for f in p.first_pieces]
    if firsts:
        print(f"  chat: first piece p50 {percentile(firsts, 0.5):.0f} ms, p95 "
              f"{percentile(firsts, 0.95):.0f} ms (the system's own time included)")  # fmt: skip
    print(f"  web worker CPU {web_cpu:.1f} s in {elapsed:.0f} s "
          f"({web_cpu / max(count, 1) * 1000:.0f} ms per participant)")  # fmt: skip


def run():
    global ELIGIBLE
    missing = services_missing() or (PROXY and nginx_missing())
    if missing:
        print(f"skipped: {missing}")
        return
    from scoring.instruments.eligibility import ELIGIBILITY

    ELIGIBLE = {c.key: "1" if c.eligible_answer else "0" for c in ELIGIBILITY}
    os.environ["LLM_ALLOW_HTTP_LOOPBACK"] = "1"
    # Everyone comes from 127.0.0.1 here; a panel's participants come from theirs.
    os.environ["REMOTE_STARTS_PER_WINDOW"] = str(max(COUNTS) * 2)
    for count in COUNTS:
        _round(count)
