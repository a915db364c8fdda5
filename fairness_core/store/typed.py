"""Typed views: every run kind's per-row attributes as DuckDB columns, so slicing by a field is a column read.

`results.attrs` keeps each row's attributes as JSON text (the store accepts any work unit's rows). Parsing
that JSON on every query costs ~0.3-1 s per 2 million rows on this machine; a materialised column costs
~0.05 s. So each known kind gets a table `typed_<view>` that `RunStore.write_shard` fills in the same
transaction as `results` (a crash loses both or neither), with the key columns (run_id, shard, item, grp,
variant, metric, value) and one typed column per attribute. Each run also gets a number (`run_no`, table
`typed_runs`, growing as runs are written): rows arrive run by run, so DuckDB's per-block min/max of `run_no`
lets a one-run filter skip every other run's blocks (a filter on the hash-like `run_id` cannot).
Dotted names become STRUCT members:
`config.top_p` in the `decoding` view is `config STRUCT(top_p DOUBLE, top_k INTEGER, temperature DOUBLE)`,
read with the same dotted SQL. Texts stay in `results` only (they are the bulk of the bytes); join on
(run_id, item, variant, metric) to get them.

A row without attributes takes those of the row with the same (run_id, shard, item, variant) that has
them: the legacy decoding sweep wrote its generation's attributes once, on the `vader_compound` row, and its
other metrics (offensive_prob, ...) describe the same generation.

A `generation` run (what the decoding page, live moves, CAIRO and template adaptation write) stores a
generation once, as a row with metric "generation" (variant = the system's key, attrs = prompt, group, family,
sample, ...), and each scorer's columns as rows of their own (variant "score:<scorer hash>", no attrs) — in
the same shard, or in a later run when stored generations are only scored. So every score row takes its
generation's attributes and system by the generation id (`item`), wherever that row is stored, and the system's
model, quantization and decoding settings (`config.top_p`, ...) come from the run manifest's `systems` record
with that key; the prompt set's name from the manifest too. Every score row then carries every attribute.

The view `<view>` over each table adds the kind's own names for the generic columns (`attribute` for a
metric-bias run's group, `pair` for its item, ...). A kind's signature (`typed_schema`) hashes its table
definition and its INSERT, so when either changes the table is rebuilt from `results` the next time a
read-write connection opens the store (stores written before this module, or before a change, get theirs then).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import duckdb

KEY_COLUMNS = (("run_id", "VARCHAR"), ("shard", "INTEGER"), ("item", "VARCHAR"), ("grp", "VARCHAR"),
               ("variant", "VARCHAR"), ("metric", "VARCHAR"), ("value", "DOUBLE"))


#: where a field's value is read: the row's attributes, its system's manifest record, the run's manifest, or
#: an SQL expression over the row itself (`path` is then that expression)
SCOPES = {"attrs": "a", "system": "sys", "run": "m", "row": ""}


@dataclass(frozen=True)
class Field:
    name: str  # column name; `a.b` makes member b of STRUCT column a
    path: str  # JSON path inside attrs (or the system or manifest record; an SQL expression for scope "row")
    sql_type: str  # DuckDB type the text is cast to (TRY_CAST: a value of another type reads as NULL)
    about: str
    scope: str = "attrs"


@dataclass(frozen=True)
class TypedKind:
    kind: str  # the runs.kind it types
    view: str  # the view's name (a SQL identifier)
    unit: str  # what one item is (the unit a paired comparison resamples)
    fields: tuple[Field, ...]
    aliases: dict[str, str] = field(default_factory=dict)  # generic column -> the kind's own name for it
    #: how a row without attributes gets them: "partition" (from the row with the same run, shard, item and
    #: variant) or "generation" (from the generation row with the same item, wherever stored; see the docstring)
    fill: str = "partition"

    @property
    def table(self) -> str:
        return f"typed_{self.view}"

    def lookup_needed(self, frame: Any) -> bool:
        """Whether rows about to be written need their generation's attributes from rows stored before them
        (a score of a stored generation); False lets a write skip reading the store's earlier rows."""
        if self.fill != "generation" or frame.empty:
            return False
        generated = set(frame.loc[frame["metric"] == GENERATION_METRIC, "item"])
        return bool((~frame.loc[frame["metric"] != GENERATION_METRIC, "item"].isin(generated)).any())


TYPED_KINDS: dict[str, TypedKind] = {spec.kind: spec for spec in (
    TypedKind("decoding", "decoding", "prompt × sample", (
        Field("config.top_p", "$.config.top_p", "DOUBLE", "nucleus threshold p (NULL when not set)"),
        Field("config.top_k", "$.config.top_k", "INTEGER", "top-k (NULL when not set)"),
        Field("config.temperature", "$.config.temperature", "DOUBLE", "sampling temperature"),
        Field("family", "$.family", "VARCHAR", "group family (gender, race, religion, ...)"),
        Field("source", "$.source", "VARCHAR", "prompt set (regard templates, BOLD, ...)"),
        Field("prompt", "$.prompt", "VARCHAR", "the prompt text"),
        Field("prompt_id", "$.prompt_id", "VARCHAR", "the prompt's id (template × group)"),
        Field("sample", "$.sample", "INTEGER", "sample number of the prompt"),
        Field("seed", "$.seed", "BIGINT", "the run's seed"),
        Field("empty", "$.empty", "BOOLEAN", "the model wrote nothing"),
        Field("redacted", "$.redacted", "BOOLEAN", "names were redacted before scoring"),
    ), {"variant": "config_key"}),
    TypedKind("generation", "generation", "prompt × sample", (
        Field("system", "system_key", "VARCHAR", "the system's key (model, decoding and quantization): the "
              "generation's variant, also on its score rows", "row"),
        Field("scorer", "CASE WHEN s.variant LIKE 'score:%' THEN substr(s.variant, 7) END", "VARCHAR",
              "the scorer's signature hash (score rows; NULL on the generation row)", "row"),
        Field("system_name", "$.system_name", "VARCHAR", "the system (model, quantization or decoding) shown"),
        Field("model", "$.model.source", "VARCHAR", "the model (preset, hub id, file name or endpoint)", "system"),
        Field("quantization", "$.quantization", "VARCHAR", "none, 8bit or 4bit", "system"),
        Field("config.temperature", "$.decoding.temperature", "DOUBLE", "sampling temperature (NULL when greedy)",
              "system"),
        Field("config.top_p", "$.decoding.top_p", "DOUBLE", "nucleus threshold p (NULL when not set)", "system"),
        Field("config.top_k", "$.decoding.top_k", "INTEGER", "top-k (NULL when not set)", "system"),
        Field("config.greedy", "$.decoding.greedy", "BOOLEAN", "greedy decoding (NULL when sampling)", "system"),
        Field("prompt_set", "$.request.prompts.name", "VARCHAR", "the prompt set's name (regard templates, BOLD, "
              "custom prompts, a CAIRO set, ...)", "run"),
        Field("prompt", "$.prompt", "VARCHAR", "the prompt text"),
        Field("prompt_id", "$.prompt_id", "VARCHAR", "the prompt's id"),
        Field("family", "$.family", "VARCHAR", "group family"),
        Field("attributes", "$.attributes", "VARCHAR", "a prompt about several attributes at once: each one's value "
              "as a JSON object ({\"gender\": \"woman\", \"race\": \"Black\"}; NULL for one attribute)"),
        Field("source", "$.source", "VARCHAR", "where the prompt comes from (a regard template, BOLD, custom)"),
        Field("sample", "$.sample", "INTEGER", "sample number"),
        Field("seed", "$.seed", "BIGINT", "seed"),
        Field("row_seed", "$.row_seed", "BIGINT", "the seed of this row's sampler"),
        Field("max_new_tokens", "$.max_new_tokens", "INTEGER", "generation length cap"),
        Field("truncate", "$.truncate", "VARCHAR", "truncation rule"),
        Field("mode", "$.mode", "VARCHAR", "completion or chat"),
    ), {}, fill="generation"),
    TypedKind("metric-bias", "metric_bias", "pair", (
        Field("reference", "$.reference", "VARCHAR", "the neutral reference the candidate was scored against"),
        Field("stereotypical", "$.stereotypical", "BOOLEAN", "this candidate is the stereotypical one"),
    ), {"item": "pair", "grp": "attribute", "variant": "side"}),
    TypedKind("adaptation-measures", "adaptation_measures", "text", (
        Field("raw", "$.raw", "DOUBLE", "the classifier's raw output before mapping"),
        Field("column", "$.column", "VARCHAR", "which classifier output was read"),
        Field("original", "$.original", "VARCHAR", "the original template (similarity rows)"),
    ), {"grp": "classifier"}),
    TypedKind("adaptation-ner", "adaptation_ner", "text", (
        Field("mentions", "$.mentions", "JSON", "PERSON mentions as [start, end, text] lists"),
    ), {}),
    TypedKind("datscore-translations", "datscore_translations", "text", (
        Field("input", "$.input", "VARCHAR", "the translated text"),
        Field("src_lang", "$.src_lang", "VARCHAR", "source language"),
    ), {"grp": "entity", "variant": "tgt_lang"}),
    TypedKind("datscore-directions", "datscore_directions", "segment", (
        Field("n_tokens", "$.n_tokens", "INTEGER", "target tokens scored"),
    ), {"item": "segment", "grp": "direction"}),
)}


GENERATION_METRIC = "generation"  # the metric of a generation row (fairness_core.generation.task)


def _field_expression(spec: Field, source: str) -> str:
    if spec.scope == "row":
        return f"TRY_CAST({spec.path} AS {spec.sql_type})"
    source = SCOPES[spec.scope] if spec.scope != "attrs" else source
    if spec.sql_type == "JSON":
        return f"json_extract({source}, '{spec.path}')"
    return f"TRY_CAST(json_extract_string({source}, '{spec.path}') AS {spec.sql_type})"


def _columns(kind: TypedKind, source: str) -> list[tuple[str, str, str]]:
    """(column name, DuckDB type, SELECT expression) of the typed columns, STRUCTs grouped in first-seen order."""
    columns: list[tuple[str, str, str]] = []
    structs: dict[str, list[Field]] = {}
    for spec in kind.fields:
        if "." in spec.name:
            parent = spec.name.split(".", 1)[0]
            if parent not in structs:
                structs[parent] = []
                columns.append((parent, "", ""))  # placeholder, filled below
            structs[parent].append(spec)
        else:
            columns.append((spec.name, spec.sql_type, _field_expression(spec, source)))
    filled = []
    for name, sql_type, expression in columns:
        if name in structs:
            members = structs[name]
            sql_type = "STRUCT(" + ", ".join(f"{m.name.split('.', 1)[1]} {m.sql_type}" for m in members) + ")"
            expression = "struct_pack(" + ", ".join(
                f"{m.name.split('.', 1)[1]} := {_field_expression(m, source)}" for m in members) + ")"
        filled.append((name, sql_type, expression))
    return filled


def signature(kind: TypedKind) -> str:
    """Changes whenever the table's shape or extraction changes (then the table is rebuilt)."""
    text = repr((_create_table_sql(kind), _columns(kind, "a"), kind.view, insert_sql(kind, "source", lookup=True),
                 view_sql(kind)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _create_table_sql(kind: TypedKind) -> str:
    parts = ["run_no BIGINT NOT NULL", *(f"{name} {sql_type}" for name, sql_type in KEY_COLUMNS)]
    parts += [f'"{name}" {sql_type}' for name, sql_type, _ in _columns(kind, "a")]
    return f"CREATE OR REPLACE TABLE {kind.table} ({', '.join(parts)})"


#: Gives a run its number the first time one of its shards is typed (numbers only grow).
REGISTER_RUN_SQL = ("INSERT OR IGNORE INTO typed_runs SELECT ?, coalesce((SELECT max(run_no) FROM typed_runs), 0) + 1")


def insert_sql(kind: TypedKind, source: str, ordered: bool = False, lookup: bool = True) -> str:
    """INSERT of `source`'s rows (the results columns) into the kind's typed table (runs registered first).

    For a generation kind, `lookup` reads the generation rows of `results` (every run) for rows whose generation
    is not among `source`'s own rows; without it only `source`'s generation rows are used (`lookup_needed`)."""
    keys = ", ".join(f"s.{name}" for name, _ in KEY_COLUMNS)
    typed = ", ".join(expression for _, _, expression in _columns(kind, "a"))
    order = " ORDER BY t.run_no, s.shard" if ordered else ""
    if kind.fill == "generation":
        generations = "results" if lookup else source
        rows = (f"SELECT s.*, coalesce(s.attrs, g.attrs) AS a, CASE WHEN s.metric = '{GENERATION_METRIC}' "
                f"THEN s.variant ELSE g.variant END AS system_key FROM {source} s LEFT JOIN (SELECT item AS g_item, "
                f"any_value(variant) AS variant, any_value(attrs) AS attrs FROM {generations} WHERE metric = "
                f"'{GENERATION_METRIC}' AND item IN (SELECT item FROM {source}) GROUP BY item) g ON g.g_item = s.item")
        joins = (" LEFT JOIN (SELECT run_id AS m_run, manifest AS m FROM runs) rm ON rm.m_run = s.run_id"
                 " LEFT JOIN (SELECT run_id AS sys_run, json_extract_string(sys, '$.key') AS sys_key, any_value(sys) "
                 "AS sys FROM (SELECT run_id, unnest(CAST(coalesce(json_extract(manifest, '$.request.systems'), "
                 "'[]') AS JSON[])) AS sys FROM runs WHERE run_id IN (SELECT run_id FROM "
                 f"{source})) GROUP BY ALL) sy ON sy.sys_run = s.run_id AND sy.sys_key = s.system_key")
    else:
        rows = (f"SELECT *, coalesce(attrs, first_value(attrs IGNORE NULLS) OVER (PARTITION BY run_id, shard, item, "
                f"variant)) AS a FROM {source}")
        joins = ""
    return (f"INSERT INTO {kind.table} SELECT t.run_no, {keys}, {typed} FROM ({rows}) s "
            f"JOIN typed_runs t ON t.run_id = s.run_id{joins}{order}")


def view_sql(kind: TypedKind) -> str:
    aliases = "".join(f", {column} AS {alias}" for column, alias in kind.aliases.items())
    return f"CREATE OR REPLACE VIEW {kind.view} AS SELECT *{aliases} FROM {kind.table}"


def typed_current(con: duckdb.DuckDBPyConnection) -> bool:
    """True when `ensure_typed` has nothing to do: every typed table at its current signature and every view there
    (read-only: a store that is up to date is read without opening it for writing)."""
    existing = {row[0] for row in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    if not {"typed_schema", "typed_runs"} <= existing:
        return False
    known = dict(con.execute("SELECT name, signature FROM typed_schema").fetchall())
    return all(known.get(kind.table) == signature(kind) and {kind.table, kind.view} <= existing
               for kind in TYPED_KINDS.values())


def ensure_typed(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or rebuild, when a kind's fields changed) every typed table and view; one transaction."""
    con.execute("CREATE TABLE IF NOT EXISTS typed_schema (name VARCHAR PRIMARY KEY, signature VARCHAR NOT NULL)")
    con.execute("CREATE TABLE IF NOT EXISTS typed_runs (run_id VARCHAR PRIMARY KEY, run_no BIGINT NOT NULL)")
    known = dict(con.execute("SELECT name, signature FROM typed_schema").fetchall())
    existing = {row[0] for row in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    for kind in TYPED_KINDS.values():
        wanted = signature(kind)
        rebuild = known.get(kind.table) != wanted or kind.table not in existing
        if not rebuild and kind.view in existing:
            continue  # up to date: an open that only reads (or fails) must leave the file byte-identical
        if rebuild:
            con.begin()
            con.execute(_create_table_sql(kind))
            con.execute("INSERT INTO typed_runs SELECT run_id, (SELECT coalesce(max(run_no), 0) FROM typed_runs) + "
                        "row_number() OVER (ORDER BY created_at, run_id) FROM runs WHERE run_id NOT IN "
                        "(SELECT run_id FROM typed_runs)")
            con.execute(insert_sql(kind, f"(SELECT r.* FROM results r JOIN runs USING (run_id) "
                                         f"WHERE runs.kind = '{kind.kind}')", ordered=True))
            con.execute("INSERT OR REPLACE INTO typed_schema VALUES (?, ?)", [kind.table, wanted])
            con.commit()
        con.execute(view_sql(kind))


def describe_views() -> list[dict[str, str]]:
    """Every typed view's columns with their types and meaning (the SQL console's and the docs' reference)."""
    described = []
    for kind in TYPED_KINDS.values():
        for name, sql_type in KEY_COLUMNS:
            alias = kind.aliases.get(name)
            described.append({"view": kind.view, "kind": kind.kind, "column": name, "type": sql_type,
                              "about": f"also as {alias}" if alias else ""})
        for spec in kind.fields:
            described.append({"view": kind.view, "kind": kind.kind, "column": spec.name, "type": spec.sql_type,
                              "about": spec.about})
    return described
