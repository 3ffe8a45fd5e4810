"""An annotation workbook that inflates far beyond its size (a zip bomb) is
refused in well under a second with a message, and nothing is stored."""

import time

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from criterion.models import Annotation, AnnotationImport
from tests.criterion.annotation_data import HEADER
from tests.scoring.zip_bomb import zip_bomb


def test_an_annotation_zip_bomb_is_refused_at_once(client_for, personas, study_a):
    data = zip_bomb(header=HEADER, rows=[])
    assert len(data) < 1024 * 1024  # within the upload limit
    url = reverse("criterion:annotations", args=[study_a.slug])
    client = client_for("coordinator_a")

    started = time.perf_counter()
    response = client.post(url, {"file": SimpleUploadedFile("round1.xlsx", data)})
    elapsed = time.perf_counter() - started

    assert elapsed < 1, f"took {elapsed:.1f} s"
    assert response.status_code == 400
    page = response.content.decode()
    assert "round1.xlsx is compressed" in page and "refused unread" in page
    assert not Annotation.objects.exists() and not AnnotationImport.objects.exists()


def test_a_file_that_only_looks_like_a_zip_is_refused(client_for, personas, study_a):
    url = reverse("criterion:annotations", args=[study_a.slug])
    data = b"PK\x03\x04" + b"\x00" * 200

    response = client_for("coordinator_a").post(url, {"file": SimpleUploadedFile("a.xlsx", data)})

    assert response.status_code == 400
    assert "not a readable zip file" in response.content.decode()
