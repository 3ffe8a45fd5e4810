"""On PostgreSQL the database itself refuses to change or delete an audit row
(docs/design/audit.md §15.2): a trigger raises on every UPDATE and DELETE,
whoever sends it, the application's own user included. SQLite has no such
trigger here; the model refuses there (audit.models.AppendOnly).

TRUNCATE fires no row trigger: the test runner empties the tables with it
between tests. The trigger stops the application's statements, not the
table's owner, who may drop it: that is what the hash chain is for.
"""

from django.db import migrations

# One statement each, without parameters: the "%" is PL/pgSQL's placeholder.
CREATE = [
    """
CREATE FUNCTION audit_entry_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % of an audit row refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$
""",
    """
CREATE TRIGGER audit_entry_append_only
    BEFORE UPDATE OR DELETE ON audit_auditentry
    FOR EACH ROW EXECUTE FUNCTION audit_entry_refuse_change()
""",
]

DROP = [
    "DROP TRIGGER IF EXISTS audit_entry_append_only ON audit_auditentry",
    "DROP FUNCTION IF EXISTS audit_entry_refuse_change()",
]


def create_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in CREATE:
            schema_editor.execute(statement, params=None)


def drop_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in DROP:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [migrations.RunPython(create_trigger, drop_trigger, elidable=False)]
