"""The protocol's hot writes as hand-written statements.

A step change and a submission write a few known rows of a session they
hold locked: close the step's record, open the next one (and the next
block's interaction record), save the session's step. Through the ORM each
was a statement built and compiled anew, a third of a submission's CPU.
Here the values are still the ORM's (each field's `pre_save` and
`get_db_prep_save`, the model's defaults by constructing the instance), the
SQL is written from the model's metadata, and on PostgreSQL the writes of
one step change go as one statement (data-modifying WITH clauses: one round
trip instead of four). As with `QuerySet.update()` and `bulk_create()`, no
signal is sent. docs/design.md §12.3.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.models import Model

Statement = tuple[str, list]


def save_fields(obj: Model, fields: list[str]) -> None:
    """`obj.save(update_fields=fields)` as one UPDATE by primary key; a row
    that is gone raises DatabaseError, as the ORM's save does."""
    write_together([update_statement(obj, fields)])


def update_statement(obj: Model, fields: list[str]) -> Statement:
    connection = connections[DEFAULT_DB_ALIAS]
    quote, meta = connection.ops.quote_name, obj._meta
    columns = [meta.get_field(name) for name in fields]
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in columns)
    sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(meta.pk.column)} = %s"
    params = [field.get_db_prep_save(field.pre_save(obj, False), connection) for field in columns]
    return sql, [*params, obj.pk]


def insert_statement(obj: Model) -> Statement:
    """An unsaved instance's row, every column but the automatic key (its
    new key is not read back: the protocol's callers do not use it)."""
    connection = connections[DEFAULT_DB_ALIAS]
    quote, meta = connection.ops.quote_name, obj._meta
    columns = [field for field in meta.local_concrete_fields if field is not meta.auto_field]
    names = ", ".join(quote(field.column) for field in columns)
    marks = ", ".join(["%s"] * len(columns))
    params = [field.get_db_prep_save(field.pre_save(obj, True), connection) for field in columns]
    return f"INSERT INTO {quote(meta.db_table)} ({names}) VALUES ({marks})", params


def write_together(statements: list[Statement]) -> None:
    """Run the statements, the last an UPDATE of exactly one row (else DatabaseError).

    On PostgreSQL as one statement: the others become WITH clauses of the
    last, which run on the same snapshot, so they must touch rows of their
    own (they do: another table, or another row). Elsewhere (SQLite: the
    demo and the service-free run) one by one, in order.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor == "postgresql" and len(statements) > 1:
        *before, last = statements
        clauses = ", ".join(f"w{number} AS ({sql})" for number, (sql, _p) in enumerate(before))
        statements = [(f"WITH {clauses} {last[0]}", [p for _s, ps in statements for p in ps])]
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)
        if cursor.rowcount != 1:
            raise DatabaseError("The row to update was not there.")
