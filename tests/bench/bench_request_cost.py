"""Where a participant request spends its CPU: the SHS page, one
answer autosave, the SHS submission and the next page.

The requests go through Django's full handler and middleware in this process
(the test client, CSRF enforced), with DEBUG off, against the stack's
PostgreSQL database and a private Redis (sessions, cache and the Celery
broker); the stack's Celery worker scores the submissions. Each measure is
taken in a pass of its own over fresh participants, so that one does not
distort the other:

1. queries and row locks (`SELECT ... FOR UPDATE`) per request;
2. a cProfile of the app's thread with a CPU-time clock (waiting for
   PostgreSQL or Redis does not count), reported as the share of the
   request's CPU spent inclusive in each part (the parts overlap: the view
   renders the template, the session middleware talks to Redis);
3. CPU milliseconds per request: the requesting thread (`time.thread_time`:
   the CPU meter samples /proc in a thread of its own), the
   database's PostgreSQL backends, Redis and the Celery worker (/proc).

CPU time and shares stay meaningful while the machine is loaded by other
work; wall-clock times do not.
"""

import cProfile
import io
import json
import os
import pstats
import sys
import time
from contextlib import redirect_stdout
from urllib.parse import urlencode

from tests.bench.bench_protocol import SETUP
from tests.bench.procs import CpuMeter, private_redis
from tests.bench.stack import services_missing, stack

GROUP = int(os.environ.get("BENCH_COST_PARTICIPANTS", "20"))
# BENCH_COST_TOP=25 also prints each kind's 25 costliest calls (cumulative CPU).
TOP = int(os.environ.get("BENCH_COST_TOP", "0"))
# BENCH_COST_SQL=1 also prints the statements of each kind's first request.
SHOW_SQL = os.environ.get("BENCH_COST_SQL", "") == "1"
KINDS = ["SHS page", "autosave", "submit", "next page"]

# (label, [(path fragment, function)]): inclusive CPU of these calls. Fragments,
# not whole paths, so that a module split into a package (surveys/protocol/)
# is still found.
PARTS = [
    ("view function", [("surveys/views/", "session_page"),
                       ("surveys/views/", "shs_answer_view")]),
    ("  session + study access check", [("surveys/access.py", "get_session_for_user")]),
    ("  protocol service (answer save, submit)", [("surveys/protocol", "shs_answer_save"),
                                                  ("surveys/protocol", "shs_submit")]),
    ("    of which the session row lock", [("surveys/protocol", "locked_session")]),
    ("  template rendering", [("django/template/backends/django.py", "render")]),
    ("ORM compiling SQL (compiler as_sql)", [("django/db/models/sql/compiler.py", "as_sql")]),
    ("SQL, client side (psycopg + ORM execute)", [("django/db/backends/utils.py", "_execute")]),
    ("session load + save", [("django/contrib/sessions/backends/cached_db.py", "load"),
                             ("django/contrib/sessions/middleware.py", "process_response")]),
    ("authentication (request.user)", [("django/contrib/auth/__init__.py", "get_user")]),
    ("CSRF middleware", [("django/middleware/csrf.py", "process_request"),
                         ("django/middleware/csrf.py", "process_view"),
                         ("django/middleware/csrf.py", "process_response")]),
    ("Redis client (cache, sessions, broker)", [("redis/client.py", "execute_command"),
                                                ("redis/client.py", "execute")]),
    ("Celery task dispatch", [("celery/app/task.py", "apply_async")]),
]  # fmt: skip
TRANSACTION_CONTROL = {"BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE"}
HANDLER = []  # the one request handler of this process, made by _warm_up()
TOTAL = ("django/core/handlers/base.py", "get_response")
ROUND_TRIPS = ("redis/connection.py", "send_packed_command")
DISPATCHES = ("kombu/messaging.py", "publish")


def _django(env):
    os.environ.update(env)
    os.environ["ALLOWED_HOSTS"] = env["ALLOWED_HOSTS"] + ",testserver"
    import django

    django.setup()


def _participants(count: int, label: str) -> list[dict]:
    """The protocol benchmark's setup, run here: participants at the block 1 SHS."""
    saved = sys.argv
    sys.argv = ["x", str(count), "10", label]
    output = io.StringIO()
    try:
        with redirect_stdout(output):
            exec(SETUP, {"__name__": "bench_setup"})  # noqa: S102
    finally:
        sys.argv = saved
    return json.loads(output.getvalue().strip().splitlines()[-1])


def _requests(run: dict, answers: dict, handler):
    """(kind, callable) for one participant, in order; the client carries cookies.
    All clients share one handler, as a server process does: a client of its own
    would load the middleware (WhiteNoise scans the static files) on its first
    request."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.handler = handler
    client.cookies["sessionid"] = run["cookie"]
    url = f"/sessions/{run['token']}/"

    def csrf():
        return client.cookies["csrftoken"].value

    def form_post(path, data):
        # As the browser sends both (static/js/session.js and the form):
        # urlencoded, not the test client's default multipart.
        body = urlencode({**data, "csrfmiddlewaretoken": csrf()})
        return client.post(path, body, content_type="application/x-www-form-urlencoded")

    def autosave(sequence, item, value):
        data = {"step": "block1_shs", "item": item, "value": value, "sequence": str(sequence)}
        return lambda: form_post(url + "answer/", data)

    yield "SHS page", lambda: client.get(url)
    for sequence, (item, value) in enumerate(answers.items(), start=1):
        yield "autosave", autosave(sequence, item, value)
    yield (
        "submit",
        lambda: form_post(url, {"step": "block1_shs", **answers}),
    )
    yield "next page", lambda: client.get(url)


def _by_phase(runs: list[dict]):
    """All participants' SHS pages, then all autosaves, then all submissions..."""
    flows = [
        list(_requests(run, {f"q{i}": str((i + n) % 5 - 2) for i in range(1, 11)}, HANDLER[0]))
        for n, run in enumerate(runs)
    ]
    for kind in KINDS:
        yield kind, [call for flow in flows for k, call in flow if k == kind]


def _check(response, kind):
    if response.status_code not in (200, 302):
        raise SystemExit(f"{kind}: HTTP {response.status_code}")


def count_queries(runs) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    figures = {}
    for kind, calls in _by_phase(runs):
        queries = locks = control = 0
        for call in calls:
            with CaptureQueriesContext(connection) as captured:
                _check(call(), kind)
            sqls = [q["sql"] for q in captured.captured_queries]
            if SHOW_SQL and call is calls[0]:
                print(f"--- {kind}: {len(sqls)} statements\n" + "\n".join(s[:300] for s in sqls))
            control += sum(sql.split(" ", 1)[0] in TRANSACTION_CONTROL for sql in sqls)
            locks += sum("FOR UPDATE" in sql for sql in sqls)
            queries += len(sqls)
        n = len(calls)
        figures[kind] = {"SQL statements": (queries - control) / n,
                         "transaction control (BEGIN, COMMIT, savepoints)": control / n,
                         "row locks (FOR UPDATE)": locks / n}  # fmt: skip
    return figures


def _cumulative(stats, wanted) -> tuple[float, int]:
    seconds, calls = 0.0, 0
    for (filename, _line, function), (_cc, ncalls, _tt, cumtime, _c) in stats.stats.items():
        if any(part in filename and function == name for part, name in wanted):
            seconds, calls = seconds + cumtime, calls + ncalls
    return seconds, calls


def profile_shares(runs) -> tuple[dict, dict]:
    figures, counts = {}, {}
    for kind, calls in _by_phase(runs):
        profile = cProfile.Profile(time.thread_time)
        for call in calls:
            profile.enable()
            response = call()
            profile.disable()
            _check(response, kind)
        stats = pstats.Stats(profile)
        if TOP:
            print(f"--- {kind}: {TOP} costliest calls, CPU seconds over {len(calls)} requests")
            stats.sort_stats(os.environ.get("BENCH_COST_SORT", "cumulative")).print_stats(TOP)
        total, _n = _cumulative(stats, [TOTAL])
        shares = {label: _cumulative(stats, parts)[0] / total * 100 for label, parts in PARTS}
        shares["middleware and handler outside the view"] = 100 - shares["view function"]
        figures[kind] = shares
        counts[kind] = {
            "Redis round trips": _cumulative(stats, [ROUND_TRIPS])[1] / len(calls),
            "Celery messages published": _cumulative(stats, [DISPATCHES])[1] / len(calls),
        }
    return figures, counts


def _app_cpu(calls, kind) -> float:
    """CPU seconds of this thread per request (the CPU meter samples in a thread of its own)."""
    started = time.thread_time()
    for call in calls:
        _check(call(), kind)
    return (time.thread_time() - started) / len(calls)


def cpu_per_request(runs, database: str, redis_pid: int) -> dict:
    meter = CpuMeter(database, redis_pid)
    figures = {}
    for kind, calls in _by_phase(runs):
        meter.start()
        app = _app_cpu(calls, kind)
        time.sleep(1.5)  # the worker scores what the submissions published
        other = meter.stop()
        n = len(calls)
        figures[kind] = {
            "CPU ms: app process": app * 1000,
            "CPU ms: PostgreSQL backends": other["postgres"] / n * 1000,
            "CPU ms: Redis": other["redis"] / n * 1000,
            "CPU ms: Celery worker": other["server"] / n * 1000,
        }
    for kind in KINDS:
        figures[kind]["CPU ms: total"] = sum(figures[kind].values())
    return figures


def _through_the_orm(runs, setting: str) -> dict:
    """A baseline in the same run: the app's CPU with one of the two kept
    exceptions off, so the ORM does that work on each request
    (PREPARED_LOOKUPS: surveys/prepared.py; PROTOCOL_STATEMENTS:
    surveys/protocol/statements.py)."""
    from django.conf import settings

    setattr(settings, setting, False)
    try:
        label = f"CPU ms: app process, {setting}=0 (baseline)"
        return {kind: {label: _app_cpu(calls, kind) * 1000} for kind, calls in _by_phase(runs)}
    finally:
        setattr(settings, setting, True)


def _table(*figure_sets: tuple[dict, str]) -> None:
    """One markdown table; each set of figures has its unit."""
    print("| per request | " + " | ".join(KINDS) + " |")
    print("|---|" + "---|" * len(KINDS))
    for figures, unit in figure_sets:
        for label in figures[KINDS[0]]:
            cells = [figures[kind][label] for kind in KINDS]
            print(f"| {label} | " + " | ".join(f"{c:.1f}{unit}" for c in cells) + " |")


def _warm_up():
    """Imports, templates and first connections, before anything is measured."""
    from django.test.client import ClientHandler

    HANDLER.append(ClientHandler(enforce_csrf_checks=True))
    for _kind, calls in _by_phase(_participants(2, "warm")):
        for call in calls:
            call()


def run():
    missing = services_missing()
    if missing:
        print(f"skipped: {missing}")
        return
    import tests.bench.stack as stack_module

    with private_redis() as (redis_url, redis_pid):
        stack_module.REDIS = redis_url or stack_module.REDIS
        with stack(workers=1) as (_base, env):
            _django(env)
            database = env["DATABASE_URL"].rsplit("/", 1)[1]
            _warm_up()
            queries = count_queries(_participants(GROUP, "queries"))
            shares, counts = profile_shares(_participants(GROUP, "profile"))
            cpu = cpu_per_request(_participants(GROUP, "cpu"), database, redis_pid)
            lookups = _through_the_orm(_participants(GROUP, "orm"), "PREPARED_LOOKUPS")
            writes = _through_the_orm(_participants(GROUP, "sql"), "PROTOCOL_STATEMENTS")
            print(f"{GROUP} participants per pass; shares are of the app process's CPU")
            baselines = ((lookups, ""), (writes, ""))
            _table((queries, ""), (counts, ""), (cpu, ""), *baselines, (shares, " %"))
