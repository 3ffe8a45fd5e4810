"""Settings, health check, seed command and languages of the platform itself."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.urls import reverse

from shs_platform.environment import database_from_url
from simulation.management.commands.seed_demo import DEMO_PARTICIPANTS
from surveys.models import Evaluation, LLMSystem, Study, StudyMembership, StudySession, User
from surveys.steps import Step

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION_ENV = {
    "DEBUG": "0",
    "SECRET_KEY": "x" * 20 + "-a-long-random-production-secret-key-for-tests-only",
    "ALLOWED_HOSTS": "shs.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://shs.example.org",
}


def _manage(*args, env=None):
    # Only what a deployment would have: no debug or test-only switches.
    unset = ("DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_database_url_selects_postgres_through_psycopg():
    config = database_from_url("postgres://shs:s%40cret@db.internal:5433/shs?sslmode=require")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("shs", "shs", "s@cret")
    assert (config["HOST"], config["PORT"]) == ("db.internal", "5433")
    assert config["OPTIONS"]["sslmode"] == "require"
    # A pool per process with prepared statements; no persistent connections
    # beside it (Django refuses both at once).
    assert config["OPTIONS"]["pool"] == {"min_size": 1, "max_size": 4}
    assert config["OPTIONS"]["server_side_binding"] is True
    assert config["CONN_MAX_AGE"] == 0


def test_the_pool_and_prepared_statements_can_be_turned_off(monkeypatch):
    # For an external pooler (PgBouncer in transaction mode).
    monkeypatch.setenv("DB_POOL", "0")
    monkeypatch.setenv("DB_PREPARED", "0")
    config = database_from_url("postgres://shs@db.internal/shs")
    assert config["OPTIONS"] == {}
    assert config["CONN_MAX_AGE"] == 60


def test_unknown_database_scheme_is_refused():
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured):
        database_from_url("mysql://root@localhost/shs")


def test_secret_key_is_required_when_debug_is_off():
    result = _manage("check", env={"DEBUG": "0", "ALLOWED_HOSTS": "x"})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_deploy_check_is_clean_with_production_env():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_security_headers(client, db):
    response = client.get(reverse("account_login"))
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert "default-src 'self'" in response["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert response["X-Content-Type-Options"] == "nosniff"


def test_healthz_reports_database_and_broker(client, db):
    response = client.get(reverse("healthz"))
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["broker"]["ok"] is True


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_healthz_reports_an_unreachable_broker(client, db):
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json()["checks"]["broker"]["ok"] is False


def test_login_page_is_served(client, db):
    response = client.get(reverse("account_login"))
    assert response.status_code == 200
    assert b'name="login"' in response.content


@pytest.mark.parametrize(
    "language,text", [("de", "Anmelden"), ("fr", "Connexion"), ("en", "Log in")]
)
def test_ui_speaks_three_languages(client, db, language, text):
    client.post(reverse("set_language"), {"language": language, "next": "/"})
    response = client.get("/")
    assert response["Content-Language"] == language
    assert text in response.content.decode()


@override_settings(DEBUG=True)
def test_seed_demo_creates_the_paper_systems_once(db, capsys, django_capture_on_commit_callbacks):
    # The seed's scoring runs on commit; the test's transaction never commits.
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo")

    study = Study.objects.get(slug="shs-demo")
    # The paper's five; the connected demo model is tests/surveys/test_chat_demo.py's.
    systems = LLMSystem.objects.filter(study=study, is_demo=False)
    assert sorted(systems.values_list("name", flat=True)) == [
        "ChatGPT",
        "Claude",
        "DeepSeek",
        "Gemini",
        "Mistral",
    ]
    assert systems.get(name="Claude").model_version == "Claude 3 Sonnet"
    assert study.status == Study.Status.ACTIVE
    assert sorted(study.languages) == ["de", "en", "fr"]
    assert User.objects.count() == 2
    assert StudyMembership.objects.filter(study=study).count() == 2
    assert study.consent_texts.count() == 3
    output = capsys.readouterr().out
    assert "coordinator@example.org / demo-coordinator-pass" in output
    assert "nothing changed" in output
    assert User.objects.get(email="coordinator@example.org").check_password("demo-coordinator-pass")
    # Simulated participants completed their sessions, once: the monitor, the
    # report and the exports have data on first login.
    sessions = StudySession.objects.filter(study=study)
    assert sessions.count() == DEMO_PARTICIPANTS
    assert set(sessions.values_list("step", flat=True)) == {Step.COMPLETE}
    evaluations = Evaluation.objects.filter(session__study=study)
    assert evaluations.filter(scored_at__isnull=False).count() == 2 * DEMO_PARTICIPANTS
    assert sessions.filter(experimenter__email="experimenter@example.org").count() == 12
    assert f"{DEMO_PARTICIPANTS} simulated participants" in output


@override_settings(DEBUG=False)
def test_seed_demo_refuses_without_debug(db):
    with pytest.raises(CommandError, match="--force"):
        call_command("seed_demo")
    assert not Study.objects.exists()


def test_healthz_is_json_for_load_balancers(client, db):
    assert json.loads(client.get("/healthz").content)["status"] == "ok"


def test_the_cache_fails_open_when_redis_is_down():
    from shs_platform.cache import ResilientRedisCache

    cache = ResilientRedisCache("redis://127.0.0.1:1/0", {"OPTIONS": {"socket_connect_timeout": 1}})

    cache.set("k", "v")
    assert cache.get("k", "fallback") == "fallback"
    assert cache.get_many(["k"]) == {}
    assert cache.add("k", "v") is True  # a lock nobody can hold: rate limits fail open
    assert cache.delete("k") is False
    with pytest.raises(ValueError):
        cache.incr("k")


def test_the_cache_keeps_one_redis_client_per_pool(settings):
    from shs_platform.cache import ResilientRedisCache
    from tests.services import redis_available, require_services

    if not redis_available():
        if require_services():
            pytest.fail("needs Redis")
        pytest.skip("needs REDIS_URL (runs in CI)")
    cache = ResilientRedisCache(settings.REDIS_URL, {"KEY_PREFIX": "client-reuse-test"})

    cache.set("k", "v")
    assert cache.get("k") == "v"
    # Django builds a client per operation; building one costs more CPU than
    # the round trip. Reads and writes each reuse theirs.
    clients = cache._cache
    assert clients.get_client(write=True) is clients.get_client(write=True)
    assert clients.get_client(write=False) is clients.get_client(write=False)
    cache.delete("k")


@pytest.mark.parametrize("language", ["de", "fr"])
def test_every_ui_string_is_translated(language):
    import polib

    catalogue = polib.pofile(str(ROOT / "locale" / language / "LC_MESSAGES" / "django.po"))
    missing = [entry.msgid for entry in catalogue.untranslated_entries()]
    fuzzy = [entry.msgid for entry in catalogue.fuzzy_entries()]
    assert (missing, fuzzy) == ([], [])


def test_make_run_serves_links_and_periodic_tasks_for_its_own_address():
    recipe = subprocess.run(
        ["make", "-n", "run", "HOST=10.1.2.3", "PORT=9011"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    runserver = next(line for line in recipe.splitlines() if "runserver" in line)
    assert "SITE_URL=http://10.1.2.3:9011 " in runserver
    assert "DEMO_SCHEDULER=1 " in runserver
    assert runserver.endswith("runserver 10.1.2.3:9011")
    seed = next(line for line in recipe.splitlines() if "seed_demo" in line)
    assert "SITE_URL=http://10.1.2.3:9011 " in seed
