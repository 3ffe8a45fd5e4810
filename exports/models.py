"""Export and report jobs: one row per request, updated by the Celery task,
with an audit event for every change of state (saleor's export model)."""

import secrets
from pathlib import Path

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from surveys.models import Study


def new_job_token() -> str:
    # 24 random bytes = 192 bits: job and download URLs cannot be guessed or
    # enumerated, on top of the coordinator check every view makes.
    return secrets.token_urlsafe(24)


class ExportJob(models.Model):
    class Format(models.TextChoices):
        CSV = "csv", _("CSV (one row per evaluation)")
        CSV_TABLES = "csv-tables", _("CSV, every table (ZIP: one CSV per table, with codebook)")
        XLSX = "xlsx", _("Excel workbook with codebook (XLSX)")
        JSON = "json", _("JSON")
        JSONL = "jsonl", _("Transcripts for annotation tools (JSONL, one line per transcript)")
        SAV = "sav", _("SPSS (.sav)")
        SAV_TABLES = "sav-tables", _("SPSS, every table (ZIP: one .sav per table)")
        REPORT = "report-html", _("Study report (HTML)")
        REPLICATION = (
            "replication",
            _(
                "Replication package (ZIP: data, pre-registration, report and an R script that "
                "recomputes the report)"
            ),
        )

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Ready")
        FAILED = "failed", _("Failed")
        EXPIRED = "expired", _("Expired (file deleted)")

    # Looked up with the stored format, a plain str.
    FILE_EXTENSIONS: dict[str, str] = {
        Format.CSV: "csv",
        Format.CSV_TABLES: "zip",
        Format.XLSX: "xlsx",
        Format.JSON: "json",
        Format.JSONL: "jsonl",
        Format.SAV: "sav",
        Format.SAV_TABLES: "zip",
        Format.REPORT: "html",
        Format.REPLICATION: "zip",
    }
    # The two ZIP formats share an extension: the name says which tables are inside,
    # so that a CSV and an SPSS download of the same day do not overwrite each other.
    FILE_NAME_SUFFIXES: dict[str, str] = {
        Format.CSV_TABLES: "-csv-tables",
        Format.SAV_TABLES: "-spss-tables",
        Format.REPLICATION: "-replication",
    }
    CONTENT_TYPES: dict[str, str] = {
        Format.CSV: "text/csv; charset=utf-8",
        Format.CSV_TABLES: "application/zip",
        Format.XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        Format.JSON: "application/json",
        Format.JSONL: "application/jsonl",
        Format.SAV: "application/x-spss-sav",
        Format.SAV_TABLES: "application/zip",
        Format.REPORT: "text/html; charset=utf-8",
        Format.REPLICATION: "application/zip",
    }
    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.EXPIRED)
    # Formats that are free text as a whole: made only when free text is asked for.
    FREE_TEXT_FORMATS = (Format.JSONL,)
    # Always over the non-pilot sample, as the report's figures are.
    NON_PILOT_FORMATS = (Format.REPORT, Format.REPLICATION)

    token = models.CharField(max_length=64, unique=True, default=new_job_token, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="export_jobs")
    # Empty for exports started from the command line.
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="export_jobs",
    )
    format = models.CharField(_("format"), max_length=12, choices=Format.choices)
    include_pilot = models.BooleanField(_("include pilot sessions"), default=False)
    include_free_text = models.BooleanField(_("include free text"), default=False)
    # The language of the page the job was requested from: a report file is
    # written in it (data files are English whatever the language).
    language = models.CharField(_("language"), max_length=5, default="en")

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)
    # Relative to settings.PRIVATE_STORAGE_ROOT, never under a served folder.
    file_path = models.CharField(max_length=255, blank=True)
    file_size = models.BigIntegerField(null=True, blank=True)
    error_message = models.TextField(blank=True)
    # What the study report page shows (report jobs only; JSON-safe, figures as data URIs).
    report_data = models.JSONField(null=True, blank=True)

    created_at = models.DateTimeField(default=timezone.now)
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    # Stalled-job detection: a running attempt refreshes the heartbeat as it
    # makes progress; a job whose heartbeat is old lost its worker. `attempts`
    # numbers the runs, so a superseded run can tell it must not finish the job.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(progress__lte=100), name="export_progress_at_most_100"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_format_display()} export of {self.study} ({self.status})"

    @property
    def extension(self) -> str:
        return self.FILE_EXTENSIONS[self.format]

    @property
    def content_type(self) -> str:
        return self.CONTENT_TYPES[self.format]

    @property
    def is_report(self) -> bool:
        return self.format == self.Format.REPORT

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def is_downloadable(self) -> bool:
        return (
            self.status == self.Status.SUCCEEDED
            and bool(self.file_path)
            and (self.expires_at is None or self.expires_at > timezone.now())
        )

    @property
    def relative_path(self) -> str:
        """Where the finished file goes, relative to PRIVATE_STORAGE_ROOT (file_path
        holds it once the job succeeded)."""
        return f"exports/study-{self.study_id}/{self.token}.{self.extension}"

    @property
    def absolute_path(self) -> Path | None:
        if not self.file_path:
            return None
        return Path(settings.PRIVATE_STORAGE_ROOT) / self.file_path

    @property
    def download_name(self) -> str:
        stamp = timezone.localdate(self.created_at).isoformat()
        kind = "report" if self.is_report else "export"
        suffix = self.FILE_NAME_SUFFIXES.get(self.format, "")
        return f"{self.study.slug}-shs-{kind}-{stamp}{suffix}.{self.extension}"


class ExportEvent(models.Model):
    """Audit trail: one row per change of a job's state, and per download."""

    class Kind(models.TextChoices):
        QUEUED = "queued", _("Queued")
        STARTED = "started", _("Started")
        REQUEUED = "requeued", _("Re-queued after a stalled run")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        EXPIRED = "expired", _("File deleted after expiry")
        DOWNLOADED = "downloaded", _("Downloaded")

    job = models.ForeignKey(ExportJob, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    attempt = models.PositiveSmallIntegerField(default=0)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.kind} ({self.job_id})"
