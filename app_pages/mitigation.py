"""Mitigation: a metric is biased — train a debiasing adapter into its frozen backbone, or swap the backbone, and see
bias and agreement with people before and after (Sun et al. 2022 §3, Eq. 3-5, Tables 4, 5, 7).

Thin page: widgets -> fairness_core.mitigation (its public face: training requests and jobs, adapters, the
two-axis evaluation with paired intervals) -> ui/mitigation_charts.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core import mitigation as mit
from ui import common, jobs
from ui import mitigation_charts as charts
from ui.report import report_button

TRAIN_KIND, EVALUATE_KIND = mit.TRAIN_KIND, mit.EVALUATE_KIND

st.title("Mitigation")
st.caption("Found a biased metric? Sun et al. 2022 (*BERTScore is Unfair*, §3) offer two cures, each judged on two "
           "axes — is the metric fairer, and does it still agree with people? Swap the backbone for another one, or "
           "train a small debiasing adapter (Eq. 3) into the frozen backbone on counterfactual sentences (Eq. 4) "
           "while it keeps its scores elsewhere (Eq. 5).")
with st.expander("Deviations from the paper (also in docs/mitigation.md)"):
    for line in mit.DEVIATIONS:
        st.markdown(f"- {line}")  # markdown: developer text

metric_col, attribute_col = st.columns(2)
metric = metric_col.selectbox("Metric", list(mit.TRAINABLE), key="mit_metric",
                              format_func=lambda n: f"{n} ({mit.TRAINABLE[n]} paradigm)")
attribute = attribute_col.selectbox("Protected attribute", mit.ATTRIBUTES, key="mit_attribute",
                                    help="The paper mitigates gender only; the swap lists shipped here are for gender.")
cpu = mit.preset("cpu", metric)
model = common.model_picker(mit.BACKBONE_TASK[metric], "Backbone", key=f"mit_model_{metric}",
                            default=cpu.model if cpu else None)
if not model:
    st.stop()
mode = st.radio("Cure", ["Train a debiasing adapter", "Use a stored adapter", "Swap the backbone (§3.1)"],
                horizontal=True, key="mit_mode")
store = common.get_store()
adapter: str | None = None
compare_model: str | None = None

if mode.startswith("Train"):
    presets = mit.presets_for(metric)
    preset_col, steps_col, seed_col = st.columns([2, 1, 1])
    chosen = preset_col.selectbox("Recipe", [p.key for p in presets], key=f"mit_preset_{metric}",
                                  format_func=lambda k: next(p.label for p in presets if p.key == k))
    recipe = mit.preset(chosen, metric)
    steps = int(steps_col.number_input("Steps", 1, 1_000_000, recipe.steps, key=f"mit_steps_{chosen}_{metric}"))
    seed = int(seed_col.number_input("Seed", 0, 2**31 - 1, 0, key="mit_seed"))
    try:
        request = mit.build_train_request(metric, model, attribute, chosen, steps, seed)
    except mit.MitigationError as error:
        st.error(common.escape_markdown(str(error)))
        st.stop()
    work = mit.estimate_training(request)
    train_work = mit.training_work(request)
    st.caption(common.escape_markdown(  # one time on the page: the Run button's estimate, at this machine's load
        f"{recipe.source}: {request.preset.debias_batch} counterfactual triples + {request.preset.kd_batch} "
        f"distillation pairs a step, Adam {request.preset.lr:g}, reduction factor {request.preset.reduction_factor} "
        f"({request.preset.activation}); {work.steps:,} steps on the {work.device.upper()}."))
    adapter = mit.find_adapter(request)
    key = jobs.key_for(TRAIN_KIND, {"metric": request.metric.signature(), "attribute": attribute,
                                    "recipe": request.preset.manifest(), "seed": seed, "store": str(store.path)})
    if adapter is None:
        if jobs.run_button(key, "Train", estimate_s=jobs.estimate(train_work), widget_key="mit_train"):
            jobs.start(key, lambda on_progress, cancel: mit.train(request, store, on_progress, cancel),
                       label="Training the adapter", estimate_of=train_work)
        # a cancelled training has no partial results to show below: its own line says what is kept
        job = jobs.show(key, label="Training the adapter", cancelled_text="")
        if job is not None and job.done and job.error is None and job.result is not None:
            if job.result.status != "complete":
                stopped = "was cancelled" if job.cancel.cancelled else "stopped"
                st.warning(f"Training {stopped} after {job.result.steps_done:d} of {job.result.steps:d} steps; no "
                           "adapter is made from a partial training: its last checkpoint is kept and Train resumes "
                           "there.")  # markdown: developer text (two fixed words and two counts)
            adapter = job.result.adapter_id
        elif job is not None and job.done and job.error is None and job.cancel.cancelled:
            st.warning("Training was cancelled before its first step finished; nothing was stored, and Train starts "
                       "it again.")
        elif job is not None and job.error is not None:
            st.error(common.escape_markdown(str(job.error)))
    if adapter is None:
        st.stop()
    st.success(f"Adapter {common.inline_code(adapter)} is ready.")
    details = next(a for a in mit.list_adapters() if a["id"] == adapter)
    if details.get("run_id"):
        curve = mit.loss_curve(store, details["run_id"])
        if not curve.empty:
            st.plotly_chart(charts.loss_curve(curve), width="stretch")
            common.how_to_read("Red: the debias loss (Eq. 4), how differently the metric scores a sentence and "
                               "its gender-swapped copy against the neutral version — it should fall. Blue: the "
                               "distillation loss (Eq. 5), how far the adapted metric drifts from the original on "
                               "ordinary sentence pairs — it should stay small. Faint lines are single steps.")
elif mode.startswith("Use"):
    upload = st.file_uploader("Import an adapter file (from `mitigate export` or another lab)", type=["safetensors"],
                              key="mit_upload")
    if upload is not None:
        try:
            imported = mit.import_adapter(upload.getvalue(), upload.name)  # bytes, never a path
            fits = imported["backbone"].get("task") == mit.BACKBONE_TASK[metric]
            st.caption(common.escape_markdown(
                f"Imported adapter {imported['id']}." + ("" if fits else
                f" It belongs to a {imported['backbone'].get('task')} backbone, which {metric} does not use: choose "
                "its metric above to compare it.")))
        except mit.MitigationError as error:
            st.error(common.escape_markdown(str(error)))
    # only adapters this metric can wear: another metric's backbone is of another kind (an encoder, a causal LM)
    stored = mit.list_adapters(metric=metric)
    if not stored:
        others = len(mit.list_adapters()) - len(stored)
        st.info(common.escape_markdown(
            f"No {metric} adapter is stored here yet: train one, or import a file a teacher exported."
            + (f" ({others} stored for other metrics: choose their metric above.)" if others else "")))
        st.stop()
    adapter = st.selectbox("Adapter", [a["id"] for a in stored], key="mit_adapter",
                           format_func=lambda i: next(f"{i} ({a['backbone'].get('label')}, {a['attribute']}, "
                                                      f"{a['steps']} steps)" for a in stored if a["id"] == i))
    chosen_adapter = next(a for a in stored if a["id"] == adapter)
    if chosen_adapter["backbone"].get("label") != model:
        st.caption(common.escape_markdown(f"This adapter belongs to {chosen_adapter['backbone'].get('label')}: it "
                                          "is compared against that backbone."))
        model = chosen_adapter["backbone"].get("label") or model
    st.download_button("Download this adapter (one file)", mit.export_adapter(adapter),
                       file_name=f"{adapter}.safetensors", key="mit_download")
else:
    compare_model = common.model_picker(mit.BACKBONE_TASK[metric], "Swap to", key=f"mit_swap_{metric}")
    if not compare_model:
        st.stop()

st.header("Before and after")
left, right = st.columns(2)
other = left.toggle("Also race, religion, age, … (CrowS-Pairs)", value=True, key="mit_other",
                    help="The paper mitigates gender only; see whether the other attributes move too.")
with_quality = right.toggle("Agreement with people (REALSumm)", value=True, key="mit_quality")
split = right.radio("Data", mit.SPLITS[:2], key="mit_split", horizontal=True,
                    format_func={"report": "held out (reported)", "selection": "selection (the recipe was chosen "
                                 "on it)"}.get)
st.caption(common.escape_markdown(f"Data: {mit.SPLIT_LABELS[split]}. The `cpu` recipe's step count and its "
                                  f"distillation data were chosen on the selection data; results are reported on "
                                  "the held-out data."))
try:
    evaluation_request = mit.build_evaluation(metric, model, adapter, compare_model, "winobias", [],
                                              "realsumm" if with_quality else None, attribute, 1000,
                                              other_attributes=other, split=split)
except mit.MitigationError as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
evaluation_work = mit.evaluation_work(evaluation_request)
key = jobs.key_for(EVALUATE_KIND, {"before": str(evaluation_request.before), "after": str(evaluation_request.after),
                                   "data": evaluation_request.dataset.content_hash(), "quality": with_quality,
                                   "split": split, "store": str(store.path)})
if jobs.run_button(key, "Compare", widget_key="mit_compare", estimate_s=jobs.estimate(evaluation_work)):
    jobs.start(key, lambda on_progress, cancel: mit.run_evaluation(evaluation_request, store, cancel,
                                                                 on_progress=on_progress),
               label="Scoring both variants", estimate_of=evaluation_work)
job = jobs.show(key, label="Scoring both variants")
if job is None or not job.done:
    st.stop()
if job.error is not None:
    st.error(common.escape_markdown(str(job.error)))
    st.stop()
result: mit.Evaluation = job.result
bias = result.bias
st.caption(common.escape_markdown(f"Before: {result.before.label}. After: {result.after.label}. Bias on "
                                  f"{result.data_name}" + (f"; agreement on {result.quality_name}"
                                                           if result.quality_name else "") + "."))
report_button(list(result.run_ids.values()), key="mit_report")  # both sides' stored runs, one HTML file
bias_col, quality_col = st.columns(2)
bias_col.metric(f"Bias, {result.bias_attribute} (Eq. 2)", f"{bias.after:.2f}", f"{bias.difference:+.2f}",
                delta_color="inverse", help="Mean |gap| after min-max rescaling of each side's own scores")
bias_col.caption(common.escape_markdown(
    f"Before {bias.before:.2f}; difference {bias.difference:+.2f}, 95% paired interval "
    f"{common.interval_text(bias.ci_low, bias.ci_high, digits=2)} over {bias.n_pairs} pairs "
    f"({bias.relative:+.0%}); the interval is over {bias.interval_unit}."))
if result.quality is not None:
    q = result.quality
    quality_col.metric("Agreement with people (Spearman, pooled)", f"{q.b:.3f}", f"{q.difference:+.3f}")
    quality_col.caption(common.escape_markdown(
        f"Before {q.a:.3f}; difference {q.difference:+.3f}, 95% paired interval "
        f"{common.interval_text(q.ci_low, q.ci_high)}; it {q.scope}."))
common.how_to_read("Bias: how differently the metric scores two sentences that differ only in gender words (0–100 "
                   "after rescaling each metric's own scores; lower is fairer). A difference whose interval lies "
                   "below 0 is a real reduction on these pairs, not luck of the draw. Agreement: Spearman "
                   "correlation of the metric with human judgments of summaries; a difference whose interval "
                   "contains 0 means no measurable loss of quality.")
paper = pd.DataFrame([{"paper (Table 5)": name, "bias before": v["bias"][0], "bias after": v["bias"][1],
                       "REALSumm before": v["realsumm"][0] if v["realsumm"] else None,
                       "REALSumm after": v["realsumm"][1] if v["realsumm"] else None}
                      for name, v in mit.PAPER_TABLE5.items()])
with st.expander("The paper's Table 5 beside this (reference values for backbones that do not run here)"):
    st.dataframe(paper, hide_index=True, width="stretch")

tabs = st.tabs(["Bias vs quality", "Per attribute", "Pairs that changed most"])
with tabs[0]:
    if result.quality is None:
        st.info("Switch on agreement with people to place both variants on the two axes.")
    else:
        sides = result.quality_sides
        before, after = ({"label": label, "bias": change, "bias_low": interval[0], "bias_high": interval[1],
                          "quality": side.spearman, "quality_low": side.ci_low, "quality_high": side.ci_high}
                         for label, change, interval, side in (("before", bias.before, bias.before_ci, sides[0]),
                                                               ("after", bias.after, bias.after_ci, sides[1])))
        st.plotly_chart(charts.bias_quality_arrow(before, after), width="stretch")
        common.how_to_read("The arrow goes from the metric before to the metric after. Left is fairer, up agrees "
                           "better with people: an arrow pointing left without dropping is what the paper's "
                           "Tables 4–5 hope for.")
with tabs[1]:
    rows = pd.DataFrame([{"attribute": name, "before": c.before, "before_low": c.before_ci[0],
                          "before_high": c.before_ci[1], "after": c.after, "after_low": c.after_ci[0],
                          "after_high": c.after_ci[1], "difference": c.difference, "ci_low": c.ci_low,
                          "ci_high": c.ci_high, "relative": c.relative, "pairs": c.n_pairs}
                         for name, c in result.attributes.items()])
    st.plotly_chart(charts.attribute_bars(rows), width="stretch")
    st.dataframe(rows[["attribute", "before", "after", "difference", "ci_low", "ci_high", "relative", "pairs"]],
                 hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.2f")
                                for c in ("before", "after", "difference", "ci_low", "ci_high", "relative")})
    common.how_to_read("Gender comes from WinoBias (the adapter was trained for it); the others from CrowS-Pairs. "
                       "An adapter trained on gender may leave the others unchanged, or move them either way.")
with tabs[2]:
    changed = pd.DataFrame(mit.changed(result, 30))
    st.dataframe(changed, hide_index=True, width="stretch")
    if not changed.empty:
        pick = st.selectbox("Read one", range(len(changed)), key="mit_pair",
                            format_func=lambda i: f"{changed.iloc[i]['item']} ({changed.iloc[i]['change']:+.1f})")
        row = changed.iloc[int(pick)]
        st.text(f"Candidate 1: {row['candidate1']}\nCandidate 2: {row['candidate2']}\nReference:   {row['reference']}"
                f"\nGap before {row['gap_before']:.2f}, after {row['gap_after']:.2f}")
    common.how_to_read("Gaps are on each side's own 0–100 scale; a negative change means the two candidates are "
                       "scored more alike after the mitigation.")
