"""Run as a separate process (see test_services.py): an SHS submission through
the real view, with whatever broker REDIS_URL names (possibly a stopped one).

Usage: python -m tests.faults.submit_shs SESSION_TOKEN
Prints: status-code elapsed-seconds
"""

import os
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shs_platform.settings")

import django  # noqa: E402

django.setup()

from django.test import Client  # noqa: E402

from surveys.models import StudySession  # noqa: E402


def main(token: str) -> None:
    session = StudySession.objects.select_related("experimenter").get(token=token)
    client = Client(HTTP_HOST="localhost")
    client.force_login(session.experimenter)
    answers = {f"q{i}": "1" for i in range(1, 11)}
    started = time.perf_counter()
    response = client.post(f"/sessions/{token}/", {"step": session.step, **answers})
    print(response.status_code, round(time.perf_counter() - started, 2))


if __name__ == "__main__":
    main(sys.argv[1])
