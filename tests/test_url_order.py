"""The URL patterns are ordered for speed (a participant's requests resolve in
the first patterns), so order must never decide which view a path
reaches: every route, filled in with sample values, resolves to itself."""

import re

from django.urls import URLPattern, URLResolver, get_resolver, resolve

# A value each path converter accepts; the same for every route.
SAMPLES = {"slug": "sample-7", "int": "7", "str": "sample", "path": "a/b"}
_CONVERTER = re.compile(r"<(?:(?P<kind>\w+):)?(?P<name>\w+)>")


def _routes(resolver, prefix=""):
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern, route)
        elif isinstance(pattern, URLPattern):
            yield route, pattern


def _sample_path(route: str) -> str | None:
    """The route with each converter filled in; None for a regex route."""
    if route.startswith("^") or "(?P" in route:
        return None
    filled = _CONVERTER.sub(lambda m: SAMPLES.get(m["kind"] or "str") or "", route)
    return "/" + filled


def test_every_route_resolves_to_its_own_view():
    checked = 0
    for route, pattern in _routes(get_resolver()):
        path = _sample_path(route)
        if path is None or any(m["kind"] == "uuid" for m in _CONVERTER.finditer(route)):
            continue
        match = resolve(path)
        # The same address placed ahead on purpose (allauth's e-mail page) is
        # an override, not a pattern of another shape catching the path.
        reached = match.func == pattern.callback or match.route == route
        assert reached, f"{path} ({route}) reached {match.route}"
        checked += 1
    assert checked > 150  # the walk reached the apps' routes, not only a few


def test_the_participants_routes_come_first():
    first = [str(p.pattern) for p in get_resolver().url_patterns[:3]]
    assert first[2] == "" and get_resolver().url_patterns[2].urlconf_name.__name__ == "surveys.urls"
    session = [str(p.pattern) for p in get_resolver().url_patterns[2].url_patterns[:6]]
    assert "sessions/<slug:token>/" in session and "sessions/<slug:token>/answer/" in session
