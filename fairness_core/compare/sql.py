"""A read-only SQL console over the store's documented views, with a row limit and a timeout.

Three walls, each enough on its own for what it guards:

1. Only one statement, and it must be a SELECT (DuckDB's own parser says which): writes, CREATE, COPY,
   ATTACH, DETACH, INSTALL, LOAD, SET, PRAGMA, EXPORT, CALL ... are refused before anything runs.
2. The SELECT's syntax tree (`json_serialize_sql`) may name only the documented views and tables
   (`runs`, `shards`, `results`, the typed views) and its own CTEs, and may call only the table functions
   in `ALLOWED_TABLE_FUNCTIONS`: `read_csv`, `read_parquet`, `read_text`, `glob`, a quoted file name as a
   table (`FROM 'x.csv'`), `information_schema`, another catalog are each refused with one sentence.
3. The query runs on its own read-only connection opened with external access, extension auto-install and
   auto-load off and the configuration locked, so even a function missed by (2) cannot reach a file.

A timer thread calls `connection.interrupt()` when the query runs past its time; at most `row_limit` rows
come back (the result says when it was cut).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import duckdb

from fairness_core.store import RunStore
from fairness_core.store.store import LOCKED_CONFIG, StoreBusyError
from fairness_core.store.typed import TYPED_KINDS

DEFAULT_ROW_LIMIT = 10_000
DEFAULT_TIMEOUT_S = 10.0
#: what a console query may read (the typed views' tables stay behind their views)
BASE_VIEWS = ("runs", "shards", "results")
#: table functions that read nothing outside the query
ALLOWED_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
_ALLOWED_STATEMENT = duckdb.StatementType.SELECT


class SqlError(ValueError):
    """A console query that was refused or failed; the message is one sentence."""


@dataclass(frozen=True)
class SqlResult:
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    truncated: bool  # more rows existed than the limit
    row_limit: int
    seconds: float
    #: sentences about the query a user should know (a quoted run id that names no run: `unknown_run_ids`)
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        out = {"columns": self.columns, "rows": [[json_value(v) for v in row] for row in self.rows],
               "types": self.types, "truncated": self.truncated, "row_limit": self.row_limit}
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows, columns=_unique(self.columns))


_QUOTED = r"'((?:[^']|'')*)'"
#: `run_id = 'x'` (or `'x' = run_id`, `<>`, `!=`) and `run_id [NOT] IN ('x', 'y')`, any table prefix
_RUN_ID_EQUALS = re.compile(rf"\brun_id\s*(?:==?|<>|!=)\s*{_QUOTED}|{_QUOTED}\s*(?:==?|<>|!=)\s*(?:\w+\.)?run_id\b",
                            re.IGNORECASE)
_RUN_ID_IN = re.compile(r"\brun_id\s+(?:NOT\s+)?IN\s*\(([^)]*)\)", re.IGNORECASE)


def quoted_run_ids(sql: str) -> list[str]:
    """The quoted values a query compares `run_id` with, in order, once each."""
    found = [a or b for a, b in _RUN_ID_EQUALS.findall(sql)]
    for inside in _RUN_ID_IN.findall(sql):
        found += re.findall(_QUOTED, inside)
    return list(dict.fromkeys(value.replace("''", "'") for value in found))


def unknown_run_ids(con: Any, sql: str) -> list[str]:
    """The run ids the query quotes that no run of the store has (docs/store.md's example once said `'RUN'`, and
    the console answered "0 row(s)" with no hint)."""
    quoted = quoted_run_ids(sql)
    if not quoted:
        return []
    known = {row[0] for row in con.execute("SELECT run_id FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                                           [quoted]).fetchall()}
    return [value for value in quoted if value not in known]


def unknown_run_note(values: list[str], example: str | None) -> str:
    names = ", ".join(repr(v[:40]) for v in values[:3]) + (" …" if len(values) > 3 else "")
    like = f" (run ids look like {example!r}; the Run store page lists them)" if example else ""
    return (f"{names} {'matches' if len(values) == 1 else 'match'} no run id in this store, so no row has "
            f"{'it' if len(values) == 1 else 'them'}{like}")


def documented_views() -> list[str]:
    return [*BASE_VIEWS, *(kind.view for kind in TYPED_KINDS.values())]


def _unique(columns: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for column in columns:
        seen[column] = seen.get(column, 0) + 1
        out.append(column if seen[column] == 1 else f"{column}_{seen[column]}")
    return out


def json_value(value: Any) -> Any:
    """A value JSON can carry: NaN/inf as null, dates as ISO text, decimals as floats, bytes as hex."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return value


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    if isinstance(tree, dict):
        yield tree
        for child in tree.values():
            yield from _nodes(child)
    elif isinstance(tree, list):
        for child in tree:
            yield from _nodes(child)


def check_query(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raise `SqlError` (one sentence) unless `sql` is one SELECT over the documented views."""
    if not sql.strip():
        raise SqlError("the query is empty; write one SELECT over runs, results or a typed view")
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as error:
        raise SqlError(f"the query does not parse: {_first_line(error)}") from error
    if len(statements) != 1:
        raise SqlError(f"the console runs one statement at a time; this text has {len(statements)}")
    kind = statements[0].type
    if kind != _ALLOWED_STATEMENT:
        words = statements[0].query.split()  # INSTALL parses as a LOAD statement: name it as written
        name = words[0].upper() if words else str(kind).rsplit(".", 1)[-1]
        raise SqlError(f"the console is read-only: {name} statements are refused, only SELECT runs")
    serialised = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()[0][0])
    if serialised.get("error"):
        raise SqlError(f"the query cannot be checked: {serialised.get('error_message', 'unknown parse error')}")
    allowed = set(documented_views())
    ctes = {entry["key"] for node in _nodes(serialised) if isinstance(node.get("cte_map"), dict)
            for entry in node["cte_map"].get("map", []) if isinstance(entry, dict) and "key" in entry}
    for node in _nodes(serialised):
        kind_name = node.get("type")
        if kind_name == "BASE_TABLE":
            table = str(node.get("table_name", ""))
            where = [str(node.get(key) or "") for key in ("catalog_name", "schema_name")]
            if any(part and part.lower() not in ("main",) for part in where):
                raise SqlError(f"the console reads only this store's views; {'.'.join([*filter(None, where), table])}"
                               " is refused")
            if table.lower() not in allowed | {c.lower() for c in ctes}:
                raise SqlError(f"{table!r} is not one of the console's views ({', '.join(sorted(allowed))}); "
                               "files and other tables cannot be read")
        elif kind_name == "TABLE_FUNCTION":
            function = node.get("function") or {}
            name = str(function.get("function_name", "")).lower()
            if name not in ALLOWED_TABLE_FUNCTIONS:
                raise SqlError(f"the table function {name}() is refused: the console reads only the store's views "
                               "(no files, globs or other databases)")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:240]


def _open(store: RunStore) -> duckdb.DuckDBPyConnection:
    """The console's own read-only connection (waits, like the store, while another process writes)."""
    deadline = time.monotonic() + store.lock_timeout_s
    delay = 0.01
    while True:
        try:
            return duckdb.connect(str(store.path.absolute()), read_only=True, config=dict(LOCKED_CONFIG))
        except duckdb.Error as error:
            if "lock" not in str(error).lower():
                raise SqlError(f"run store {store.path} cannot be opened: {_first_line(error)}") from error
            if time.monotonic() >= deadline:
                raise StoreBusyError(f"run store {store.path} is busy (another process is writing); try again") \
                    from error
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def run_sql(store: RunStore, sql: str, row_limit: int = DEFAULT_ROW_LIMIT,
            timeout_s: float = DEFAULT_TIMEOUT_S) -> SqlResult:
    """Run one read-only SELECT over the documented views; at most `row_limit` rows, stopped after `timeout_s`."""
    if row_limit < 1:
        raise SqlError(f"the row limit must be at least 1, not {row_limit}")
    if not timeout_s > 0:
        raise SqlError(f"the timeout must be a positive number of seconds, not {timeout_s}")
    if not store.path.exists():
        raise SqlError(f"run store {store.path} does not exist yet; run something first")
    store.check()  # a file that is not a run store is refused before it is opened
    with RunStore._process_lock:  # one configuration per file and process: never beside a store connection
        con = _open(store)
        timer = threading.Timer(timeout_s, con.interrupt)
        started = time.perf_counter()
        try:
            check_query(con, sql)
            timer.start()
            cursor = con.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            types = [str(d[1]) for d in cursor.description or []]
            rows = cursor.fetchmany(row_limit + 1)
            unknown = unknown_run_ids(con, sql)
            example = con.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 1").fetchall() \
                if unknown else []
        except duckdb.InterruptException as error:
            raise SqlError(f"the query ran longer than {timeout_s:g} s and was stopped; narrow it (a WHERE on "
                           "run_id, fewer joins)") from error
        except duckdb.Error as error:
            if time.perf_counter() - started >= timeout_s and "interrupt" in str(error).lower():
                raise SqlError(f"the query ran longer than {timeout_s:g} s and was stopped") from error
            raise SqlError(f"the query failed: {_first_line(error)}") from error
        finally:
            timer.cancel()
            con.close()
    seconds = time.perf_counter() - started
    truncated = len(rows) > row_limit
    notes = (unknown_run_note(unknown, example[0][0] if example else None),) if unknown else ()
    return SqlResult(columns, types, [list(row) for row in rows[:row_limit]], truncated, row_limit, seconds, notes)
