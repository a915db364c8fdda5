"""Metric quality: does a metric agree with people? (Sun et al. 2022, §3, Tables 4-5: a fairer metric must still
agree with human judgments.)

Thin page: widgets -> fairness_core.metric_quality (its public face: judgments, stored scoring and agreement runs,
drill-down, the bias–quality points) -> ui/metric_quality_charts.
"""

from __future__ import annotations

import streamlit as st

from fairness_core import metric_quality as mq
from ui import common, jobs
from ui import metric_quality_charts as charts
from ui.report import report_button

JOB_KIND, BIAS_KIND = "metric-quality", "metric-quality-bias"
ENCODER_METRICS = ("bertscore", "moverscore", "moverscore-bigram")
DEVIATIONS = (
    "Backbones: the paper's BERTScore uses BERT-base/large and its BARTScore BART-base; offline only "
    "all-MiniLM-L6-v2 (BERTScore, MoverScore) and SmolLM2-135M (BARTScore-LM, decoder-only with a prompt) run "
    "here, so our agreement numbers are for those backbones, beside the paper's as reference lines.",
    "The paper reports only the pooled Spearman; the per-document and system rules, Pearson and Kendall, and every "
    "interval are added here (95% percentile bootstrap over documents, systems or both — Deutsch, Dror & Roth "
    "2021; the system rule resamples both by default).",
    "Per document, a document on which people tell the systems apart but the metric scores them all alike counts "
    "as 0 agreement; scipy-based tools leave it out, which rewards a metric for ties (choose 'drop' to do so).",
    "The authors' released BARTScore-BART-base scores (with and without their adapter) are shipped as stored "
    "columns: their correlations reproduce Table 5 exactly (0.325, 0.307); they are not recomputed.",
    "Gender bias for the bias–quality chart is measured on WinoBias type1-dev (396 pairs, the paper's gender set) "
    "by the metric-bias study with the same metric settings.",
)

st.title("Metric quality")
st.caption("Does a metric agree with people? A fairer metric is only useful if it still ranks texts the way "
           "humans do — Sun et al. 2022 (*BERTScore is Unfair*) judge every backbone swap and debiasing adapter on "
           "both axes (Tables 4–5). This page measures the second axis: correlation with human judgments.")
with st.expander("Deviations from the paper (also in docs/metric-quality.md)"):
    for line in DEVIATIONS:
        st.markdown(f"- {line}")  # markdown: developer text


@st.cache_resource(show_spinner="Reading REALSumm…", max_entries=1)
def realsumm() -> mq.Judgments:
    return mq.load_judgments(mq.REALSUMM)


@st.cache_resource(show_spinner="Reading your judgments…", max_entries=8)
def uploaded(name: str, content: bytes) -> mq.Judgments:
    return mq.load_judgments(content, name=name)  # bytes, never a path


source = st.radio("Human judgments", ["REALSumm (shipped)", "Upload judgments (CSV, TSV or JSONL)"],
                  horizontal=True, key="mq_source")
try:
    if source.startswith("REALSumm"):
        judgments = realsumm()
    else:
        upload = st.file_uploader("Columns: item_id, system, candidate, reference, human (+ source, stored scores)",
                                  type=["csv", "tsv", "jsonl"], key="mq_upload")
        if upload is None:
            st.info("Upload one candidate per (item, system) with its human score; every system must score every "
                    "item (e.g. SummEval, or WMT direct assessments per segment, with an optional group column "
                    "for the language pair).")
            st.stop()
        judgments = uploaded(upload.name, upload.getvalue())
except mq.RequestError as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
st.caption(common.escape_markdown(f"{judgments.describe()}."))
for note in judgments.notes:
    st.caption(common.escape_markdown(note))

left, right = st.columns(2)
names = left.multiselect("Metrics", mq.metric_names(), default=list(mq.DEFAULT_METRICS), key="mq_metrics",
                         format_func=lambda n: f"{n} ({mq.METRICS[n].label})")
stored = right.multiselect("Stored score columns (no model needed)", judgments.stored_columns,
                           default=judgments.stored_columns, key="mq_stored")
rule_col, resample_col = st.columns(2)
rule = rule_col.radio("Rule", mq.RULES, key="mq_rule", format_func=mq.rule_label)
statistic = rule_col.radio("Statistic (the interval is of it)", mq.STATISTICS, key="mq_statistic", horizontal=True)
unit = resample_col.radio("The interval resamples", mq.UNITS, key=f"mq_resample_{rule}", horizontal=True,
                          index=mq.UNITS.index(mq.DEFAULT_UNIT[rule]), format_func=mq.UNIT_LABELS.get,
                          help="Documents: the interval speaks of these systems on other documents. Both "
                               "(Deutsch, Dror & Roth 2021): of the metric, on other documents and other systems.")
resamples = int(resample_col.number_input("Bootstrap resamples", 0, 10_000, 1000, step=100, key="mq_resamples"))
constant = "zero"
if rule == "document":
    constant = resample_col.radio("A document the metric scores all alike", mq.CONSTANT_POLICIES, key="mq_constant",
                                  horizontal=True, format_func={"zero": "counts as 0", "drop": "is left out"}.get)
group_average = judgments.n_groups > 1 and rule_col.checkbox(
    f"Average over the {judgments.n_groups} groups (e.g. WMT language pairs)", key="mq_group_average")
encoder = ""
if any(n in ENCODER_METRICS for n in names):
    encoder = common.model_picker("encoder", "Encoder for BERTScore / MoverScore", key="mq_encoder",
                                  default="all-minilm-l6-v2")
    if not encoder:
        st.stop()
try:
    options = {n: {"model": encoder} for n in names if n in ENCODER_METRICS and encoder}
    request = mq.build_request(judgments, mq.build_metrics(names, options=options), stored, rule, resamples,
                               statistic=statistic, resample=unit, constant=constant, group_average=group_average)
except mq.RequestError as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
labels = mq.metric_labels(request.metrics, request.stored)
store = common.get_store()
signatures = [m.signature() for m in request.metrics]
key = jobs.key_for(JOB_KIND, {"data": judgments.data_hash, "metrics": signatures, "stored": list(stored),
                              "rule": rule, "resamples": resamples, "statistic": statistic, "resample": unit,
                              "constant": constant, "groups": group_average, "store": str(store.path)})
outcome = mq.find_stored(request, store)
if outcome is None:  # not stored yet (or a metric whose corpus state needs its model): Run, as a background job
    work = mq.quality_work(request)
    if jobs.run_button(key, "Run", estimate_s=jobs.estimate(work), widget_key="mq_run"):
        executor = common.get_executor()
        jobs.start(key, lambda on_progress, cancel: mq.run_quality(request, store, on_progress, cancel, executor,
                                                                 skip_unavailable=True),
                   label="Metric quality", estimate_of=work)
    job = jobs.show(key, label="Metric quality")
    if job is not None and job.done and job.error is None and job.result is not None:
        outcome = job.result
    if outcome is None:
        st.stop()

for note in outcome.skipped:
    st.warning(common.escape_markdown(note))
if outcome.partial:
    st.warning("These results are partial: a metric was cancelled before all its batches were scored; running the "
               "same request again completes them.")
present = {name: c for name, c in outcome.correlations.items() if name in outcome.scores.columns}
if not present:
    st.info("No metric could be scored here (see above).")
    st.stop()
for note in mq.notes(present):
    st.caption(common.escape_markdown(note))

agreement_tab, summary_tab, bias_tab = st.tabs(["Agreement with people", "Per summary", "Bias vs quality"])
with agreement_tab:
    table = mq.agreement_table(present, labels)
    st.dataframe(table.drop(columns=["metric"]), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in ("value", "spearman", "ci_low", "ci_high", "pearson", "kendall")})
    scope = mq.interval_scope(request.resample_unit, judgments.n_items, judgments.n_systems)
    st.caption(common.escape_markdown(f"Each 95% interval is of {statistic} and {scope}."))
    paper = {k: v for k, v in mq.PAPER_REALSUMM.items() if k in ("BERTScore, BERT-base", "BARTScore, BART-base")}
    shows_paper = judgments.name == mq.REALSUMM and rule == "pooled" and statistic == "spearman"
    st.plotly_chart(charts.agreement_bars(table, rule, paper if shows_paper else None, statistic,
                                          request.resample_unit), width="stretch")
    common.how_to_read(f"Each bar is how well a metric's scores agree with the human scores ({judgments.human_label}) "
                       "— 1 = the same order as people, 0 = unrelated. The whisker is a 95% interval, and what it "
                       "resamples decides what it speaks of: over *documents* (each with all its summaries, "
                       "because summaries of one document are not independent) it describes these systems on "
                       "other documents; over *documents and systems* it describes the metric. The rule matters: "
                       "*pooled* compares all summaries at once (easy documents lift every score together), *per "
                       "document* asks which system's summary of the same article is better, *system level* ranks "
                       "the systems: with 24 systems that is 24 points, so an interval over other systems is wide "
                       "(REALSumm's stored BARTScore: 0.431, [−0.09, 0.76]). Dotted lines (REALSumm, pooled): "
                       "the paper's published values for backbones that do not run here.")
    if shows_paper:
        st.caption(common.escape_markdown(
            "Published REALSumm Spearman, pooled (Sun et al. 2022, Tables 4–5; reference values, not computed "
            "here): " + "; ".join(f"{k} {v:.3f}" for k, v in mq.PAPER_REALSUMM.items())))
    if len(present) >= 2:
        st.subheader("Is one metric better than another? (paired)")
        first, second = st.columns(2)
        name_a = first.selectbox("Metric A", list(present), key="mq_pair_a", format_func=labels.get)
        name_b = second.selectbox("Metric B", list(present), index=1, key="mq_pair_b", format_func=labels.get)
        difference = mq.paired_difference(judgments, outcome.scores[name_a], outcome.scores[name_b], rule=rule,
                                          statistic=statistic, n_resamples=resamples, resample=request.resample_unit,
                                          constant=constant, group_average=group_average)
        symbol = {"spearman": "ρ", "pearson": "r", "kendall": "τ"}[statistic]
        st.metric(f"{symbol}(B) − {symbol}(A), {rule} rule", f"{difference.difference:+.3f}",
                  help="95% interval with the same draws for both metrics")
        st.caption(common.escape_markdown(
            f"95% paired interval {common.interval_text(difference.ci_low, difference.ci_high)}; it "
            f"{difference.scope}: "
            + ("B agrees with people differently from A." if difference.excludes_zero else
               "no difference is detectable here.")
            + (f" Both are averaged over the same {difference.n_documents} documents; left out: "
               f"{difference.dropped_why}." if difference.n_dropped_documents else "")
            + (f" {difference.n_undefined_resamples} of {difference.n_resamples} resamples had an undefined "
               "difference and are left out of the interval." if difference.n_undefined_resamples else "")))
    if outcome.agreement_run:
        info = store.get_run(outcome.agreement_run)
        if info is not None:
            # read back from the store right after this session's job computed it: computed now, not served
            common.manifest_box(info.manifest, outcome.agreement_run,
                                outcome.from_cache and not jobs.computed_here(key))
            common.export_buttons(outcome.agreement_run, key="mq_export")
            report_button([outcome.agreement_run, *(r.run_id for r in outcome.runs)], key="mq_report")

with summary_tab:
    chosen = st.selectbox("Metric", list(present), key="mq_scatter_metric", format_func=labels.get)
    frame = mq.drilldown(judgments, outcome.scores[chosen], rule)
    st.plotly_chart(charts.scatter(frame, labels[chosen], judgments.human_label), width="stretch")
    common.how_to_read("One dot per summary (per system under the system rule). Up = people liked it more; right = "
                       "the metric liked it more. Red dots are summaries the metric ranks far below where people "
                       "rank them, blue far above; the table lists them, largest disagreement first.")
    what = "systems" if rule == "system" else "summaries"
    st.subheader(common.escape_markdown(f"The {what} {labels[chosen]} ranks most differently from people"))
    columns = [c for c in ("item_id", "system", "n_items", "human", "score", "human_rank", "metric_rank", "rank_gap")
               if c in frame.columns]
    top = frame.head(20)
    st.dataframe(top[columns], hide_index=True, width="stretch")
    if rule != "system" and not top.empty:
        pick = st.selectbox("Read one", range(len(top)), key="mq_read",
                            format_func=lambda i: f"{top.iloc[i]['item_id']} / {top.iloc[i]['system']} "
                                                  f"(gap {top.iloc[i]['rank_gap']:+.2f})")
        row = top.iloc[int(pick)]
        st.text(f"Candidate ({row['system']}):\n{row['candidate']}\n\nReference:\n{row['reference']}")

with bias_tab:
    st.caption("Each metric as a point at (gender bias on WinoBias type1-dev, agreement with people): the two axes "
               "Sun et al. judge a metric on. Top-left is best: fair and faithful to human judgment.")
    bias_key = jobs.key_for(BIAS_KIND, {"metrics": signatures, "stored": list(stored), "store": str(store.path)})
    scored = [m for m in request.metrics if m.name in present]
    bias_work = mq.gender_bias_work(scored)
    if jobs.run_button(bias_key, "Measure gender bias (stored runs are read back)",
                       estimate_s=jobs.estimate(bias_work), widget_key="mq_bias_run"):
        executor = common.get_executor()
        jobs.start(bias_key, lambda on_progress, cancel: mq.gender_bias(scored, store, stored, 1000, on_progress,
                                                                        cancel, executor), label="Gender bias",
                   estimate_of=bias_work)
    bias_job = jobs.show(bias_key, label="Gender bias")
    if bias_job is not None and bias_job.done and bias_job.error is None and bias_job.result is not None:
        bias, bias_notes = bias_job.result
        for note in bias_notes:
            st.caption(common.escape_markdown(note))
        points = mq.bias_quality_points(present, bias, labels)
        if points.empty:
            st.info("No metric has both numbers yet.")
        else:
            st.plotly_chart(charts.bias_quality(points), width="stretch")
            st.dataframe(points.drop(columns=["metric"]), hide_index=True, width="stretch")
            common.how_to_read("Horizontal: gender bias (Eq. 2: mean |score gap| between he/she versions of the "
                               "same sentence, scores rescaled to 0–100; lower is fairer). Vertical: agreement "
                               "with people on this page's data, rule and statistic. Whiskers are 95% intervals "
                               "(pairs resampled for bias; for agreement, the unit chosen above). A debiased "
                               "variant that moves left without moving down is the goal of the paper's Tables 4–5.")
