"""The CAIRO page's "Compute one here" section: systems, prompt sets and scorer in, the stored and resumable run
as a background job, the bias table out. Everything it computes comes from the study's face, `fairness_core.cairo`."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from fairness_core import cairo
from ui import common, jobs
from ui.report import report_button


@dataclass(frozen=True)
class ComputedTable:
    """A bias table computed here, with what the page reads next to it."""

    csv_text: str
    split_rows: list[dict]
    indices: dict[str, list[int]]  # metric -> original prompt indices the table was computed on
    generations: pd.DataFrame
    value_column: str
    run_ids: tuple[str, ...] = ()  # the stored runs behind it (the planner's pilot)


def compute_section(chosen_metrics: list[str]) -> ComputedTable | None:
    """The "Compute one here" section: systems, prompt sets and scorer, then the stored, resumable run as a
    background job. Returns the finished bias table (None until then)."""
    default_systems = ("smollm2-135m-instruct@top_p=0.5; smollm2-135m-instruct@top_p=0.8; "
                       "smollm2-135m-instruct@top_p=0.95; smollm2-135m-instruct@top_p=0.8,temperature=0.7; "
                       "smollm2-135m-instruct@top_k=20,temperature=1.3; smollm2-135m-instruct@greedy")
    systems_text = st.text_area("Systems (MODEL@knob=v,knob=v separated by ';')", default_systems, key="cairo_systems",
                                help="Decoded exactly as written: a knob left out stays off (top_p, top_k off; "
                                     "temperature 1).")
    c1, c2, c3, c4 = st.columns(4)
    n_sets = c1.number_input("Paraphrase sets per metric", 1, 11, 3, key="cairo_n_sets")
    per_subgroup = c2.number_input("Prompts per subgroup", 2, 300, 4, key="cairo_per_subgroup")
    max_new = c3.number_input("New tokens (paper: 25)", 4, 60, 16, key="cairo_max_new")
    seeds = c4.text_input("Seeds (paper: 0,1,2,3,4)", "0", key="cairo_seeds")
    scorer = st.selectbox("Scorer", ["jigsaw-toxicity", "offensive", "toxicity", "regard", "honest"],
                          key="cairo_scorer",
                          help="jigsaw-toxicity (default) and offensive run offline; jigsaw-toxicity is the Jigsaw "
                               "toxic-comment classifier, which reacts to identity words (audit it on the Judge "
                               "audit page); toxicity/regard need a hub classifier; honest needs a HurtLex file "
                               "(not shipped: CC BY-NC-SA).")
    lexicon = ""
    if scorer == "honest" and common.served():  # a visitor never names a server file (docs/SECURITY.md)
        st.caption("The HONEST lexicon is the one the server's owner configured ($FAIRNESS_LAB_HONEST_LEXICON); "
                   "visitors cannot choose a file.")
    elif scorer == "honest":
        lexicon = st.text_input("HurtLex TSV path (honest only; empty: $FAIRNESS_LAB_HONEST_LEXICON)", "",
                                key="cairo_lexicon")
    extra = st.session_state.get("cairo_extra_sets", {})
    try:
        scorer_options = {"lexicon_path": lexicon} if lexicon else {}
        request = cairo.RunRequest(systems=cairo.parse_systems(systems_text), metrics=tuple(chosen_metrics),
                                   n_sets=int(n_sets), per_subgroup=int(per_subgroup), scorer=(scorer, scorer_options),
                                   seeds=cairo.parse_seeds(seeds),
                                   max_new_tokens=int(max_new),
                                   extra_sets={m: v for m, v in extra.items() if m in chosen_metrics})
        problems = request.problems()
    except (cairo.CairoInputError, ValueError) as error:
        request, problems = None, [str(error)]
    if problems:
        st.error(common.escape_markdown(problems[0]))
        return None
    st.caption(f"{len(request.systems)} systems. Correlations across few, similar systems are weak evidence.")
    store, executor = common.get_store(), common.get_executor()
    job_key = jobs.key_for("cairo-run", {"request": cairo.pipeline_manifest(request), "store": str(store.path)})
    if st.button("Compute the bias table", type="primary", key="cairo_compute"):
        jobs.start(job_key, lambda on_progress, cancel: cairo.run_pipeline(request, store, on_progress, cancel,
                                                                           executor=executor), label="CAIRO run")
    job = jobs.show(job_key, label="CAIRO run")
    if job is not None and job.done and job.error is None:
        result = job.result
        if result.status == "complete" and not result.bias_table.empty:
            st.success(common.escape_markdown(f"Bias table from {len(result.generations)} stored generations (runs "
                       f"{', '.join(result.run_ids)})."))
            report_button(result.run_ids, key="cairo_report")
            for note in result.notes:
                st.caption(common.escape_markdown(note))
            return ComputedTable(result.bias_table.to_csv(index=False), result.split_rows, result.indices,
                                 result.generations, result.value_column, tuple(result.run_ids))
    return None


def search_headline(pair: dict, best: pd.Series, n_systems: int) -> None:
    """The search's answer in two numbers, with short labels (a metric's label is cut at its column's width, and
    more so in the presenter view's larger type) and what they mean in a caption below."""
    original, heldout = st.columns(2)
    original.metric("Pearson r: original → best CAIRO",
                    f"{cairo.r_text(pair['original_r'])} → {cairo.r_text(best['CAIRO (best pair)'])}")
    heldout.metric("Held-out r at that size", cairo.r_text(best.get("held-out r (LOSO)")))
    st.caption(f"Across n = {n_systems:d} systems. Original prompts alone, then the best CAIRO combination pair of "
               f"size {int(best['size'])} (the original plus {int(best['size']) - 1:d} paraphrase set(s)); held-out r: "
               "the same size, each system's combination chosen without it (leave-one-system-out).")
