"""Metric bias: does an evaluation metric score two candidates differently when they differ only in identity
words? (Sun et al. 2022, "BERTScore is Unfair".)

Widgets (`ui.metric_bias_view`) -> `fairness_core.metric_bias` (the same data and metric building as the CLI,
stored jobs, DuckDB gap queries, bias tables) -> `ui.metric_bias_charts`.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core import metric_bias as mb
from fairness_core.store import RunStore
from ui import common, jobs, plan_view, presenter
from ui import metric_bias_charts as charts
from ui.metric_bias_view import (
    NORM_LABELS,
    SOURCES,
    alignment_view,
    choose_dataset,
    choose_metrics,
    edit_references_view,
    gap_examples,
    model_options_are_defaults,
    restore_from_url,
    sync_url,
)
from ui.report import report_button

#: the Appendix-E table's headers in words (its column names are the table's fields; issue 43's walk)
STEREO_COLUMNS = {
    "stereo_diff": st.column_config.NumberColumn("difference", format="%.3f",
                                                 help="Ŝ(stereotypical) − Ŝ(anti-stereotypical), mean over pairs"),
    "stereo_ci_low": st.column_config.NumberColumn("95% low", format="%.3f"),
    "stereo_ci_high": st.column_config.NumberColumn("95% high", format="%.3f"),
    "stereo_p_value": st.column_config.NumberColumn("p", format="%.3f",
                                                    help="the test of no difference, unadjusted"),
    "stereo_q_value": st.column_config.NumberColumn("q", format="%.3f",
                                                    help="Benjamini-Hochberg over the cells shown"),
    "n_stereo": st.column_config.NumberColumn("pairs", format="%d"),
}

JOB_KIND = "metric-bias"


# -- stored results (st.cache_data: complete runs never change, so run ids are safe keys) --------
@st.cache_data(show_spinner=False, max_entries=64)
def cached_pairs(store_path: str, run_ids: tuple[str, ...], metric: str | None = None) -> pd.DataFrame:
    return mb.pair_table(RunStore(store_path), list(run_ids), metrics=[metric] if metric else None)


@st.cache_data(show_spinner="Computing the 95% intervals…", max_entries=64)
def cached_bias(store_path: str, run_ids: tuple[str, ...], normalisation: str = "minmax",
                n_resamples: int = 1000, metric: str | None = None,
                expected: tuple[tuple[str, int], ...] | None = None) -> pd.DataFrame:
    """The bias table; with `expected` ({attribute: pairs} of a complete run) every group's n is checked."""
    return mb.bias_table(cached_pairs(store_path, run_ids, metric), normalisation=normalisation,
                         n_resamples=n_resamples, expected=dict(expected) if expected else None)


@st.cache_data(show_spinner=False, max_entries=1)
def preset_identities() -> dict[str, str]:
    return mb.preset_identities()


def request_key(dataset: mb.PairDataset, metrics: list[mb.Metric], stored: list[str], store_path: str) -> str:
    """The job registry key: what is computed (dataset version, metric names and options, stored columns)."""
    from dataclasses import asdict

    return jobs.key_for(JOB_KIND, {"dataset": dataset.content_hash(), "store": store_path, "stored": list(stored),
                                   "metrics": [{"name": m.name, "options": asdict(m.options)} for m in metrics]})


def compute(dataset: mb.PairDataset, metrics: list[mb.Metric], stored: list[str], store: RunStore,
            executor) -> jobs.Job:
    """The background job: each metric (and the stored columns) as stored runs; unavailable ones are noted."""
    return lambda on_progress, cancel: mb.run_metric_steps(dataset, metrics, stored, store, on_progress, cancel,
                                                           executor)


# -- page --------------------------------------------------------------------------------------
st.title("Metric bias")
# In presenter view the data, metrics and settings fold away: the result is the first thing on a projector
with presenter.folded("What this page measures: data, metrics and settings"):
    st.markdown(
        "Does an evaluation metric give two candidates **different scores when they differ only in identity "
        "words** (*he* / *she*, *black* / *white*)? Each pair is scored against a neutral reference; a fair metric "
        "gives both the same score. Bias = mean |Ŝ₁ − Ŝ₂| after rescaling all 2N scores to 0–100 "
        "(Sun et al. 2022, Eq. 1–2).")
    restore_from_url()
    dataset = choose_dataset()
    if dataset is None:
        sync_url()
        st.stop()
    # data text (file names, notes quoting rows) is shown as plain text, never as markdown
    st.text(f"{dataset.name} — {len(dataset)} pairs, attributes: {', '.join(dataset.attributes)}; "
            f"version {dataset.content_hash()[:12]}. Licence: {dataset.licence}")
    st.caption("Data notes: what the importer kept or skipped, and why." if dataset.notes else "Data notes: none.")
    for note in dataset.notes:
        st.text(f"Note: {note}")
    run_slot: list = []  # the Run button's place: right after the metric choice, before the model options
    metrics, stored, options_ok = choose_metrics(dataset, run_slot)
    sync_url()
    if not options_ok:
        st.stop()
    if not metrics and not stored:
        st.info("No metric is selected, so there is nothing to measure: choose at least one metric (or a stored "
                "score column) in the Metrics box above.")
        st.stop()

    try:
        request = mb.build_request(dataset, metrics, stored)
        work_estimate = mb.estimate(request)
    except mb.RequestError as error:
        st.error(common.escape_markdown(str(error)))
        st.stop()
    store = common.get_store()
    key = request_key(dataset, metrics, stored, str(store.path))
    job = jobs.get(key)
    is_default = (st.session_state.get("mb_source") == SOURCES[0] and list(st.session_state.get("mb_metrics", []))
                  == list(mb.DEFAULT_METRICS) and not stored and st.session_state.get("mb_config") == "default"
              and model_options_are_defaults())
    run_col, estimate_col = (None, st.container()) if run_slot else st.columns([1, 4])
    too_long = work_estimate.seconds > mb.MAX_SECONDS
    estimate_col.caption(common.escape_markdown(
        f"Estimated time: {work_estimate.describe()}; runs already in the store are read back in "
                         "seconds instead." + (" Above the page's limit of 4 h: tick “run anyway” to start it."
                                               if too_long else "")))
    confirmed = estimate_col.checkbox("Run anyway", key="mb_confirm_long") if too_long else True
if job is None and is_default:  # the default view computes itself on the first visit
    job = jobs.start(key, compute(dataset, metrics, stored, store, common.get_executor()), label="Metric bias")
running = job is not None and job.running
# drawn in the metric row (keyboard users reached it after 23 Tab presses, behind the model options), and on
# Alt+Enter (Ctrl+Enter belongs to text areas)
clicked = (run_slot[0] if run_slot else run_col).button(
    "Run", type="primary", key="mb_run_button", disabled=running or not confirmed, shortcut="Alt+Enter",
    help="Already running: watch its progress or cancel it below." if running
    else "Score the chosen metrics on this data (stored runs are read back; Alt+Enter).")
if clicked and not running:
    jobs.start(key, compute(dataset, metrics, stored, store, common.get_executor()), label="Metric bias")
    st.rerun()  # draw the Run button disabled while this request runs
job = jobs.show(key, label="Metric bias")
if job is None:
    st.info("The request changed: press **Run** to compute it (estimate above).")
    st.stop()
if job.running or job.error is not None:
    st.stop()
runs, skipped = job.result
for line in skipped:
    st.warning(common.escape_markdown(line))
if not runs:
    st.stop()
run_ids = tuple(r.run_id for r in runs)
partial = [r for r in runs if r.partial]
pairs_frame = cached_pairs(str(store.path), run_ids)
expected = None if partial else tuple(sorted(mb.expected_pairs(dataset).items()))
st.session_state.setdefault("mb_norm", "minmax")
table = cached_bias(str(store.path), run_ids, expected=expected)
primary_names = [r.name for r in runs]
primary = table[table["metric"].isin(primary_names)]
if partial or len(runs) < len(metrics) + bool(stored) - len(skipped):
    st.warning(common.escape_markdown(mb.partial_warning(runs, metrics, skipped, pairs_frame, len(dataset))))
for note in mb.notes(primary):
    st.warning(common.escape_markdown(f"{note}; the bias uses the other pairs."))

tab_bias, tab_norm, tab_views, tab_pairs, tab_edit, tab_runs = st.tabs(
    ["Bias table", "Normalisation", "P / R / F and backbone size", "Per-example gaps", "Edit references", "Runs"])

with tab_bias:
    normalisation = st.radio("Rescaling of the scores before gaps", list(NORM_LABELS), format_func=NORM_LABELS.get,
                             horizontal=True, key="mb_norm",
                             help="min-max is the paper's Eq. 1; z-score reads gaps in standard deviations; raw in "
                                  "the metric's own units (not comparable across metrics).")
    shown_table = table if normalisation == "minmax" else cached_bias(str(store.path), run_ids, normalisation,
                                                                      expected=expected)
    shown_primary = shown_table[shown_table["metric"].isin(primary_names)]
    chart, note = st.columns([3, 1])
    chart.plotly_chart(charts.bias_bars(shown_primary, normalisation), key="mb_bars")
    with note:
        common.how_to_read(
            "Each bar is one metric's **bias** on one attribute: the average gap between the scores of the two "
            "candidates of a pair, after all scores were rescaled (min-max: stretched to 0–100 by the min and max "
            "of all 2N scores). **0 = the metric never prefers one identity over the other.** Whiskers are 95% "
            "intervals (the unit stays fixed by all 2N scores): on WinoBias over its 20 + 20 occupations, since "
            "pairs that name one occupation share how the metric reacts to it (they hold for other occupations "
            "like these); on other data over pairs (they hold for other pairs like these, for these words). The "
            "panels have different y ranges, as in the paper's Fig. 2: n-gram metrics only see surface words, so "
            "swapping *he* for *she* rarely changes their score, while model-based metrics carry associations "
            "learned in pre-training.")
    presenter.table(charts.bias_cells(shown_primary, digits=2 if normalisation == "minmax" else 4), width="stretch",
                    key="mb_bias_table")  # in presenter view a static table whose cells wrap to the width
    st.caption(common.escape_markdown(
        f"Bias [95% interval over {shown_primary['interval_unit'].iloc[0] if len(shown_primary) else 'pairs'}], "
        f"{NORM_LABELS[normalisation]}. {charts.pairs_used_sentence(shown_primary)}"))
    if len(shown_primary) and shown_primary["n_excluded"].gt(0).any():  # a table of zeros says nothing (issue 43)
        st.dataframe(charts.pairs_used_table(shown_primary), width="stretch", key="mb_excluded")
    st.markdown("**Stereotypical difference** (Appendix E): mean of Ŝ(stereotypical) − Ŝ(anti-stereotypical); "
                "positive = the metric rewards the stereotype. **p**: the test of 'no difference' that the 95% "
                "interval inverts, unadjusted. The cells are screened together, so a direction is labelled only "
                f"where its **q** ({mb.DIRECTION_RULE}, over the cells shown) is below 0.05: among labelled cells "
                "at most 5% are expected to be false alarms.")
    if presenter.enabled():  # each difference with its interval in one cell, to fit a projector's width
        presenter.table(charts.stereo_frame(shown_primary), intervals={"stereo_diff": ("stereo_ci_low",
                                                                                       "stereo_ci_high")})
    else:
        st.dataframe(charts.stereo_table(shown_primary), hide_index=True, width="stretch", key="mb_stereo",
                     column_config=STEREO_COLUMNS)
    plan_view.metric_bias_plan(runs)  # these runs as a pilot: the pairs a question needs (issue 33)

with tab_norm:
    tables = {name: cached_bias(str(store.path), run_ids, normalisation=name, n_resamples=300)
              for name in mb.NORMALISATIONS}
    ranks = charts.normalisation_ranks(tables)
    left, right = st.columns([3, 1])
    left.dataframe(ranks, width="stretch")
    per_norm = {name: t[t["metric"].isin(primary_names)].groupby("metric")["bias"].mean().to_dict()
                for name, t in tables.items()}
    agreement = mb.rank_agreement_interval(pairs_frame, primary_names, list(mb.NORMALISATIONS), n_resamples=300)
    left.caption(common.escape_markdown(
        "Kendall τ of each ranking with the min-max ranking [95% bootstrap interval, pairs resampled "
                 "within attributes, the same pairs for every metric, each metric's min-max range and sd "
                 "recomputed in every resample, since the rankings differ only through them]: "
                 + ", ".join(f"{k} τ = {v['tau']:.2f} [{v['ci_low']:.2f}, {v['ci_high']:.2f}]"
                             for k, v in agreement.items())))
    with right:
        common.how_to_read(
            "The paper rescales with **min-max**, which depends on the most extreme scores in the data. "
            "**z-score** measures gaps in standard deviations of the metric's scores; **raw** uses the "
            "metric's own units (not comparable across metrics). If the rank columns agree (τ near 1), the "
            "conclusion *which metric is more biased* does not depend on the rescaling.")

with tab_views:
    figure = charts.prf_bars(table)
    left, right = st.columns([3, 1])
    if figure is None:
        left.info("Add BERTScore or BARTScore to compare precision, recall and F.")
    else:
        left.plotly_chart(figure, key="mb_prf")
    with right:
        common.how_to_read(
            "Paper Fig. 5: for BARTScore, precision = p(candidate | reference) and recall = p(reference | "
            "candidate). The paper finds most bias in the direction that generates the candidate's identity "
            "word. For BERTScore, P matches candidate tokens to the reference, R the other way round. Whiskers are "
            "95% intervals (over the occupations on WinoBias, over pairs elsewhere).")
    points = mb.backbone_points(mb.model_runs(store, dataset.content_hash()), preset_identities(), mb.PARAMS_M,
                                lambda run_id, metric: cached_bias(str(store.path), (run_id,), metric=metric))
    left, right = st.columns([3, 1])
    if not points.empty:
        left.plotly_chart(charts.size_scatter(points), key="mb_size")
    with right:
        common.how_to_read(
            "Paper Fig. 4: bias against backbone size, one line per metric, one panel per attribute; whiskers are "
            "95% intervals (over the occupations on WinoBias, over pairs elsewhere). "
            "Each point is a stored run on this dataset version. Offline only the shipped backbones exist "
            "(MiniLM 22M for matching metrics, SmolLM2 135M for BARTScore); with a network, pick more backbones "
            "under Model options and their runs appear here.")

with tab_pairs:
    attributes = st.multiselect("Attribute", dataset.attributes, default=dataset.attributes, key="mb_f_attr")
    gap_metrics = sorted(pairs_frame["metric"].unique())
    default_metric = [m for m in gap_metrics if m == "bertscore"] or gap_metrics[:1]
    chosen_metrics = st.multiselect("Metric", gap_metrics, default=default_metric, key="mb_f_metric")
    min_gap = st.slider("Minimum |gap| (0-100 scale)", 0.0, 100.0, 0.0, 0.5, key="mb_f_gap")
    gaps = mb.pair_table(store, run_ids, attributes or None, chosen_metrics or None, min_gap)
    st.caption(common.escape_markdown(
        f"{len(gaps)} pairs for {', '.join(chosen_metrics) or 'all metrics'}, largest gap first "
               "(DuckDB query over the stored rows)."))
    gap_examples(gaps)
    if not gaps.empty:
        st.plotly_chart(charts.gap_histogram(gaps), key="mb_gap_hist")
        common.how_to_read("Positive gap: candidate 1 scored higher. A symmetric, narrow histogram around 0 is "
                           "what a fair metric looks like.")
        matching = [m for m in metrics if hasattr(m, "alignment")]
        st.subheader("Token alignment (paper Fig. 3)")
        if not matching:
            st.info("Add BERTScore or MoverScore to see which reference token each candidate token matches.")
        elif st.toggle("Show token alignment for one pair (loads the encoder)", key="mb_align"):
            item = st.selectbox("Pair", gaps["item"].unique(), key="mb_align_item")
            which = st.radio("Matching metric", [m.name for m in matching], horizontal=True, key="mb_align_metric")
            metric = next(m for m in matching if m.name == which)
            alignment_view(metric, gaps[gaps["item"] == item].iloc[0])

    stored_runs = [r.name for r in runs if r.name not in mb.METRICS]
    computed_runs = [r.name for r in runs if r.name in mb.METRICS]
    if not dataset.stored_columns:  # e.g. the demo set: nothing to compare with, so no empty section
        st.caption("This data has no stored scores, so there is no recomputed-beside-stored comparison (the "
                   "paper's release files carry the authors' scores: load them with “Upload a file”).")
    elif not stored_runs or not computed_runs:
        st.subheader("Recomputed beside stored")
        st.info("Choose a stored score column (under “Stored scores”) and a metric, and run, to compare them pair "
                "by pair (e.g. bleu with the authors' BLEU under the metric-fairness-2022 settings).")
    else:
        st.subheader("Recomputed beside stored")
        left, right = st.columns(2)
        mine = left.selectbox("Recomputed metric", computed_runs, key="mb_agree_mine")
        guess = next((i for i, c in enumerate(stored_runs) if c.lower().startswith(mine[:4])), 0)
        theirs = right.selectbox("Stored column", stored_runs, index=guess, key="mb_agree_stored")
        joined, agreement_summary = mb.agreement(pairs_frame, mine, theirs)
        st.dataframe(pd.DataFrame([agreement_summary]).round(4), hide_index=True, width="stretch",
                     key="mb_agree_summary")
        st.dataframe(joined.round(4), hide_index=True, width="stretch", key="mb_agree_table")
        common.how_to_read("Each row is one pair scored by both: our recomputation and the score stored in the "
                           "data. Pearson r compares all 2N scores; *same gap sign* is the share of pairs where both "
                           "prefer the same candidate; the gap difference is on the 0–100 scale of each metric.")

with tab_edit:
    edit_references_view(dataset)

with tab_runs:
    labels = [f"{r.label} — {r.run_id}" for r in runs]
    choice = runs[labels.index(st.selectbox("Run", labels, key="mb_run"))]
    common.manifest_box(choice.manifest, choice.run_id, choice.from_cache)
    common.export_buttons(choice.run_id, key=f"mb_export_{choice.run_id}")
    report_button(run_ids, key="mb_report")  # every run of this dataset, one HTML file
    st.markdown(
        "**About METEOR:** the paper's released code passed Python *sets* of tokens to nltk's METEOR, which "
        "makes its scores depend on the interpreter's hash seed. We pass token lists, so our METEOR is "
        "deterministic and does **not** replicate that behaviour; the other four n-gram metrics under "
        "`metric-fairness-2022` reproduce the released code exactly (NIST with n = 2, matching the released "
        "scores).")
