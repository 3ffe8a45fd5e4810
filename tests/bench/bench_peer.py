"""The platform beside oTree under the same load, in one run.

`make bench BENCH_ARGS=peer` (PEER_ROUNDS, default 5; PEER_PARTICIPANTS,
default 50). The platform runs on the benchmark stack (gunicorn, DEBUG off,
PostgreSQL, a private Redis, a Celery worker); oTree with its production
server on PostgreSQL (tests/bench/peer_otree.py). Each round's load is in
tests/bench/peer_load.py; the platforms' rounds are interleaved (platform,
oTree, platform with autosaves, for each kind of round in turn), so a change
in the machine's load meets both alike; every figure is the median over the
rounds, errors and lost rows are totals. CPU per participant counts the
system's own server processes and their children (gunicorn and the Celery
worker, or oTree's prodserver and its timeout worker; not the other system,
idle beside it), the PostgreSQL backends of its own database and its Redis:
it stays comparable while other work loads the machine, the times and rates
do not. The targets of the issue are
printed with PASS or FAIL; a benchmark does not fail on them.
"""

import json
import os

from tests.bench.bench_protocol import COUNT, SETUP
from tests.bench.peer_load import ROUNDS, TimedBrowser, measure, medians
from tests.bench.peer_otree import OTree, install, server
from tests.bench.procs import private_redis
from tests.bench.stack import manage_shell, services_missing, stack

PARTICIPANTS = int(os.environ.get("PEER_PARTICIPANTS", "50"))
REPEATS = int(os.environ.get("PEER_ROUNDS", "5"))
PACED_P95_MS = 25


class Platform:
    """The platform interface of peer_load: participants at the block 1 SHS."""

    name = "platform"

    def __init__(self, base: str, env: dict, redis_pid: int | None):
        self.base, self.env, self.redis_pid = base, env, redis_pid
        self.database = env["DATABASE_URL"].rsplit("/", 1)[1]
        self.made = 0
        self.processes = [int(pid) for pid in env["BENCH_SERVER_PIDS"].split(",")]

    def participants(self, n: int) -> list[dict]:
        self.made += 1
        label = f"peer{self.made}"
        return json.loads(manage_shell(self.env, SETUP, str(n), "10", label))

    def browser(self, p):
        return TimedBrowser(self.base, p["cookie"])

    def page(self, browser, p):
        browser.request("page", f"/sessions/{p['token']}/")

    def autosave(self, browser, p, sequence, item, value):
        data = {"step": "block1_shs", "item": item, "value": value, "sequence": str(sequence)}
        browser.request("autosave", f"/sessions/{p['token']}/answer/", data)

    def submit(self, browser, p, answers):
        browser.request("submit", f"/sessions/{p['token']}/", {"step": "block1_shs", **answers})

    def next_page(self, browser, p):
        browser.request("next", f"/sessions/{p['token']}/")

    def stored(self) -> int:
        return int(manage_shell(self.env, COUNT).split()[0])


def _series(runs) -> list[dict]:
    """Every kind of round REPEATS times for each (platform, autosaves) in `runs`,
    interleaved round by round, so that a change in the machine's load meets
    every platform alike; medians per platform and kind."""
    for platform, autosaves in runs:  # warm-up, not counted
        measure(platform, "sustained", 5, seed=0, autosaves=autosaves)
    results = [{kind: [] for kind in ROUNDS} for _run in runs]
    for repeat in range(REPEATS):
        for kind in ROUNDS:
            for (platform, autosaves), result in zip(runs, results, strict=True):
                figures = measure(
                    platform, kind, PARTICIPANTS, seed=repeat + 1, autosaves=autosaves
                )
                print(
                    f"  {platform.name}{' +autosaves' if autosaves else ''} {kind} "
                    f"#{repeat + 1}: {figures['cpu ms per participant']:.1f} ms "
                    f"CPU/participant, submit p95 {figures['submit p95 ms']:.0f} ms, "
                    f"errors {figures['errors']}, lost {figures['lost']}",
                    flush=True,
                )
                result[kind].append(figures)
    return [{kind: medians(rounds) for kind, rounds in result.items()} for result in results]


ROWS = [
    ("cpu ms per participant", "{:.1f}"),
    ("server cpu ms", "{:.1f}"),
    ("postgres cpu ms", "{:.1f}"),
    ("redis cpu ms", "{:.1f}"),
    ("load generator cpu ms", "{:.1f}"),
    ("submissions per second", "{:.0f}"),
    ("participants per second", "{:.1f}"),
    ("submit p50 ms", "{:.0f}"),
    ("submit p95 ms", "{:.0f}"),
    ("submit max ms", "{:.0f}"),
    ("errors", "{:d}"),
    ("stored", "{:d}"),
    ("lost", "{:d}"),
]


def _print(otree, platform, autosaves) -> None:
    for kind in ROUNDS:
        print(f"\n{kind} (medians of {REPEATS} rounds of {PARTICIPANTS} participants)")
        print(f"  {'':26s}{'oTree':>10s}{'platform':>10s}{'ratio':>8s}{'+autosaves':>12s}")
        for key, form in ROWS:
            a, b, c = otree[kind][key], platform[kind][key], autosaves[kind][key]
            ratio = f"{b / a:.2f}" if a else "-"
            print(f"  {key:26s}{form.format(a):>10s}{form.format(b):>10s}{ratio:>8s}"
                  f"{form.format(c):>12s}")  # fmt: skip


def _targets(otree, platform, autosaves) -> list[tuple[str, bool, str]]:
    cpu = "cpu ms per participant"
    worst = max(platform[k][cpu] / otree[k][cpu] for k in ROUNDS)
    worst_on = max(autosaves[k][cpu] / otree[k][cpu] for k in ROUNDS)
    rate = platform["burst"]["submissions per second"] / otree["burst"]["submissions per second"]
    p95, p95_otree = platform["burst"]["submit p95 ms"], otree["burst"]["submit p95 ms"]
    paced = platform["paced"]["submit p95 ms"]
    faults = sum(r[k][f] for r in (platform, autosaves) for k in ROUNDS for f in ("errors", "lost"))
    return [
        ("CPU per participant <= 0.5x oTree's (autosaves off, every kind)", worst <= 0.5,
         f"worst ratio {worst:.2f}"),
        ("CPU per participant <= 1.5x oTree's (ten autosaves on)", worst_on <= 1.5,
         f"worst ratio {worst_on:.2f}"),
        ("burst submissions per second >= 2x oTree's", rate >= 2, f"ratio {rate:.2f}"),
        ("burst submit p95 < oTree's", p95 < p95_otree, f"{p95:.0f} ms vs {p95_otree:.0f} ms"),
        (f"paced submit p95 < {PACED_P95_MS} ms", paced < PACED_P95_MS, f"{paced:.0f} ms"),
        ("zero errors, zero lost (platform, both)", faults == 0, f"{faults} errors + lost"),
    ]  # fmt: skip


def run():
    missing = services_missing()
    if missing:
        print(f"skipped: {missing}")
        return
    import tests.bench.stack as stack_module

    version = install()
    print(f"oTree {version} (throwaway virtualenv var/bench/otree-venv), "
          f"{PARTICIPANTS} participants, {REPEATS} rounds of each kind", flush=True)  # fmt: skip
    with private_redis() as (redis_url, redis_pid):
        stack_module.REDIS = redis_url or stack_module.REDIS
        with stack() as (base, env), server() as (otree_base, otree_pid):
            platform = Platform(base, env, redis_pid)
            ours, theirs, ours_autosaving = _series(
                [(platform, False), (OTree(otree_base, otree_pid), False), (platform, True)]
            )
    _print(theirs, ours, ours_autosaving)
    print("\ntargets (figures on a loaded machine are provisional):")
    for label, held, detail in _targets(theirs, ours, ours_autosaving):
        print(f"  {'PASS' if held else 'FAIL'}  {label}: {detail}")
