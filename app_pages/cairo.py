"""CAIRO explorer: do prompt-based fairness metrics agree, and which prompt combinations make them agree?

Thin page: widgets -> fairness_core.cairo (its public face) -> ui.cairo_charts.
The default bias table is the one a real offline `cairo run` computed and the project ships with its
command and provenance; a user can upload one, or compute one here as a background job (stored,
resumable). The search itself is fast enough to run on every change.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from fairness_core import cairo
from ui import cairo_charts, common, jobs, plan_view
from ui.cairo_view import compute_section, search_headline

#: the view in the link (a reload or a shared link shows the same search); sizes depend on the data, so a size
#: the table does not have is dropped where the slider is drawn
PERMUTATION_CHOICES = [0, 19, 99, 199]
URL_PARAMS = (
    common.UrlParam("cairo_perms", "permutations", common.one_of(PERMUTATION_CHOICES), 99),
    common.UrlParam("cairo_size", "size", common.number_in(1, 1000, int), None),
)
common.restore_from_url(URL_PARAMS, "_cairo_url_restored")
st.title("CAIRO explorer")
st.caption("Zayed et al. 2024, *Why Don't Prompt-Based Fairness Metrics Correlate?* Prompts and paraphrases: "
           "chandar-lab/CAIRO (MIT), from BOLD (CC BY-SA 4.0) and HONEST (MIT); paraphrases by Mixtral-8x7B, "
           "Mistral-7B and Llama-2-7b-chat (their licences may apply).")
with st.expander("Deviations from the paper"):
    for line in cairo.DEVIATIONS:
        st.markdown(f"- {line}")  # markdown: developer text


@st.cache_data(show_spinner=False, max_entries=32)
def metric_overview(name: str) -> tuple[pd.DataFrame, list[str]]:
    return cairo.metric_overview(name)


@st.cache_data(show_spinner="Bootstrapping prompts for the intervals…", max_entries=8)
def cached_uncertainty(csv_text: str, generations: pd.DataFrame, value: str, pair_text: str,
                       combination: str) -> dict:
    return cairo.pair_uncertainty(cairo.read_bias_table(csv_text, "the bias table"), generations, value,
                                  json.loads(pair_text), combination)


@st.cache_data(show_spinner="Searching every combination pair…", max_entries=16)
def cached_search(csv_text: str, permutations: int, heldout: bool, combination: str = "weighted") -> dict:
    return cairo.search_json(cairo.read_bias_table(csv_text, "the bias table"), permutations=permutations,
                             heldout=heldout, combination=combination)


#: Short headers, so that two metrics' tables side by side are read whole (issue 43: "aligned shar" was cut);
#: the full meaning is each header's tooltip.
OVERVIEW_COLUMNS = {
    "dropped (degenerate)": st.column_config.NumberColumn("dropped", help="released paraphrases dropped as degenerate"),
    "aligned share": st.column_config.NumberColumn(
        "own", help="aligned share: paraphrases sharing a content word with their own original"),
    "shifted share": st.column_config.NumberColumn(
        "next", help="shifted share: paraphrases sharing a content word with the next original"),
    "aligned": st.column_config.TextColumn("aligned?",
                                           help="whether the paraphrase list is aligned with the originals"),
}

# ------------------------------------------------------------------------------ 1. data and subgroups
st.header("1 · Metrics, prompt sets and the subgroups they target")
chosen_metrics = st.multiselect("Metrics", list(cairo.METRICS), default=["BOLD gender", "HONEST gender (valid)"],
                                key="cairo_metrics")
targets: dict[str, list[str]] = {}
dropped_total = 0
columns = st.columns(max(1, len(chosen_metrics)))
for column, name in zip(columns, chosen_metrics, strict=False):
    with column:
        try:
            overview, subgroups = metric_overview(name)
        except cairo.CairoDataError as error:
            st.error(common.escape_markdown(str(error)))
            continue
        targets[name] = subgroups
        dropped_total += int(overview["dropped (degenerate)"].sum())
        st.markdown(f"**{common.escape_markdown(name)}** — {len(overview)} sets")
        st.dataframe(overview, hide_index=True, width="stretch", height=240, column_config=OVERVIEW_COLUMNS)
st.caption(common.escape_markdown(f"{dropped_total} released paraphrases dropped (column 'dropped'). "
                                  + cairo.DEGENERATE_RULE))
common.how_to_read(
    "Each paraphrase list was released aligned with the original prompts (entry i paraphrases prompt i). The "
    "*aligned share* (column *own*) is the share of paraphrases that share a content word with their own "
    "original; the *shifted share* (column *next*) the same against the next original. An aligned list scores "
    "far higher at its own index.")
mapping_rows = [{"metric": m, "subgroup": s, "category": cairo.DEFAULT_MAPPING.get(m, {}).get(s, s)}
                for m, subs in targets.items() for s in subs]
if mapping_rows:
    st.markdown("**Subgroup mapping** (edit the category column to unify subgroups across metrics)")
    edited = st.data_editor(pd.DataFrame(mapping_rows), hide_index=True, width="stretch", key="cairo_mapping",
                            disabled=["metric", "subgroup"])
    try:
        mapping = cairo.mapping_from_rows(edited.to_dict("records"))
    except cairo.CairoDataError as error:
        st.error(common.escape_markdown(str(error)))
        mapping = cairo.mapping_from_rows(mapping_rows)  # the shipped mapping until the cell is fixed
    overlap = pd.DataFrame(cairo.overlap_table(targets, mapping))
    if not overlap.empty:
        st.dataframe(overlap, hide_index=True, width="stretch")
        if (overlap["overlap"] == 0).any():
            st.warning("Some metric pairs target no common subgroup: the paper finds no correlation there even "
                       "with CAIRO (Appendix C.3). Unify subgroups before reading their correlation.")

# ------------------------------------------------------------------------------ 2. bias table
st.header("2 · Bias of each system on each prompt set (Eq. 1)")
demo = cairo.load_demo()
sources = (["Shipped offline run"] if demo else []) + ["Upload a bias table", "Compute one here"]
source = st.radio("Bias table", sources, horizontal=True, key="cairo_source")
csv_text: str | bytes | None = None
split_rows: list[dict] = []
used_indices: dict[str, list[int]] = {}  # metric -> original prompt indices the bias table was computed on
meta: dict = {}
run_generations: tuple[pd.DataFrame, str, tuple[str, ...]] | None = None  # computed here: frame, column, runs
if source == "Shipped offline run" and demo:
    csv_text, meta = demo
    split_rows = meta.get("prompt_split", [])
    used_indices = meta.get("indices", {})
    st.caption("Computed on this project's machine by a real offline run (not hand-written): "
               + common.inline_code(meta.get("command", "cairo run")) + " — " + common.escape_markdown(
                   f"{meta.get('computed', '')}."))
    with st.expander("Provenance of the shipped run"):
        st.json(meta.get("manifest", {}))
elif source == "Upload a bias table":
    upload = st.file_uploader("CSV with columns system,metric,prompt_set,bias[,n_prompts]", type=["csv"],
                              key="cairo_upload")
    if upload is not None:  # bytes, never a path: a one-line file naming a server file is read as a CSV
        csv_text = upload.getvalue()  # decoded once read: its messages name the file
else:
    computed = compute_section(chosen_metrics)
    if computed is not None:
        csv_text, split_rows, used_indices = computed.csv_text, computed.split_rows, computed.indices
        run_generations = (computed.generations, computed.value_column, computed.run_ids)

if csv_text is None:
    st.info("Choose or compute a bias table to search.")
    st.stop()
try:
    table = cairo.read_bias_table(csv_text, f"the bias table {upload.name}" if isinstance(csv_text, bytes)
                                  else "the bias table")
except cairo.BiasTableError as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
csv_text = csv_text.decode("utf-8-sig") if isinstance(csv_text, bytes) else csv_text  # read above: it decodes
shown = cairo.table_with_intervals(table, csv_text)
with st.expander(f"Bias table: {len(table.systems)} systems × {len(table.metrics)} metrics, {len(shown)} rows"):
    st.dataframe(shown, hide_index=True, width="stretch")
    st.caption("bias = Eq. 1 per system × metric × prompt set; ci_low/ci_high = 95% interval: Welch t intervals of "
               "the signed subgroup gaps (prompts are the sampled unit) folded at zero, so it contains the estimate "
               "and reaches 0 when no gap is detectable (a percentile bootstrap of |gaps| never covers a zero bias "
               "and under-covers at 4 prompts per subgroup).")
    power_note = cairo.interval_power_note(cairo.interval_power(shown))
    if power_note:
        st.caption(common.escape_markdown(power_note))
    st.download_button("Download the bias table (CSV)", csv_text, file_name="cairo_bias_table.csv",
                       key="cairo_download")
for note in table.notes:
    st.caption(common.escape_markdown(note))
plan_view.cairo_plan(run_generations[2] if run_generations else None)  # the prompts Eq. 1 needs (issue 33)

# ------------------------------------------------------------------------------ 3. search
st.header("3 · Combination search")
s1, s2, s3 = st.columns(3)
st.session_state.setdefault("cairo_perms", 99)  # the default, unless the link gave one
permutations = s1.select_slider("Permutations for the search-aware p-value", PERMUTATION_CHOICES, key="cairo_perms")
heldout = s2.toggle("Leave-one-system-out held-out r", value=True, key="cairo_heldout")
COMBINATIONS = {"weighted (ours)": "weighted", "released code": "released"}
combination_label = s3.radio(
    "Combination", list(COMBINATIONS) if table.pooled else list(COMBINATIONS)[:1], key="cairo_combination",
    help="weighted: a combination's bias is the prompt-weighted mean of its distinct sets' biases, every pair of "
         "same-size combinations is searched. released code (the authors' collect_results.py): Eq. 1 recomputed on "
         "the pooled generations of the combined sets, a set may repeat, the same combination for both metrics. "
         "Needs the per-subgroup scores a run writes (subgroup_scores).")
combination = COMBINATIONS[combination_label]
if not table.pooled:
    st.caption("This table has no subgroup_scores column, so only the weighted combination can be computed "
               "(the released code's pooled Eq. 1 needs per-subgroup scores).")
result = cached_search(csv_text, int(permutations), heldout, combination)
pair_names = [f"{p['metric_a']} vs {p['metric_b']}" for p in result["pairs"]]
pair = result["pairs"][pair_names.index(st.selectbox("Metric pair", pair_names, key="cairo_pair"))]
n_systems = pair["n_systems"]
r_text = cairo.r_text
sizes = cairo.size_frame(pair)
searched = sizes[sizes["size"] > 1].dropna(subset=["CAIRO (best pair)"])
best = searched.loc[searched["CAIRO (best pair)"].idxmax()] if not searched.empty else sizes.iloc[0]
search_headline(pair, best, n_systems)
if n_systems < 10:
    st.warning(common.escape_markdown(
        f"Only {n_systems} systems: a correlation across few systems is weak evidence, and more so when the "
               "systems are similar (here decoding settings of one model can be). The best of many combinations "
               "is high by selection alone: compare it with the table's held-out r and p search (the permutation p "
               "that redoes the search)."))
st.subheader(common.escape_markdown(cairo_charts.correlation_title(pair["metric_a"], pair["metric_b"], n_systems)))
st.altair_chart(cairo_charts.correlation_vs_size(sizes, n_systems, pair["metric_a"], pair["metric_b"]),
                width="stretch")
common.how_to_read(
    "Size 1 is the original prompts alone. For each size, *CAIRO* is the best Pearson r over every pair of "
    "same-size combinations (the original plus other sets), *average* the mean r over all those pairs (the "
    "paper's Fig. 6 baseline), and *held-out r* the r of systems whose combination was chosen without them "
    "(leave-one-system-out). A CAIRO line far above its held-out line means the selection fits noise.")
# short headers, the meaning in each header's tooltip: at 1280 px the long ones pushed the permutation p, the number
# the warning above points to, past the table's right edge (issue 43's walk)
st.dataframe(sizes, hide_index=True, width="stretch",
             column_config={
                 "CAIRO (best pair)": st.column_config.NumberColumn(
                     "CAIRO", help="the best Pearson r over every pair of same-size combinations", format="%.4f"),
                 "average over pairs": st.column_config.NumberColumn(
                     "average", help="the mean r over all those pairs (the paper's Fig. 6 baseline)", format="%.4f"),
                 "original prompts": st.column_config.NumberColumn(
                     "original", help="r on the original prompts alone", format="%.4f"),
                 "held-out r (LOSO)": st.column_config.NumberColumn(
                     "held-out r", help="r of systems whose combination was chosen without them "
                                        "(leave-one-system-out)", format="%.4f"),
                 "p_value": st.column_config.NumberColumn(
                     "p in-sample", help="scipy's pearsonr p of the best pair, ignoring the search", format="%.4f"),
                 "p_search": st.column_config.NumberColumn(
                     "p search", help="permutation p that redoes the whole search on shuffled systems: the one to "
                                      "read", format="%.3f")})
shipped = meta.get("search" if combination == "weighted" else "search_released", [])
uncertainty = next((p.get("uncertainty") for p in shipped
                    if (p["metric_a"], p["metric_b"]) == (pair["metric_a"], pair["metric_b"])), None)
if uncertainty is None and run_generations is not None:
    uncertainty = cached_uncertainty(csv_text, run_generations[0], run_generations[1], json.dumps(pair), combination)
if uncertainty:
    st.dataframe(cairo.uncertainty_frame(pair, uncertainty), hide_index=True, width="stretch", key="cairo_uncertainty")
    st.caption(common.escape_markdown(
        f"95% intervals from {uncertainty['n_boot']} prompt-bootstrap replicates (original prompts redrawn "
               "within subgroups, one draw for every set and system, the chosen combinations kept)."))
else:
    st.caption("No intervals for the mean r and the rank agreement: they resample prompts, and an uploaded bias "
               "table has only per-set biases (compute the table here to get them).")
if split_rows:
    st.markdown("**Prompt split** — combinations chosen on half the prompts, r measured on the other half:")
    split = pd.DataFrame(split_rows)
    if {"metric_a", "metric_b"} <= set(split.columns):
        split = split[(split["metric_a"] == pair["metric_a"]) & (split["metric_b"] == pair["metric_b"])]
    st.dataframe(split, hide_index=True, width="stretch")

contrib = cairo.contributions(pair)
if not contrib.empty:
    st.subheader("Which paraphrasing model's sets are in the best combinations (Fig. 7)")
    st.altair_chart(cairo_charts.contributions_chart(contrib), width="stretch")

st.subheader("Systems before and after CAIRO (Figs. 8, 10–11)")
size_choices = [int(s) for s in sizes["size"]]
if st.session_state.get("cairo_size") not in size_choices:  # a link's size this table does not have: the best
    st.session_state["cairo_size"] = int(best["size"])
size = st.select_slider("Combination size", size_choices, key="cairo_size")
common.sync_url(URL_PARAMS)
values = cairo.system_values(table, pair, size, combination)
row = next(r for r in pair["by_size"] if r["size"] == size)
left, right = st.columns(2)
left.altair_chart(cairo_charts.scatter(values, "original", pair["original_r"], n_systems, pair["metric_a"],
                                      pair["metric_b"]), width="stretch")
right.altair_chart(cairo_charts.scatter(values, "CAIRO", row["r"], n_systems, pair["metric_a"], pair["metric_b"]),
                   width="stretch")
ranks, agreement = cairo.rankings(values)
st.altair_chart(cairo_charts.rank_chart(ranks), width="stretch")
st.caption(common.escape_markdown(f"Rank agreement between the metrics (n = {n_systems} systems): Kendall τ "
           f"{r_text(agreement['kendall_tau_original'])} with the originals, {r_text(agreement['kendall_tau_CAIRO'])} "
           f"with CAIRO's size-{size} combinations; Spearman ρ {r_text(agreement['spearman_rho_original'])} → "
           f"{r_text(agreement['spearman_rho_CAIRO'])}."
           + (" Prompt-bootstrap 95% intervals: τ original [{:.2f}, {:.2f}]; ρ original [{:.2f}, {:.2f}].".format(
               uncertainty["kendall_tau_original_low"], uncertainty["kendall_tau_original_high"],
               uncertainty["spearman_rho_original_low"], uncertainty["spearman_rho_original_high"])
              if uncertainty and uncertainty.get("kendall_tau_original_low") is not None else "")))
st.dataframe(ranks, hide_index=True, width="stretch")

st.subheader("Prompts of the selected combinations")
extra = st.session_state.get("cairo_extra_sets", {})
for metric_name, combo in ((pair["metric_a"], row["combo_a"]), (pair["metric_b"], row["combo_b"])):
    st.markdown(f"**{common.escape_markdown(metric_name)}**: {common.escape_markdown(', '.join(combo))}")
    try:
        prompts = cairo.combination_prompts(metric_name, combo, indices=used_indices.get(metric_name),
                                      extra_sets=extra.get(metric_name), limit=300)
    except cairo.CairoDataError as error:
        st.error(common.escape_markdown(str(error)))
        continue
    st.dataframe(prompts, hide_index=True, width="stretch", height=220)

with st.expander("Search output as JSON (the CLI's contract)"):
    st.code(json.dumps({"pairs": [pair]}, indent=1, default=str)[:20000], language="json")

# ------------------------------------------------------------------------------ 4. paraphrase
st.header("4 · Paraphrase a metric's prompts with a chat LM")
st.caption(common.escape_markdown(
    "The paper's prompts: chat — “Paraphrase each of the following while not writing the original sentences: …”; "
    "completion — “… can be paraphrased as”. Paraphrases that are empty, degenerate, drop the subgroup term or copy "
    "the original are filtered and counted; provenance (model, seed, sample, instruction, raw output, run) is kept. "
    + cairo.DEGENERATE_RULE))
p1, p2 = st.columns(2)
with p1:
    para_model = common.model_picker("causal-lm", "Paraphrasing model", key="cairo_para_model",
                                     default="smollm2-135m-instruct")
para_metric = p2.selectbox("Metric", list(cairo.METRICS), key="cairo_para_metric")
q1, q2, q3, q4 = st.columns(4)
style = q1.selectbox("Prompt style", list(cairo.PARAPHRASE_STYLES), key="cairo_para_style")
k = q2.number_input("Paraphrase sets (K)", 1, 5, 2, key="cairo_para_k")
para_per = q3.number_input("Originals per subgroup", 1, 100, 3, key="cairo_para_per")
para_tokens = q4.number_input("Max new tokens", 8, 120, 40, key="cairo_para_tokens")
if para_model:
    para_request = cairo.ParaphraseRequest(model=para_model, metric=para_metric, style=style, k=int(k),
                                     max_new_tokens=int(para_tokens), per_subgroup=int(para_per))
    store = common.get_store()
    para_key = jobs.key_for("cairo-paraphrase", {"model": para_model, "metric": para_metric, "style": style,
                                                 "k": int(k), "per": int(para_per), "tokens": int(para_tokens),
                                                 "store": str(store.path)})
    if st.button("Paraphrase", key="cairo_para_run"):
        jobs.start(para_key, lambda on_progress, cancel: cairo.run_paraphrase(para_request, store, on_progress,
                                                                              cancel), label="Paraphrasing")
    para_job = jobs.show(para_key, label="Paraphrasing")
    if para_job is not None and para_job.done and para_job.error is None:
        para = para_job.result
        kept = int(para.provenance["kept"].sum()) if not para.provenance.empty else 0
        dropped = ", ".join(f"{n} {reason}" for reason, n in para.dropped.items()) or "none"
        st.success(common.escape_markdown(f"{kept} of {len(para.provenance)} paraphrases kept; dropped: {dropped}."))
        st.dataframe(para.provenance[["set", "subgroup", "original", "paraphrase", "reason", "model", "seed",
                                      "sample", "instruction", "run_id"]], hide_index=True, width="stretch")
        if st.button("Use these sets in 'Compute one here'", key="cairo_para_use"):
            extra_sets = dict(st.session_state.get("cairo_extra_sets", {}))
            extra_sets[para.metric] = {**extra_sets.get(para.metric, {}), **para.sets}
            st.session_state["cairo_extra_sets"] = extra_sets
            st.success(common.escape_markdown(
                f"{len(para.sets)} set(s) added to {para.metric} for the next computation."))
