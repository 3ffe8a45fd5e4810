"""Run as a separate process (see test_invitation_without_broker.py): a
coordinator invites someone through the real view, with whatever broker
REDIS_URL names (possibly one that is down).

Usage: python -m tests.faults.invite STUDY_SLUG COORDINATOR_EMAIL INVITED_EMAIL
Prints: status-code elapsed-seconds
"""

import os
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shs_platform.settings")

import django  # noqa: E402

django.setup()

from django.test import Client  # noqa: E402

from surveys.models import User  # noqa: E402


def main(slug: str, coordinator: str, invited: str) -> None:
    client = Client(HTTP_HOST="localhost")
    client.force_login(User.objects.get(email=coordinator))
    started = time.perf_counter()
    response = client.post(f"/studies/{slug}/members/", {"email": invited, "role": "experimenter"})
    print(response.status_code, round(time.perf_counter() - started, 2))


if __name__ == "__main__":
    main(*sys.argv[1:4])
