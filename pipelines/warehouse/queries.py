"""Named queries, `sql/queries/NAME.sql`, run read-only. The header is a description (its first
sentence, the query's summary, may take several lines), then `-- param NAME TYPE [= DEFAULT]:
description` lines (VARCHAR, DATE, TIMESTAMP, INTEGER, DOUBLE,
BOOLEAN or CHOICE(a|b|c); no default: required; `NULL`: unset); values are bound, never spliced.
A `-- rows of TABLE: why` line says that every row comes from rows of TABLE: while it holds none,
the query answers its columns alone, unplanned (`has_rows`).

Each parameter's parsed value is set as a session variable (`SET VARIABLE`, a literal of its
declared type, `typed_literal`), and the query runs as written but for each `$name`, read as
`getvariable('ces_param_name')`: the values never enter the query's text, and DuckDB binds the
query once (a PREPARE then EXECUTE bound it twice: 0.25 s more for a query of the conversation
tables at 2M conversations). DuckDB's Python binding of any value would import pandas where it
is installed (half a second, more than most queries take)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import msgspec

from pipelines.errors import UsageError
from pipelines.resource_names import apps_named
from pipelines.sqlfiles import SQL_DIR, quoted, sql_files, sql_text
from pipelines.warehouse import part_views
from pipelines.warehouse.duck import Warehouse

if TYPE_CHECKING:
    from pipelines.transform.schemas import TableSpec  # pyarrow: not at every command's start

_NAME = re.compile(r"[a-z0-9_]+")
_PARAMETER_OR_LITERAL = re.compile(r"'(?:[^']|'')*'|--[^\n]*|\$([A-Za-z_][A-Za-z0-9_]*)")
"""A string literal or a comment (neither holds a parameter), or a parameter (group 1): what the
header check counts as used is what the query reads as variables."""


def _variable(parameter: str) -> str:
    """The session variable a parameter's value is set in (its name is `[a-z_][a-z0-9_]*`)."""
    return f"ces_param_{parameter}"


def _read_variable(match: re.Match[str]) -> str:
    return match.group(0) if match.group(1) is None else f"getvariable('{_variable(match.group(1))}')"


_DECLARATION = re.compile(
    r"--\s*param\s+(?P<name>[a-z_][a-z0-9_]*)\s+(?P<type>[A-Z]+(?:\([^)]*\))?)"
    r"(?:\s*=\s*(?P<default>.*?))?\s*:\s+(?P<description>.+)"
)
_ROWS_OF = re.compile(r"--\s*rows of\s+(?P<table>[a-z_][a-z0-9_]*)\s*:")
_BOOLEANS = {
    **dict.fromkeys(("true", "t", "yes", "y", "1", "on"), True),
    **dict.fromkeys(("false", "f", "no", "n", "0", "off"), False),
}


class NamedQueryError(UsageError, ValueError):
    """Unknown query, bad or missing parameter, or no warehouse yet."""


@dataclass(frozen=True)
class QueryParameter:
    name: str
    type: str
    default: Any
    description: str
    required: bool
    choices: tuple[str, ...] = ()

    def signature(self) -> str:
        """How `--list` shows it: `since DATE = 1970-01-01`."""
        kind = f"CHOICE({'|'.join(self.choices)})" if self.choices else self.type
        if self.required:
            return f"{self.name} {kind} (required)"
        return f"{self.name} {kind} = {'NULL' if self.default is None else _show(self.default)}"

    def parse(self, value: Any) -> Any:
        """The typed value of `value` (text from the command line, or already typed)."""
        if value is None:
            return None
        if not isinstance(value, str) or self.type == "VARCHAR":
            if self.choices and value not in self.choices:
                raise NamedQueryError(
                    f"parameter {self.name} expects one of {', '.join(self.choices)}, got {value!r}"
                )
            return value
        read, expected = _TYPES[self.type]
        try:
            return read(value.strip())
        except (ValueError, KeyError):
            raise NamedQueryError(f"parameter {self.name} expects {expected}, got {value!r}") from None


def _timestamp(text: str) -> datetime:
    stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(text)
    return number


_TYPES: dict[str, tuple[Callable[[str], Any], str]] = {
    "VARCHAR": (str, "text"),
    "DATE": (date.fromisoformat, "a date (YYYY-MM-DD)"),
    "TIMESTAMP": (_timestamp, "a timestamp (YYYY-MM-DDTHH:MM:SS[Z|±HH:MM], UTC when no offset)"),
    "INTEGER": (int, "an integer"),
    "DOUBLE": (_finite, "a number"),
    "BOOLEAN": (lambda text: _BOOLEANS[text.lower()], "true or false"),
}
"""How a parameter's text is read, by its type, and what the error says it expects."""


_SQL_TYPES = {"INTEGER": "BIGINT", "TIMESTAMP": "TIMESTAMPTZ"}
"""The DuckDB type of a declared type's literal, where they differ."""


def typed_literal(kind: str, value: Any) -> str:
    """`value`, parsed already, as a literal of its declared type, written from the Python value
    (a string through `quoted`); a NULL of that type for no value."""
    if value is None:
        return f"CAST(NULL AS {_SQL_TYPES.get(kind, kind)})"
    if kind == "VARCHAR":
        if "\x00" in str(value):
            raise NamedQueryError("a parameter cannot hold a NUL character")
        return quoted(str(value))
    if kind == "BOOLEAN":
        return "TRUE" if value else "FALSE"
    if kind == "INTEGER":
        return f"CAST({int(value)} AS BIGINT)"
    if kind == "DOUBLE":
        return f"CAST({quoted(repr(float(value)))} AS DOUBLE)"
    if kind == "DATE":
        return f"DATE {quoted(date.isoformat(value))}"
    return f"TIMESTAMPTZ {quoted(datetime.isoformat(value))}"


def _show(value: Any) -> str:
    return value.isoformat() if isinstance(value, date | datetime) else str(value)


@dataclass(frozen=True)
class NamedQuery:
    name: str
    description: str
    parameters: tuple[QueryParameter, ...]
    sql: str
    rows_of: str | None = None
    """The table every row comes from, if the header names one."""

    @cached_property
    def runnable(self) -> str:
        """The text run: each `$name` outside a string literal read as its session variable."""
        return _PARAMETER_OR_LITERAL.sub(_read_variable, self.sql)

    def bind(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every declared parameter's typed value: the given one, else its default."""
        declared = {parameter.name: parameter for parameter in self.parameters}
        unknown = sorted(set(given) - set(declared))
        if unknown:
            takes = ", ".join(declared) if declared else "no parameters"
            raise NamedQueryError(
                f"query {self.name} has no parameter {', '.join(unknown)}; it takes: {takes}"
            )
        values = {}
        for name, parameter in declared.items():
            if name in given:
                values[name] = parameter.parse(given[name])
            elif parameter.required:
                raise NamedQueryError(f"query {self.name} needs --param {name}=… ({parameter.description})")
            else:
                values[name] = parameter.default
        since, until = values.get("since"), values.get("until")
        if since is not None and until is not None and until <= since:  # an empty window: a slip
            raise NamedQueryError(f"until ({until}), the first day excluded, must be after since ({since})")
        return values

    def start(
        self, conn: duckdb.DuckDBPyConnection, params: Mapping[str, Any] | None = None
    ) -> tuple[list[str], duckdb.DuckDBPyConnection | duckdb.DuckDBPyRelation]:
        """Columns and the cursor to fetch the rows from (as many as the reader wants); while its
        `rows_of` table holds none, a relation of no row (`has_rows`)."""
        values = self.bind(params or {})
        try:
            for parameter in self.parameters:
                conn.execute(
                    sql_text("warehouse/set_query_parameter.sql").format(
                        variable=_variable(parameter.name),
                        value=typed_literal(parameter.type, values[parameter.name]),
                    )
                )
            if self.rows_of is not None and not has_rows(conn, self.rows_of):
                relation = conn.sql(self.runnable).limit(0)  # bound for its columns, never planned
                return [description[0] for description in relation.description], relation
            cursor = conn.execute(self.runnable)
        except duckdb.CatalogException as exc:
            raise NamedQueryError(
                f"query {self.name} cannot run on this warehouse ({exc}); load it once with this "
                "version (`ces-pipeline ingest` or `rebuild`) to create the views it reads"
            ) from exc
        return [description[0] for description in cursor.description], cursor

    def execute(
        self, conn: duckdb.DuckDBPyConnection, params: Mapping[str, Any] | None = None
    ) -> tuple[list[str], list[tuple]]:
        columns, cursor = self.start(conn, params)
        return columns, cursor.fetchall()


SHOWN_APPS = 10


def check_app(conn: duckdb.DuckDBPyConnection, app: str | None) -> list[str]:
    """The apps an `app` asked about names (its full resource name, or an id several projects may
    share), among those the warehouse holds rows of: a slip of the name is an error that lists the
    apps, not an empty answer. Once per question, however many queries answer it (the dashboard's
    run about forty). None asks about every app: no names."""
    if app is None:
        return []
    try:
        known = [found for (found,) in conn.execute(sql_text("warehouse/known_apps.sql")).fetchall()]
    except duckdb.CatalogException:
        return [app]  # a warehouse before its first load with this version: the query says so itself
    named = apps_named(app, known)
    if named:
        return named
    listed = ", ".join(known[:SHOWN_APPS]) + (f", … ({len(known)} apps)" if len(known) > SHOWN_APPS else "")
    raise NamedQueryError(f"no app {app!r} in the warehouse; it holds: {listed or 'none yet'}")


def has_rows(conn: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether `table` holds a row. A query over tables without rows answers none, but on a
    DuckLake planning it looks up each column's statistics in the catalog, on every query (the
    DuckLake of DuckDB 1.5 keeps no answer for a table without statistics): 0.1-0.6 s an
    evaluation query on a warehouse without runs. A count names no column."""
    return conn.execute(sql_text("warehouse/table_has_rows.sql").format(table=table)).fetchone() == (True,)


@contextmanager
def asking_about(
    conn: duckdb.DuckDBPyConnection, parts_root: Path | None, app: str | None
) -> Iterator[list[str]]:
    """`check_app`, and for the block each rollup a view of the apps named alone (`parts_root`: a
    DuckDB file's parts, `part_views.reading_apps`): a question about one app opens its parts, not
    every app's. The apps named (none: every app)."""
    named = check_app(conn, app)
    with part_views.reading_apps(conn, parts_root, named):
        yield named


def parse_query(name: str, text: str) -> NamedQuery:
    """Read a query file's header and check that it declares exactly the parameters it uses."""
    said: list[str] = []
    described = False
    parameters: list[QueryParameter] = []
    rows_of = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("--"):
            break
        if re.match(r"--\s*param\b", stripped):
            parameters.append(_parse_declaration(name, stripped))
            described = True
        elif found := _ROWS_OF.match(stripped):
            rows_of, described = found["table"], True
        elif not described:  # the first sentence, over as many lines as it takes
            said.append(stripped.lstrip("-").strip())
            described = said[-1].endswith(".")
    description = " ".join(said)
    used = {match.group(1) for match in _PARAMETER_OR_LITERAL.finditer(text) if match.group(1)}
    declared = {parameter.name for parameter in parameters}
    if used != declared:
        problems = []
        if used - declared:
            problems.append(f"uses undeclared ${', $'.join(sorted(used - declared))}")
        if declared - used:
            problems.append(f"declares unused {', '.join(sorted(declared - used))}")
        raise NamedQueryError(f"query {name}: {'; '.join(problems)}")
    return NamedQuery(name, description, tuple(parameters), text, rows_of)


def _parse_declaration(query: str, line: str) -> QueryParameter:
    match = _DECLARATION.fullmatch(line)
    if match is None:
        raise NamedQueryError(
            f"query {query}: bad declaration {line!r}; expected `-- param NAME TYPE [= DEFAULT]: description`"
        )
    kind, choices = match["type"], ()
    choice = re.fullmatch(r"CHOICE\((.+)\)", kind)
    if choice:
        kind, choices = "VARCHAR", tuple(part.strip() for part in choice.group(1).split("|"))
    if kind not in _TYPES:
        raise NamedQueryError(f"query {query}: parameter {match['name']} has an unknown type {kind}")
    partial = QueryParameter(match["name"], kind, None, match["description"].strip(), True, choices)
    if match["default"] is None:
        return partial
    default_text = match["default"].strip()
    default = None if default_text.upper() == "NULL" else partial.parse(default_text)
    return QueryParameter(partial.name, kind, default, partial.description, False, choices)


_parsed = cache(parse_query)
"""Each query file's text parsed once per process (a changed file is parsed again)."""


def named_query(name: str) -> NamedQuery:
    """The query `sql/queries/NAME.sql`, or a NamedQueryError listing the known ones."""
    path = SQL_DIR / "queries" / f"{name}.sql"
    if not _NAME.fullmatch(name) or not path.is_file():
        known = ", ".join(query.name for query in named_queries())
        raise NamedQueryError(f"no query named {name!r}; known queries: {known}")
    return _parsed(name, path.read_text())


def named_queries() -> list[NamedQuery]:
    return [_parsed(path.stem, path.read_text()) for path in sql_files("queries")]


def run_query(
    warehouse: Warehouse, name: str, params: Mapping[str, Any] | None = None
) -> tuple[list[str], list[tuple]]:
    """Columns and rows of a named query, on a read-only connection to the warehouse; asked about
    an app, of the rollups of that app alone (`asking_about`)."""
    query = named_query(name)
    bound = query.bind(params or {})  # a bad parameter is reported before the warehouse is opened
    root = warehouse.scoped_parts_root
    with warehouse.connect(read_only=True) as conn, asking_about(conn, root, bound.get("app")):
        return query.execute(conn, params)


JSON_ENCODER = msgspec.json.Encoder(enc_hook=str)
"""How a query's values are written as JSON, by `query --format json` and the MCP server alike:
dates and times in ISO 8601, decimals as their text, a non-finite number as null (JSON has none),
bytes in base64, anything else as its text (`json_lines`): 87,000 rows in 0.06 s, seven times
faster than the standard library with a conversion per value."""


def json_lines(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    """The rows as JSON objects, one per line, `JSON_ENCODER`'s text. A struct type of the columns
    lets msgspec build each object in C: 87,000 rows in 0.06 s, against 0.12 s through a dict
    each. (A value never holds a raw newline: JSON escapes them.)"""
    fields = [f"c{position}" for position in range(len(columns))]
    row_type = msgspec.defstruct("Row", fields, rename=dict(zip(fields, columns, strict=True)))
    return JSON_ENCODER.encode_lines([row_type(*row) for row in rows])


def jsonable(value: Any) -> Any:
    """A query value as the JSON `JSON_ENCODER` writes of it, decoded: the same values for the MCP
    server's answers as for `query --format json`."""
    return msgspec.json.decode(JSON_ENCODER.encode(value))


def json_rows(conn: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of `sql` as JSON objects; a JSON column's text as the JSON value it holds."""
    cursor = conn.execute(sql, dict(params))
    columns = [description[0] for description in cursor.description]
    json_columns = [column for column, kind, *_ in cursor.description if str(kind) == "JSON"]
    found = [jsonable(dict(zip(columns, row, strict=True))) for row in cursor.fetchall()]
    for row in found:
        for column in json_columns:
            if isinstance(row[column], str):
                row[column] = json.loads(row[column])
    return found


def conversation_rows(
    conn: duckdb.DuckDBPyConnection, spec: TableSpec, name: str, day: Any
) -> list[dict[str, Any]]:
    """The rows of `spec`'s table of the conversation `name` of partition `day` (one day's part
    read), in key order, as `json_rows`."""
    sql = sql_text("serve/conversation_rows.sql").format(table=spec.name, key=", ".join(spec.key))
    return json_rows(conn, sql, {"name": name, "day": day})


def parse_param_options(items: Sequence[str]) -> dict[str, str]:
    """`NAME=VALUE` strings (the CLI's repeated `--param`) as a dict; a malformed one is an error."""
    params: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise NamedQueryError(f"--param expects NAME=VALUE, got {item!r}")
        if key in params:
            raise NamedQueryError(f"--param {key} given twice")
        params[key] = value
    return params
