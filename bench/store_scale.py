"""Run store at scale: a synthetic store of 10 million result rows, queried the way the pages query it, against
pandas doing the same on the same data, side by side in one process.

    python -m bench.store_scale [--rows 10000000] [--store PATH] [--keep] [--repeats 5]

The store (about 500 runs at 10 M rows; `--rows` scales the number of runs, never a run's shape) holds:

  decoding             50 %  100 prompts (10 groups × 10 templates) × 10 samples × 5 top-p settings × 5 metrics
  metric-bias          24 %  1,000 pairs × 2 sides × 8 metrics
  generation           15 %  250 prompts × 10 samples × 2 systems × (text + 2 scores)
  adaptation-measures  10 %  5,000 texts × 4 classifiers

Rows are generated in DuckDB SQL (a Python loop over 10 M dicts would dominate the build) with the columns,
texts and JSON attributes the study pipelines write, sorted run by run as shards arrive; the typed tables are
filled by the store's own `typed.insert_sql`, and every `runs`/`shards` row is what `RunStore` writes.

Timed (median of `--repeats`, after one warm-up), each with DuckDB through the store as the pages call it —
"cold": a fresh connection per store operation (`RunStore(path)`, the CLI), so DuckDB re-reads its blocks each
time; "warm": `RunStore(path, warm=True)`, the app's pages, whose reads share one process-wide connection — and
with pandas twice: on DataFrames already in memory (pandas' best case: no load time counted, typed columns
given), and "from disk": reading what the query needs from a Parquet export of the same data (pyarrow, only
the needed columns, filters pushed down to row groups of 122,880 rows as DuckDB's), which is what a page
without DuckDB would do per query:

  catalogue       the run store page's list: every run with its batch and row counts, described (the
                  description of a manifest is memoised per manifest text on every side)
  group-by        negative-sentiment share by top_p × group over every decoding run, one family
  paired compare  two decoding runs: unit sums (the data part) and the full comparison (1000 resamples)
  per-example     the same items of two runs joined, largest change first, texts attached (50 rows)

DuckDB uses its default threads (2 here); pandas is single-threaded. Results are checked to agree.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

FULL_ROWS = 10_000_000
DECODING_KEYS = ["family", "group"]  # compare's cell of a (retired-kind) decoding run, after `metric`
#: (kind, runs at FULL_ROWS, rows per run)
SHAPE = (("decoding", 200, 25_000), ("metric-bias", 150, 16_000), ("generation", 100, 15_000),
         ("adaptation-measures", 50, 20_000))
GROUPS = ("man", "woman", "Black person", "White person", "Asian person", "Christian", "Muslim", "atheist",
          "gay person", "straight person")
FAMILIES = ("gender", "gender", "race", "race", "race", "religion", "religion", "religion", "orientation",
            "orientation")
TOP_PS = (0.5, 0.7, 0.9, 0.95, 1.0)
WORDS = ("clerk", "nurse", "thief", "doctor", "teacher", "driver", "cook", "lawyer", "farmer", "pilot", "writer",
         "guard", "waiter", "judge", "singer", "baker", "painter", "miner", "sailor", "tailor")


def _sql_list(values: tuple[Any, ...]) -> str:
    return "[" + ", ".join(f"'{v}'" if isinstance(v, str) else repr(v) for v in values) + "]"


def _unit(expression: str, salt: int) -> str:
    """A deterministic pseudo-random number in [0, 1) from `expression` (DuckDB's hash is fixed per input)."""
    return f"((hash({expression}, {salt}) % 1000003) / 1000003.0)"


def generated_rows(kind: str, n_runs: int, first_run: int) -> str:
    """SELECT producing the results columns (run index `r` first) of `n_runs` runs of one kind."""
    groups, families, words = _sql_list(GROUPS), _sql_list(FAMILIES), _sql_list(WORDS)
    if kind == "decoding":
        per_run = 25_000
        return f"""
        WITH base AS (SELECT i, i % 5 AS m, (i // 5) % 5 AS c, (i // 25) % 10 AS s, (i // 250) % 100 AS p,
                             {first_run} + i // {per_run} AS r FROM range({n_runs * per_run}) t(i)),
             named AS (SELECT *, {groups}[1 + p // 10] AS grp, {families}[1 + p // 10] AS family,
                              'g' || (p // 10) || '-t' || (p % 10) AS prompt_id, {_sql_list(TOP_PS)}[1 + c] AS top_p
                       FROM base)
        SELECT r, (p * 10 + s) // 50 AS shard, prompt_id || '#' || s AS item, grp,
               'key-' || r || '-' || c AS variant,
               ['vader_compound', 'offensive_prob', 'negative_word_share', 'quality_logprob',
                'negative_regard_prob'][1 + m] AS metric,
               CASE m WHEN 0 THEN greatest(-1.0, least(1.0, 0.8 * ({_unit('p', 1)} - 0.5) + 0.3 * ({_unit('r', 2)}
                                  - 0.5) + 0.6 * ({_unit('i', 3)} - 0.5) - 0.2 * top_p))
                      WHEN 3 THEN -4 * {_unit('i', 4)} ELSE {_unit('i', 5)} END AS value,
               'The ' || grp || ' worked as a ' || {words}[1 + (hash(r, p, s) % 20)::BIGINT]
                   || ' and was known for the ' || {words}[1 + (hash(r, s, p, 9) % 20)::BIGINT] || '.' AS text,
               CASE WHEN m = 0 THEN json_object('config', json_object('temperature', 1.0, 'top_p', top_p),
                   'family', family, 'prompt', 'The ' || grp || ' worked as', 'prompt_id', prompt_id,
                   'source', 'regard', 'sample', s, 'seed', r, 'empty', false, 'redacted', false)::VARCHAR END AS attrs
        FROM named"""
    if kind == "metric-bias":
        per_run = 16_000
        return f"""
        WITH base AS (SELECT i, i % 8 AS m, (i // 8) % 2 AS v, (i // 16) % 1000 AS q,
                             {first_run} + i // {per_run} AS r FROM range({n_runs * per_run}) t(i))
        SELECT r, q // 100 AS shard, 'pair-' || q AS item,
               ['gender', 'race', 'religion', 'age', 'physical-appearance'][1 + q % 5] AS grp, CAST(v + 1 AS VARCHAR)
               AS variant, ['bleu', 'rouge1', 'meteor', 'nist', 'chrf', 'bertscore_f', 'moverscore',
                            'bartscore_f'][1 + m] AS metric,
               {_unit('q, m', 6)} + v * 0.05 * {_unit('r, m', 7)} + 0.02 * {_unit('i', 8)} AS value,
               CASE v WHEN 0 THEN 'He' ELSE 'She' END || ' is a ' || {words}[1 + q % 20] || ' in the city.' AS text,
               json_object('reference', 'The ' || {words}[1 + q % 20] || ' is a ' || {words}[1 + q % 20]
                           || ' in the city.', 'stereotypical', v = q % 2)::VARCHAR AS attrs
        FROM base"""
    if kind == "generation":
        per_run = 15_000
        return f"""
        WITH base AS (SELECT i, i % 3 AS m, (i // 3) % 2 AS y, (i // 6) % 10 AS s, (i // 60) % 250 AS p,
                             {first_run} + i // {per_run} AS r FROM range({n_runs * per_run}) t(i))
        SELECT r, (p * 10 + s) // 100 AS shard, 'gen-' || p || '-' || s || '-' || y AS item,
               {groups}[1 + p % 10] AS grp,
               CASE m WHEN 0 THEN 'system-' || y ELSE 'score:vader' END AS variant,
               ['generation', 'vader_compound', 'offensive_prob'][1 + m] AS metric,
               CASE m WHEN 0 THEN NULL ELSE {_unit('i', 9)} END AS value,
               'The ' || {groups}[1 + p % 10] || ' was known for '
                   || {words}[1 + (hash(r, p, s) % 20)::BIGINT] || '.' AS text,
               CASE WHEN m = 0 THEN json_object('prompt', 'The ' || {groups}[1 + p % 10] || ' was known for',
                   'prompt_id', 'bold-' || p, 'family', {families}[1 + p % 10], 'source', 'bold', 'sample', s,
                   'seed', r, 'row_seed', (hash(r, p, s) % 100000)::BIGINT, 'system_name', 'system ' || y,
                   'max_new_tokens', 25, 'truncate', 'sentence', 'mode', 'completion')::VARCHAR END AS attrs
        FROM base"""
    if kind == "adaptation-measures":
        per_run = 20_000
        return f"""
        WITH base AS (SELECT i, i % 4 AS k, (i // 4) % 5000 AS t, {first_run} + i // {per_run} AS r
                      FROM range({n_runs * per_run}) t(i))
        SELECT r, t // 500 AS shard, substr(md5('text' || t), 1, 20) AS item,
               ['vader', 'spacy-sentiment', 'toxic-bilstm', 'profanity'][1 + k] AS grp, 'score' AS variant,
               'score' AS metric, {_unit('i', 10)} AS value,
               '@user the ' || {words}[1 + t % 20] || ' from ' || {groups}[1 + t % 10] || ' was great #' || t AS text,
               json_object('raw', {_unit('i', 10)}, 'column', 'positive')::VARCHAR AS attrs
        FROM base"""
    raise ValueError(kind)


def manifest(kind: str, r: int) -> dict[str, Any]:
    model = f"model-{r % 20}"
    if kind == "decoding":
        request = {"model": model, "prompts": {"name": "regard", "hash": "ab12", "n": 100}, "samples": 10, "seed": r,
                   "configs": [{"temperature": 1.0, "top_p": p} for p in TOP_PS]}
    elif kind == "metric-bias":
        request = {"dataset": {"name": "winobias-type1", "hash": "cd34", "n_pairs": 1000},
                   "metric": {"name": f"metric-{r % 8}", "model": model}, "shard_pairs": 100, "seed": r}
    elif kind == "generation":
        request = {"prompts": {"name": "bold", "hash": "ef56", "n": 250}, "systems": [
            {"name": "system 0", "model": model}, {"name": "system 1", "model": model}], "samples": 10, "seed": r}
    else:
        request = {"texts": {"hash": "9a8b", "n": 5000, "pairs": 0}, "classifiers": 4, "seed": r}
    return {"kind": kind, "request": request, "result_schema": 1}


def build_store(path: Path, rows: int) -> dict[str, Any]:
    """Write the synthetic store at `path`; returns the build's facts (rows, runs, seconds, bytes)."""
    from fairness_core.store import RunStore, canonical_json, manifest_hash
    from fairness_core.store.manifest import library_versions
    from fairness_core.store.store import open_duckdb
    from fairness_core.store.typed import TYPED_KINDS, insert_sql

    started = time.perf_counter()
    versions = json.dumps(library_versions(), sort_keys=True)
    RunStore(path).query("SELECT 1")  # the schema and typed tables, as the store creates them
    con = open_duckdb(path)
    scale = rows / FULL_ROWS
    total_rows, run_index, runs_by_kind = 0, 0, {}
    try:
        for kind, full_runs, _ in SHAPE:
            n_runs = max(2, round(full_runs * scale))
            runs_by_kind[kind] = n_runs
            con.execute("CREATE TEMP TABLE ids (r BIGINT, run_id VARCHAR)")
            records = []
            for r in range(run_index, run_index + n_runs):
                document = manifest(kind, r)
                digest = manifest_hash(document)
                records.append((r, digest[:16], kind, canonical_json(document), digest))
            con.executemany("INSERT INTO ids VALUES (?, ?)", [(r, run_id) for r, run_id, *_ in records])
            con.execute(f"""CREATE TEMP TABLE staging AS SELECT ids.run_id, g.shard::INTEGER AS shard, g.item, g.grp,
                            g.variant, g.metric, g.value::DOUBLE AS value, g.text, g.attrs
                            FROM ({generated_rows(kind, n_runs, run_index)}) g JOIN ids USING (r)
                            ORDER BY ids.r, g.shard""")
            con.begin()
            con.execute("INSERT INTO results SELECT * FROM staging")
            con.execute("INSERT INTO typed_runs SELECT run_id, r + 1 FROM ids")  # as write_shard numbers them
            con.execute(insert_sql(TYPED_KINDS[kind], "staging", ordered=True))
            con.execute("INSERT INTO shards SELECT run_id, shard, count(*), now()::TIMESTAMP FROM staging GROUP BY ALL")
            con.executemany(
                "INSERT INTO runs SELECT ?, ?, ?, ?, 'complete', (SELECT count(DISTINCT shard) FROM staging WHERE "
                "run_id = ?), now()::TIMESTAMP - to_minutes(?::BIGINT), now()::TIMESTAMP, ?, NULL, NULL",
                [(run_id, kind, text, digest, run_id, r, versions) for r, run_id, kind, text, digest in records])
            con.commit()
            total_rows += con.execute("SELECT count(*) FROM staging").fetchall()[0][0]
            con.execute("DROP TABLE staging")
            con.execute("DROP TABLE ids")
            run_index += n_runs
        con.execute("CHECKPOINT")
    finally:
        con.close()
    seconds = time.perf_counter() - started
    size = path.stat().st_size + (path.with_name(path.name + ".wal").stat().st_size
                                  if path.with_name(path.name + ".wal").exists() else 0)
    return {"rows": total_rows, "runs": run_index, "runs_by_kind": runs_by_kind, "build_s": seconds, "bytes": size}


def timed(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median seconds of `repeats` calls after one warm-up, and the last result."""
    result = function()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


# -- the pandas side -----------------------------------------------------------------------------------------------
def pandas_catalogue(runs: pd.DataFrame, shards: pd.DataFrame) -> pd.DataFrame:
    """`store_catalogue` in pandas: the counts joined by pandas, the same memoised manifest description."""
    from fairness_core.store import RunInfo
    from fairness_core.store.catalog import SUMMARY_COLUMNS, _described, status_note

    counts = shards.groupby("run_id").agg(done=("shard", "size"), n=("n_rows", "sum")).reset_index()
    merged = runs.merge(counts, on="run_id", how="left").sort_values("created_at", ascending=False)
    rows = []
    for row in merged.itertuples(index=False):
        done, n = int(row.done), int(row.n)
        info = RunInfo(row.run_id, row.kind, {}, "", row.status, int(row.n_shards), done, n, row.created_at, None,
                       {}, row.error)
        rows.append({"run_id": row.run_id, "kind": row.kind, "status": row.status, **_described(row.manifest),
                     "batches": f"{done}/{int(row.n_shards)}", "rows": n, "created": row.created_at,
                     "note": status_note(info)})
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def pandas_groupby(decoding: pd.DataFrame) -> pd.DataFrame:
    part = decoding[(decoding["metric"] == "vader_compound") & (decoding["family"] == "gender")]
    part = part.assign(negative=(part["value"] <= -0.25).astype(float))
    return part.groupby(["top_p", "grp"], as_index=False).agg(negative=("negative", "mean"), n=("negative", "size"))


def _setting(frame: pd.DataFrame) -> pd.Series:
    """A retired decoding run's setting as compare names its arm ("top_p=0.5,temperature=1.0")."""
    return "top_p=" + frame["top_p"].astype(str) + ",temperature=" + frame["temperature"].astype(str)


def pandas_unit_sums(decoding: pd.DataFrame, run_id: str) -> pd.DataFrame:
    rows = decoding[decoding["run_id"] == run_id]
    rows = rows[np.isfinite(rows["value"])]
    vader = rows[rows["metric"] == "vader_compound"]
    negative = vader.assign(metric="negative_sentiment_rate", value=(vader["value"] <= -0.25).astype(float))
    rows = pd.concat([rows, negative], ignore_index=True)
    rows = rows.assign(arm=_setting(rows), group=rows["grp"], unit="prompt\u241f" + rows["prompt_id"])
    keys = ["arm", "metric", *DECODING_KEYS, "unit"]
    sums = rows.groupby(keys, as_index=False).agg(total=("value", "sum"), n=("value", "size"))
    sums["n"] = sums["n"].astype(float)
    return sums


def pandas_per_example(decoding: pd.DataFrame, texts: pd.DataFrame, a: str, b: str, limit: int = 50) -> pd.DataFrame:
    rows_a = decoding[(decoding["run_id"] == a) & (decoding["metric"] == "vader_compound")]
    rows_b = decoding[(decoding["run_id"] == b) & (decoding["metric"] == "vader_compound")]
    rows_a, rows_b = rows_a.assign(setting=_setting(rows_a)), rows_b.assign(setting=_setting(rows_b))
    joined = rows_a.merge(rows_b[["item", "setting", "metric", "grp", "variant", "value"]],
                          on=["item", "setting", "metric", "grp"], suffixes=("_a", "_b"))
    joined["change"] = joined["value_b"] - joined["value_a"]
    top = joined.assign(size=joined["change"].abs()).sort_values(["size", "item"], ascending=[False, True]).head(limit)
    for side, run_id in (("a", a), ("b", b)):
        mine = texts[texts["run_id"] == run_id][["item", "variant", "metric", "text"]]
        top = top.merge(mine.rename(columns={"variant": f"variant_{side}", "text": f"text_{side}"}),
                        on=["item", f"variant_{side}", "metric"], how="left")
    return top


# -- pandas from disk: a Parquet export of the same data, read per query ------------------------------------------
PARQUET_ROW_GROUP = 122_880  # DuckDB's row group, so both sides can skip the same blocks


def export_parquet(store: Any, folder: Path) -> dict[str, Path]:
    """The tables the pandas side reads, as Parquet (zstd), rows in the store's order (run by run)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    queries = {
        "runs": "SELECT run_id, kind, manifest, status, error, n_shards, created_at FROM runs",
        "shards": "SELECT run_id, shard, n_rows FROM shards",
        "decoding": ("SELECT run_no, run_id, item, grp, variant, metric, value, config.top_p AS top_p, "
                     "config.temperature AS temperature, family, source, prompt_id FROM decoding ORDER BY run_no"),
        "texts": ("SELECT t.run_no, r.item, r.variant, r.metric, r.text FROM results r JOIN typed_runs t "
                  "USING (run_id) JOIN runs USING (run_id) WHERE runs.kind = 'decoding' ORDER BY t.run_no"),
    }
    paths = {}
    for name, sql in queries.items():
        paths[name] = folder / f"{name}.parquet"
        with store.reading():
            table = store.query(sql)
        pq.write_table(pa.Table.from_pandas(table, preserve_index=False), paths[name],
                       row_group_size=PARQUET_ROW_GROUP, compression="zstd")
    return paths


def read_parquet(path: Path, columns: list[str], filters: list[tuple[str, str, Any]] | None = None) -> pd.DataFrame:
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=columns, filters=filters).to_pandas()


DECODING_COLUMNS = ["run_id", "item", "grp", "variant", "metric", "value", "top_p", "temperature", "family", "source",
                    "prompt_id"]


def disk_groupby(paths: dict[str, Path]) -> pd.DataFrame:
    part = read_parquet(paths["decoding"], ["top_p", "grp", "value", "metric", "family"],
                        [("metric", "=", "vader_compound"), ("family", "=", "gender")])
    return pandas_groupby(part)


def disk_run(paths: dict[str, Path], run_no: int) -> pd.DataFrame:
    return read_parquet(paths["decoding"], DECODING_COLUMNS, [("run_no", "=", run_no)])


def disk_per_example(paths: dict[str, Path], a: str, b: str, run_nos: tuple[int, int]) -> pd.DataFrame:
    rows = read_parquet(paths["decoding"], DECODING_COLUMNS,
                        [("run_no", "in", list(run_nos)), ("metric", "=", "vader_compound")])
    texts = read_parquet(paths["texts"], ["run_no", "item", "variant", "metric", "text"],
                         [("run_no", "in", list(run_nos)), ("metric", "=", "vader_compound")])
    texts["run_id"] = texts["run_no"].map({run_nos[0]: a, run_nos[1]: b})
    return pandas_per_example(rows, texts, a, b)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.store_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=FULL_ROWS, help="result rows to build (default 10,000,000)")
    parser.add_argument("--store", help="build here (default: a temporary folder); reused when it exists")
    parser.add_argument("--keep", action="store_true", help="keep the temporary store")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv or [])  # `python -m bench` calls main() with the defaults

    from fairness_core.compare import compare_runs, per_example
    from fairness_core.compare.align import compare_arms, match_arms, unit_sums
    from fairness_core.compare.readers import legacy_rows
    from fairness_core.store import RunStore, close_warm_reads
    from fairness_core.store.catalog import store_catalogue

    folder = Path(tempfile.mkdtemp(prefix="store-scale-")) if not args.store else None
    path = Path(args.store) if args.store else folder / "runs.duckdb"  # type: ignore[operator]
    try:
        if path.exists():
            built = {"rows": None, "build_s": None, "bytes": path.stat().st_size}
            print(f"reusing {path}")
        else:
            print(f"building {args.rows:,} rows in {path} ...", flush=True)
            built = build_store(path, args.rows)
            print(f"built {built['rows']:,} rows in {built['runs']} runs ({built['runs_by_kind']}) in "
                  f"{built['build_s']:.1f} s; {built['bytes'] / 1e6:.0f} MB on disk = "
                  f"{built['bytes'] / 1e6 / (built['rows'] / 1e6):.1f} MB per million rows", flush=True)
        store, warm_store = RunStore(path), RunStore(path, warm=True)
        n_rows = store.query("SELECT count(*) AS n FROM results")["n"].item()
        decoding_runs = store.query("SELECT run_id FROM runs WHERE kind = 'decoding' ORDER BY run_id")["run_id"]
        a, b = decoding_runs.iloc[0], decoding_runs.iloc[1]
        info_a, info_b = store.get_run(a), store.get_run(b)

        started = time.perf_counter()
        runs_frame = store.query("SELECT * FROM runs")
        shards_frame = store.query("SELECT * FROM shards")
        decoding_frame = store.query(
            "SELECT run_id, item, grp, variant, metric, value, config.top_p AS top_p, config.temperature AS "
            "temperature, family, source, prompt_id FROM decoding")
        texts_frame = store.query("SELECT r.run_id, r.item, r.variant, r.metric, r.text FROM results r "
                                  "JOIN runs USING (run_id) WHERE runs.kind = 'decoding'")
        load_s = time.perf_counter() - started
        memory = sum(f.memory_usage(deep=True).sum() for f in (runs_frame, shards_frame, decoding_frame, texts_frame))
        print(f"pandas side: {len(decoding_frame):,} decoding rows + {len(texts_frame):,} texts loaded in "
              f"{load_s:.1f} s ({memory / 1e9:.2f} GB in memory; not counted below)", flush=True)
        started = time.perf_counter()
        parquet_folder = Path(tempfile.mkdtemp(prefix="store-scale-parquet-"))
        paths = export_parquet(store, parquet_folder)
        parquet_mb = sum(p.stat().st_size for p in paths.values()) / 1e6
        print(f"Parquet export for pandas from disk: {parquet_mb:.0f} MB in {time.perf_counter() - started:.1f} s "
              "(not counted below)", flush=True)
        run_nos = store.query("SELECT run_id, run_no FROM typed_runs").set_index("run_id")["run_no"]
        no_a, no_b = int(run_nos[a]), int(run_nos[b])

        group_sql = ("SELECT config.top_p AS top_p, grp, avg(CAST(value <= -0.25 AS DOUBLE)) AS negative, "
                     "count(*) AS n FROM decoding WHERE metric = 'vader_compound' AND family = 'gender' "
                     "GROUP BY ALL ORDER BY ALL")
        def duckdb_cases(on: RunStore) -> list[Callable[[], Any]]:
            return [lambda: store_catalogue(on), lambda: on.query(group_sql),
                    lambda: (unit_sums(on, info_a), unit_sums(on, info_b)),
                    lambda: compare_runs(on, [a, b]).rows,
                    lambda: per_example(on, a, b, metric="vader_compound", limit=50)]

        def full_compare(sums_a: pd.DataFrame, sums_b: pd.DataFrame) -> pd.DataFrame:
            rows_a, rows_b = legacy_rows(info_a, sums_a), legacy_rows(info_b, sums_b)
            return pd.concat([compare_arms(rows_a, rows_b, contrast, 1000, index + 1)
                              for index, contrast in enumerate(match_arms(rows_a, rows_b))], ignore_index=True)

        names = ["catalogue (500 runs, described)", "group-by top_p x group, one family",
                 "paired compare: unit sums of 2 runs", "paired compare: full (1000 resamples)",
                 "per-example join, 50 rows with texts"]
        in_memory = [lambda: pandas_catalogue(runs_frame, shards_frame), lambda: pandas_groupby(decoding_frame),
                     lambda: (pandas_unit_sums(decoding_frame, a), pandas_unit_sums(decoding_frame, b)),
                     lambda: full_compare(pandas_unit_sums(decoding_frame, a), pandas_unit_sums(decoding_frame, b)),
                     lambda: pandas_per_example(decoding_frame, texts_frame, a, b)]
        from_disk = [
            lambda: pandas_catalogue(read_parquet(paths["runs"], ["run_id", "kind", "manifest", "status", "error",
                                                                  "n_shards", "created_at"]),
                                     read_parquet(paths["shards"], ["run_id", "shard", "n_rows"])),
            lambda: disk_groupby(paths),
            lambda: (pandas_unit_sums(disk_run(paths, no_a), a), pandas_unit_sums(disk_run(paths, no_b), b)),
            lambda: full_compare(pandas_unit_sums(disk_run(paths, no_a), a),
                                 pandas_unit_sums(disk_run(paths, no_b), b)),
            lambda: disk_per_example(paths, a, b, (no_a, no_b)),
        ]
        results = []
        print(f"{'':<40} {'duckdb cold':>12} {'duckdb warm':>12} {'pandas mem':>11} {'pandas disk':>12}  "
              "mem/cold  mem/warm  disk/cold  disk/warm")
        for name, cold, warm, panda, disk in zip(names, duckdb_cases(store), duckdb_cases(warm_store), in_memory,
                                                 from_disk, strict=True):
            close_warm_reads(path)
            cold_s, duck_out = timed(cold, args.repeats)  # a fresh connection per store operation (the CLI)
            warm_s, warm_out = timed(warm, args.repeats)  # the process-wide warm connection (the app's pages)
            close_warm_reads(path)
            panda_s, panda_out = timed(panda, max(1, min(args.repeats, 3)))
            disk_s, disk_out = timed(disk, max(1, min(args.repeats, 3)))
            for other in (warm_out, panda_out, disk_out):
                check(name, duck_out, other)
            row = {"query": name, "duckdb_cold_ms": cold_s * 1e3, "duckdb_warm_ms": warm_s * 1e3,
                   "pandas_memory_ms": panda_s * 1e3, "pandas_disk_ms": disk_s * 1e3,
                   "memory_over_cold": panda_s / cold_s, "memory_over_warm": panda_s / warm_s,
                   "disk_over_cold": disk_s / cold_s, "disk_over_warm": disk_s / warm_s}
            results.append(row)
            print(f"{name:<40} {cold_s * 1e3:9.1f} ms {warm_s * 1e3:9.1f} ms {panda_s * 1e3:8.1f} ms "
                  f"{disk_s * 1e3:9.1f} ms  {row['memory_over_cold']:7.1f}x {row['memory_over_warm']:8.1f}x "
                  f"{row['disk_over_cold']:9.1f}x {row['disk_over_warm']:9.1f}x", flush=True)
        close_warm_reads(path)
        shutil.rmtree(parquet_folder, ignore_errors=True)
        size = path.stat().st_size
        print(json.dumps({"rows": int(n_rows), "build": built, "bytes": size,
                          "mb_per_million_rows": size / 1e6 / (n_rows / 1e6), "pandas_load_s": load_s,
                          "pandas_memory_gb": memory / 1e9, "parquet_mb": parquet_mb, "results": results},
                         default=str))
    finally:
        if folder is not None and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
        elif folder is not None:
            print(f"kept {path}")


def check(name: str, duck: Any, panda: Any) -> None:
    """Both sides computed the same thing (a benchmark of different answers would mean nothing)."""
    if name.startswith("catalogue"):
        assert sorted(duck["run_id"]) == sorted(panda["run_id"]) and (duck["rows"].sum() == panda["rows"].sum())
    elif name.startswith("group-by"):
        merged = duck.merge(panda, on=["top_p", "grp"], suffixes=("_d", "_p"))
        assert len(merged) == len(duck) == len(panda)
        assert np.allclose(merged["negative_d"], merged["negative_p"]) and (merged["n_d"] == merged["n_p"]).all()
    elif name.startswith("paired compare: unit"):
        for d, p in zip(duck, panda, strict=True):
            assert len(d) == len(p) and np.isclose(d["total"].sum(), p["total"].sum())
    elif name.startswith("paired compare: full"):
        assert len(duck) == len(panda) and np.allclose(np.sort(duck["difference"]), np.sort(panda["difference"]))
    elif name.startswith("per-example"):
        assert len(duck) == len(panda) and np.allclose(duck["change"].abs(), panda["change"].abs())
        assert duck["text_a"].notna().all() and panda["text_a"].notna().all()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import sys

    main(sys.argv[1:])
