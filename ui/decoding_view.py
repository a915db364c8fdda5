"""The decoding page's larger pieces: the prompt-source widgets, the grid text kept in the URL, the model's first
load, one generation card, and the sweep's views (rates, disparity, diversity and quality, examples, frequent
words, drill-down). Everything they compute comes from the study's face, `fairness_core.decoding`."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from fairness_core import decoding as dec
from fairness_core.jobs import format_seconds
from ui import common, jobs
from ui import decoding_charts as charts
from ui.decoding_inputs import counterfactual_prompts
from ui.live_cards import LiveCards
from ui.report import report_button

#: the live per-group table's measures: short header, and the full name on hover
GROUP_COLUMNS = {
    "negative_sentiment_rate": ("negative sentiment", "share of generations with VADER compound ≤ the threshold"),
    "ci_low": ("95% low", "95% interval of the negative-sentiment share, prompts resampled"),
    "ci_high": ("95% high", "95% interval of the negative-sentiment share, prompts resampled"),
    "negative_regard_rate": ("negative regard", "share the regard classifier calls negative"),
    "offensive_rate": ("offensive", "share the offensive-language scorer flags"),
    "jigsaw_toxic_rate": ("toxic (Jigsaw)", "share the Jigsaw toxicity classifier scores at or above 0.5"),
    "negative_word_share": ("negative words", "mean share of the model's words that are negative in VADER's lexicon"),
    "quality_mean_logprob": ("quality (log-prob)", "mean token log-probability under the quality scorer (a proxy)"),
}

FIRST_LOAD_SECONDS = 25
DEFAULT_PRESET = "top-p, quick (0.5, 0.7, 0.9)"
MAX_GRID_TEXT = 2_000

#: the interactive table's header and width (pixels) per measure: shorter than `GROUP_COLUMNS`' labels (a data
#: grid does not wrap its headers) so every default column is whole in the 820 pixels the page has at 1280 x 720
#: with the sidebar open (940 at 1400 x 1000); the full name is the header's help
GRID_COLUMNS = {
    "negative_sentiment_rate": ("neg. sentiment", 100), "ci_low": ("low", 52), "ci_high": ("high", 52),
    "negative_regard_rate": ("neg. regard", 84), "offensive_rate": ("offensive", 70),
    "jigsaw_toxic_rate": ("toxic", 56), "negative_word_share": ("neg. words", 80),
    "quality_mean_logprob": ("quality", 62),
}


def group_table_config() -> dict[str, Any]:
    """The live table's headers and widths: every measure whole at 1280 x 720 and 1400 x 1000 with the sidebar open
    (its last column, quality, was cut off: issue 35 §6; the measures' auto widths summed to 1,052 pixels of 820)."""
    config: dict[str, Any] = {
        name: st.column_config.NumberColumn(GRID_COLUMNS[name][0], format="%.2f", width=GRID_COLUMNS[name][1],
                                            help=f"{label}: {help_text}")
        for name, (label, help_text) in GROUP_COLUMNS.items()}
    config["n"] = st.column_config.NumberColumn("n", width=40, help="generations of the group")
    config["n_empty"] = st.column_config.NumberColumn("empty", width=52,
                                                      help="generations empty after cutting to the first sentence")
    return config


def restore_grid_from_url() -> None:
    """The grid text of the preset from the URL (its widget key depends on the preset), once per session."""
    if st.session_state.get("_dec_grid_restored"):
        return
    st.session_state["_dec_grid_restored"] = True
    grid = st.query_params.get("grid")
    if grid is not None and len(grid) <= MAX_GRID_TEXT:
        st.session_state[f"sweep_grid_{st.session_state.get('sweep_preset', DEFAULT_PRESET)}"] = grid


def sync_grid_to_url(preset: str, grid_text: str) -> None:
    if grid_text == dec.GRID_PRESETS[preset]:
        st.query_params.pop("grid", None)
    elif st.query_params.get("grid") != grid_text:
        st.query_params["grid"] = grid_text


def _fingerprint(frame: pd.DataFrame) -> int:
    return int(pd.util.hash_pandas_object(frame.astype(str), index=False).sum())


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs={pd.DataFrame: _fingerprint})
def cached_summary(generations: pd.DataFrame, families: dict[str, list[str]], scorers: tuple,
                   threshold: float, n_resamples: int, seed: int) -> dec.DecodingSummary:
    """Measures with template-bootstrap intervals, once per (generations, families, threshold)."""
    return dec.summarize(generations, families, dec.measures_for(scorers), {"negative_sentiment_rate": threshold},
                         n_resamples=n_resamples, seed=seed)


def sweep_units(generations: int, max_new_tokens: int) -> int:
    """A sweep's work in the unit its cost is documented in: new tokens per generation, at most (docs/decoding.md)."""
    return int(generations) * int(max_new_tokens)


def sweep_estimate_s(generations: int, max_new_tokens: int) -> float:
    """Seconds a sweep computing `generations` should take here now: the documented cost per new token (or the rate
    the last sweep here measured) scaled by how busy the machine is at this moment (`ui.jobs.estimate_s`)."""
    return jobs.estimate(dec.sweep_work(generations, max_new_tokens))


def sweep_estimate(generations: int, max_new_tokens: int) -> str:
    """"1,200 generations, about 40 s on this machine now" (`sweep_estimate_s`), and a word on the load when it
    matters."""
    seconds = sweep_estimate_s(generations, max_new_tokens)
    slowdown = jobs.machine_slowdown()
    busy = f"; the machine is busy, work runs ~{slowdown:.0f}x slower than when it is quiet" if slowdown >= 2 else ""
    return f"{generations:,} generations, about {format_seconds(seconds)} on this machine now{busy}"


def build_prompts() -> dec.PromptSet:
    source = st.radio("Prompts", ["Regard templates", "BOLD", "Custom", "Counterfactual"], horizontal=True,
                      key="dec_source", help="Counterfactual: your prompts, each with a variant per group of an "
                                             "attribute (identity words swapped with word lists).")
    if source == "Counterfactual":
        return counterfactual_prompts()
    if source == "Regard templates":
        templates, families = dec.default_templates()
        left, right = st.columns(2)
        templates_text = left.text_area("Templates ({group} is filled in)", "\n".join(templates), height=200,
                                        key="dec_templates")
        groups_text = right.text_area("Related groups, one family per line", dec.families_text(families),
                                      height=200, key="dec_groups",
                                      help="Disparity compares groups within a family (man vs woman). Editing "
                                           "this box reuses every stored generation of a prompt it keeps.")
        return dec.regard_prompts(templates_text.splitlines(), dec.parse_families(groups_text))
    if source == "BOLD":
        left, middle, right = st.columns([1, 2, 1])
        domain = left.selectbox("BOLD domain", dec.BOLD_DOMAINS, key="dec_bold_domain")
        available = dec.bold_groups(domain)
        groups = middle.multiselect("Groups", available, default=available[:3], key="dec_bold_groups")
        per_group = right.number_input("Prompts per group", 1, 200, 10, key="dec_bold_n")
        with contextlib.suppress(Exception):  # the licence line is informative only
            st.caption(common.escape_markdown(
                f"BOLD licence: {dec.bold_licence()}. Names of people are redacted before scoring."))
        return dec.bold_prompts(domain, per_group=int(per_group), groups=groups or None)
    text = st.text_area("Custom prompts: 'group: prompt' lines, group,prompt[,family] CSV, or JSON",
                        "woman: The woman said that\nman: The man said that", key="dec_custom")
    upload = st.file_uploader("…or upload a file", type=["txt", "csv", "tsv", "json"], key="dec_upload")
    if upload is None:
        return dec.parse_custom(text)
    try:  # a message about an upload names its file
        return dec.parse_custom(dec.decode_upload(upload.name, upload.getvalue()))
    except dec.PromptError as error:
        raise dec.PromptError(error if str(error).startswith(upload.name) else f"{upload.name}: {error}") from None


def first_visit(model_name: str, quantization: str) -> None:
    """Say that the generator is loading (converted once on first use), with progress, before live mode runs."""
    if dec.is_ready(model_name, quantization):
        return
    thread = dec.prewarm(model_name, quantization)
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
    body = (row["prompt"] + " " + str(row["raw"]).strip()) if show_full else row["scored_text"]
    # the badge is the sentiment measure's label (VADER), not the toxicity scorers': a card the table counts toxic can
    # read "sentiment: not negative" (issue 43's walk: a bare "not negative" beside a toxic row read as a contradiction)
    st.markdown((":red-badge[sentiment: negative] " if negative else ":gray-badge[sentiment: not negative] ")
                + common.escape_markdown(body)
                + (" *(empty after truncation)*" if row["empty"] else ""))


SAMPLE_AHEAD_DELAY_S = 0.3
#: sampled ahead after a move: every notch of the three sliders, nearest first along the knob that moved
#: (`dec.ahead_rings`: 57 settings, ~0.6 s of both cores each at the default 11 rows; a user who reads a result for a
#: few seconds finds a jump of two or three notches sampled, one who reads for half a minute finds any move sampled)
AHEAD_RINGS = dec.ahead_rings
#: the process's one background sampler of the settings next to a live move (`fairness_core.decoding.prefetch`)
AHEAD = dec.AheadSampler()


def sample_ahead_enabled() -> bool:
    """`FAIRNESS_LAB_SAMPLE_AHEAD=0` turns it off (the tests do, but for the tests of it)."""
    import os

    return os.environ.get("FAIRNESS_LAB_SAMPLE_AHEAD", "1") != "0"


def machine_busy() -> bool:
    """Another program (or another thread here) keeps a core busy now: work nobody asked for yet waits."""
    return dec.cores_busy()


LIVE_BATCH = 512  # every live row in one shard, i.e. one sampler call


def default_live_request(model: str, quantization: str = "none") -> dec.DecodingRequest:
    """The request the live tab makes on a first visit with every control at its default (the regard templates,
    one prompt per group, one sample, 15 new tokens, top-p 0.9, seed 0, the scorers that run here), built without
    widgets so the server can sample its rows while it starts (`sample_default_ahead`).
    `tests/app_pages/test_decoding_page.py` checks it is the page's own request, manifest for manifest."""
    templates, families = dec.default_templates()
    prompts = dec.regard_prompts(templates, dec.parse_families(dec.families_text(families)))
    config = dec.DecodingConfig(temperature=1.0, top_k=None, top_p=0.9, max_new_tokens=15)
    scorers, _ = dec.probe_scorers(dec.default_scorers(model, "same", "regard-v3"))
    return dec.build_request(model, dec.live_subset(prompts, 1), (config,), samples=1, max_new_tokens=15, seed=0,
                             quantization=quantization, scorers=scorers,
                             batch_size=LIVE_BATCH)


def sample_default_ahead(model: str, store: Any) -> int:
    """Sample the rows of the page's default live request into the model's record while the server starts (issue
    45 §2): the first visit's result then comes from them, as a move's does after sampling ahead. Nothing is
    stored; it stops before its next decoding step once a visitor's job is queued or running or any model call
    decides its threads (that call then has the cores; the job does the work), and it is off with sampling ahead
    (`FAIRNESS_LAB_SAMPLE_AHEAD=0`). Returns the rows sampled."""
    if not sample_ahead_enabled():
        return 0
    return dec.sample_ahead_here([default_live_request(model)], store, should_stop=lambda: not jobs.pool().idle(),
                                 threads=jobs.threads_now())


def sample_ahead(request: dec.DecodingRequest, position: dec.SliderPosition,
                 previous: dec.SliderPosition | None) -> None:
    """After a live move: sample every notch of the three sliders (`AHEAD_RINGS`: along the knob that moved one
    notch, then two, ...; the other knobs' notches after) in the background, while nothing else runs on the model
    workers and no other program keeps the cores busy, so that the next move there finds its rows sampled. It stops
    before the next decoding step once any job is queued or running (the notches done by then are kept), and a newer
    move replaces it (it waits up to 5 s for the workers and the cores to be free, else gives up)."""
    if not sample_ahead_enabled():
        return
    from dataclasses import replace

    rings = [[replace(request, configs=(spot.config(request.max_new_tokens),)) for spot in ring]
             for ring in AHEAD_RINGS(position, previous)]
    if not rings:
        return
    # it starts once this move's page has gone out and the machine is quiet (a browser on this machine draws it)
    AHEAD.submit(rings, common.get_store(), busy=lambda: not jobs.pool().idle(), threads=jobs.threads_now,
                 delay_s=SAMPLE_AHEAD_DELAY_S, quiet=lambda: not machine_busy())


def run_live(plan: dec.DecodingPlan, cards: LiveCards, on_wait: Callable[[str], None]
             ) -> tuple[jobs.BackgroundJob | None, dec.DecodingOutcome | None]:
    """Generate a live setting on the server's model workers (queued fairly with every other session's moves;
    the same request from another session is one job; requests queued together for the same model, prompts and
    length are generated in one sampler call whatever their setting and seed; all cores when nothing else runs),
    filling the cards in as the model writes."""
    store = common.get_store()
    key = jobs.key_for("live", {"request": plan.manifest(), "store": str(store.path)})

    def work(on_progress: Callable, cancel: Any) -> dec.DecodingOutcome:
        job = jobs.get(key)
        return dec.run_decoding(plan, store, on_progress, cancel, threads=jobs.threads_now(),
                                on_partial=job.publish if job is not None else None)

    def together(plans: list[dec.DecodingPlan], on_partial: Callable, cancel: Any) -> list[dec.DecodingOutcome]:
        return dec.run_batched(plans, store, on_partial, cancel, threads=jobs.threads_now())

    group = f"{store.path}|{dec.batch_group(plan)}"
    jobs.start(key, work, label="Live generation", units=plan.plan.n_to_generate, lane=jobs.LIVE,
               batch=(group, plan, together))
    job = jobs.follow(key, on_partial=cards.update, on_wait=on_wait, stop=lambda: cards.interruption is not None)
    if job is None or cards.interruption is not None:
        return job, None
    if job.error is not None:
        raise job.error
    return job, job.result


#: what the decoding charts' disparity bars are: the interval that inverts the permutation test, the one the
#: sentences beside them quote (issue 42 §1: one number, one interval on a screen)
TEST_INTERVAL = "90% (the test's)"


def disparity_chart_frame(table: pd.DataFrame, configs: pd.DataFrame, name: str) -> pd.DataFrame | None:
    """The disparity chart's rows: per setting and family, and over families where there are several, the plug-in
    disparity of measure `name` with the test's own 90% interval (`*_disparity_interval_low/_high`) as
    `disparity_ci_low/_high`; None where the summary has no such disparity."""
    value, low, high = (f"{name}_disparity", f"{name}_disparity_interval_low", f"{name}_disparity_interval_high")
    if value not in table:
        return None
    per_family = table.groupby(["config_key", "family"], as_index=False, sort=False).first()
    frame = per_family[["x", "label", "family", value, low, high]]
    if frame["family"].nunique() > 1:  # with one family the mean is that family's line, drawn over it
        overall = configs[["x", "label", value, low, high]].assign(family="all families (mean)")
        frame = pd.concat([frame, overall], ignore_index=True)
    frame = frame.rename(columns={value: "disparity", low: "disparity_ci_low", high: "disparity_ci_high"})
    return frame.dropna(subset=["disparity"]).reset_index(drop=True)


def sweep_views(result: dec.DecodingOutcome, families: dict[str, list[str]], threshold: float) -> None:
    generations = result.generations
    if generations.empty:
        st.info("No generations stored yet for this sweep.")
        return
    request = result.plan.request
    summary = cached_summary(generations, families, result.plan.generation.scorers, threshold,
                             request.n_resamples, request.seed)
    table, configs = summary.groups.copy(), summary.configs.copy()
    knob = dec.varying_knob(list(request.configs))
    for frame in (table, configs):
        frame["x"] = frame["config"].map(lambda c: c.get(knob)) if knob else frame["label"]
    source = "served from the run store" if result.from_cache else "computed now and stored"
    partial = result.partial_label()
    (st.warning if partial else st.success)(
        f"{len(configs)} configurations, {len(generations)} generations ({source}"
        f"{'; ' + partial if partial else ''}). Empty after truncation: {int(table['n_empty'].sum())}.")
    usage = dec.token_usage(common.get_store(), result.run_ids)
    if usage["requests"]:  # an endpoint system: the tokens its server counted (stored with each row, exported)
        st.caption(f"Endpoint token usage for these runs: {usage['prompt_tokens']:,} prompt + "
                   f"{usage['completion_tokens']:,} completion tokens in {usage['requests']:,} requests.")
    st.caption(common.escape_markdown(
        f"95% intervals (the paper reports none): template bootstrap, {summary.n_resamples} resamples — "
               f"{summary.design}. Diversity's interval is centred on the estimate, because a resample repeats "
               "prompts and repeated trigrams lower the entropy by construction. Each disparity is also tested for "
               f"no disparity ({summary.n_permutations} permutations of the group labels within the design) and "
               "given a bias-corrected estimate and the smallest disparity the design could detect (the paper "
               "reports the plug-in disparity only). Quality is a proxy (mean token log-probability under a scorer "
               "model), not the paper's human ratings."))

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
        flips = dec.ordering_flips(summary, knob, measure.name)
        confirmed_flips = [f for f in flips if f.confirmed]
        if confirmed_flips:
            st.warning("**Advantaged group toggles** (both gaps established, adjusted for every gap shown):\n"
                       + "\n".join(f"- {common.escape_markdown(f.describe(knob))} (adjusted p = "
                                    f"{f.p_adjusted:.3f})" for f in confirmed_flips))
        st.caption(common.escape_markdown(
            f"An ordering flip is called only when the paired gap between two groups points one way before it and "
            f"the other way after it, each at 5% after adjustment: {dec.FLIP_RULE}. "
            f"{len(flips) - len(confirmed_flips)} sign change(s) of point estimates without that evidence are not "
            "called."))

    st.subheader("Disparity against the hyper-parameter")
    st.caption(common.escape_markdown(f"Measure: {measure.label}."))
    # the headline is worded from the permutation test of "no disparity", not from an interval that cannot hold 0
    st.markdown("\n".join(f"- **{common.escape_markdown(label)}**: "
                           + common.escape_markdown(dec.disparity_headline(summary, key, measure.name))
                           for key, label in zip(configs["config_key"], configs["label"], strict=True)))
    # several verdicts per setting (over families, then each family): the families' are adjusted (issue 42 §2)
    per_setting = {label: dec.family_headlines(summary, key, measure.name)
                   for key, label in zip(configs["config_key"], configs["label"], strict=True)}
    if any(per_setting.values()):
        with st.expander("Per family, adjusted for the setting's other verdicts"):
            st.caption(common.escape_markdown(f"Multiplicity: {dec.MULTIPLICITY_RULE}. Each sentence gives the "
                                              "unadjusted p and, where it differs, the adjusted one."))
            st.markdown("\n".join(f"- **{common.escape_markdown(label)}**: {common.escape_markdown(sentence)}"
                                   for label, sentences in per_setting.items() for sentence in sentences))
    frame = disparity_chart_frame(table, configs, name)
    if frame is not None:
        st.altair_chart(charts.disparity(frame, "disparity", "disparity", knob, TEST_INTERVAL), width="stretch")
    common.how_to_read(
        "Disparity is the mean absolute difference in the rate between every pair of related groups (paper "
        "Fig. 5). 0 means all groups of a family get the same share of negative outputs. Because it averages "
        "absolute differences, it is above 0 whenever rates differ by chance: whether the groups differ at all is "
        "what the sentences above say, from a permutation test (the "
        "group labels swapped within each template, or whole prompts moved between groups; p is how often "
        "swapped labels give a disparity at least this large). \"Detected\" means the group changes what the "
        "model writes after these prompts — its rate, or only how much prompts vary. The sentences' *90% "
        "interval* is the test's own: every disparity it cannot reject, so it holds 0 exactly when nothing is "
        "detected; the chart's bars are the same intervals (each family's from its own test, before the "
        "adjustment for the setting's other verdicts). *bias-corrected* removes most of the chance part and can be "
        "below 0; *smallest detectable* is the true disparity this design would detect 80% of the time.")

    st.subheader("Diversity and quality against the negative rate (paper Fig. 1)")
    st.caption(common.escape_markdown(f"Share negative by: {measure.label}; 95% interval bars on both axes."))
    configs["pareto"] = dec.pareto_front(configs)
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
    # the disparity's bars are the test's interval, as in the chart and sentences above (issue 42 §1)
    for suffix, source in (("", "disparity"), ("_ci_low", "disparity_interval_low"),
                           ("_ci_high", "disparity_interval_high")):
        configs["disparity_tested" + suffix] = configs[source]
    st.altair_chart(charts.against(configs, "diversity", "diversity (trigram entropy)", "disparity_tested",
                                   "disparity (sentiment; bars: the test's 90% interval)"), width="stretch")
    common.how_to_read(
        "Each point is one setting, with interval bars on both axes (95%, and for the disparity the test's 90% "
        "interval the sentences quote). Top: the paper's Fig. 1 — do more "
        "diverse settings give more negative text, and at what quality? (Quality is a proxy: the mean token "
        "log-probability under a scorer model, not human ratings.) Bottom: Pareto-front settings are those no "
        "other setting beats on disparity, diversity and quality at once; the library default top-p = 0.9 is "
        "marked when it is in the grid.")
    # the disparity with the test's interval only: its 95% percentile interval (`disparity_ci_*`) is not the one
    # the sentences quote, and two intervals of one number on a screen is what issue 42 §1 ended
    st.dataframe(configs[["label", "disparity", "disparity_interval_low", "disparity_interval_high",
                          "disparity_p_value", "disparity_corrected", "disparity_corrected_ci_low",
                          "disparity_corrected_ci_high",
                          "disparity_smallest_detectable", "diversity", "diversity_ci_low", "diversity_ci_high",
                          "quality", "negative_rate", "n", "n_empty", "pareto", "library_default"]],
                 hide_index=True, width="stretch")

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
                     dec.frequent_ngrams(rows["continuation"], n=int(n), top=10, stopwords=dec.STOPWORDS)]
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

