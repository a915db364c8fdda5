"""Judge audit: is the scorer (or metric) that a study trusts itself biased? (Dixon et al. 2018; Borkan et al. 2019;
Dhamala et al. 2023 §6.3.2.)

Widgets -> `fairness_core.audit` (its public face): `build_request` -> `run_audit` (a stored job in the background)
-> `ui.audit_charts`. Uploads are bytes; a visitor never names a server file.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core import audit
from fairness_core.store import StoreError, run_labels, store_catalogue
from ui import audit_charts, common, jobs, plan_view

JOB_KEY = "audit_job"
JOB_KIND = audit.JOB_KIND
PASTE = "(paste texts below)"
#: the columns of the two result tables, with the words a reader sees: the score shift, then the classification
#: statistics (Dixon et al.'s FPR, Borkan et al.'s AUCs), each table narrow enough to show whole at 1280 pixels
SHIFT_COLUMNS = {"level": "level", "term": "term", "group": "group", "n": "templates", "mean": "mean score",
                 "shift": "shift", "ci_low": "shift 95% low", "ci_high": "shift 95% high", "p_value": "p",
                 "q_value": "q (BH)", "flagged": "flagged", "flip_rate": "flip rate"}
CLASSIFICATION_COLUMNS = {"level": "level", "term": "term", "group": "group", "fpr": "FPR", "fpr_ci_low": "FPR low",
                          "fpr_ci_high": "FPR high", "subgroup_auc": "subgroup AUC", "bpsn_auc": "BPSN AUC",
                          "bpsn_auc_ci_low": "BPSN low", "bpsn_auc_ci_high": "BPSN high", "bnsp_auc": "BNSP AUC"}


def column_labels(columns: dict[str, str]) -> dict[str, object]:
    """The reader's words as column headers; numbers with three decimals (the data keeps its names)."""
    text = ("level", "term", "group")
    return {c: st.column_config.TextColumn(label) if c in text else st.column_config.CheckboxColumn(label)
            if c == "flagged" else st.column_config.NumberColumn(label, format="%d" if c == "n" else "%.3f")
            for c, label in columns.items()}


@st.cache_data(show_spinner="Filling the templates with every identity term…", max_entries=8)
def audit_request(**values):
    """`audit.build_request` and the request's record once per set of inputs: swapping identity words into a few
    thousand texts (and hashing them) takes seconds, and every rerun of the page (any widget) would redo it."""
    request = audit.build_request(**values)
    return request, request.record()


@st.cache_data(show_spinner=False, max_entries=16, ttl=30)
def generation_runs(store_path: str) -> dict[str, str]:
    """Complete generation runs, newest first, described as the Run store describes them."""
    table = store_catalogue(common.get_store())
    table = table[(table["kind"] == "generation") & (table["status"] == "complete")]
    return run_labels(table)
LLM_JUDGE = "llm-judge"
#: the offline judge and what it is good for, said wherever an LLM judge is chosen
WEAK_JUDGE = ("The offline judge, SmolLM2-135M-Instruct, is a weak judge: a 135M model barely grades toxicity or "
              "regard at all. It is here for teaching and for testing the machinery; judge for real with a larger "
              "causal LM (a hub id, a local folder, a .gguf or an endpoint). See docs/judges.md.")


def interval(estimate: dict) -> str:
    return f"{estimate['value']:.3f} {common.interval_text(estimate['ci_low'], estimate['ci_high'])}"


def llm_result(name: str, inputs: dict, run) -> dict | None:
    """A check's result for these inputs: run when its button is pressed (one sentence on bad input), kept in the
    session for the same inputs, never shown for others."""
    slot = f"au_llm_result_{name}"
    if st.button(f"Run the {name.replace('_', ' ')} check", key=f"au_llm_run_{name}"):
        try:
            with st.spinner("The judge is judging…"):
                st.session_state[slot] = (inputs, run())
        except audit.AuditInputError as error:
            st.session_state.pop(slot, None)
            st.error(common.escape_markdown(str(error)))
            return None
    kept = st.session_state.get(slot)
    return kept[1] if kept is not None and kept[0] == inputs else None


def llm_checks(options: dict, terms_text: str) -> None:
    """The LLM judge's own checks (issue 47 §2): answer order, identity in the judged answer, consistency. The
    term audit below is its identity sensitivity."""
    st.subheader("The LLM judge's own checks")
    st.caption("Identity sensitivity is the term audit below (the same statistics as for any judge). Three checks "
               "only an LLM judge needs: does the order of two answers decide its verdict, does an author's stated "
               "identity move its grade, and does it give the same answer when asked again? Each runs on request; "
               "nothing is stored.")
    order_tab, statement_tab, consistency_tab = st.tabs(["Answer order", "Identity in the answer", "Consistency"])
    with order_tab:
        st.caption("A stored generation run's two systems, each prompt's pair of answers judged twice, the answers "
                   "swapped (Zheng et al. 2023; Wang et al. 2023). Read by the likelihood of the letters A and B.")
        runs = generation_runs(str(common.get_store().path))
        if not runs:
            st.info("No stored generation run yet: run a decoding study or Compare with two systems first.")
        else:
            run_id = st.selectbox("Stored run of two systems", list(runs), format_func=runs.get, key="au_llm_run")
            inputs = {"run": run_id, "options": options | {"read": "likelihood"}}
            payload = llm_result("order_bias", inputs, lambda: audit.order_bias_audit(
                common.get_store(), run_id, inputs["options"]).payload)
            if payload is not None:
                st.plotly_chart(audit_charts.order_bias_chart(payload), key="au_llm_order_chart")
                verdicts = payload["verdicts"]
                systems = common.escape_markdown(f"{payload['systems']['x']} vs {payload['systems']['y']}")
                lines = [f"**{payload['n_pairs']} pairs** ({systems}), "
                         f"each judged in both orders; 95% intervals: {payload['interval']}.",
                         f"Verdict flips when the answers swap: {interval(payload['flip_share'])}.",
                         f"First position wins: {interval(payload['first_position_wins'])} of the judgments."]
                for name, verdict in verdicts.items():
                    if verdict["p_value"] is None:
                        lines.append(f"{name.replace('_', ' ')}: no test (no pairs to count).")
                    else:
                        lines.append(f"{name.replace('_', ' ')} — {verdict['claim']}: p = {verdict['p_value']:.3g}, "
                                     f"Holm-adjusted {verdict['p_holm']:.3g}"
                                     + (" — significant" if verdict["significant"] else " — not significant")
                                     + ".")
                lines.append(f"The two verdicts are one screen: {payload['multiplicity']['rule']} at "
                             f"{payload['multiplicity']['alpha']:g}, so the chance of any false alarm stays at 5%.")
                st.markdown("\n".join(f"- {common.escape_markdown(line)}" for line in lines))
    with statement_tab:
        st.caption(common.escape_markdown(
            "Each answer judged alone and with a sentence stating its author's identity before it "
            f"(\"{audit.STATEMENT.format(term='TERM', answer='…')}\"; after Ye et al. 2024, CALM): the grade "
            "shift per term and group, with a paired 95% interval over answers."))
        answers_text = st.text_area("Answers, one per line", "\n".join(audit.BUILTIN_ANSWERS), height=150,
                                    key="au_llm_answers")
        all_terms = st.checkbox("Every identity term (default: the first two of each group)", key="au_llm_all_terms")
        inputs = {"answers": answers_text, "terms": terms_text, "all": all_terms, "options": options}

        def statement() -> dict:
            groups = audit.statement_terms(audit.parse_terms(terms_text, "typed terms"), None if all_terms else 2)
            return audit.identity_statement_audit(options, answers_text.splitlines(), groups)

        payload = llm_result("identity_statement", inputs, statement)
        if payload is not None:
            rows = pd.DataFrame(payload["rows"])
            if payload["unparseable"]:
                st.caption(f"{payload['unparseable']['n']:,} of {payload['unparseable']['of']:,} replies could not be "
                           "parsed; each answer's shift uses the pairs where both replies were read.")
            term_rows = rows[rows["level"] == "term"].rename(columns={"n_answers": "n"})
            st.plotly_chart(audit_charts.shift_chart(term_rows, payload["column"], counted="answers",
                                                     against="the same answer without a statement"),
                            key="au_llm_statement_chart")
            st.dataframe(rows[["level", "term", "group", "n_answers", "shift", "ci_low", "ci_high", "q_value",
                               "flagged", "vs_average_shift", "vs_average_ci_low", "vs_average_ci_high",
                               "vs_average_q_value", "vs_average_flagged"]].round(4), hide_index=True,
                         key="au_llm_statement_table")
            st.caption(common.escape_markdown(
                f"{payload['n_answers']} answers × {payload['n_terms']} terms ({payload['n_judged']} judgments). "
                f"**shift**: the grade with the statement minus without, averaged over answers (a group: the mean of "
                f"its terms on each answer); {payload['interval']}. **q**: {payload['multiplicity']['rule']}, "
                f"{payload['multiplicity']['screens']}; flagged when q < {payload['multiplicity']['alpha']:g}. "
                "**vs average**: the shift beyond the average group's (term's) on the same answer — any preface "
                "may move a grade, this is the part that stating *this* identity adds; its own interval and "
                "screen."))
    with consistency_tab:
        st.caption("The judge's written answer to each text sampled several times (temperature above 0, one seed "
                   "a repeat) and read by the text rule: the share of texts whose answers all agree. A judge read "
                   "by likelihood is deterministic; this asks how stable the answer it would write is.")
        left_c, right_c = st.columns(2)
        repeats = left_c.number_input("Repeats", 2, 10, 5, key="au_llm_repeats")
        temperature = right_c.number_input("Temperature", 0.1, 2.0, 1.0, step=0.1, key="au_llm_temperature")
        answers = st.session_state.get("au_llm_answers", "\n".join(audit.BUILTIN_ANSWERS))
        inputs = {"answers": answers, "repeats": int(repeats), "temperature": float(temperature), "options": options}
        payload = llm_result("consistency", inputs, lambda: audit.consistency_audit(
            options, answers.splitlines(), int(repeats), float(temperature)))
        if payload is not None:
            first, second, third = st.columns(3)
            agree, modal = payload["all_agree"], payload["modal_share"]
            first.metric("All repeats agree", f"{agree['value']:.0%}", help=f"95% interval "
                         f"{common.interval_text(agree['ci_low'], agree['ci_high'])} ({payload['interval']}).")
            second.metric("Most common answer's share", f"{modal['value']:.0%}",
                          help=f"95% interval {common.interval_text(modal['ci_low'], modal['ci_high'])}.")
            third.metric("Unparseable replies", f"{payload['unparseable_share']:.0%}",
                         help="Replies without an allowed label: counted as an answer of their own ('none').")
            st.dataframe(pd.DataFrame([{"text": row["text"], "answers": ", ".join(row["answers"])}
                                       for row in payload["answers"]]), hide_index=True, key="au_llm_consistency")


SOURCES = {"builtin": "Built-in IPTTS-style templates (43, labelled toxic / non-toxic)",
           "templates": "My templates (one per line with {person}; a tab, then toxic / non-toxic)",
           "iptts": "IPTTS bias-madlibs CSV (Dixon et al. 2018)", "eec": "EEC CSV (Kiritchenko & Mohammad 2018)",
           "texts": "Swap the identity word in generated texts (a stored run or pasted texts)"}

st.title("Judge audit")
st.caption("Is the judge itself biased? Every template is filled with every identity term (or the identity word of "
           "a generated text is swapped), the judge scores each text, and each term's score is compared with the "
           "average identity on the same template. Dixon et al. 2018 (FPR), Borkan et al. 2019 (subgroup, BPSN, BNSP "
           "AUC), Dhamala et al. 2023 §6.3.2 (testing their own classifiers).")
with st.expander("Deviations from the papers (also in docs/audit.md)"):
    for line in audit.DEVIATIONS:
        st.markdown(f"- {line}")  # markdown: developer text

left, right = st.columns(2)
kind = left.radio("Judge", ["scorer", "metric"], horizontal=True, key="au_kind",
                  help="A metric scores each text against its template without the identity word.")
names = audit.scorer_choices() if kind == "scorer" else audit.metric_choices()
name = left.selectbox("Scorer" if kind == "scorer" else "Metric", names, key="au_name",
                      help="jigsaw-toxicity: the offline Jigsaw toxicity classifier (toxic-comment-classifier, MIT), "
                           "the identity-sensitive judge of the CAIRO and template-adaptation defaults.")
options: dict = {}
if kind == "scorer" and name == LLM_JUDGE:
    st.warning(WEAK_JUDGE)
    options = {"model": left.text_input("Judge model (preset, hub id, local folder, .gguf or endpoint:NAME)",
                                        "smollm2-135m-instruct", key="au_llm_model").strip(),
               "rubric": left.selectbox("Rubric", ["toxicity", "regard"], key="au_llm_rubric",
                                        help="The built-in rubrics judge a text alone (docs/judges.md)."),
               "read": left.radio("Read the answer", ["likelihood", "text"], horizontal=True, key="au_llm_read",
                                  help="likelihood: each allowed label's probability (never a parse failure); "
                                       "text: the judge's written reply, the first allowed label in it "
                                       "(unparseable replies are counted and left out).")}
column = left.text_input("Column read (empty: the judge's main score)", "", key="au_column").strip() or None
custom = left.checkbox("Set the decision threshold", key="au_custom_threshold")
threshold = left.number_input("Threshold", value=0.5, step=0.05, key="au_threshold") if custom else None
source = right.selectbox("Texts", list(SOURCES), format_func=SOURCES.get, key="au_source")
upload, texts, texts_name = None, None, "Generated texts"  # a message about pasted texts names the box
if source in ("templates", "iptts", "eec"):
    upload = right.file_uploader("File", type=["txt", "csv", "tsv"], key="au_upload")
elif source == "texts":
    store = common.get_store()
    try:
        runs = generation_runs(str(store.path))
    except StoreError as error:
        st.error(common.escape_markdown(str(error)))
        st.stop()
    picked = right.selectbox("Stored generation run", [PASTE, *runs], key="au_stored_run",
                             format_func=lambda run_id: runs.get(run_id, run_id))
    if picked == PASTE:
        pasted = right.text_area(f"Generated texts, one per line (at most {audit.MAX_TEXTS_CHARS:,} characters)",
                                 "The gay man worked as a nurse.\nThe Muslim woman was known for her cooking.",
                                 key="au_texts")
        texts = pasted.splitlines()
    else:
        texts, texts_name = None, f"run {picked}"
terms_text = right.text_area("Identity terms ('group: term, term' per line)", audit.builtin_terms_text(), height=150,
                             key="au_terms")
resamples = right.number_input("Resamples for the largest shift's interval (max-T)", 0, 5000, 1000, step=250,
                                key="au_resamples")

if source in ("templates", "iptts", "eec") and upload is None:
    st.info("Upload a file to audit the judge on it (the built-in set needs none).")
    st.stop()
try:
    if source == "texts" and texts is None:
        texts = audit.stored_texts(store, texts_name.removeprefix("run "))
    request, record = audit_request(
        scorer=name if kind == "scorer" else None, metric=name if kind == "metric" else None, column=column,
        threshold=threshold, options=options, fmt=source, templates=None if upload is None else upload.name,
        templates_data=None if upload is None else upload.getvalue(), terms="typed terms",
        terms_data=terms_text.encode("utf-8"), texts=texts, texts_name=texts_name, resamples=int(resamples))
except audit.AuditInputError as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
design = record["design"]
st.caption(common.escape_markdown(
    f"{design['n_templates']} templates ({design['n_toxic_templates']} toxic, {design['n_non_toxic_templates']} "
    f"non-toxic) × {sum(len(t) for t in request.design.groups.values())} terms in {len(request.design.groups)} "
    f"groups = {design['n_texts']} texts, judged by {request.judge.label}"
    + (f" (flagged when {request.judge.column} {request.judge.op} {request.judge.threshold:g})"
       if request.judge.threshold is not None else "") + "."))
for note in request.design.notes:
    st.caption(common.escape_markdown(note))
if options:
    llm_checks(options, terms_text)
    st.subheader("Identity sensitivity: the term audit")

job_key = jobs.followed(JOB_KEY, "audit-", "audit")
store_now = common.get_store()
this_key = jobs.key_for(JOB_KIND, {"request": record, "store": str(store_now.path)})
n_texts = int(design["n_texts"])
work = audit.audit_work(request)
estimate = jobs.estimate(work)
# a big audit says its time and asks for a tick first, however quick its estimate
if jobs.run_button(this_key, "Audit the judge", estimate_s=estimate, widget_key="au_run",
                   confirm_above_s=0.0 if n_texts > audit.CONFIRM_AUDIT_TEXTS else jobs.CONFIRM_ABOVE_S):
    executor = common.get_executor()
    job_key = this_key
    st.session_state[JOB_KEY] = job_key
    jobs.start(job_key, lambda on_progress, cancel, request=request, store=store_now, executor=executor:
               audit.run_audit(request, store, on_progress, cancel, executor), label="Judge audit",
               estimate_of=work)
if job_key != this_key and jobs.get(this_key) is not None:
    # the request on screen ran in this session (the judge set back, say): show its audit, not the last one followed,
    # whose numbers and Plan panel belonged to other settings (issue 43 §6)
    job_key = this_key
    st.session_state[JOB_KEY] = job_key
job = jobs.show(job_key, label="Judge audit") if job_key else None
result = job.result if job is not None and job.done and job.error is None else None
if result is None:
    st.stop()
if job_key != this_key:  # a finished audit of other settings: never shown under these
    st.info("The settings changed: press **Audit the judge** to audit these (a stored audit is read back in "
            "seconds).")
    st.stop()
if not result.complete:
    st.warning("The audit stopped; finished batches are stored and running it again resumes.")
    st.stop()

judge = result.request.judge
terms = audit.rows_frame(result, "term")
top = terms.iloc[0]
unit = f"{judge.column}" + (" probability" if judge.name == "jigsaw-toxicity" else "")
resampled = result.table.extra["resampled"]
unit_text = (f"the {resampled['n_clusters']} {resampled['unit']} left out one at a time (jackknife, t on "
             f"{resampled['df']:.1f} degrees of freedom)" if resampled["df"] == resampled["df"]  # NaN: < 2 units
             else f"{resampled['n_clusters']} {resampled['unit']}: too few for an interval")
largest = result.table.extra.get("largest_shift") or {}
if largest.get("ci_low") is not None:
    # the headline picks the top of all the terms, so it shows the max-T interval, which holds whichever came top
    largest_help = (f"95% interval {common.interval_text(largest['ci_low'], largest['ci_high'])} and p = "
                    f"{largest['p_value']:.3f}, allowing for this term being the largest of "
                    f"{largest['n_terms']} ({largest['rule']}); the term's own interval, in the table, is "
                    f"{common.interval_text(top['ci_low'], top['ci_high'])} ({unit_text}).")
elif pd.notna(top["ci_low"]):
    largest_help = (f"Its own 95% interval {common.interval_text(top['ci_low'], top['ci_high'])} ({unit_text}); no "
                    "interval allowing for it being the largest (0 resamples).")
else:
    largest_help = "No interval: fewer than two clusters."
st.metric(common.escape_markdown(f"Largest shift: {top['term']} ({top['group']})"), f"{top['shift']:+.3f}",
          help=largest_help)
unscored = int(result.scores["score"].isna().sum()) if "score" in result.scores else 0
if unscored:  # an LLM judge read by text: its unparseable replies are counted, never dropped silently
    st.caption(common.escape_markdown(f"{unscored} of {len(result.scores)} texts have no score (the judge's reply "
                                      "held no allowed label): every statistic uses the scored texts."))
for statistic, why in result.table.refused.items():
    if statistic not in ("bpsn_auc", "bnsp_auc"):  # the three AUCs share one reason: said once
        st.caption(common.escape_markdown(f"{statistic.replace('_', ' ')} not computed: {why}."))
st.plotly_chart(audit_charts.shift_chart(terms, unit), key="au_chart")
common.how_to_read(
    "Each dot is an identity term: how much higher (right) or lower (left) the judge scores a text with that term "
    "than the same template with the average identity (the mean of the group means), averaged over templates; the "
    f"bar is the term's own 95% interval ({unit_text}: templates written from one pattern share how the judge "
    "reacts to a term in it, so they move together). For a toxicity judge, a dot right of 0 means the word alone makes "
    "text look more toxic. The Jigsaw classifier pushes *gay*, *lesbian*, *bisexual*, *homosexual* and "
    "*transgender* up by about 0.3: a study that uses it as its judge counts part of that as the model's bias. "
    "Terms it never saw in training (outside its 20,000-word vocabulary: *lgbtq*, *nonbinary*, *latinx*, …) are "
    "invisible to it and all land on the same value. VADER shifts only words in its lexicon (*straight* is "
    "'positive').")
table = audit.rows_frame(result)
st.subheader("Score shift per term")
st.dataframe(table[[c for c in SHIFT_COLUMNS if c in table]].round(4), hide_index=True, width="stretch",
             key="au_table", column_config=column_labels(SHIFT_COLUMNS))
rule = result.table.extra["term_rule"]
# the bold names are this caption's own markdown; only the numbers and words it quotes are escaped (the whole caption
# escaped showed its asterisks literally)
st.caption(
    f"**shift**: the term's mean score minus its template's average identity, with its 95% interval "
    f"({common.escape_markdown(unit_text)}); **p**: the test of 'shift 0' that interval inverts, unadjusted; "
    f"**q (BH)** and **flagged**: the terms are screened together ({common.escape_markdown(rule['rule'])}), so a "
    f"term is flagged when its q-value is below {rule['alpha']:g} — among flagged terms, at most "
    f"{rule['alpha']:.0%} are expected to be false alarms; {int(rule['flagged'])} of {len(terms)} terms flagged "
    f"({int(rule['unadjusted_below_alpha'])} with p < {rule['alpha']:g} before adjustment). Groups are adjusted among "
    "themselves. **flip rate**: the share of the term's texts whose label at the threshold differs from the "
    "template's background label.")
st.subheader("Flagged and separated: FPR and AUCs")
st.caption("**FPR** (Dixon et al. 2018): the share of the term's *non-toxic* templates the judge flags — a fair judge "
           "gives every term the same. **Subgroup AUC** (Borkan et al. 2019): how well the judge separates toxic from "
           "non-toxic texts that mention the term (1 = perfectly, 0.5 = chance). **BPSN AUC**: the term's non-toxic "
           "texts against the other terms' toxic ones — low means its harmless texts score like others' toxic "
           "ones. **BNSP AUC**: the term's toxic texts against the others' non-toxic ones. Low and high: the 95% "
           "interval over templates.")
classification = [c for c in CLASSIFICATION_COLUMNS if c in table]
if any(c not in ("level", "term", "group") for c in classification):
    st.dataframe(table[classification].round(4), hide_index=True, width="stretch", key="au_classification",
                 column_config=column_labels(CLASSIFICATION_COLUMNS))
extra = result.table.extra
if "fped" in extra and extra["fped"]["value"] is not None:
    fped = extra["fped"]
    st.caption(common.escape_markdown(
        f"False-positive equality difference (Dixon et al.: Σ over terms of |FPR − FPR_t|): {fped['headline']}. "
        f"FPED {fped['value']:.3f} {common.interval_text(fped['ci_low'], fped['ci_high'])} (95% interval)"
        + (f". The chance level is the mean over {fped['n_permutations']} permutations of the terms within "
           f"{resampled['unit']}: a sum of absolute differences is above 0 even for a judge that treats every term "
           "alike, so the test, not the interval, says whether the rates differ (no 'corrected' FPED is given: "
           "subtracting the chance level over-corrects when the rates do differ)" if fped["p_value"] is not None
           else "")
        + f"; overall FPR {extra['fpr_overall']['value']:.3f}."))
plan_view.audit_plan(result)  # this audit as a pilot: the patterns a term's shift or FPED needs (issue 33)

st.subheader("Texts with the largest shift")
pick = st.selectbox("Term", ["(all terms)", *terms["term"]], key="au_drill")
detail = audit.examples(result, 25, None if pick == "(all terms)" else pick)
st.dataframe(detail, hide_index=True, key="au_examples",
             column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("score", "background", "shift")})
st.download_button("Download the audit (JSON)", audit.audit_download(result),
                   file_name="judge-audit.json", key="au_download")
