"""Run store browser: what every stored run computed, searchable; one click opens its manifest, rows, exports."""

from __future__ import annotations

import hashlib

import streamlit as st

from fairness_core.store import StoreError, empty_cancelled, filter_catalogue, status_note
from ui import common
from ui.check_view import show_check

RUN_PARAM = "run"  # the opened run, in the URL so a view can be shared as a link
TABLE_KEY = "runs_table"
#: what tells runs apart first (when, what kind, what it computed), so it is on screen without scrolling sideways
COLUMN_ORDER = ("run_id", "created", "kind", "what", "dataset", "model", "status", "size", "rows", "version", "seed",
                "batches", "note")
#: the list of runs shows what tells them apart and fits 1280 px (issue 43: its right columns were cut); the
#: opened run's row below shows every column
LIST_ORDER = ("run_id", "created", "kind", "what", "dataset", "model", "status", "rows")
COLUMNS = {
    "run_id": st.column_config.TextColumn("run", width="small"),
    "kind": st.column_config.TextColumn("kind", width="small"),
    "status": st.column_config.TextColumn("status", width="small"),
    "what": st.column_config.TextColumn("what it computed", width="medium",
                                        help="metric and configuration, decoding settings, classifiers, …"),
    "dataset": st.column_config.TextColumn("data", width="medium"),
    "model": st.column_config.TextColumn("model", width="small"),
    "version": st.column_config.TextColumn("version", help="first 12 characters of the data's content hash"),
    "seed": st.column_config.TextColumn("seed", width="small"),
    "created": st.column_config.DatetimeColumn("created", format="YYYY-MM-DD HH:mm"),
    "batches": st.column_config.TextColumn("batches", width="small"),
    "rows": st.column_config.NumberColumn("rows", width="small"),
    "note": st.column_config.TextColumn("note", width="medium"),
}

st.title("Run store")
st.markdown(
    "Every computation in the lab is stored here with its **manifest** (everything that determines its "
    "numbers). Asking for the same thing again is answered from this store without loading a model. "
    "Runs that were interrupted show as *incomplete* or *cancelled*; running them again resumes them."
)

store = common.get_store()
table = common.run_catalogue_or_stop(store)
if table.empty:
    st.info(f"No runs stored yet in {common.inline_code(str(store.path))}. Run something on one of the "
            "analysis pages or the CLI.")
    st.stop()

filters = st.columns([3, 2, 2])
search = filters[0].text_input("Search runs", key="runs_search", max_chars=200,
                               placeholder="e.g. winobias bleu, smollm2, a run id or a dataset hash")
kinds = sorted(table["kind"].unique())
chosen_kinds = filters[1].multiselect("Kinds", kinds, default=kinds, key="runs_kinds")
statuses = sorted(table["status"].unique())
chosen_statuses = filters[2].multiselect("Status", statuses, default=statuses, key="runs_statuses")
empty = empty_cancelled(table)
show_empty = bool(empty.any()) and st.checkbox(
    f"Show the {int(empty.sum())} cancelled run(s) that stored nothing", key="runs_show_empty",
    help="Stepping a slider with auto-generate on starts a run per step and cancels the one before: those stored "
         "no row, so they are hidden unless you ask.")
listed = table if show_empty else table[~empty]
visible = filter_catalogue(listed, kinds=chosen_kinds, statuses=chosen_statuses, search=search)
st.caption(f"{len(visible)} of {len(listed)} runs. Click a row to open it.")


# Filtering changes which run sits in which row: a key per filter state clears a selection that would
# otherwise point at another run.
filter_state = repr((search, sorted(chosen_kinds), sorted(chosen_statuses), show_empty)).encode("utf-8", "replace")
table_key = f"{TABLE_KEY}_{hashlib.sha1(filter_state).hexdigest()[:10]}"
visible_ids = visible["run_id"].tolist()


def _open_selected() -> None:
    """Selecting a row opens that run (and puts it in the URL); clearing the selection closes it."""
    selection = st.session_state[table_key].selection.rows
    if selection and selection[0] < len(visible_ids):
        st.query_params[RUN_PARAM] = visible_ids[selection[0]]
    elif RUN_PARAM in st.query_params:
        del st.query_params[RUN_PARAM]


st.dataframe(
    visible,
    hide_index=True,
    width="stretch",
    key=table_key,
    on_select=_open_selected,
    selection_mode="single-row",
    column_order=LIST_ORDER,
    column_config=COLUMNS,
)
common.how_to_read(
    "Each row is one stored computation. *data* says which data; *what it computed* the metric, grid or "
    "settings. Type words in Search to keep the runs whose description contains all of them; click a row to "
    "open it below, with its data's *version* (the start of its content hash, so an edited dataset is a new "
    "version), its seed, how many of its *batches* are stored and its note."
)

run_id = (st.query_params.get(RUN_PARAM) or "").strip()  # a hand-edited link may hold anything: a lookup only
if not run_id:
    st.info("Click a run in the table to open its manifest, rows and exports.")
    st.stop()
try:
    info = store.get_run(run_id)
except StoreError as error:  # busy or damaged since the table was read: one sentence, the table above stays
    st.error(common.escape_markdown(str(error)))
    st.stop()
if info is None:
    st.warning(f"There is no run {common.inline_code(run_id[:80])} in this store (the link may come from "
               "another store).")
    st.stop()

st.subheader("Opened run")
if info.status == "failed":
    st.error("This run failed; the error it recorded:")
    st.code(info.error or "unknown error", language=None)
elif note := status_note(info):
    st.warning(common.escape_markdown(f"This run was {note}."))
st.dataframe(table[table["run_id"] == info.run_id], hide_index=True, width="stretch", column_order=COLUMN_ORDER,
             column_config=COLUMNS)
common.manifest_box(info.manifest, info.run_id, from_cache=True)
if info.kind == "check":  # its criteria: verdict, numbers, rule, margin, the runs behind them
    show_check(store, info.run_id)
st.caption(common.escape_markdown(
    "Library versions: " + ", ".join(f"{k} {v}" for k, v in sorted(info.versions.items()))))
try:
    rows = store.query("SELECT item, grp, variant, metric, value, text FROM results WHERE run_id = ? "
                       "ORDER BY shard, rowid LIMIT 500", [info.run_id])
    st.markdown(f"First {len(rows)} of {info.n_rows:,} rows")
    st.dataframe(rows, hide_index=True, width="stretch")
    common.export_buttons(info.run_id, key="export_open_run")
except StoreError as error:
    st.error(common.escape_markdown(str(error)))
