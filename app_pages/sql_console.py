"""SQL console: one read-only SELECT over the store's documented views; table, quick chart, CSV/Parquet."""

from __future__ import annotations

import io

import pandas as pd
import streamlit as st

from fairness_core.compare import DEFAULT_ROW_LIMIT, SqlError, documented_views, run_sql
from fairness_core.store import StoreError, describe_views
from ui import common
from ui.compare_charts import quick_chart

EXAMPLE = ("SELECT run_id, metric, grp, count(*) AS n, avg(value) AS mean\n"
           "FROM results\nGROUP BY ALL\nORDER BY run_id, metric, grp\nLIMIT 100")

st.title("SQL console")
st.markdown(
    "For questions the pages did not foresee: one **read-only** `SELECT` over the run store's views "
    f"({', '.join(common.inline_code(v) for v in documented_views())}). Typed views carry each kind's attributes as "
    "columns (`config.top_p`, `family`, `attribute`, …); texts live in `results`. Writes, files, other "
    "databases and extensions are refused; long queries are stopped."
)
with st.expander("Views and their columns"):
    st.dataframe(pd.DataFrame(describe_views()), hide_index=True, width="stretch")
    st.caption("Also: runs (run_id, kind, manifest, status, created_at, …), shards, results (run_id, shard, item, "
               "grp, variant, metric, value, text, attrs JSON). See docs/store.md.")

with st.form("sql_form"):
    query = st.text_area("Query", value=EXAMPLE, height=160, key="sql_query", max_chars=20_000)
    options = st.columns(3)
    limit = options[0].number_input("Row limit", 1, 100_000, DEFAULT_ROW_LIMIT, step=1000, key="sql_limit")
    timeout = options[1].number_input("Timeout (s)", 0.5, 60.0, 10.0, step=0.5, key="sql_timeout")
    submitted = st.form_submit_button("Run query", type="primary")

if submitted:
    try:
        st.session_state["sql_result"] = run_sql(common.get_store(), query, row_limit=int(limit),
                                                 timeout_s=float(timeout))
        st.session_state.pop("sql_error", None)
    except (SqlError, StoreError) as error:
        st.session_state["sql_error"] = str(error)
        st.session_state.pop("sql_result", None)

if "sql_error" in st.session_state:
    st.error(common.escape_markdown(st.session_state["sql_error"]))
result = st.session_state.get("sql_result")
if result is None:
    st.stop()
frame = result.frame()
st.caption(common.escape_markdown(f"{len(frame)} row(s) in {result.seconds * 1000:.0f} ms"
           + (f"; cut at the row limit of {result.row_limit}" if result.truncated else "")))
for note in result.notes:  # a quoted run id that names no run: why the result is empty
    st.info(common.escape_markdown(f"{note}."))
st.dataframe(frame, hide_index=True, width="stretch")

downloads = st.columns(4)
downloads[0].download_button("CSV", frame.to_csv(index=False), file_name="query.csv", mime="text/csv",
                             key="sql_csv", on_click="ignore")
try:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    downloads[1].download_button("Parquet", buffer.getvalue(), file_name="query.parquet", key="sql_parquet",
                                 on_click="ignore")
except (ValueError, TypeError, ImportError) as error:  # e.g. a column mixing types that Parquet cannot hold
    downloads[1].caption(common.escape_markdown(f"No Parquet for this result: {str(error).splitlines()[0][:120]}"))

numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and not
           pd.api.types.is_bool_dtype(frame[c])]
if numeric and len(frame.columns) >= 2 and not frame.empty:
    st.markdown("**Quick chart**")
    chart = st.columns(3)
    x = chart[0].selectbox("x", list(frame.columns), key="sql_x")
    y = chart[1].selectbox("y", numeric, index=len(numeric) - 1, key="sql_y")
    others = [c for c in frame.columns if c not in (x, y) and frame[c].nunique() <= 12]
    color = chart[2].selectbox("colour", ["(none)", *others], key="sql_color")
    st.plotly_chart(quick_chart(frame.head(2000), x, y, None if color == "(none)" else color), width="stretch",
                    key="sql_chart")
    common.how_to_read("The first 2,000 rows of the result: a bar per x value (a dot when x is numeric).")
