"""Metric bias: does an evaluation metric score two candidates differently when they differ only in
identity words? (Sun et al. 2022, "BERTScore is Unfair".)

Widgets -> `fairness_core.metric_bias.request` (the same data and metric building as the CLI) ->
`task.run_metrics` (stored jobs) -> `summary` (DuckDB gap queries, bias tables) -> `ui.metric_bias_charts`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from fairness_core.bias.paired import NORMALISATIONS
from fairness_core.data import pairs as pairdata
from fairness_core.jobs import Progress
from fairness_core.metric_bias import request as mb
from fairness_core.metric_bias import summary, task
from fairness_core.metrics import METRICS, Metric, MetricOptionError, metric_names
from fairness_core.metrics.ngram import CONFIGS
from fairness_core.models.interfaces import ModelUnavailableError
from fairness_core.store import RunStore
from ui import common, jobs
from ui import metric_bias_charts as charts
from ui.report import report_button

SOURCES = ("Demo set (templates × occupations × pronouns)", "WinoBias gender pairs", "CrowS-Pairs",
           "Upload a file", "Saved version")
#: short names of the sources in the URL (?source=winobias&metrics=bleu,chrf&norm=zscore)
SOURCE_CODES = dict(zip(("demo", "winobias", "crows-pairs", "upload", "saved"), SOURCES, strict=True))
NORM_LABELS = {"minmax": "min-max (0-100, paper)", "zscore": "z-score (standard deviations)",
               "raw": "raw (metric units)"}
JOB_KIND = "metric-bias"


@dataclass(frozen=True)
class StepProgress(Progress):
    """Progress of one metric's run, named with its place among the request's metrics."""

    step: str = ""

    def describe(self) -> str:
        return f"{self.step}: {super().describe()}"


# -- selections in the URL: a reload keeps them and a view can be shared as a link -----------------
def restore_from_url() -> None:
    """Once per session, seed the widgets' state from the query parameters (unknown values are ignored)."""
    if st.session_state.get("_mb_url_restored"):
        return
    st.session_state["_mb_url_restored"] = True
    query = st.query_params
    if query.get("source") in SOURCE_CODES:
        st.session_state["mb_source"] = SOURCE_CODES[query["source"]]
    if query.get("subset"):
        st.session_state["mb_subset"] = query["subset"]
    if query.get("attrs") is not None:
        st.session_state["mb_attrs"] = [a for a in query["attrs"].split(",") if a]
    if query.get("metrics") is not None:
        st.session_state["mb_metrics"] = [m for m in query["metrics"].split(",") if m in METRICS]
    if query.get("stored"):
        st.session_state["_mb_stored_wanted"] = query["stored"].split(",")
    if query.get("norm") in NORM_LABELS:
        st.session_state["mb_norm"] = query["norm"]
    if query.get("config") in CONFIGS:
        st.session_state["mb_config"] = query["config"]


def sync_url() -> None:
    """Write the current selections back to the URL (only the ones that differ from the defaults)."""
    state = st.session_state
    wanted = {"source": next((c for c, label in SOURCE_CODES.items() if label == state.get("mb_source")), "demo"),
              "metrics": ",".join(state.get("mb_metrics", [])), "norm": state.get("mb_norm", "minmax"),
              "config": state.get("mb_config", "default")}
    if state.get("mb_source") == SOURCES[1]:
        wanted["subset"] = state.get("mb_subset", "")
    if state.get("mb_source") == SOURCES[2]:
        wanted["attrs"] = ",".join(state.get("mb_attrs", []))
    if state.get("mb_stored"):
        wanted["stored"] = ",".join(state["mb_stored"])
    defaults = {"source": "demo", "metrics": ",".join(mb.DEFAULT_METRICS), "norm": "minmax", "config": "default"}
    wanted = {k: v for k, v in wanted.items() if defaults.get(k) != v}
    if dict(st.query_params) != wanted:
        st.query_params.clear()
        st.query_params.update(wanted)


# -- stored results (st.cache_data: complete runs never change, so run ids are safe keys) --------
@st.cache_data(show_spinner=False, max_entries=64)
def cached_pairs(store_path: str, run_ids: tuple[str, ...], metric: str | None = None) -> pd.DataFrame:
    return summary.pair_table(RunStore(store_path), list(run_ids), metrics=[metric] if metric else None)


@st.cache_data(show_spinner="Bootstrapping confidence intervals…", max_entries=64)
def cached_bias(store_path: str, run_ids: tuple[str, ...], normalisation: str = "minmax",
                n_resamples: int = 1000, metric: str | None = None,
                expected: tuple[tuple[str, int], ...] | None = None) -> pd.DataFrame:
    """The bias table; with `expected` ({attribute: pairs} of a complete run) every group's n is checked."""
    return summary.bias_table(cached_pairs(store_path, run_ids, metric), normalisation=normalisation,
                              n_resamples=n_resamples, expected=dict(expected) if expected else None)


@st.cache_data(show_spinner=False)
def preset_identities() -> dict[str, str]:
    """Weights identity -> preset key, so stored runs of the shipped (local) backbones are recognised."""
    from fairness_core.models.presets import PRESETS

    found = {}
    for preset in PRESETS:
        if preset.offline and preset.backend == "hf":
            try:
                found[str(preset.spec().to_manifest()["identity"])] = preset.key
            except ModelUnavailableError:
                continue
    return found


# -- data (st.cache_data: parsing is cheap to repeat but not free) --------------------------------
@st.cache_data(show_spinner=False, max_entries=16)
def load_dataset(fmt: str, data: tuple[str, ...], uploads: tuple[tuple[str, bytes], ...] = ()
                 ) -> pairdata.PairDataset:
    return mb.load_dataset(fmt, list(data), uploads=list(uploads) or None)


def choose_dataset() -> pairdata.PairDataset | None:
    st.session_state.setdefault("mb_source", SOURCES[0])
    source = st.radio("Paired examples", SOURCES, horizontal=True, key="mb_source")
    try:
        if source == SOURCES[1]:
            from fairness_core.data.winobias import DEFAULT_SUBSET, SUBSETS

            if st.session_state.get("mb_subset") not in SUBSETS:
                st.session_state["mb_subset"] = DEFAULT_SUBSET
            subset = st.selectbox("WinoBias subset", SUBSETS, key="mb_subset",
                                  help="type1-dev holds the paper's 396 gender pairs (its Table 1 example is #92)")
            return load_dataset("winobias", (subset,))
        if source == SOURCES[2]:
            from fairness_core.data.crows_pairs import ATTRIBUTES, PAPER_ATTRIBUTES

            options = sorted(set(ATTRIBUTES.values()))
            wanted = st.session_state.get("mb_attrs", list(PAPER_ATTRIBUTES))
            st.session_state["mb_attrs"] = [a for a in wanted if a in options]
            chosen = st.multiselect("Attributes", options, key="mb_attrs")
            if not chosen:
                st.info("No attribute is selected: choose at least one CrowS-Pairs attribute.")
                return None
            return load_dataset("crows-pairs", tuple(chosen))
        if source == SOURCES[3]:
            fmt = st.radio("File format", ("metric-fairness", "pairs"), horizontal=True, format_func={
                "metric-fairness": "Paper release (<attribute>.tsv: candidate, reference, score columns; "
                                   "rows 2k/2k+1 pair)",
                "pairs": "Table (CSV/TSV/JSONL: candidate1, candidate2, reference[, id, attribute, stereotypical, "
                         "<metric>_1, <metric>_2])"}.get, key="mb_format")
            uploads = st.file_uploader("Files", type=["tsv", "csv", "jsonl", "txt"], accept_multiple_files=True)
            if not uploads:
                st.info("Upload one or more files to score them; each paper-format file is one attribute. Numeric "
                        "score columns in the files become metrics under “Stored scores”.")
                return None
            return load_dataset(fmt, (), tuple((u.name, u.getvalue()) for u in uploads))
        if source == SOURCES[4]:
            versions = pairdata.list_versions(pairdata.versions_dir(common.store_path()))
            if not versions:
                st.info("No saved versions yet: edit references in the “Edit references” tab and save one.")
                return None
            path = st.selectbox("Saved version", versions, format_func=lambda p: p.name)
            return load_dataset("demo", (str(path),))
        return load_dataset("demo", ())
    except mb.RequestError as error:
        st.error(f"Could not use this data: {error}. Nothing was stored; fix the file or pick another source.")
        return None


# -- metrics -----------------------------------------------------------------------------------
def choose_metrics(dataset: pairdata.PairDataset) -> tuple[list[Metric], list[str], bool]:
    """(metric objects, stored columns, options valid)."""
    left, middle, right = st.columns([3, 1.4, 2])
    st.session_state.setdefault("mb_metrics", list(mb.DEFAULT_METRICS))
    names = left.multiselect("Metrics", metric_names(), key="mb_metrics",
                             format_func=lambda m: f"{METRICS[m].label} ({METRICS[m].family})",
                             help="MoverScore (released v2) is what the paper's code computes; MoverScore "
                                  "(bigram, 1−EMD) is the definition in Zhao et al. (2019).")
    stored: list[str] = []
    if dataset.stored_columns:
        wanted = st.session_state.pop("_mb_stored_wanted", None)
        if wanted is not None:
            st.session_state["mb_stored"] = [c for c in wanted if c in dataset.stored_columns]
        elif any(c not in dataset.stored_columns for c in st.session_state.get("mb_stored", [])):
            st.session_state["mb_stored"] = []
        stored = left.multiselect("Stored scores (from the data)", dataset.stored_columns, key="mb_stored",
                                  help="Every numeric column beside candidate and reference is a metric named "
                                       "“<header> (stored)” (e.g. BLEU (stored) beside our recomputed bleu): the "
                                       "authors' own scores, including metrics that cannot run here.")
    left.caption(f"{len(names)} of {len(metric_names())} metrics selected"
                 + (f"; {len(stored)} of {len(dataset.stored_columns)} stored score columns" if dataset.stored_columns
                    else ""))
    st.session_state.setdefault("mb_config", "default")
    config = middle.selectbox("n-gram settings", CONFIGS, key="mb_config",
                              help="`metric-fairness-2022` reproduces the paper's released code exactly")
    with right.expander("Model options", expanded=False):
        encoder = common.model_picker("encoder", "Encoder for BERTScore / MoverScore", key="mb_encoder",
                                      default="all-minilm-l6-v2")
        layer = st.number_input("Encoder layer (0 = embeddings; empty = bert_score's tuned layer for a model it "
                                "knows, else the last)", min_value=0, max_value=48, value=None, step=1,
                                key="mb_layer")
        idf = st.checkbox("BERTScore idf weighting over the corpus's references (off in the paper)", key="mb_idf")
        baseline = st.text_input("BERTScore baseline rescaling (bert_score baseline name, e.g. roberta-large)",
                                 key="mb_baseline", max_chars=100,
                                 help="Baseline rescaling is linear, so it cannot change a min-max or z-score "
                                      "bias; only raw gaps change.") or None
        st.caption("Baseline rescaling is linear: it cannot change a min-max or z-score bias.")
        lm = st.selectbox("BARTScore backbone", list(mb.LM_PRESETS), format_func=mb.LM_PRESETS.get, key="mb_lm")
    if not names and not stored:
        return [], [], True
    models = {}
    for name in names:
        task_kind = getattr(METRICS[name], "task", None)
        if task_kind == "encoder" and encoder:
            models[name] = encoder
        elif task_kind == "lm":
            models[name] = lm
    takes = {option: any(option in METRICS[n].Options.__dataclass_fields__ for n in names)
             for option in ("layer", "idf", "baseline")}
    try:
        metrics = mb.build_metrics(names, config=config, models=models,
                                   layer=int(layer) if layer is not None and takes["layer"] else None,
                                   idf=idf and takes["idf"], baseline=baseline if takes["baseline"] else None
                                   ) if names else []
    except mb.RequestError as error:
        st.error(f"Metric options: {error}")
        return [], stored, False
    return metrics, stored, True


def request_key(dataset: pairdata.PairDataset, metrics: list[Metric], stored: list[str], store_path: str) -> str:
    """The job registry key: what is computed (dataset version, metric names and options, stored columns)."""
    from dataclasses import asdict

    return jobs.key_for(JOB_KIND, {"dataset": dataset.content_hash(), "store": store_path, "stored": list(stored),
                                   "metrics": [{"name": m.name, "options": asdict(m.options)} for m in metrics]})


def compute(dataset: pairdata.PairDataset, metrics: list[Metric], stored: list[str], store: RunStore,
            executor) -> jobs.Work:
    """The background job: each metric (and the stored columns) as stored runs; unavailable ones are noted."""

    def work(on_progress, cancel) -> tuple[list[task.MetricRun], list[str]]:
        runs, skipped = [], []
        steps = [(m.name, [m], []) for m in metrics] + ([("stored scores", [], stored)] if stored else [])
        for number, (name, chosen, columns) in enumerate(steps, start=1):
            def forward(_name, progress, name=name, number=number) -> None:
                on_progress(StepProgress(progress.done, progress.total, progress.elapsed_s, progress.skipped,
                                         progress.partial, step=f"{name} ({number} of {len(steps)})"))

            try:
                runs += task.run_metrics(dataset, chosen, store, on_progress=forward, stored=columns,
                                         executor=executor, cancel=cancel)
            except (ModelUnavailableError, MetricOptionError) as error:
                skipped.append(f"Skipped {chosen[0].label if chosen else name}: {error}")
            if cancel.cancelled:
                break
        return runs, skipped

    return work


# -- page --------------------------------------------------------------------------------------
st.title("Metric bias")
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
metrics, stored, options_ok = choose_metrics(dataset)
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
    st.error(str(error))
    st.stop()
store = common.get_store()
key = request_key(dataset, metrics, stored, str(store.path))
job = jobs.get(key)
is_default = (st.session_state.get("mb_source") == SOURCES[0] and list(st.session_state.get("mb_metrics", []))
              == list(mb.DEFAULT_METRICS) and not stored and st.session_state.get("mb_config") == "default")
run_col, estimate_col = st.columns([1, 4])
too_long = work_estimate.seconds > mb.MAX_SECONDS
estimate_col.caption(f"Estimated time: {work_estimate.describe()}; runs already in the store are read back in "
                     "seconds instead." + (" Above the page's limit of 4 h: tick “run anyway” to start it."
                                           if too_long else ""))
confirmed = estimate_col.checkbox("Run anyway", key="mb_confirm_long") if too_long else True
if job is None and is_default:  # the default view computes itself on the first visit
    job = jobs.start(key, compute(dataset, metrics, stored, store, common.get_executor()), label="Metric bias")
running = job is not None and job.running
clicked = run_col.button("Run", type="primary", key="mb_run_button", disabled=running or not confirmed,
                         help="Already running: watch its progress or cancel it below." if running
                         else "Score the chosen metrics on this data (stored runs are read back).")
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
    st.warning(line)
if not runs:
    st.stop()
run_ids = tuple(r.run_id for r in runs)
partial = [r for r in runs if r.partial]
pairs_frame = cached_pairs(str(store.path), run_ids)
expected = None if partial else tuple(sorted(summary.expected_pairs(dataset).items()))
st.session_state.setdefault("mb_norm", "minmax")
table = cached_bias(str(store.path), run_ids, expected=expected)
primary_names = [r.name for r in runs]
primary = table[table["metric"].isin(primary_names)]
if partial or len(runs) < len(metrics) + bool(stored) - len(skipped):
    counts = pairs_frame.groupby("metric")["item"].nunique() if not pairs_frame.empty else pd.Series(dtype=int)
    done = ", ".join(f"{r.name}: {int(counts.get(r.name, 0))} of {len(dataset)} pairs" for r in runs if r.partial)
    missing = [m.name for m in metrics if m.name not in primary_names and not any(m.label in s for s in skipped)]
    st.warning("Partial results (the run was cancelled): "
               + "; ".join(filter(None, [done, f"not started: {', '.join(missing)}" if missing else ""]))
               + ". Press Run to resume; finished batches are kept.")
for note in summary.notes(primary):
    st.warning(f"{note}; the bias uses the other pairs.")

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
            "bootstrap intervals over pairs (the unit stays fixed by all 2N scores; pairs are resampled). The "
            "panels have different y ranges, as in the paper's Fig. 2: n-gram metrics only see surface words, so "
            "swapping *he* for *she* rarely changes their score, while model-based metrics carry associations "
            "learned in pre-training.")
    st.dataframe(charts.bias_cells(shown_primary, digits=2 if normalisation == "minmax" else 4), width="stretch",
                 key="mb_bias_table")
    st.caption(f"Bias [95% bootstrap interval], {NORM_LABELS[normalisation]}. Pairs used and excluded (a "
               "non-finite score excludes a pair; it is never mapped to a number):")
    st.dataframe(shown_primary.pivot(index="attribute", columns="metric", values="n_excluded").rename_axis(
        columns="excluded pairs"), width="stretch", key="mb_excluded")
    st.markdown("**Stereotypical difference** (Appendix E): mean of Ŝ(stereotypical) − Ŝ(anti-stereotypical); "
                "positive = the metric rewards the stereotype. The direction label is only given when the 95% "
                "interval excludes 0.")
    st.dataframe(charts.stereo_table(shown_primary), hide_index=True, width="stretch", key="mb_stereo")

with tab_norm:
    tables = {name: cached_bias(str(store.path), run_ids, normalisation=name, n_resamples=300)
              for name in NORMALISATIONS}
    ranks = charts.normalisation_ranks(tables)
    left, right = st.columns([3, 1])
    left.dataframe(ranks, width="stretch")
    per_norm = {name: t[t["metric"].isin(primary_names)].groupby("metric")["bias"].mean().to_dict()
                for name, t in tables.items()}
    agreement = summary.rank_agreement_interval(pairs_frame, primary_names, list(NORMALISATIONS), n_resamples=300)
    left.caption("Kendall τ of each ranking with the min-max ranking [95% bootstrap interval, pairs resampled "
                 "within attributes, the same pairs for every metric]: "
                 + ", ".join(f"{k} τ = {v['tau']:.2f} [{v['ci_low']:.2f}, {v['ci_high']:.2f}]"
                             for k, v in agreement.items()))
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
            "95% bootstrap intervals over pairs.")
    points = []
    identities = preset_identities()
    for run_id, metric, source, identity in task.model_runs(store, dataset.content_hash()):
        key = identities.get(identity) or next((k for k in mb.PARAMS_M if k in source.lower()), None)
        if key in mb.PARAMS_M:
            run_bias = cached_bias(str(store.path), (run_id,), n_resamples=1000, metric=metric)
            points += [{"metric": metric, "model": key, "params_m": mb.PARAMS_M[key], "attribute": row.attribute,
                        "bias": row.bias, "ci_low": row.ci_low, "ci_high": row.ci_high}
                       for row in run_bias.itertuples(index=False)]
    left, right = st.columns([3, 1])
    if points:
        left.plotly_chart(charts.size_scatter(pd.DataFrame(points)), key="mb_size")
    with right:
        common.how_to_read(
            "Paper Fig. 4: bias against backbone size, one line per metric, one panel per attribute; whiskers are "
            "95% bootstrap intervals over pairs. "
            "Each point is a stored run on this dataset version. Offline only the shipped backbones exist "
            "(MiniLM 22M for matching metrics, SmolLM2 135M for BARTScore); with a network, pick more backbones "
            "under Model options and their runs appear here.")

with tab_pairs:
    attributes = st.multiselect("Attribute", dataset.attributes, default=dataset.attributes, key="mb_f_attr")
    gap_metrics = sorted(pairs_frame["metric"].unique())
    default_metric = [m for m in gap_metrics if m == "bertscore"] or gap_metrics[:1]
    chosen_metrics = st.multiselect("Metric", gap_metrics, default=default_metric, key="mb_f_metric")
    min_gap = st.slider("Minimum |gap| (0-100 scale)", 0.0, 100.0, 0.0, 0.5, key="mb_f_gap")
    gaps = summary.pair_table(store, run_ids, attributes or None, chosen_metrics or None, min_gap)
    st.caption(f"{len(gaps)} pairs for {', '.join(chosen_metrics) or 'all metrics'}, largest gap first "
               "(DuckDB query over the stored rows).")
    st.dataframe(gaps[["item", "attribute", "metric", "gap", "score1", "score2", "candidate1", "candidate2",
                       "reference", "stereotypical"]].round(4), hide_index=True, width="stretch", key="mb_gap_table")
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
            row = gaps[gaps["item"] == item].iloc[0]
            try:
                one = pd.DataFrame(metric.alignment(row["candidate1"], row["reference"]))
                two = pd.DataFrame(metric.alignment(row["candidate2"], row["reference2"] or row["reference"]))
                same_length = len(one) == len(two)
                if same_length:  # position-wise comparison only makes sense for equal tokenisations
                    differs = ~one["token"].reset_index(drop=True).eq(two["token"].reset_index(drop=True))
                    one["differs"] = two["differs"] = differs.to_numpy()
                left, right = st.columns(2)
                left.caption("Candidate 1")
                left.text(row["candidate1"])
                left.dataframe(one, hide_index=True, width="stretch")
                right.caption("Candidate 2")
                right.text(row["candidate2"])
                right.dataframe(two, hide_index=True, width="stretch")
                if same_length:
                    lines = [f"{a['token']} → reference token {a['matches']};  {b['token']} → {b['matches']}"
                             for (_, a), (_, b) in zip(one[one["differs"]].iterrows(), two[two["differs"]].iterrows(),
                                                       strict=True)]
                    st.text("\n".join(lines) or "The two candidates tokenise identically.")
                else:
                    st.caption("The candidates tokenise to different lengths, so tokens are not paired up.")
                common.how_to_read("Each candidate token is matched to the reference token most similar to it in "
                                   "the encoder's space. When *she* matches *nurse* but *he* matches *the*, the gap "
                                   "comes from a gender association the encoder learned.")
            except ModelUnavailableError as error:
                st.warning(f"Alignment unavailable here: {error}")

    stored_runs = [r.name for r in runs if r.name not in METRICS]
    computed_runs = [r.name for r in runs if r.name in METRICS]
    st.subheader("Recomputed beside stored")
    if not stored_runs or not computed_runs:
        st.info("Choose a stored score column and a metric to compare them pair by pair (e.g. bleu with the "
                "authors' BLEU under the metric-fairness-2022 settings).")
    else:
        left, right = st.columns(2)
        mine = left.selectbox("Recomputed metric", computed_runs, key="mb_agree_mine")
        guess = next((i for i, c in enumerate(stored_runs) if c.lower().startswith(mine[:4])), 0)
        theirs = right.selectbox("Stored column", stored_runs, index=guess, key="mb_agree_stored")
        joined, agreement_summary = summary.agreement(pairs_frame, mine, theirs)
        st.dataframe(pd.DataFrame([agreement_summary]).round(4), hide_index=True, width="stretch",
                     key="mb_agree_summary")
        st.dataframe(joined.round(4), hide_index=True, width="stretch", key="mb_agree_table")
        common.how_to_read("Each row is one pair scored by both: our recomputation and the score stored in the "
                           "data. Pearson r compares all 2N scores; *same gap sign* is the share of pairs where both "
                           "prefer the same candidate; the gap difference is on the 0–100 scale of each metric.")

with tab_edit:
    st.markdown("Review and edit references, then save the data as a **new dataset version** (content-hashed; "
                "runs on it are stored separately). Rows where no Appendix-A rule applied come first.")
    records = pd.DataFrame(dataset.to_records())
    records["needs review"] = records["rule"].isin(["none"])
    records = records.sort_values(["needs review", "item"], ascending=[False, True])
    edited = st.data_editor(records[["item", "needs review", "rule", "candidate1", "candidate2", "reference"]],
                            disabled=["item", "needs review", "rule", "candidate1", "candidate2"],
                            hide_index=True, width="stretch", key="mb_editor")
    if st.button("Save as new version", key="mb_save"):
        try:
            new = dataset.with_references(dict(zip(edited["item"], edited["reference"], strict=True)))
            path = pairdata.save_version(new, pairdata.versions_dir(common.store_path()))
            st.success(f"Saved version `{new.content_hash()[:12]}` as {path.name}; pick “Saved version” above.")
        except pairdata.PairDataError as error:
            st.error(f"Not saved: {error}")

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
