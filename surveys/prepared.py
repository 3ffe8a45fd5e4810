"""Lookups of a fixed shape, compiled to SQL once per thread.

Every participant request reads the same few rows the same way: the user of
the browser session, and the study session behind its token with the
membership that lets the user see it. Building and compiling those querysets
cost more CPU than running them (the ORM resolves the joins and writes a
hundred columns anew each time; docs/benchmarks.md, "Request cost"). A
`PreparedLookup` builds its queryset once, with placeholder values, keeps
the SQL and the compiler's column map, and then only swaps the values in:
the same statement, the same model instances (converters and
`select_related` objects as the ORM makes them).

It keeps a compilation, which Django does not promise to be reusable, so it
is fenced:

- only the lookups in USES below (a test holds the code to this list);
- only plain shapes: filters, `select_related` and `select_for_update`;
  anything else (any annotation or alias, even one naming a column,
  `extra`, `distinct`, `values`, deferred fields, filtered relations,
  prefetching) is refused at the first use. A fact the caller needs from
  another row comes with that row (`select_related`) or from a lookup of
  its own (surveys/access.py reads a coordinator's role so);
- compiled twice with different placeholder values, and refused unless
  the two differ only in the placeholders: a value the queryset computes
  (`timezone.now()`) would otherwise be frozen at its first use;
- `PREPARED_LOOKUPS = False` in the settings runs every lookup through the
  ORM as written; tests/surveys/test_prepared_lookups.py compares the two,
  and CI runs those tests against the next Django release as well.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, get_related_populators
from django.db.models.sql.where import ExtraWhere
from django.db.transaction import TransactionManagementError

# Every prepared lookup of the code base, where it is defined.
USES = (
    "surveys.access.SESSION_OF_MEMBER",  # staff session pages (three shapes)
    "surveys.access.MEMBERSHIP",  # the role, where a study requires TOTP of coordinators
    "surveys.participant_access.REMOTE_SESSION",  # remote participant pages (three shapes)
    "surveys.protocol.state.LOCKED_SESSION",  # every protocol write
    "surveys.protocol.evaluations.EVALUATION_OF_BLOCK",  # SHS page, autosave, submission
    "surveys.auth_backends.USER_BY_ID",  # the user of every logged-in request
)

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
    locks: bool
    fetch: dict  # from_db's keyword arguments


class PreparedLookup:
    """`build(**values)` -> a queryset; `one(**values)` -> its one row or None.

    `kinds` names each value and its type (`str` or `int`), as in
    `PreparedLookup(lambda token: Session.objects.filter(token=token), token=str)`.
    """

    # Every lookup made, for the test that holds them to USES.
    made: list[PreparedLookup] = []

    def __init__(self, build: Callable[..., QuerySet], **kinds: type):
        PreparedLookup.made.append(self)
        self.build = build
        self.kinds = kinds
        # One compilation per thread: a compiler holds its thread's connection,
        # which its converters are handed.
        self.local = threading.local()

    @property
    def defined_in(self) -> str:
        """The module of the queryset's function (of a partial's function)."""
        return getattr(self.build, "func", self.build).__module__

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
            DEFAULT_DB_ALIAS, compiled.init_list, row[compiled.model_columns], **compiled.fetch
        )
        for populator in compiled.populators:
            populator.populate(row, obj)
        return obj

    def _compiled(self) -> _Compiled:
        compiled = getattr(self.local, "compiled", None)
        if compiled is None:
            compiled = self.local.compiled = self._compile()
        return compiled

    def _placeholders(self, round_: int) -> dict[str, object]:
        made = {}
        for number, (name, kind) in enumerate(self.kinds.items()):
            if kind is int:
                made[name] = _FIRST_NUMBER + 10 * round_ + number
            elif kind is str:
                made[name] = f"prepared-lookup-placeholder-{round_}-{number}-{name}"
            else:
                raise TypeError(f"{name}: a prepared lookup takes str or int values")
        return made

    def _compile(self) -> _Compiled:
        first, second = self._compilation(0), self._compilation(1)
        if (first.sql, first.slots, first.fixed()) != (second.sql, second.slots, second.fixed()):
            raise TypeError(
                "A prepared lookup's queryset must not compute values of its own: "
                "two compilations differ beyond the placeholders."
            )
        return first.kept()

    def _compilation(self, round_: int) -> _Compilation:
        placeholders = self._placeholders(round_)
        queryset = self._queryset(placeholders)
        _require_plain(queryset)
        compiler = queryset.query.get_compiler(using=DEFAULT_DB_ALIAS)
        # A lookup that locks is compiled inside its first transaction: Django
        # refuses to compile FOR UPDATE outside one, as it refuses to run it.
        sql, params = compiler.as_sql()
        slots = {}
        for name, value in placeholders.items():
            positions = [i for i, param in enumerate(params) if param == value]
            if len(positions) != 1:
                raise TypeError(f"{name} must appear once, unchanged, among the parameters")
            slots[name] = positions[0]
        return _Compilation(sql, tuple(params), slots, compiler, queryset)


@dataclass(frozen=True)
class _Compilation:
    sql: str
    params: tuple
    slots: dict[str, int]
    compiler: object
    queryset: QuerySet

    def fixed(self) -> list:
        """The parameters the queryset gave itself: all but the placeholders."""
        return [p for i, p in enumerate(self.params) if i not in self.slots.values()]

    def kept(self) -> _Compiled:
        compiler = self.compiler
        select, klass_info = compiler.select, compiler.klass_info
        fields = klass_info["select_fields"]
        columns = slice(fields[0], fields[-1] + 1)
        # Django 6.1 gives a queryset a fetch mode (how deferred and related
        # fields load later) that its instances carry; earlier releases have none.
        mode = getattr(self.queryset, "_fetch_mode", None)
        return _Compiled(
            sql=self.sql,
            params=self.params,
            slots=self.slots,
            compiler=compiler,
            converters=compiler.get_converters([s[0] for s in select[: compiler.col_count]]),
            columns=compiler.col_count,
            model=klass_info["model"],
            model_columns=columns,
            init_list=[column[0].target.attname for column in select[columns]],
            populators=get_related_populators(
                klass_info, select, DEFAULT_DB_ALIAS, *([mode] if mode is not None else [])
            ),
            locks=bool(self.queryset.query.select_for_update),
            fetch={} if mode is None else {"fetch_mode": mode},
        )


def _require_plain(queryset: QuerySet) -> None:
    """Refuse any shape beyond filters, select_related and select_for_update."""
    query = queryset.query
    if queryset._prefetch_related_lookups or queryset._iterable_class is not ModelIterable:
        raise TypeError("A prepared lookup returns model instances, with nothing prefetched.")
    shaped = {
        "extra": query.extra or query.extra_tables or _has_extra_where(query.where),
        "distinct": query.distinct,
        "values": query.values_select,
        "grouping": query.group_by,
        "a combination": query.combinator,
        "deferred fields": query.deferred_loading[0],
        # annotate() and alias(), even of a plain column: the kept column map
        # holds the model's fields and its select_related rows, nothing else.
        f"annotations ({', '.join(query.annotations)})": query.annotations,
        "filtered relations": getattr(query, "_filtered_relations", None),
    }
    for what, present in shaped.items():
        if present:
            raise TypeError(f"A prepared lookup takes plain filters only, not {what}.")
    mode = getattr(queryset, "_fetch_mode", None)
    if mode is not None and mode.track_peers:
        raise TypeError("A prepared lookup's rows are fetched alone, not with their peers.")


def _has_extra_where(node) -> bool:
    if isinstance(node, ExtraWhere):
        return True
    return any(_has_extra_where(child) for child in getattr(node, "children", ()))
