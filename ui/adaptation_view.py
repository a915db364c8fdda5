"""Template adaptation page: the "Import templates" tab (read an EEC or IPTTS file and show what it holds) and the
report of a run (rewrites, NOEs, VBCM per set, comparisons, characteristics)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from fairness_core import adaptation
from ui import adaptation_charts as charts
from ui import common
from ui.report import report_button

SHOW_CHOICES = ["all", "accepted", "rejected"]


def import_tab_view() -> None:
    st.markdown("Read the Equity Evaluation Corpus CSV (`ID,Sentence,Template,Person,Gender,Race,Emotion,"
                "Emotion word`) or the IPTTS bias-madlibs CSV (`Text,Label,Template`) and see what it holds.")
    fmt = st.radio("Format", ["eec", "iptts"], horizontal=True, key="ta_import_format",
                   format_func={"eec": "EEC", "iptts": "IPTTS (bias madlibs)"}.get)
    template_file = st.file_uploader("Template file (CSV)", type=["csv"], key="ta_import_upload")
    if template_file is not None:
        try:
            imported = adaptation.import_templates(fmt, template_file.name, template_file.getvalue())
        except adaptation.TemplateImportError as error:
            st.error(common.escape_markdown(str(error)))
        else:
            found = imported.summary()
            st.success(common.escape_markdown(f"{found['n_rows']} rows, {found['n_templates']} templates."))
            for attribute, groups in found["groups"].items():
                st.dataframe(pd.DataFrame({"group": list(groups), "rows": list(groups.values())}), hide_index=True,
                             key=f"ta_import_groups_{attribute}")
            for note in imported.notes:
                st.caption(common.escape_markdown(note))
            st.dataframe(pd.DataFrame([{"template_id": t.template_id, "template": t.text}
                                       for t in imported.templates.templates[:200]]), hide_index=True,
                         key="ta_import_templates")


def dashes(frame: pd.DataFrame) -> pd.DataFrame:
    """The table as shown: numbers rounded to 4 places, an undefined value as "—" (never "nan" or "None")."""
    shown = frame.copy()
    for column in shown.columns:
        if shown[column].isna().any():
            numeric = pd.api.types.is_float_dtype(shown[column])
            shown[column] = [("—" if pd.isna(v) else f"{v:.4f}" if numeric else v) for v in shown[column]]
    return shown


def grouped_problems(problems: list[str]) -> list[str]:
    """One warning per cause: 'classifier · attribute: cause.' sentences with the same cause become one sentence
    naming every classifier · attribute it applies to."""
    by_cause: dict[str, list[str]] = {}
    for problem in problems:
        where, _, cause = problem.partition(": ")
        by_cause.setdefault(cause, []).append(where)
    return [f"{', '.join(where)}: {cause}" for cause, where in by_cause.items()]


def report_view(report: dict, sync_url: Callable[[], None]) -> None:
    """The run's report: rewrites (when the run rewrote), NOEs, VBCM per set, comparisons, characteristics.
    `sync_url` keeps the rewrite filter in the link."""
    if report.get("status") != "complete":
        st.warning(common.escape_markdown(f"The run stopped during {report.get('stage')}; finished batches are "
                                          "stored and running it again resumes."))
        return
    source_note = "served from the run store" if report["from_cache"] else "computed now and stored"
    st.success(common.escape_markdown(f"Done ({source_note}). Runs: " + "; ".join(
        f"{k} {', '.join(v)}" for k, v in report["run_ids"].items())))
    report_button([r for ids in report["run_ids"].values() for r in ids], key="ta_report")
    for note in report["deviations"]:
        st.caption(common.escape_markdown(note))
    rewrote = report.get("rewrite", True)
    if rewrote:
        rewrites_view(report, sync_url)

    st.subheader("Naturally occurring examples (Table 2)")
    st.dataframe(adaptation.noe_counts(report["noes"]), hide_index=True, key="ta_noes")

    st.subheader("VBCM per set, with 95% bootstrap intervals over templates and names")
    frame = report["vbcm"]
    for (classifier, attribute), part in frame.groupby(["classifier", "attribute"], sort=False):
        st.plotly_chart(charts.vbcm_bars(part, f"{classifier} · {attribute}"),
                        key=f"ta_vbcm_{classifier}_{attribute}")
    st.caption(common.escape_markdown("Classifier scores in [0, 1]: " + "; ".join(
        f"{k}: {v}" for k, v in report["mappings"].items()) + ". NOEs carry names only, so their vectors have the "
        "name groups."))
    common.how_to_read(JUDGE_NOTE)

    st.subheader("Do adapted templates agree better with the NOEs? (Figs. 4–5)" if rewrote else
                 "Do the original templates measure what the domain's own sentences measure? (Figs. 4–5)")
    comparisons = report["comparisons"]
    if comparisons.empty:
        st.info("No comparison: a set has no scored template for the name groups.")
    else:
        adapting_only = ["n_adapted_templates", "change_detected", "change_band"]  # nothing was adapted
        st.dataframe(dashes(comparisons if rewrote else comparisons.drop(columns=adapting_only, errors="ignore")),
                     hide_index=True, key="ta_comparisons")
        if comparisons["r"].isna().any():
            st.caption("r is — where it is undefined: fewer than 3 groups, or a classifier that gives every group "
                       "the same score (a constant vector has no correlation).")
        shown, problems = adaptation.readable_comparisons(comparisons) if rewrote else (comparisons, [])
        if rewrote and "adapted vs NOEs" not in set(comparisons["comparison"]):
            st.caption("No rewrite was accepted for the name groups, so there is no adapted set: only the "
                       "original templates are compared with the NOEs.")
        elif problems:  # too few accepted rewrites, or nothing changed: one warning per cause
            for problem in grouped_problems(problems):
                st.warning(common.escape_markdown(problem))
        if not shown.empty:
            st.plotly_chart(charts.comparison_bars(shown, "mae"), key="ta_mae_chart")
            if shown["r"].notna().any():
                st.plotly_chart(charts.comparison_bars(shown, "r"), key="ta_r_chart")
        common.how_to_read(
            "MAE and Pearson r compare two VBCM vectors over the name groups (the NOEs have names only; each "
            "set's background is then over those groups). A small MAE and a large r mean the templates measure "
            "bias like the domain's own sentences. *adapted − original* is the change from adapting: a "
            "negative MAE difference or a positive r difference means the adapted templates measure bias more "
            "like the domain's own sentences. Adapted and original are compared on the same templates (the "
            "accepted ones; *n_templates*): MAE grows with noise and fewer templates are noisier, so read "
            "*adapted vs NOEs* against *original (accepted templates) vs NOEs*, not against all originals. "
            "Intervals resample templates (original and adapted together, they share template ids), NOE "
            "sentences independently, and the names once for every set (the same names fill them all). "
            "r needs 3 or more groups; a classifier that gives every name the same score (VADER) has MAE 0 and "
            "no r: it cannot see the bias.")

    st.subheader("Template characteristics (Table 3, Figs. 7–8)" + (" and similarity (Table 4)" if rewrote else ""))
    st.dataframe(report["characteristics"], hide_index=True, key="ta_characteristics")
    st.caption("Each characteristic carries a 95% bootstrap interval over the set's sentences (_ci_low, "
               "_ci_high).")
    similarity = report["similarity"]["all"]
    if rewrote and similarity["n"]:
        st.caption(common.escape_markdown(
            f"Cosine similarity original ↔ adapted (all-MiniLM-L6-v2): {similarity['value']:.3f} "
            f"[{similarity['ci_low']:.3f}, {similarity['ci_high']:.3f}] over {similarity['n']} accepted "
            "rewrites. Embeddings are pooled as sentence-transformers does for this model (mean over all "
            "tokens, [CLS]/[SEP] included, then normalised), the embedding the paper's Table 4 uses."))
    st.download_button("Download the report (JSON)", adaptation.report_download(report),
                       file_name="adaptation-report.json", key="ta_download")


JUDGE_NOTE = (
    "VBCM = 1 means a group's sentences were scored like the average sentence of the same template. VADER and the "
    "profanity classifier barely react to names, so their vectors sit at 1 whatever the templates: they cannot "
    "show this kind of bias. The Jigsaw toxicity classifier (toxic-comment-classifier, offline) reacts to names "
    "and identity words (it scores \"I am a gay man\" 0.85 toxic, \"I am a straight man\" 0.41), so its vector "
    "drops below 1 where a group's names move its toxicity score; a value of 0.98 means the group's sentences "
    "were, on average over templates, 0.02 apart from the background in toxicity probability. Audit the judge "
    "itself on the Judge audit page.")


def rewrites_view(report: dict, sync_url: Callable[[], None]) -> None:
    st.subheader("Rewrites: original, adapted and rejected")
    rejections = report["rejections"]
    c1, c2, c3, c4, c5 = st.columns(5)
    c1.metric("Rewrites", rejections["n_rewrites"])
    low, high = rejections["rejection_rate_ci"]
    rate = rejections["rejection_rate"]
    c2.metric("Rejection rate", f"{rate:.0%}" if pd.notna(rate) else "none",
              help=f"95% bootstrap interval over templates: {low:.0%} – {high:.0%}" if pd.notna(low) else
              "No interval: fewer than 2 templates.")
    c3.metric("Lost the term", rejections["counts"]["lost the identity term"])
    c4.metric("Repeated the term", rejections["counts"]["repeated the identity term"])
    c5.metric("Quoted or unchanged", rejections["counts"][adaptation.QUOTED]
              + rejections["counts"][adaptation.UNCHANGED],
              help="Commentary about the sentence instead of a rewrite, or the template itself returned (up to "
                   "case, spacing and punctuation); both rejected.")
    st.caption(common.escape_markdown("Templates kept in the adapted set per attribute: " + ", ".join(
        f"{a} {n} of {rejections['n_templates']}" for a, n in rejections["adapted_templates_per_attribute"].items())
        + ". A template stays only when every kind of term it needs was accepted."))
    rewrites = report["rewrites"]
    show = st.radio("Show", SHOW_CHOICES, horizontal=True, key="ta_show")
    sync_url()
    if show == "accepted":
        rewrites = rewrites[rewrites["status"] == adaptation.ACCEPTED]
    elif show == "rejected":
        rewrites = rewrites[rewrites["status"] != adaptation.ACCEPTED]
    st.dataframe(rewrites[["template_id", "kind", "anchor", "original", "adapted", "status", "reply"]],
                 hide_index=True, key="ta_rewrites")  # model text is data: rendered as table cells
    common.how_to_read(
        "*original* is the template filled with the anchor term, *adapted* the model's reply after cleaning "
        "(first line, labels and quotes removed), *reply* the raw reply. A reply is accepted only if it "
        "contains the anchor term exactly once, differs from the original by more than case, spacing and "
        "punctuation, and does not quote the original sentence inside commentary; the slot is then put back "
        "where the term was.")
