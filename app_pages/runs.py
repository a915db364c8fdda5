"""Run store browser: every stored run, its manifest, its rows, and exports."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import common

st.title("Run store")
st.markdown(
    "Every computation in the lab is stored here with its **manifest** (everything that determines its "
    "numbers). Asking for the same thing again is answered from this store without loading a model. "
    "Runs that were interrupted show as *incomplete* or *cancelled*; running them again resumes them."
)

store = common.get_store()
runs = store.list_runs()
if not runs:
    st.info(f"No runs stored yet in `{store.path}`. Run something on one of the analysis pages or the CLI.")
    st.stop()

table = pd.DataFrame([{
    "run": run.run_id,
    "kind": run.kind,
    "status": run.status,
    "batches": f"{run.shards_done}/{run.n_shards}",
    "rows": run.n_rows,
    "created": run.created_at,
    "finished": run.finished_at,
} for run in runs])
kinds = sorted(table["kind"].unique())
chosen_kinds = st.multiselect("Kinds", kinds, default=kinds)
visible = table[table["kind"].isin(chosen_kinds)]
st.dataframe(visible, hide_index=True, width="stretch")

run_id = st.selectbox("Inspect run", visible["run"].tolist())
if run_id:
    info = store.get_run(run_id)
    assert info is not None
    common.manifest_box(info.manifest, info.run_id, from_cache=True)
    st.caption("Library versions: " + ", ".join(f"{k} {v}" for k, v in sorted(info.versions.items())))
    if info.error:
        st.error(f"This run stopped with: {info.error}")
    rows = store.query("SELECT item, grp, variant, metric, value, text FROM results WHERE run_id = ? LIMIT 500",
                       [run_id])
    st.markdown(f"First {len(rows)} of {info.n_rows} rows")
    st.dataframe(rows, hide_index=True, width="stretch")
    common.export_buttons(run_id, key=f"export_{run_id}")
