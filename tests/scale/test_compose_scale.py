"""`docker compose up --scale web=N` (docs/design/deployment.md §12.1), read from the
compose file and the proxy's configuration: this machine has no container
engine to run them."""

import re

import yaml

from tests.security.production import ROOT, compose_service


def _services() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def _proxy_config() -> str:
    mounts = [volume.split(":") for volume in compose_service("proxy")["volumes"]]
    config = next(host for host, target, *_ in mounts if target == "/etc/nginx/nginx.conf")
    # Comments say why; the checks below read the directives only.
    lines = (ROOT / config).read_text().splitlines()
    return "\n".join(line.split("#", 1)[0] for line in lines)


def test_web_publishes_no_fixed_host_port_so_it_can_be_scaled():
    web = compose_service("web")
    # A fixed host port (or a fixed container name) lets only one replica start.
    assert "ports" not in web and "container_name" not in web
    assert [str(port) for port in web["expose"]] == ["8000"]
    assert "--bind 0.0.0.0:8000" in web["command"]


def test_the_proxy_publishes_the_port_and_reaches_web_by_service_name():
    proxy = compose_service("proxy")
    assert proxy["ports"] == ["${PROXY_BIND:-127.0.0.1}:${WEB_PORT:-8000}:8080"]
    assert proxy["depends_on"]["web"] == {"condition": "service_healthy"}
    config = _proxy_config()
    assert re.search(r"listen 8080;", config)
    # Every replica under the one name, looked up again through Docker's DNS
    # so that replicas added later are balanced to as well.
    assert re.search(r"upstream web \{[^}]*server web:8000 resolve;", config)
    assert re.search(r"resolver 127\.0\.0\.11 valid=\d+s", config)
    assert "proxy_pass http://web;" in config


def test_the_proxy_writes_the_forwarded_headers_the_apps_settings_expect():
    """X-Forwarded-For and -Proto as the proxy decided them (the trusted proxy's,
    or what it saw: tests/security/test_proxies.py runs it), keeps the Host the
    app checks, and never sends a POST to a second replica."""
    config = _proxy_config()
    assert "proxy_set_header X-Forwarded-For $forwarded_for;" in config
    assert "proxy_set_header X-Forwarded-Proto $forwarded_proto;" in config
    assert "proxy_set_header Host $http_host;" in config
    assert "non_idempotent" not in config
    # A streamed chat answer may pause LLM_IDLE_TIMEOUT_SECONDS (60 by default).
    assert int(re.search(r"proxy_read_timeout (\d+)s;", config)[1]) > 60


def test_the_migrations_run_once_not_in_every_replica():
    services = _services()
    assert "migrate" not in services["web"]["command"]
    assert services["migrate"]["command"] == "python manage.py migrate --no-input"
    assert services["migrate"]["restart"] == "no"
    assert services["web"]["depends_on"]["migrate"] == {
        "condition": "service_completed_successfully"
    }


def test_every_replica_and_the_worker_share_the_export_files():
    services = _services()
    for name in ("web", "worker", "beat"):
        assert "private-files:/data/private" in services[name]["volumes"], name
        assert services[name]["environment"]["PRIVATE_STORAGE_ROOT"] == "/data/private"
        assert services[name]["environment"]["REDIS_URL"].startswith("redis://redis:")


def test_the_chats_answers_go_to_uvicorn_workers_and_the_rest_to_sync_workers():
    services = _services()
    assert services["web"]["environment"]["WEB_WORKER_CLASS"] == "${WEB_WORKER_CLASS:-sync}"
    assert services["chat"]["environment"]["WEB_WORKER_CLASS"] == "uvicorn_worker.UvicornWorker"
    assert services["chat"]["command"] == services["web"]["command"]
    assert "ports" not in services["chat"]
    config = _proxy_config()
    assert re.search(r"upstream chat \{[^}]*server chat:8000 resolve;", config)


def test_the_proxy_sends_exactly_the_async_views_to_the_chat_service(db):
    """The proxy's chat pattern against every URL of the app: an async view must
    reach the uvicorn workers (a sync worker would be held for the whole
    answer), a sync view the sync workers."""
    from asgiref.sync import iscoroutinefunction

    config = _proxy_config()
    chat_pattern = re.search(r"location ~ (\S+) \{\s*proxy_pass http://chat;", config)[1]
    routed = re.compile(chat_pattern)
    checked = {True: 0, False: 0}
    for path, view in _sample_paths():
        is_async = iscoroutinefunction(view)
        assert bool(routed.match(path)) == is_async, path
        checked[is_async] += 1
    assert checked[True] == 2 and checked[False] > 50


def _sample_paths(resolver=None, prefix=""):
    """A path for every URL pattern of the app, with sample values for its parts."""
    from django.urls import URLPattern, get_resolver

    samples = {"slug": "a-token", "str": "abc", "int": "12", "path": "a/b", "uuid": "0" * 32}
    for pattern in (resolver or get_resolver()).url_patterns:
        route = prefix + str(pattern.pattern)
        if "^" in route or "(?P" in route:
            continue  # the admin's and allauth's regular-expression routes: no chat there
        path = "/" + re.sub(r"<(?:(\w+):)?\w+>", lambda m: samples[m[1] or "str"], route)
        if isinstance(pattern, URLPattern):
            yield path, pattern.callback
        else:
            yield from _sample_paths(pattern, route)


def test_the_proxy_drops_an_idle_chat_connection_before_the_worker_does():
    """A POST sent on a connection the worker is closing fails (502) and is not
    sent again: the proxy must give up idle connections first."""
    from shs_platform import gunicorn_conf

    config = _proxy_config()
    chat = re.search(r"upstream chat \{([^}]*)\}", config)[1]
    proxy_idle = int(re.search(r"keepalive_timeout (\d+)s;", chat)[1])
    assert proxy_idle < gunicorn_conf.keepalive
