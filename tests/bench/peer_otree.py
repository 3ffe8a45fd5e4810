"""oTree for the peer benchmark, never a dependency of the project.

oTree goes into a throwaway virtualenv under var/bench/otree-venv (created on
the first run with `python -m venv` and pip, kept for later runs); the
benchmark writes a minimal oTree project into a temporary folder: one app
with a page of ten five-point questions and a next page. It runs with oTree's
production server (`otree prodserver`: uvicorn, one process) on a database of
its own in the same PostgreSQL as the platform.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from tests.bench.peer_load import TimedBrowser
from tests.bench.procs import wait_until_answering
from tests.bench.stack import POSTGRES, ROOT, _admin, _free_port

VENV = ROOT / "var" / "bench" / "otree-venv"
# The version measured; the figures in docs/benchmarks.md were taken with it.
OTREE = os.environ.get("BENCH_OTREE_REQUIREMENT", "otree==6.0.15")
DATABASE = "shs_bench_otree"

SETTINGS = """
SESSION_CONFIGS = [dict(name="shs", app_sequence=["shs"], num_demo_participants=1)]
SESSION_CONFIG_DEFAULTS = dict(real_world_currency_per_point=1.00, participation_fee=0.00, doc="")
PARTICIPANT_FIELDS = []
SESSION_FIELDS = []
LANGUAGE_CODE = "en"
REAL_WORLD_CURRENCY_CODE = "USD"
USE_POINTS = True
ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "bench-only"
DEMO_PAGE_INTRO_HTML = ""
SECRET_KEY = "bench-only-not-secret"
"""

APP = """
from otree.api import *


class C(BaseConstants):
    NAME_IN_URL = "shs"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 1


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


def item(number):
    return models.IntegerField(label=f"Statement {number}", choices=[-2, -1, 0, 1, 2],
                               widget=widgets.RadioSelectHorizontal)


class Player(BasePlayer):
""" + "".join(f"    q{i} = item({i})\n" for i in range(1, 11)) + """

class Survey(Page):
    form_model = "player"
    form_fields = [f"q{i}" for i in range(1, 11)]


class Next(Page):
    pass


page_sequence = [Survey, Next]
"""  # fmt: skip

SURVEY = "{{ block title }}Statements{{ endblock }}\n{{ block content }}{{ formfields }}{{ next_button }}{{ endblock }}\n"  # noqa: E501
NEXT = "{{ block title }}Thank you{{ endblock }}\n{{ block content }}<p>Next part.</p>{{ next_button }}{{ endblock }}\n"  # noqa: E501


def install() -> str:
    """The oTree virtualenv (created once); returns the installed version."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    probe = [str(python), "-c", "import otree; print(otree.__version__)"]
    found = subprocess.run(probe, capture_output=True, text=True)
    if found.returncode or f"=={found.stdout.strip()}" not in OTREE:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", OTREE, "psycopg2-binary"],
                       check=True)  # fmt: skip
        found = subprocess.run(probe, capture_output=True, text=True, check=True)
    return found.stdout.strip()


def _project(folder: Path) -> None:
    (folder / "shs").mkdir()
    (folder / "settings.py").write_text(SETTINGS)
    (folder / "shs" / "__init__.py").write_text(textwrap.dedent(APP))
    (folder / "shs" / "Survey.html").write_text(SURVEY)
    (folder / "shs" / "Next.html").write_text(NEXT)
    (folder / "_static").mkdir()


@contextmanager
def server():
    """oTree's production server on a fresh database; yields its base URL and pid."""
    folder = Path(tempfile.mkdtemp(prefix="shs-bench-otree-"))
    _project(folder)
    _admin(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    _admin(f"CREATE DATABASE {DATABASE}")
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": f"{POSTGRES}/{DATABASE}", "OTREE_PRODUCTION": "1",
           "PATH": f"{VENV / 'bin'}:{os.environ['PATH']}"}  # fmt: skip
    for name in ("OTREE_AUTH_LEVEL", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    process = subprocess.Popen(
        [str(VENV / "bin" / "otree"), "prodserver", f"127.0.0.1:{port}"],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(base + "/api/otree_version")
        yield base, process.pid
    finally:
        # Its own group: prodserver starts a second process (its timeout worker).
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        time.sleep(1)
        _admin(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        shutil.rmtree(folder, ignore_errors=True)


def _api(base: str, path: str, payload: dict) -> dict:
    request = urllib.request.Request(
        base + path, data=json.dumps(payload).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


class OTree:
    """The platform interface of peer_load for oTree."""

    database = DATABASE
    redis_pid = None
    name = "oTree"

    def __init__(self, base: str, pid: int):
        self.base = base
        self.processes = [pid]  # prodserver; its timeout worker is its child

    def participants(self, n: int) -> list[str]:
        """A session of n participants, each started (the start link answers with
        a redirect to the first page): the page URLs."""
        code = _api(self.base, "/api/sessions", {"session_config_name": "shs",
                                                 "num_participants": n})["code"]  # fmt: skip
        people = _api(self.base, f"/api/get_session/{code}", {})["participants"]
        pages = []
        for person in people:
            browser = TimedBrowser(self.base, csrf=False)
            _s, _b, location = browser.request("start", f"/InitializeParticipant/{person['code']}")
            pages.append({"page": location})
        return pages

    def browser(self, p):
        return TimedBrowser(self.base, csrf=False)

    def page(self, browser, p):
        browser.request("page", p["page"])

    def autosave(self, browser, p, sequence, item, value):
        raise NotImplementedError("oTree has no autosave of single answers")

    def submit(self, browser, p, answers):
        _status, _body, p["next"] = browser.request("submit", p["page"], answers)

    def next_page(self, browser, p):
        browser.request("next", p.get("next") or p["page"])

    def stored(self) -> int:
        import psycopg

        with psycopg.connect(f"{POSTGRES}/{DATABASE}") as connection:
            (count,) = connection.execute(
                "SELECT count(*) FROM shs_player WHERE q10 IS NOT NULL"
            ).fetchone()
        return count
