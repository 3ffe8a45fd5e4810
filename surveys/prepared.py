"""Lookups of a fixed shape, compiled to SQL once per thread.

Every participant request reads the same few rows the same way: the user of
the browser session, and the study session behind its token with the
membership that lets the user see it. Building and compiling those querysets
cost more CPU than running them (the ORM resolves the joins and writes a
hundred columns anew each time; docs/benchmarks.md, "Request cost"). A
`PreparedLookup` builds its queryset once, with placeholder values, keeps
the SQL and the compiler's column map, and then only swaps the values in:
the same statement, the same model instances (converters, `select_related`
objects and annotations as the ORM makes them).

The queryset is Django's own; only its compilation is kept. A shape this
cannot keep (a placeholder that does not reach the parameters unchanged,
prefetching) fails at its first use, and `PREPARED_LOOKUPS = False` in the
settings runs every lookup through the ORM as written (the tests compare
the two). docs/design.md §12.3 lists what uses them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, get_related_populators
from django.db.transaction import TransactionManagementError

# Placeholder numbers inside the range of every integer column, the smallest
# included (Django leaves a lookup with an out-of-range integer out of the
# SQL); a literal of the queryset equal to one is refused at compilation.
_FIRST_NUMBER = 32_700


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple
    slots: dict[str, int]  # placeholder name -> its position in params
    compiler: object
    converters: dict
    columns: int
    model: type[Model]
    model_columns: slice
    init_list: list[str]
    populators: list
    annotations: dict[str, int]
    locks: bool


class PreparedLookup:
    """`build(**values)` -> a queryset; `one(**values)` -> its one row or None.

    `kinds` names each value and its type (`str` or `int`), as in
    `PreparedLookup(lambda token: Session.objects.filter(token=token), token=str)`.
    """

    def __init__(self, build: Callable[..., QuerySet], **kinds: type):
        self.build = build
        self.kinds = kinds
        # One compilation per thread: a compiler holds its thread's connection,
        # which its converters are handed.
        self.local = threading.local()

    def one(self, **values) -> Model | None:
        """The row the lookup finds, None when there is none (more than one is a bug)."""
        if not getattr(settings, "PREPARED_LOOKUPS", True):
            found = list(self._queryset(values))
        else:
            found = self._run(values)
        if len(found) > 1:
            raise self.build(**values).model.MultipleObjectsReturned(
                "A prepared lookup found more than one row."
            )
        return found[0] if found else None

    def _queryset(self, values: dict) -> QuerySet:
        # As QuerySet.get() runs it: unordered, and two rows are enough to
        # tell one from many.
        return self.build(**values).order_by()[:2]

    def _run(self, values: dict) -> list[Model]:
        compiled = self._compiled()
        params = list(compiled.params)
        for name, position in compiled.slots.items():
            # What the field would make of it: a token, a primary key.
            params[position] = self.kinds[name](values[name])
        connection = connections[DEFAULT_DB_ALIAS]
        if compiled.locks and connection.get_autocommit():
            raise TransactionManagementError(
                "select_for_update cannot be used outside a transaction."
            )
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        return [self._instance(compiled, row) for row in self._converted(compiled, rows)]

    @staticmethod
    def _converted(compiled: _Compiled, rows):
        rows = [row[: compiled.columns] for row in rows]
        if compiled.converters:
            return list(compiled.compiler.apply_converters(rows, compiled.converters))
        return rows

    @staticmethod
    def _instance(compiled: _Compiled, row) -> Model:
        # What Django's ModelIterable does with a row, from the kept column map.
        obj = compiled.model.from_db(
            DEFAULT_DB_ALIAS, compiled.init_list, row[compiled.model_columns]
        )
        for populator in compiled.populators:
            populator.populate(row, obj)
        for name, position in compiled.annotations.items():
            setattr(obj, name, row[position])
        return obj

    def _compiled(self) -> _Compiled:
        compiled = getattr(self.local, "compiled", None)
        if compiled is None:
            compiled = self.local.compiled = self._compile()
        return compiled

    def _placeholders(self) -> dict[str, object]:
        made = {}
        for number, (name, kind) in enumerate(self.kinds.items()):
            if kind is int:
                made[name] = _FIRST_NUMBER + number
            elif kind is str:
                made[name] = f"prepared-lookup-placeholder-{number}-{name}"
            else:
                raise TypeError(f"{name}: a prepared lookup takes str or int values")
        return made

    def _compile(self) -> _Compiled:
        placeholders = self._placeholders()
        queryset = self._queryset(placeholders)
        if queryset._prefetch_related_lookups or queryset._iterable_class is not ModelIterable:
            raise TypeError("A prepared lookup returns model instances, with nothing prefetched.")
        compiler = queryset.query.get_compiler(using=DEFAULT_DB_ALIAS)
        locks = queryset.query.select_for_update
        # A lookup that locks is compiled inside its first transaction: Django
        # refuses to compile FOR UPDATE outside one, as it refuses to run it.
        sql, params = compiler.as_sql()
        slots = {}
        for name, value in placeholders.items():
            positions = [i for i, param in enumerate(params) if param == value]
            if len(positions) != 1:
                raise TypeError(f"{name} must appear once, unchanged, among the parameters")
            slots[name] = positions[0]
        return self._kept(compiler, sql, params, slots, locks)

    @staticmethod
    def _kept(compiler, sql, params, slots, locks) -> _Compiled:
        select, klass_info = compiler.select, compiler.klass_info
        fields = klass_info["select_fields"]
        columns = slice(fields[0], fields[-1] + 1)
        return _Compiled(
            sql=sql,
            params=tuple(params),
            slots=slots,
            compiler=compiler,
            converters=compiler.get_converters([s[0] for s in select[: compiler.col_count]]),
            columns=compiler.col_count,
            model=klass_info["model"],
            model_columns=columns,
            init_list=[column[0].target.attname for column in select[columns]],
            populators=get_related_populators(klass_info, select, DEFAULT_DB_ALIAS),
            annotations=dict(compiler.annotation_col_map or {}),
            locks=bool(locks),
        )
