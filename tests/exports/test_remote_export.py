"""A remote session has no experimenter (docs/design/remote.md §11.1): the export puts
it under no administrator, and counts no administrator for it."""

import pytest

from exports.dataset import build_dataset
from tests.surveys.remote import RemoteRun, make_remote_study


@pytest.fixture
def remote_study(db, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    return make_remote_study(llm_server)


def test_a_remote_session_is_under_no_administrator(remote_study):
    RemoteRun(remote_study).complete()

    dataset = build_dataset(study=remote_study, include_pilot=False, include_free_text=False)

    [key] = dataset.sessions.values()
    assert key.administrator == ""
    assert dataset.administrators == 0
