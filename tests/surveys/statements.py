"""The statements a request sends, as their shapes: `SELECT surveys_user`,
`SELECT surveys_studysession FOR UPDATE`. Query-count tests pin these lists.

Left out: transaction control (the test's own transaction makes a request's
atomic blocks savepoints) and the Django session's rows, which are read or
not depending on the session engine's cache (Redis in CI and production,
none in the service-free run).
"""

import re

from django.db import connection

_TRANSACTION_CONTROL = re.compile(r"^(SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO|BEGIN|COMMIT)")
_WRITE = re.compile(r'(UPDATE|INSERT INTO|DELETE FROM) "([^"]+)"')


def written_together(shapes: list[str]) -> list[str]:
    """A step change's writes (surveys/protocol/statements.py): one statement
    on PostgreSQL, one each elsewhere."""
    if connection.vendor == "postgresql":
        return [" + ".join(shapes)]
    return list(shapes)


def statement_shapes(sqls) -> list[str]:
    shapes = []
    for sql in sqls:
        if _TRANSACTION_CONTROL.match(sql):
            continue
        # The first quoted name: a SELECT's first column's table, or the table written to.
        if sql.startswith("WITH "):
            # Writes sent as one statement (surveys/protocol/statements.py): each, in order.
            shapes.append(
                " + ".join(f"{verb.split()[0]} {table}" for verb, table in _WRITE.findall(sql))
            )
            continue
        table = sql.split('"', 2)[1]
        if table == "django_session":
            continue
        lock = " FOR UPDATE" if "FOR UPDATE" in sql else ""
        shapes.append(f"{sql.split(' ', 1)[0]} {table}{lock}")
    return shapes
