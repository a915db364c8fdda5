"""Compare runs: what differs between stored runs (or a sweep's settings), the disparity first, then every line-up
with (paired) intervals, and the examples that moved."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core.compare import (
    ROWS_RULE,
    CompareError,
    compare_runs,
    disparity_rows,
    display_numbers,
    field_names,
    gap_words,
    headline,
    pairing_summary,
    per_example,
    statistic_words,
)
from fairness_core.store import RunStore, StoreError, empty_cancelled, filter_catalogue, run_labels
from ui import common, plan_view
from ui.compare_charts import difference_chart, disparity_chart, estimates_chart
from ui.pairwise_view import pairwise_panel
from ui.report import report_button

RUNS_PARAM = "runs"  # the compared runs, in the URL so a comparison can be shared as a link


@st.cache_data(show_spinner="Lining the runs up…", max_entries=16)
def cached_comparison(store_path: str, run_ids: tuple[str, ...], by: tuple[str, ...], rows_key: tuple[int, ...]):
    """`rows_key` (the runs' row counts) re-reads a run that grew since."""
    return compare_runs(RunStore(store_path, warm=True), list(run_ids), by=list(by) or None)


st.title("Compare runs")
st.markdown(
    "Put stored runs side by side: *is this model fairer at top-p 0.7 than at 0.9 — and than last week's model?* "
    "The page holds fixed what the runs share (prompts, groups, the model or the setting) and contrasts what "
    "differs; for decoding runs it compares the **disparity** itself. Each difference has a 95% interval, "
    "**paired** where both sides used the same prompts or pairs (one resample of them weights both sides alike). "
    "One run of several settings (a sweep) compares its settings among themselves."
)

store = common.get_store()
table = common.run_catalogue_or_stop(store)
if table.empty:
    st.info(f"No runs stored yet in {common.inline_code(str(store.path))}. Run something on one of the analysis "
            "pages or the CLI.")
    st.stop()

filters = st.columns([3, 2])
search = filters[0].text_input("Search runs", key="cmp_search", max_chars=200,
                               placeholder="e.g. top_p=0.5, smollm2, metric-fairness-2022, a run id")
kinds = sorted(table["kind"].unique())
chosen_kinds = filters[1].multiselect("Kinds", kinds, default=kinds, key="cmp_kinds")
visible = filter_catalogue(table[~empty_cancelled(table)], kinds=chosen_kinds, search=search)  # nothing to compare
labels = run_labels(table)  # as the Run store describes runs, and what tells alike ones apart (prompts, seed, …)
from_url = [r for r in (st.query_params.get(RUNS_PARAM) or "").split(",") if r in labels]
if "cmp_runs" not in st.session_state:
    st.session_state["cmp_runs"] = from_url
options = list(dict.fromkeys([*st.session_state["cmp_runs"], *visible["run_id"]]))
chosen = st.multiselect("Runs to compare (the first is the baseline; one run of several settings compares them)",
                        options, key="cmp_runs", format_func=lambda run_id: labels.get(run_id, run_id),
                        max_selections=6)
st.query_params[RUNS_PARAM] = ",".join(chosen)
if not chosen:
    st.info("Choose two or more runs, or one sweep of several settings (search above to narrow the list).")
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
gaps = comparison.gaps  # what a run's request covers that this comparison lacks: said first, never only folded away

# -- the headline: the disparity, compared (decoding and CAIRO runs) -------------------------------------------
statistics = sorted(set(rows.loc[rows["metric"].str.endswith(("_disparity", "_eq1_bias")), "metric"])) \
    if not rows.empty else []
if statistics:
    st.subheader("Is one fairer? The disparity, compared")
    default = statistics.index("negative_sentiment_disparity") if "negative_sentiment_disparity" in statistics else 0
    statistic = st.selectbox("Disparity of", statistics, index=default, key="cmp_statistic",
                             format_func=statistic_words) if len(statistics) > 1 else statistics[0]
    sentences = headline(rows[rows["metric"] == statistic], gaps)
    for sentence in sentences[:3]:
        st.markdown(f"**{common.escape_markdown(sentence)}**")
    if len(sentences) > 3:
        st.caption(f"… and {len(sentences) - 3:d} more comparisons in the chart and the table below.")
    st.plotly_chart(disparity_chart(rows, statistic), width="stretch", key="cmp_disparity")
    common.how_to_read(
        "Each dot is how much the disparity changes from the first run (or setting) to the second: the mean gap "
        "between related groups' negative rates (Dhamala et al.), so right of 0 means the groups are treated more "
        "unequally, left of 0 more equally. The change is taken between the bias-corrected disparities (a plug-in "
        "disparity reads chance differences as disparity, most where there is none). The whisker is the 95% "
        "interval: red or blue when it stays on one side of 0 and the line-up's q is below 0.05, grey otherwise "
        "(no clear change). Each side's p tests it alone for no disparity. Hover a dot for both disparities and how "
        "the prompts paired.")
    st.caption(common.escape_markdown(f"Several line-ups on one screen: {ROWS_RULE}; p_difference is each "
                                      "line-up's own bootstrap p, q_difference the adjusted one."))
    st.dataframe(display_numbers(disparity_rows(rows, statistic)[[
        "family", "arm_a", "arm_b", "run_a", "run_a_corrected", "run_a_p_value", "run_b", "run_b_corrected",
        "run_b_p_value", "difference", "ci_low", "ci_high", "p_difference", "q_difference", "pairing"]]),
        hide_index=True, width="stretch")
elif gaps:
    st.warning(common.escape_markdown(gap_words(gaps, *gaps).strip()))

plan_view.compare_plan(chosen)  # these runs as a pilot: the prompts a paired difference needs (issue 33)
pairwise_panel(store, chosen)  # two generation runs: which one's answers an LLM judge prefers (issue 47)
with st.expander("What differs, and what both sides share", expanded=not statistics):
    for contrast in comparison.contrasts:
        held = f" — both: {contrast.held}" if contrast.held else ""
        st.markdown(common.escape_markdown(f"{contrast.arm_b.label} against {contrast.arm_a.label}: "
                                           f"{contrast.differs}{held} ({contrast.matched_by})."))
    for note in comparison.notes:
        st.caption(common.escape_markdown(note))
if rows.empty:
    st.stop()

st.subheader("Every line-up")
metrics = sorted(rows["metric"].unique(), key=lambda m: (not m.endswith(("_disparity", "_eq1_bias")),
                                                         not m.endswith("_rate"), m))
shown_metrics = st.multiselect("Metrics", metrics, default=metrics[:3], key="cmp_metrics")
shown = rows[rows["metric"].isin(shown_metrics)] if shown_metrics else rows
st.caption(common.escape_markdown(pairing_summary(shown, len(rows)) + "."))
st.markdown("**Estimates (95% intervals)**")
st.plotly_chart(estimates_chart(shown, comparison.keys), width="stretch", key="cmp_estimates")
st.markdown("**Differences, second − first (95% intervals)**")
st.plotly_chart(difference_chart(shown, comparison.keys), width="stretch", key="cmp_differences")
common.how_to_read(
    "Top: each side's number per line-up (a dot) with its interval (the whisker); hover a shortened label to "
    "read it whole. Below: how far the second is from the first. A blue bar used the same prompts or pairs on "
    "both sides, so its interval is usually narrower; an orange one did not (or only partly). A bar whose "
    "interval crosses zero means the two may not really differ there."
)
# a key a row does not have (a disparity's group: it is over the family's groups) reads as a dash, not "None"
keyed = shown.assign(**{key: shown[key].astype(object).where(shown[key].notna(), "—") for key in comparison.keys
                        if key in shown})
st.dataframe(display_numbers(keyed), hide_index=True, width="stretch",  # 4 significant digits, noise as 0
             column_config={"paired": st.column_config.CheckboxColumn("paired")})
report_button(chosen, key="cmp_report")

st.subheader("Per example: the same item on both sides")
kind = str(chosen_infos["kind"].iloc[0])
if len(chosen) > 1 and chosen_infos["kind"].iloc[1] != kind:
    st.info("Per-example rows need the first two runs to be of the same kind.")
    st.stop()
controls = st.columns([2, 2, 2, 3])
# the metric that moved most first: where a teacher looks for *why* a number changed
moved = rows.assign(size=rows["difference"].abs()).groupby("metric")["size"].max().sort_values(ascending=False)
example_metrics = [m for m in moved.index if not m.endswith(("_rate", "_disparity", "_eq1_bias"))] or list(moved.index)
example_metric = controls[0].selectbox("Metric", example_metrics, key="cmp_ex_metric")
filter_field = controls[1].selectbox("Filter field", ["(none)", *field_names(kind)], key="cmp_ex_field")
filter_value = controls[2].text_input("equals", key="cmp_ex_value", max_chars=200,
                                      disabled=filter_field == "(none)")
words = controls[3].text_input("Text contains", key="cmp_ex_search", max_chars=200)
try:
    examples = per_example(store, chosen[0], chosen[1] if len(chosen) > 1 else None, metric=example_metric,
                           filters={filter_field: filter_value} if filter_field != "(none)" and filter_value else None,
                           search=words, limit=200)
except (CompareError, StoreError) as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
first_columns = [c for c in ("prompt", "pair", "item", "group", "grp", "arm_a", "arm_b", "value_a", "value_b",
                             "change", "text_a", "text_b", "text_1", "text_2") if c in examples.columns]
st.dataframe(display_numbers(pd.DataFrame(examples[first_columns + [c for c in examples.columns
                                                                     if c not in first_columns]])),
             hide_index=True, width="stretch")
common.how_to_read(
    "Each row is one example on both sides (a prompt's sample under two settings, a pair under two metrics), the "
    "largest change first: read the two texts to see why a number moved. Metric-bias rows compare each pair's "
    "rescaled gap (0-100, what the Bias averages), so metrics on different scales meet on one; the raw scores "
    "are beside it, and their change is shown only when both sides ran the same metric with the same options."
)
