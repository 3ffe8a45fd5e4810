"""The site's icon: browsers ask for /favicon.ico on every page whatever the page
links, so it is served at the root in development (runserver) and under the
production server alike, and every page links its hashed copy
(docs/design/deployment.md §12.1)."""

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client, override_settings

ICO_HEADER = b"\x00\x00\x01\x00"  # reserved 0, type 1 (icon)


def _body(response) -> bytes:
    return b"".join(response.streaming_content)


@pytest.mark.parametrize("debug", [False, True], ids=["production", "runserver"])
def test_the_root_serves_the_icon(debug):
    # WhiteNoise reads DEBUG when a client's handler first builds the middleware:
    # with DEBUG on it looks the file up on each request, as under runserver.
    with override_settings(DEBUG=debug):
        response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    assert _body(response)[:4] == ICO_HEADER


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/calculator/"])
def test_pages_link_the_icon_as_a_static_file(path):
    page = Client().get(path).content.decode()
    link = re.search(r'<link rel="icon" href="/static/([^"]+)"', page)
    assert link, "the page links no icon"
    linked = finders.find(link[1])
    assert linked, link[1]
    with open(linked, "rb") as icon:
        assert icon.read()[:4] == ICO_HEADER
