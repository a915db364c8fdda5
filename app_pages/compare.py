"""Compare runs: any stored runs lined up on what they share, differences with (paired) intervals, examples."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core.compare import CompareError, compare_runs, display_numbers, field_names, per_example
from fairness_core.store import RunStore, StoreError, filter_catalogue
from ui import common
from ui.compare_charts import difference_chart, estimates_chart
from ui.report import report_button

RUNS_PARAM = "runs"  # the compared runs, in the URL so a comparison can be shared as a link


@st.cache_data(show_spinner="Lining the runs up…", max_entries=16)
def cached_comparison(store_path: str, run_ids: tuple[str, ...], by: tuple[str, ...], rows_key: tuple[int, ...]):
    """`rows_key` (the runs' row counts) re-reads a run that grew since."""
    return compare_runs(RunStore(store_path, warm=True), list(run_ids), by=list(by) or None)


st.title("Compare runs")
st.markdown(
    "Put stored runs side by side: *is this model fairer at top-p 0.7 than at 0.9 — and than last week's model?* "
    "The runs are lined up on what they share (metric, group or attribute, decoding setting, system); each "
    "difference has a 95% interval, **paired** when both runs used the same prompts or pairs (one resample of "
    "them weights both runs alike) and unpaired otherwise."
)

store = common.get_store()
table = common.run_catalogue_or_stop(store)
if len(table) < 2:
    st.info(f"Comparing needs at least two stored runs; {common.inline_code(str(store.path))} has {len(table)}. "
            "Run something on one of the analysis pages or the CLI.")
    st.stop()

filters = st.columns([3, 2])
search = filters[0].text_input("Search runs", key="cmp_search", max_chars=200,
                               placeholder="e.g. decoding smollm2, winobias bleu, a run id")
kinds = sorted(table["kind"].unique())
chosen_kinds = filters[1].multiselect("Kinds", kinds, default=kinds, key="cmp_kinds")
visible = filter_catalogue(table, kinds=chosen_kinds, search=search)
labels = {row.run_id: f"{row.run_id} · {row.kind} · {row.dataset or '—'} · {row.what or row.model or ''}"[:140]
          for row in table.itertuples(index=False)}
from_url = [r for r in (st.query_params.get(RUNS_PARAM) or "").split(",") if r in labels]
if "cmp_runs" not in st.session_state:
    st.session_state["cmp_runs"] = from_url
options = list(dict.fromkeys([*st.session_state["cmp_runs"], *visible["run_id"]]))
chosen = st.multiselect("Runs to compare (the first is the baseline)", options, key="cmp_runs",
                        format_func=lambda run_id: labels.get(run_id, run_id), max_selections=6)
st.query_params[RUNS_PARAM] = ",".join(chosen)
if len(chosen) < 2:
    st.info("Choose two or more runs (search above to narrow the list).")
    st.stop()

chosen_infos = table.set_index("run_id").loc[chosen]
shared_fields = sorted(set.intersection(*(set(field_names(kind)) for kind in chosen_infos["kind"])))
by = st.multiselect("Group by (empty: each kind's own keys)", shared_fields, key="cmp_by",
                    help="Any field the chosen runs' rows carry: family, source, config.top_p, attribute, …")
try:
    comparison = cached_comparison(str(store.path), tuple(chosen), tuple(by),
                                   tuple(int(n) for n in chosen_infos["rows"]))
except (CompareError, StoreError) as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
if comparison.message:
    st.info(common.escape_markdown(comparison.message))
rows = comparison.rows
if rows.empty:
    st.stop()

metrics = sorted(rows["metric"].unique())
shown_metrics = st.multiselect("Metrics", metrics, default=metrics[:3], key="cmp_metrics")
shown = rows[rows["metric"].isin(shown_metrics)] if shown_metrics else rows
paired_share = shown["paired"].mean() if len(shown) else 0.0
st.caption(common.escape_markdown(f"{len(shown)} of {len(rows)} aligned cells; {paired_share:.0%} paired "
           f"(by {', '.join(sorted(set(shown['unit'])))})."))

# one chart under the other, full width: each line-up's label reads horizontally beside its row
st.markdown("**Estimates by run (95% intervals)**")
st.plotly_chart(estimates_chart(shown, comparison.keys), width="stretch", key="cmp_estimates")
st.markdown("**Differences, other − first (95% intervals)**")
st.plotly_chart(difference_chart(shown, comparison.keys), width="stretch", key="cmp_differences")
common.how_to_read(
    "Top: each run's number per line-up (a dot) with its interval (the whisker); hover a shortened label to "
    "read it whole. Below: how far the other run is from the first. A blue bar used the same prompts or pairs "
    "in both runs, so its interval is "
    "usually narrower; an orange one did not. A bar whose interval crosses zero means the runs may not "
    "really differ there."
)
st.dataframe(display_numbers(shown), hide_index=True, width="stretch",  # 4 significant digits, noise as 0
             column_config={"paired": st.column_config.CheckboxColumn("paired")})
report_button(chosen, key="cmp_report")

st.subheader("Per example: the same item in both runs")
same_kind = chosen_infos["kind"].iloc[0] == chosen_infos["kind"].iloc[1]
if not same_kind:
    st.info("Per-example rows need the first two runs to be of the same kind.")
    st.stop()
kind = str(chosen_infos["kind"].iloc[0])
controls = st.columns([2, 2, 2, 3])
# the metric that moved most first: where a teacher looks for *why* a number changed
moved = rows.assign(size=rows["difference"].abs()).groupby("metric")["size"].max().sort_values(ascending=False)
example_metrics = [m for m in moved.index if m != "negative_sentiment"] or list(moved.index)
example_metric = controls[0].selectbox("Metric", example_metrics, key="cmp_ex_metric")
filter_field = controls[1].selectbox("Filter field", ["(none)", *field_names(kind)], key="cmp_ex_field")
filter_value = controls[2].text_input("equals", key="cmp_ex_value", max_chars=200,
                                      disabled=filter_field == "(none)")
words = controls[3].text_input("Text contains", key="cmp_ex_search", max_chars=200)
try:
    examples = per_example(store, chosen[0], chosen[1], metric=example_metric,
                           filters={filter_field: filter_value} if filter_field != "(none)" and filter_value else None,
                           search=words, limit=200)
except (CompareError, StoreError) as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
first_columns = [c for c in ("item", "grp", "setting", "value_a", "value_b", "change", "text_a", "text_b")
                 if c in examples.columns]
st.dataframe(display_numbers(pd.DataFrame(examples[first_columns + [c for c in examples.columns
                                                                     if c not in first_columns]])),
             hide_index=True, width="stretch")
common.how_to_read(
    "Each row is one item (a prompt's sample, a pair's side) in both runs, the largest change first: read the "
    "two texts to see why a number moved."
)
