"""A study's rows may leave the log once the study itself is gone
(docs/design/audit.md §15.5): the trigger of 0002 now lets a DELETE of such
a row through and refuses every other UPDATE and DELETE, as before.

The study table is named here by its name only: the log imports no app,
and a row's study_id is a plain number.
"""

from django.db import migrations

REPLACE = """
CREATE OR REPLACE FUNCTION audit_entry_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND OLD.study_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM surveys_study WHERE id = OLD.study_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the audit log is append-only: % of an audit row refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$
"""

RESTORE = """
CREATE OR REPLACE FUNCTION audit_entry_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % of an audit row refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$
"""


def replace(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(REPLACE, params=None)


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(RESTORE, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0003_pilot_unmarked"),
        # The study table the trigger looks in.
        ("surveys", "0001_initial"),
    ]

    operations = [migrations.RunPython(replace, restore, elidable=False)]
