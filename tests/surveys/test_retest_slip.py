"""The retest link for a lab participant (docs/design/validation.md §14.2): the
hand-back page says first that the participant code is enough; the slip
carries the link and its QR code, drawn on the server, and nothing else that
identifies the participant; the retest page says how long ago the session was
in words, in the participant's language."""

import re
from datetime import timedelta

import numpy as np
import pytest
import segno
import zxingcpp
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from PIL import Image

from surveys.models import Retest, Study
from surveys.steps import Step
from tests.surveys.remote import RemoteRun
from tests.surveys.retests import link_on, make_due, with_retest
from tests.surveys.runner import SessionRun

BY_CODE = {
    "en": "To come back, your participant code is enough: bring it to the lab, nothing else.",
    "de": "Um wiederzukommen, genügt Ihr Teilnehmendencode: Bringen Sie ihn ins Labor mit, "
    "sonst nichts.",
    "fr": "Pour revenir, votre code de participation suffit : apportez-le au laboratoire, "
    "rien d’autre.",
}


@pytest.fixture
def retest_study(study_a):
    return with_retest(study_a, days=14)


def _at_handback(client, study, language="en") -> SessionRun:
    run = SessionRun(client, study, language=language)
    run.advance_to(Step.FEEDBACK)
    return run


def _qr_modules(svg: str, border: int = 4) -> np.ndarray:
    """The dark modules an inline SVG of segno draws, read from its dark path
    (after the white background's): "M x y" starts a row of lines, "h n" draws
    n modules, "m dx dy" moves. The quiet zone of `border` modules is cut off."""
    size = int(re.search(r'width="(\d+)"', svg).group(1))
    scale = int(re.search(r"scale\((\d+)\)", svg).group(1))
    path = re.search(r'stroke="#000" d="([^"]+)"', svg).group(1)
    side = size // scale
    modules = np.zeros((side, side), dtype=bool)
    x = y = 0.0
    for command, first, second in re.findall(r"([Mmh])(-?[\d.]+)(?: (-?[\d.]+))?", path):
        if command == "M":
            x, y = float(first), float(second)
        elif command == "m":
            x, y = x + float(first), y + float(second)
        else:
            modules[int(y), int(x) : int(x) + int(first)] = True
            x += int(first)
    return modules[border:-border, border:-border]


def _decode(modules: np.ndarray) -> list[str]:
    """What a reader makes of the modules, drawn black on white, 8 px each, with
    the quiet zone of four modules a reader needs."""
    framed = np.pad(modules, 4, constant_values=False)
    pixels = np.where(framed, 0, 255).astype(np.uint8).repeat(8, axis=0).repeat(8, axis=1)
    return [result.text for result in zxingcpp.read_barcodes(Image.fromarray(pixels))]


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_the_hand_back_page_says_first_that_the_code_is_enough(retest_study, client_for, language):
    run = _at_handback(client_for("experimenter_a"), retest_study, language)
    page = run.get()
    content = page.content.decode()
    path, token = link_on(page)
    assert BY_CODE[language] in content
    assert content.index(BY_CODE[language]) < content.index(path)
    assert reverse("surveys:retest_slip", args=[token]) in content


def test_a_remote_participant_is_not_told_to_come_to_the_lab(remote_study):
    Study.objects.filter(pk=remote_study.pk).update(retest_after_days=7)
    run = RemoteRun(remote_study)
    run.complete()
    content = run.get().content.decode()
    link_on(run.get())
    assert BY_CODE["en"] not in content


def test_the_slip_carries_the_link_and_its_qr_code_and_nothing_of_the_participant(
    retest_study, client_for
):
    # Given the link a lab participant was given
    run = _at_handback(client_for("experimenter_a"), retest_study, "de")
    path, token = link_on(run.get())
    session = run.session

    # When the slip is opened from anywhere by that link
    slip = Client().get(reverse("surveys:retest_slip", args=[token]))

    # Then it is in the participant's language, with the link
    assert slip.status_code == 200 and slip["Content-Language"] == "de"
    content = slip.content.decode()
    link = f"http://testserver{path}"
    assert f'<code class="retest-link">{link}</code>' in content
    assert "Ihr Zettel für die zweite Bewertung" in content
    # And the QR code segno draws of exactly that link, which reads back as the link
    svg = re.search(r'<svg[^>]*class="retest-qr".*?</svg>', content, re.S).group(0)
    expected = segno.make(link, error="m", micro=False)
    assert _qr_modules(svg).tolist() == [[bool(v) for v in row] for row in expected.matrix]
    assert _decode(_qr_modules(svg)) == [link]
    # And nothing identifies the participant beyond the link itself
    assert session.participant.code not in content
    assert session.token not in content
    assert session.experimenter.email not in content
    assert "/sessions/" not in content and "/studies/" not in content


def test_the_qr_code_of_another_link_does_not_read_as_this_one():
    # The reading above is not a formality: a code of another link reads as that link.
    other = segno.make("http://testserver/retest/another-token/", error="m", micro=False)
    modules = np.array([[bool(v) for v in row] for row in other.matrix])
    assert _decode(modules) == ["http://testserver/retest/another-token/"]


def test_an_unknown_or_erased_retest_has_no_slip(retest_study, client_for):
    run = _at_handback(client_for("experimenter_a"), retest_study)
    _path, token = link_on(run.get())
    assert Client().get(reverse("surveys:retest_slip", args=["x" * 32])).status_code == 404
    Retest.objects.all().delete()
    assert Client().get(reverse("surveys:retest_slip", args=[token])).status_code == 404


def test_the_slip_is_only_read(retest_study, client_for):
    run = _at_handback(client_for("experimenter_a"), retest_study)
    _path, token = link_on(run.get())
    assert Client().post(reverse("surveys:retest_slip", args=[token])).status_code == 405


AGO = {
    ("en", 1): "You rated {name} yesterday.",
    ("en", 12): "You rated {name} 12 days ago.",
    ("en", 21): "You rated {name} 3 weeks ago.",
    ("de", 1): "Sie haben {name} gestern bewertet.",
    ("de", 12): "Sie haben {name} vor 12 Tagen bewertet.",
    ("de", 21): "Sie haben {name} vor 3 Wochen bewertet.",
    ("fr", 1): "Vous avez évalué {name} hier.",
    ("fr", 12): "Vous avez évalué {name} il y a 12 jours.",
    ("fr", 21): "Vous avez évalué {name} il y a 3 semaines.",
}


@pytest.mark.parametrize(("language", "days"), list(AGO))
def test_the_retest_page_says_how_long_ago_the_session_was(
    retest_study, client_for, language, days
):
    # Given a session that ended `days` days ago, its retest due
    run = _at_handback(client_for("experimenter_a"), retest_study, language)
    path, _token = link_on(run.get())
    Retest.objects.update(created_at=timezone.now() - timedelta(days=days))
    make_due()

    # When the participant opens the link
    content = Client().get(path).content.decode()

    # Then the page says when, in words of their language
    name = run.session.first_system.name
    assert AGO[(language, days)].format(name=name) in content
    assert "Some days ago" not in content and "einigen Tagen" not in content
