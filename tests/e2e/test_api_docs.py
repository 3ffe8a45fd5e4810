"""The API's documentation in the browser (docs/design/api.md §16.4): Swagger UI
from the platform's own files renders every endpoint under the site's
Content-Security-Policy, for a signed-in member of a study."""

import pytest

from tests.e2e.conftest import log_in
from tests.personas import PASSWORD

pytestmark = pytest.mark.e2e


def test_a_member_browses_the_api_documentation(new_page, personas):
    page = new_page()
    refused = []
    page.on("console", lambda message: message.type == "error" and refused.append(message.text))
    log_in(page, personas["experimenter_a"].email, PASSWORD)

    page.goto("/api/v1/docs/")
    page.locator(".opblock").first.wait_for()

    # Swagger UI breaks long paths with zero-width spaces.
    paths = {
        text.replace("\u200b", "")
        for text in page.locator(".opblock-summary-path").all_inner_texts()
    }
    assert "/api/v1/studies/{slug}/exports/" in paths
    assert "/api/v1/studies/{slug}/external-blocks/{id}/transcript/" in paths
    # The token is the one way in, offered by the page's Authorize button.
    assert page.locator("button.authorize").count() == 1
    assert refused == [], "\n".join(refused)
