"""The naturalistic protocol's task, one text per language offered
(docs/design/remote.md §11.5): a French participant reads the task in French,
as they read the consent in French."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class TaskText(models.Model):
    """The task of a naturalistic study in one language.

    Stored per language like the consent text (ConsentText), without its
    versions: nothing a participant signs refers to the task's wording, and the
    transcript keeps what was said under it.
    """

    study = models.ForeignKey("surveys.Study", on_delete=models.CASCADE, related_name="task_texts")
    language = models.CharField(_("language"), max_length=5, choices=settings.LANGUAGES)
    text = models.TextField(
        _("task (naturalistic protocol)"),
        help_text=_("Shown to whoever chats at the top of each interaction block."),
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["language"]
        constraints = [
            models.UniqueConstraint(fields=["study", "language"], name="one_task_per_language")
        ]

    def __str__(self) -> str:
        return f"{self.study} [{self.language}] task"

    @classmethod
    def text_for(cls, study_id: int, language: str) -> str:
        """The task a participant in `language` reads ("" while it is not written)."""
        return (
            cls.objects.filter(study_id=study_id, language=language)
            .values_list("text", flat=True)
            .first()
            or ""
        )


def languages_with_task(study) -> set[str]:
    """The study's languages whose task is written."""
    return set(study.task_texts.exclude(text="").values_list("language", flat=True))
