"""Settings of the web processes the scale test starts (subprocesses).

The platform's production settings unchanged, except the static files: the
image builds their manifest (scripts/build-static), this test does not, so
pages name them unhashed. Nothing here touches state: what the test checks
is that the production settings keep none in the process.
"""

from shs_platform.settings import *  # noqa: F403
from shs_platform.settings import STORAGES

STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
