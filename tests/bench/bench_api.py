"""API reads beside the pages that show the same (docs/design/api.md §16):
an export job's status, the study report's figures and the quality flags'
counts, on a study of 10,000 evaluations (5,000 complete sessions) with a
finished CSV export and a finished report.

Each read goes through Django's whole handler and middleware in this
process (the test client) with DEBUG off, the API's with a personal token,
the baseline's with a coordinator's logged-in session: the job page's
status poll (JSON) beside the API's job, the study report page (HTML)
beside the API's report and its quality flags. The five kinds of read take
turns, so that a moment of load on the machine falls on all of them alike.
The per-token limit is raised out of the way (API_CALLS_PER_MINUTE): the
benchmark makes far more calls a minute than a script should.

The data goes into a throwaway database (PostgreSQL when DATABASE_URL
points at it, a temporary SQLite file otherwise; REDIS_URL, when set, is the
cache and session store), dropped afterwards.

Run: .venv/bin/python -m tests.bench api   (BENCH_API_READS, default 200;
BENCH_API_SQL=1 prints each kind's statements)
"""

import os
import secrets
import shutil
import statistics
import tempfile
import time
from pathlib import Path

SESSIONS = 5_000  # two evaluations each: 10,000
READS = int(os.environ.get("BENCH_API_READS", "200"))
WARM_UP = 5
# BENCH_API_SQL=1 also prints the statements of one read of each kind.
SHOW_SQL = os.environ.get("BENCH_API_SQL", "") == "1"
# (label, who reads, which address): the API's reads, each before its baseline.
KINDS = [
    ("API export status", "api", "export"),
    ("page: job status poll (JSON)", "page", "export"),
    ("API report figures", "api", "report"),
    ("page: study report (HTML)", "page", "report"),
    ("API quality flags", "api", "quality"),
]
# Each API read and the page read it is measured against. The quality flags
# are counted over the sample as it is at the call, from every evaluation;
# the report page shows them as of its last report: no page counts them live.
BASELINE = {
    "API export status": "page: job status poll (JSON)",
    "API report figures": "page: study report (HTML)",
    "API quality flags": "page: study report (HTML)",
}


def run() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="shs-bench-api-"))
    _configure(workdir)
    import django

    django.setup()
    _collect_static(workdir)
    from tests.bench.bench_exports import throwaway_database

    try:
        with throwaway_database(workdir):
            started = time.perf_counter()
            study, coordinator = generate()
            seconds = time.perf_counter() - started
            print(f"generated {SESSIONS * 2:,} evaluations in {seconds:.0f} s")
            jobs = finished_jobs(study, coordinator)
            figures = measure(_readers(study, coordinator, jobs))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report(figures)


def _configure(workdir: Path) -> None:
    """Production's settings (DEBUG off), over plain HTTP in this process."""
    os.environ.update(
        {
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "testserver",
            "PLAIN_HTTP": "1",
            "LOG_LEVEL": "WARNING",
            "PRIVATE_STORAGE_ROOT": str(workdir / "private"),
            "API_CALLS_PER_MINUTE": "10000000",
        }
    )


def _collect_static(workdir: Path) -> None:
    """The pages' static files as production serves them (hashed names), in
    a folder of this run's own."""
    from django.conf import settings
    from django.core.management import call_command

    settings.STATIC_ROOT = workdir / "static"
    call_command("collectstatic", "--no-input", verbosity=0)


def generate():
    """The study, its 5,000 complete sessions and its coordinator."""
    from surveys.models import StudyMembership
    from tests.exports.factories import make_experimenters, populate_study
    from tests.personas import make_study, make_user

    study = make_study("bench-api")
    coordinator = make_user("coordinator@bench-api.example")
    StudyMembership.objects.create(
        user=coordinator, study=study, role=StudyMembership.Role.COORDINATOR
    )
    experimenters = make_experimenters(study, 47, tag="bench-api")
    populate_study(study, sessions=SESSIONS, extras=False, experimenters=experimenters)
    return study, coordinator


def finished_jobs(study, coordinator) -> dict:
    """A CSV export and a report, run to their end here, as a worker would."""
    from exports.models import ExportJob
    from exports.runner import export_job_run
    from exports.services import export_job_create

    jobs = {}
    for kind, fmt in (("export", ExportJob.Format.CSV), ("report", ExportJob.Format.REPORT)):
        job = export_job_create(study=study, requested_by=coordinator, fmt=fmt, dispatch=False)
        started = time.perf_counter()
        export_job_run(job_id=job.pk)
        job.refresh_from_db()
        if job.status != ExportJob.Status.SUCCEEDED:
            raise SystemExit(f"the {fmt} job failed: {job.error_message}")
        print(f"{fmt} job finished in {time.perf_counter() - started:.1f} s")
        jobs[kind] = job
    return jobs


def _readers(study, coordinator, jobs) -> dict:
    """(who, which) -> a call that makes the read and answers its response."""
    from datetime import timedelta

    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from api.models import ApiToken
    from api.tokens import api_token_issue

    _token, secret = api_token_issue(
        user=coordinator,
        name="bench",
        access=ApiToken.Access.READ,
        studies=[study],
        expires_at=timezone.now() + timedelta(days=1),
    )
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    page = Client()
    page.force_login(coordinator)
    slug, token = study.slug, jobs["export"].token
    addresses = {
        ("api", "export"): f"/api/v1/studies/{slug}/exports/{token}/",
        ("page", "export"): reverse("exports:job_status", args=[slug, token]),
        ("api", "report"): f"/api/v1/studies/{slug}/report/",
        ("page", "report"): reverse("exports:study_report", args=[slug]),
        ("api", "quality"): f"/api/v1/studies/{slug}/quality/",
    }
    clients = {"api": api, "page": page}
    return {
        key: (lambda client=clients[key[0]], url=url: client.get(url))
        for key, url in addresses.items()
    }


def measure(readers: dict) -> dict:
    """label -> wall and CPU milliseconds of each read, statements, bytes, status."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    figures = {}
    for label, who, which in KINDS:
        read = readers[who, which]
        for _ in range(WARM_UP):
            response = read()
        with CaptureQueriesContext(connection) as queries:
            response = read()
        if SHOW_SQL:
            print(f"\n{label}:", *(q["sql"][:160] for q in queries), sep="\n  ")
        figures[label] = {
            "status": response.status_code,
            "bytes": len(response.content),
            "statements": len(queries),
            "wall": [],
            "cpu": [],
        }
    for _ in range(READS):
        for label, who, which in KINDS:
            wall, cpu, status = _timed(readers[who, which])
            if status != figures[label]["status"]:
                raise SystemExit(f"{label}: answered {status}, first {figures[label]['status']}")
            figures[label]["wall"].append(wall)
            figures[label]["cpu"].append(cpu)
    return figures


def _timed(read) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.thread_time()
    response = read()
    _ = response.content  # a report page is rendered in full before this anyway
    return (
        (time.perf_counter() - wall) * 1000,
        (time.thread_time() - cpu) * 1000,
        response.status_code,
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(figures: dict) -> None:
    print(f"\n{READS} reads of each, taking turns (ms; CPU: this process's thread)")
    print(f"{'read':30} {'status':>6} {'p50':>7} {'p95':>7} {'CPU p50':>8} {'SQL':>4} {'bytes':>9}")
    for label, _who, _which in KINDS:
        f = figures[label]
        print(
            f"{label:30} {f['status']:>6} {percentile(f['wall'], 0.5):7.1f} "
            f"{percentile(f['wall'], 0.95):7.1f} {statistics.median(f['cpu']):8.1f} "
            f"{f['statements']:>4} {f['bytes']:>9,}"
        )
    print()
    for label, baseline in BASELINE.items():
        ours, theirs = figures[label], figures[baseline]
        if ours["status"] != 200:
            print(f"{label}: answered {ours['status']}, no figure")
            continue
        ratio = percentile(ours["wall"], 0.95) / percentile(theirs["wall"], 0.95)
        print(
            f"{label}: p95 {percentile(ours['wall'], 0.95):.1f} ms against "
            f"{percentile(theirs['wall'], 0.95):.1f} ms for the {baseline} (baseline, same run): "
            f"{ratio:.2f}x"
        )
