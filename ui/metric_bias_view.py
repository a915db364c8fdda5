"""The metric-bias page's widgets that are more than a line or two: the data source, the metric picker with its
model options, the selections kept in the URL, and the token alignment of one pair. The page lays them out;
everything they compute comes from the study's face, `fairness_core.metric_bias`."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from fairness_core import metric_bias as mb
from ui import common, presenter, text_diff

SOURCES = ("Demo set (templates × occupations × pronouns)", "WinoBias gender pairs", "CrowS-Pairs",
           "Upload a file", "Saved version")
#: short names of the sources in the URL (?source=winobias&metrics=bleu,chrf&norm=zscore)
#: the encoder the page opens with (offline, shipped in a PyPI package)
DEFAULT_ENCODER = "all-minilm-l6-v2"
SOURCE_CODES = dict(zip(("demo", "winobias", "crows-pairs", "upload", "saved"), SOURCES, strict=True))
NORM_LABELS = {"minmax": "min-max (0-100, paper)", "zscore": "z-score (standard deviations)",
               "raw": "raw (metric units)"}


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
        st.session_state["mb_metrics"] = [m for m in query["metrics"].split(",") if m in mb.METRICS]
    if query.get("stored"):
        st.session_state["_mb_stored_wanted"] = query["stored"].split(",")
    if query.get("norm") in NORM_LABELS:
        st.session_state["mb_norm"] = query["norm"]
    if query.get("config") in mb.NGRAM_CONFIGS:
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
    owned = ("source", "subset", "attrs", "metrics", "stored", "norm", "config")
    wanted |= {k: v for k, v in st.query_params.to_dict().items() if k not in owned}  # e.g. presenter=1
    if dict(st.query_params) != wanted:
        st.query_params.clear()
        st.query_params.update(wanted)
    presenter.refresh_link()  # the teacher's share link follows this run's state


# -- data (st.cache_data: parsing is cheap to repeat but not free) --------------------------------
@st.cache_data(show_spinner=False, max_entries=16)
def load_dataset(fmt: str, data: tuple[str, ...], uploads: tuple[tuple[str, bytes], ...] = ()
                 ) -> mb.PairDataset:
    return mb.load_dataset(fmt, list(data), uploads=list(uploads) or None)


def choose_dataset() -> mb.PairDataset | None:
    st.session_state.setdefault("mb_source", SOURCES[0])
    source = st.radio("Paired examples", SOURCES, horizontal=True, key="mb_source")
    try:
        if source == SOURCES[1]:
            if st.session_state.get("mb_subset") not in mb.WINOBIAS_SUBSETS:
                st.session_state["mb_subset"] = mb.WINOBIAS_DEFAULT_SUBSET
            subset = st.selectbox("WinoBias subset", mb.WINOBIAS_SUBSETS, key="mb_subset",
                                  help="type1-dev holds the paper's 396 gender pairs (its Table 1 example is #92)")
            return load_dataset("winobias", (subset,))
        if source == SOURCES[2]:
            options = list(mb.CROWS_PAIRS_ATTRIBUTES)
            wanted = st.session_state.get("mb_attrs", list(mb.CROWS_PAIRS_PAPER_ATTRIBUTES))
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
            versions = mb.list_versions(mb.versions_dir(common.store_path()))
            if not versions:
                st.info("No saved versions yet: edit references in the “Edit references” tab and save one.")
                return None
            path = st.selectbox("Saved version", versions, format_func=lambda p: p.name)
            return load_dataset("demo", (str(path),))
        return load_dataset("demo", ())
    except mb.RequestError as error:
        st.error(common.escape_markdown(
            f"Could not use this data: {error}. Nothing was stored; fix the file or pick another source."))
        return None


# -- metrics -----------------------------------------------------------------------------------
def choose_metrics(dataset: mb.PairDataset, run_slot: list | None = None) -> tuple[list[mb.Metric], list[str], bool]:
    """(metric objects, stored columns, options valid). `run_slot`, if given, receives a container placed after the
    metric choice and before the model options, where the page draws its Run button (early in the tab order)."""
    left, middle, right = st.columns([3, 1.4, 2])
    st.session_state.setdefault("mb_metrics", list(mb.DEFAULT_METRICS))
    names = left.multiselect("Metrics", mb.metric_names(), key="mb_metrics",
                             format_func=lambda m: f"{mb.METRICS[m].label} ({mb.METRICS[m].family})",
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
    left.caption(f"{len(names)} of {len(mb.metric_names())} metrics selected"
                 + (f"; {len(stored)} of {len(dataset.stored_columns)} stored score columns" if dataset.stored_columns
                    else ""))
    st.session_state.setdefault("mb_config", "default")
    config = middle.selectbox("n-gram settings", mb.NGRAM_CONFIGS, key="mb_config",
                              help="`metric-fairness-2022` reproduces the paper's released code exactly")
    if run_slot is not None:
        run_slot.append(middle.container())
    with right.expander("Model options", expanded=False):
        encoder = common.model_picker("encoder", "Encoder for BERTScore / MoverScore", key="mb_encoder",
                                      default=DEFAULT_ENCODER)
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
        adapter = st.selectbox("Debiasing adapter for the encoder (train one on the Mitigation page)",
                               ["none", *mb.adapters_for(encoder)] if encoder else ["none"], key="mb_adapter")
    if not names and not stored:
        return [], [], True
    if not encoder and any(getattr(mb.METRICS[name], "task", None) == "encoder" for name in names):
        # a blank or refused id: ask for one rather than run BERTScore / MoverScore on some other encoder (a refused
        # one has its sentence under the box already)
        if not str(st.session_state.get("mb_encoder_custom", "")).strip():
            st.info("BERTScore and MoverScore need an encoder: type a Hugging Face id or local path under Model "
                    "options, or pick a listed one.")
        return [], stored, False
    models = {name: model for name in names if (model := mb.model_for_metric(name, encoder, lm))}
    takes = {option: mb.metric_takes(names, option) for option in ("layer", "idf", "baseline")}
    try:
        metrics = mb.build_metrics(names, config=config, models=models,
                                   layer=int(layer) if layer is not None and takes["layer"] else None,
                                   idf=idf and takes["idf"], baseline=baseline if takes["baseline"] else None,
                                   adapter=None if adapter == "none" else adapter) if names else []
    except mb.RequestError as error:
        st.error(common.escape_markdown(f"Metric options: {error}"))
        return [], stored, False
    return metrics, stored, True


def model_options_are_defaults() -> bool:
    """Whether every model option is as the page opens (the default view computes itself only then)."""
    state = st.session_state
    return (state.get("mb_encoder", DEFAULT_ENCODER) == DEFAULT_ENCODER
            and state.get("mb_lm", next(iter(mb.LM_PRESETS))) == next(iter(mb.LM_PRESETS))
            and state.get("mb_layer") is None and not state.get("mb_idf") and not state.get("mb_baseline")
            and state.get("mb_adapter", "none") == "none")


def gap_examples(gaps: pd.DataFrame) -> None:
    """The per-example gaps: a table with the words that differ beside the two candidates (a cell cuts a long text
    off, often before that word), then the selected pair (the largest gap first) whole, its differing words marked."""
    table = text_diff.with_changes(gaps[["item", "attribute", "metric", "gap", "score1", "score2", "candidate1",
                                         "candidate2", "reference", "stereotypical"]].round(4),
                                   "candidate1", "candidate2", after="gap")
    picked = st.dataframe(table, hide_index=True, width="stretch", key="mb_gap_table", on_select="rerun",
                          selection_mode="single-row",
                          column_config={"differs": st.column_config.TextColumn("differs (1 → 2)", width="medium")})
    if table.empty:
        return
    rows = picked.selection.rows if picked is not None and hasattr(picked, "selection") else []
    row = table.iloc[rows[0] if rows else 0]
    st.caption(common.escape_markdown(f"Pair {row['item']} ({row['attribute']}, {row['metric']}): gap {row['gap']} "
                                      "on the 0–100 scale" + ("" if rows else "; select a row to see another") + "."))
    text_diff.show_pair(row["candidate1"], row["candidate2"], ("Candidate 1", "Candidate 2"))
    st.markdown(f"**Reference:** {common.escape_markdown(row['reference'])}")


def alignment_view(metric: mb.Metric, row: pd.Series) -> None:
    """Paper Fig. 3 for one pair: which reference token each candidate token matches (loads the encoder)."""
    try:
        one, two, lines = mb.alignment_tables(metric, row)
    except mb.ModelUnavailableError as error:
        st.warning(common.escape_markdown(f"Alignment unavailable here: {error}"))
        return
    left, right = st.columns(2)
    left.caption("Candidate 1")
    left.text(row["candidate1"])
    left.dataframe(one, hide_index=True, width="stretch")
    right.caption("Candidate 2")
    right.text(row["candidate2"])
    right.dataframe(two, hide_index=True, width="stretch")
    if lines is not None:  # position-wise comparison only makes sense for equal tokenisations
        st.text("\n".join(lines) or "The two candidates tokenise identically.")
    else:
        st.caption("The candidates tokenise to different lengths, so tokens are not paired up.")
    common.how_to_read("Each candidate token is matched to the reference token most similar to it in "
                       "the encoder's space. When *she* matches *nurse* but *he* matches *the*, the gap "
                       "comes from a gender association the encoder learned.")


def edit_references_view(dataset: Any) -> None:
    """The "Edit references" tab: review the references and save the data as a new, content-hashed version."""
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
            path = mb.save_version(new, mb.versions_dir(common.store_path()))
            st.success(f"Saved version {common.inline_code(new.content_hash()[:12])} as "
                       f"{common.escape_markdown(path.name)}; pick “Saved version” above.")
        except mb.PairDataError as error:
            st.error(common.escape_markdown(f"Not saved: {error}"))
