"""The naturalistic task becomes a text per language, like the consent: the
single task written so far moves to the study's first language offered, the
one its coordinator wrote it in; the other languages wait for theirs, and the
readiness check says which are missing."""

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def move_task_to_first_language(apps, schema_editor):
    Study = apps.get_model("surveys", "Study")
    TaskText = apps.get_model("surveys", "TaskText")
    for study in Study.objects.exclude(task_description="").iterator():
        language = (study.languages or [settings.LANGUAGE_CODE])[0]
        TaskText.objects.create(study=study, language=language, text=study.task_description)


def move_task_back(apps, schema_editor):
    Study = apps.get_model("surveys", "Study")
    TaskText = apps.get_model("surveys", "TaskText")
    for study in Study.objects.all().iterator():
        texts = {task.language: task.text for task in TaskText.objects.filter(study=study)}
        first = (study.languages or [settings.LANGUAGE_CODE])[0]
        study.task_description = texts.get(first) or next(iter(texts.values()), "")
        study.save(update_fields=["task_description"])


class Migration(migrations.Migration):
    dependencies = [
        ("surveys", "0012_chat_limits"),
    ]

    operations = [
        migrations.CreateModel(
            name="TaskText",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "language",
                    models.CharField(
                        choices=[("en", "English"), ("de", "German"), ("fr", "French")],
                        max_length=5,
                        verbose_name="language",
                    ),
                ),
                (
                    "text",
                    models.TextField(
                        help_text="Shown to whoever chats at the top of each interaction block.",
                        verbose_name="task (naturalistic protocol)",
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "study",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="task_texts",
                        to="surveys.study",
                    ),
                ),
            ],
            options={
                "ordering": ["language"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("study", "language"), name="one_task_per_language"
                    )
                ],
            },
        ),
        migrations.RunPython(move_task_to_first_language, move_task_back),
        migrations.RemoveField(
            model_name="study",
            name="task_description",
        ),
        migrations.AlterField(
            model_name="study",
            name="inactivity_timeout_minutes",
            field=models.PositiveIntegerField(
                default=90,
                validators=[
                    django.core.validators.MinValueValidator(
                        10, "The inactivity timeout must be at least 10 minutes."
                    )
                ],
                verbose_name="inactivity timeout (minutes)",
            ),
        ),
    ]
