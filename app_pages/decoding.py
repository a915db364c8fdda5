"""Decoding sliders: how top-p, top-k and temperature move per-group negativity, diversity and quality.

Thin page: widgets (`ui.decoding_view`) -> `fairness_core.decoding` (request, task, summary) -> charts. Live
mode runs one setting on a small live sample through the fair queue of the process's model workers (all live
rows in one sampler call; `ui.decoding_view.run_live`); sweep mode
runs a grid as a background job. Both go through the run store (generic generate-then-score task),
so a setting, prompt or sample seen before is read back, never regenerated.
"""

from __future__ import annotations

import time

import streamlit as st

from fairness_core import decoding as dec
from ui import common, jobs, plan_view, presenter, slices_view
from ui.decoding_inputs import import_tab as import_generations_tab
from ui.decoding_view import (
    DEFAULT_PRESET,
    GROUP_COLUMNS,
    LIVE_BATCH,
    MAX_GRID_TEXT,
    build_prompts,
    cached_summary,
    card,
    first_visit,
    group_table_config,
    restore_grid_from_url,
    run_live,
    sample_ahead,
    sweep_estimate,
    sweep_views,
    sync_grid_to_url,
)
from ui.live_cards import LiveCards
from ui.report import report_button

TOP_K_OPTIONS = list(dec.TOP_K_VALUES)

#: Selections kept in the URL: a reload keeps them and a view can be shared as a link (the grid text too).
URL_PARAMS = (
    common.UrlParam("dec_source", "prompts", common.one_of(["Regard templates", "BOLD", "Custom", "Counterfactual"]),
                    "Regard templates"),
    common.UrlParam("dec_threshold", "threshold", common.number_in(-1.0, 0.0), -0.25),
    common.UrlParam("live_top_p", "top_p", common.number_in(0.05, 1.0), 0.9),
    common.UrlParam("live_top_k", "top_k", common.one_of(TOP_K_OPTIONS), "off"),
    common.UrlParam("live_temperature", "temperature", common.number_in(0.1, 1.5), 1.0),
    common.UrlParam("live_prompts", "per_group", common.number_in(1, 10, int), 1),
    common.UrlParam("live_samples", "samples", common.number_in(1, 20, int), 1),
    common.UrlParam("live_max_new", "max_new", common.number_in(5, 60, int), 15),
    common.UrlParam("live_seed", "seed", common.number_in(0, 10_000, int), 0),
    common.UrlParam("sweep_preset", "preset", common.one_of(list(dec.GRID_PRESETS)), DEFAULT_PRESET),
    common.UrlParam("sweep_samples", "sweep_samples", common.number_in(1, dec.LIMITS.max_samples, int), 3),
    common.UrlParam("sweep_max_new", "sweep_max_new", common.number_in(5, dec.LIMITS.max_new_tokens, int), 20),
    common.UrlParam("sweep_seed", "sweep_seed", common.number_in(0, 10_000, int), 0),
)

common.restore_from_url(URL_PARAMS, "_dec_url_restored")
PRIMARY_SHORTCUT = "Alt+Enter"  # not Ctrl+Enter: text areas take that to apply their text
restore_grid_from_url()
st.title("Decoding sliders")


@st.cache_resource(show_spinner=False, ttl=600, max_entries=16)
def usable_scorers(scorers: tuple) -> tuple[tuple, tuple[str, ...]]:
    """(scorers that run here, one-sentence notes on the others): probed once, not on every slider move."""
    return dec.probe_scorers(scorers)


def probe_scorers(wanted: tuple, notes_area) -> tuple:
    """The scorers that run here; the notes on the others go to `notes_area` (in the settings panel)."""
    scorers, notes = usable_scorers(wanted)
    with notes_area:
        for note in notes:
            st.caption(common.escape_markdown(note))
    return scorers


with presenter.folded("Model, prompts and measures", expander=True):  # closed in presenter view: results first
    st.caption("Dhamala et al., *An Analysis of the Effects of Decoding Algorithms on Fairness in Open-Ended "
               "Language Generation*. Each generation is at most the chosen number of new tokens (so it can stop "
               "mid-phrase), then cut to its first sentence; every run is stored.")
    model_column, quant_column = st.columns([3, 1])
    with model_column:
        model = common.model_picker("causal-lm", "Generator (causal LM)", key="dec_model",
                                    default="smollm2-135m-instruct")
    quantization = quant_column.selectbox("Quantization (GPU)", ["none", "8bit", "4bit"], key="dec_quant")
    if not model:  # the picker has said why a typed value is refused, or nothing is typed yet
        st.info("Choose a generator, or type a Hugging Face id, a local model folder or a .gguf file.")
        st.stop()
    try:
        model = dec.check_model_source(model)
        prompts = build_prompts()
    except (dec.RequestError, dec.PromptError) as error:
        st.error(common.escape_markdown(str(error)))
        st.stop()
    families_word = "family" if len(prompts.families) == 1 else "families"
    st.caption(common.escape_markdown(f"{len(prompts.items)} prompts over {len(prompts.groups)} groups in "
                                      f"{len(prompts.families)} {families_word}."))
    for note in prompts.notes:
        st.caption(common.escape_markdown(note))
    m1, m2, m3 = st.columns(3)
    threshold = m1.slider("Negative if VADER compound ≤", -1.0, 0.0, -0.25, 0.05, key="dec_threshold",
                          help="The paper uses -0.25. Changing it re-scores stored generations instantly.")
    quality_choice = m2.selectbox("Quality proxy scorer", ["same as generator", "off"], key="dec_quality",
                                  help="Mean token log-prob of the continuation: a proxy for human quality ratings.")
    regard_model = m3.text_input("Regard classifier", "regard-v3", key="dec_regard",
                                 max_chars=common.MAX_MODEL_ID_CHARS,
                                 help="Preset or hub id; offline it is unavailable and regard is left out.")
    regard_problem = common.model_id_problem(regard_model.strip())
    if regard_problem:  # a typed value that cannot name a model: said once, and regard is left out
        st.error(f"Regard classifier: {regard_problem}")  # markdown: developer text (the value: an inline code span)
        regard_model = ""
    wanted = dec.default_scorers(model, None if quality_choice == "off" else "same", regard_model.strip() or None)
    # probing loads the scorers' models (the quality proxy loads the generator itself: ~5 s on a first visit), so
    # it runs once the sliders are drawn and its notes land here (issue 45 §2: the controls painted ~4.5 s later)
    scorer_notes_area = st.container()


live_tab, sweep_tab, import_tab = st.tabs(["Live: one setting", "Sweep: a grid", "Imported: your generations"])
with import_tab:
    import_generations_tab()

# ---------------------------------------------------------------- live mode
with live_tab:
    # The main action first in the tab (keyboard users reached it after 38 Tab presses, behind every knob) and on
    # Alt+Enter; the knobs below still drive it (a click reruns the page with their values).
    b1, b2, b3 = st.columns([2, 1, 1])
    auto = b1.toggle("Generate whenever a slider moves", value=True, key="live_auto")
    clicked = b2.button("Generate", key="live_generate", type="primary", shortcut=PRIMARY_SHORTCUT,
                        help=f"Generate with the settings below ({PRIMARY_SHORTCUT}).")
    b3.button("More samples (+2)", key="live_more", help="Adds two samples per prompt; stored ones are reused.",
              on_click=lambda: st.session_state.update(live_samples=min(20, int(st.session_state["live_samples"]) + 2)))
    c1, c2, c3 = st.columns(3)
    # on the notches: a browser's slider arithmetic gives 0.8500000000000001, which is another setting (and another
    # run) than the 0.85 a link, the CLI or the settings sampled ahead (dec.neighbours) name; a link's 0.937 stays
    top_p = dec.on_notch("top_p", c1.slider("top-p", 0.05, 1.0, 0.9, 0.05, key="live_top_p",
                                            help="1.0 switches top-p off."))
    top_k = c2.select_slider("top-k", TOP_K_OPTIONS, value="off", key="live_top_k")
    temperature = dec.on_notch("temperature", c3.slider("temperature", 0.1, 1.5, 1.0, 0.05, key="live_temperature"))
    # in presenter view the result comes right below the three sliders and above the other settings: the sliders the
    # teacher moves and what they change share the first screen (issue 43 §5: with the result first, the top-p slider
    # sat 2,752 px down at 1280 x 720, under eleven groups' cards and the table)
    results_area = presenter.results_first()
    with presenter.folded("Prompts per group, samples, length, seed"):  # the sliders stay in view
        c4, c5, c6, c7 = st.columns(4)
        per_group = c4.number_input("Prompts per group", 1, 10, 1, key="live_prompts")
        samples = c5.number_input("Samples per prompt", 1, 20, 1, key="live_samples",
                                  help="Small by default so a slider move answers in seconds.")
        max_new = c6.number_input("Max new tokens", 5, 60, 15, key="live_max_new")
        seed = c7.number_input("Seed", 0, 10_000, 0, key="live_seed")
    config = dec.DecodingConfig(temperature=temperature, top_k=None if top_k == "off" else int(top_k),
                            top_p=None if top_p >= 1.0 else top_p, max_new_tokens=int(max_new))
    common.sync_url(URL_PARAMS)  # before any generation: the link is right while the model works
    if auto or clicked:
        first_visit(model, quantization)  # its progress bar, before the probe below waits for the same load
    scorers = probe_scorers(wanted, scorer_notes_area)
    if auto or clicked:
        live_set = dec.live_subset(prompts, int(per_group))
        if common.served():
            try:
                dec.check_served(1, len(live_set.items) * int(samples), live=True)
            except dec.LimitError as error:
                st.error(common.escape_markdown(str(error)))
                st.stop()
        with results_area:
            started = time.monotonic()
            status = st.empty()
            show_full = st.toggle("Show the raw (untruncated) text", key="live_raw")
            columns = st.columns(min(4, max(1, len(live_set.groups))))
            slots = {group: columns[index % len(columns)].empty() for index, group in enumerate(live_set.groups)}
            cards = LiveCards(list(live_set.groups), slots)
            try:
                request = dec.build_request(model, live_set, (config,), samples=int(samples),
                                            max_new_tokens=int(max_new), seed=int(seed), threshold=threshold,
                                            quantization=quantization, scorers=scorers, batch_size=LIVE_BATCH)
                plan = dec.plan_decoding(request, common.get_store())
                live_job = None
                ahead = (0, 0)
                if plan.from_store:
                    outcome = dec.run_decoding(plan, common.get_store())
                else:
                    generating = (f"Generating with {config.label()}: the text appears as the model writes it; the "
                                  "measures follow.")
                    status.info(common.escape_markdown(generating))
                    if plan.plan.n_to_generate < plan.plan.n_wanted:
                        cards.show_stored(dec.stored_generations(plan, common.get_store()))
                    ahead = dec.rows_sampled_ahead(plan)  # rows the model sampled before this move asked
                    live_job, outcome = run_live(plan, cards, lambda where: status.info(
                        common.escape_markdown(f"Queued: {where}. {generating}")))
                    status.info(common.escape_markdown(generating))
            except dec.RequestError as error:
                status.error(common.escape_markdown(str(error)))
                st.stop()
            cards.resume_interruption()
            if outcome is None:
                status.warning("This generation was stopped before it finished; move a slider or press Generate.")
                st.stop()
            elapsed = time.monotonic() - started
            live = outcome.generations
            summary = cached_summary(live, live_set.families, scorers, threshold, request.n_resamples, int(seed))
            configs = summary.configs
            source = "served from the run store" if outcome.from_cache else f"generated now in {elapsed:.1f} s"
            if ahead[0] and not outcome.from_cache:
                # ahead of the move: while the last result was read, or, on a first visit, while the server started
                source += (" from rows sampled ahead, before you asked" if ahead[0] == ahead[1]
                           else f" ({ahead[0]} of {ahead[1]} rows sampled ahead, before you asked)")
            if live_job is not None and live_job.shared_with:
                source += " (shared with another session that asked for the same)"
            status.markdown(f"**{common.escape_markdown(config.label())}** — {common.escape_markdown(source)}; "
                            f"diversity (trigram entropy) {configs['diversity'].iloc[0]:.2f}; "
                            + common.escape_markdown(dec.disparity_headline(summary, configs["config_key"].iloc[0])))
            for group in live_set.groups:
                with slots[group].container(border=True):
                    st.markdown(f"**{common.escape_markdown(group)}**")
                    for _, row in live[live["group"] == group].iterrows():
                        card(row, bool(row["vader_compound"] <= threshold), show_full)
            columns = ["family", "group", "n", "n_empty", "negative_sentiment_rate", "ci_low", "ci_high"]
            columns += [c for c in ("negative_regard_rate", "offensive_rate", "jigsaw_toxic_rate",
                                    "negative_word_share", "quality_mean_logprob") if c in summary.groups]
            # every group and measure in view: as tall as its rows, short headers, two decimals (issue 30); presenter
            # view: a static table, each rate with its interval in one cell, headers wrapped to the width (issue 35)
            presenter.table(summary.groups[columns], labels={k: label for k, (label, _) in GROUP_COLUMNS.items()},
                            intervals={"negative_sentiment_rate": ("ci_low", "ci_high")}, hide_index=True,
                            width="stretch", height="content",
                            column_config=group_table_config())
            common.how_to_read(
                "Each card holds a group's generations (text appears as the model writes it; the negative label once "
                "it is scored). Each table row is one group. *negative_sentiment_rate* is the share of its "
                "generations whose VADER compound score is at or below the threshold, with a 95% interval from "
                "resampling the prompts (all samples of a prompt together). The live sample is small, so intervals "
                "are wide: use *More samples* or the sweep for firm conclusions. *n_empty* counts generations that "
                "were empty after cutting to the first sentence; they are kept and scored as the prompt alone.")
            report_button(outcome.run_ids, key="live_report")  # this setting's run: numbers, manifest, examples
            plan_view.decoding_plan(outcome, "live_plan")  # this result's own run as a pilot (issues 33, 43)
            slices_view.result_slices_panel(outcome, [m.name if m.kind == "rate" else m.column for m in
                                                      dec.measures_for(scorers)], "live_slices")  # issue 46
            # the notches up to three either side are sampled while the user reads this (answered at once there)
            position = dec.SliderPosition(top_p, top_k, temperature)
            sample_ahead(request, position, st.session_state.get("_live_position"))
            st.session_state["_live_position"] = position
        if int(per_group) < 2:
            st.caption("With one prompt per group, every group's prompt comes from the same template: there is "
                       "nothing to resample, so no interval is given (None) rather than one that collapses "
                       "onto the estimate. Raise *Prompts per group* to 2 or more for intervals.")

# ---------------------------------------------------------------- sweep mode
SWEEP_KEY = "decoding_sweep"
SERVED_USED = "decoding_served_generations"  # generations this session's sweeps asked for (served caps)
with sweep_tab:
    g1, g2 = st.columns([1, 2])
    preset = g1.selectbox("Grid preset", list(dec.GRID_PRESETS), index=list(dec.GRID_PRESETS).index(DEFAULT_PRESET),
                          key="sweep_preset")
    grid_text = g2.text_input("Grid (knob=v1,v2;knob=…)", dec.GRID_PRESETS[preset], key=f"sweep_grid_{preset}",
                              max_chars=MAX_GRID_TEXT)
    s1, s2, s3 = st.columns(3)
    sweep_samples = s1.number_input("Samples per prompt (paper: 100)", 1, dec.LIMITS.max_samples, 3,
                                    key="sweep_samples")
    sweep_max_new = s2.number_input("Max new tokens", 5, dec.LIMITS.max_new_tokens, 20, key="sweep_max_new")
    sweep_seed = s3.number_input("Seed", 0, 10_000, 0, key="sweep_seed")
    full_length = st.checkbox("Generate the full max new tokens (keeps the whole raw text; slower)",
                              key="sweep_full_length",
                              help="By default a row stops once its first sentence is settled: the truncated "
                                   "outputs are identical, the work much smaller.")
    common.sync_url(URL_PARAMS)
    sync_grid_to_url(preset, grid_text)
    try:
        grid_configs = dec.expand_grid(dec.parse_grid(grid_text), int(sweep_max_new))
    except dec.GridError as error:
        st.error(common.escape_markdown(str(error)))
        st.stop()
    if common.served():  # a classroom: per-session caps, bigger sweeps are the teacher's (docs/SECURITY.md)
        try:
            dec.check_served(len(grid_configs), dec.estimate(len(grid_configs), len(prompts.items),
                                                             int(sweep_samples), int(sweep_max_new)).generations,
                             st.session_state.get(SERVED_USED, 0))
        except dec.LimitError as error:
            st.error(common.escape_markdown(str(error)))
            st.stop()
    confirmed = False
    try:
        work = dec.check_limits(len(grid_configs), len(prompts.items), int(sweep_samples), int(sweep_max_new))
        st.caption(common.escape_markdown(
            f"{len(grid_configs)} configurations × {len(prompts.items)} prompts × {int(sweep_samples)} "
                   f"samples: {sweep_estimate(work.generations, int(sweep_max_new))} (stored generations are "
                   "reused and cost nothing; the figure is revised from the sweep's own progress while it runs)."))
    except dec.LimitError as error:
        try:
            dec.check_limits(len(grid_configs), len(prompts.items), int(sweep_samples), int(sweep_max_new), True)
        except dec.LimitError:
            st.error(common.escape_markdown(str(error)))
            st.stop()
        st.warning(common.escape_markdown(str(error)))
        confirmed = st.checkbox("Run this large sweep anyway", key="sweep_confirm")
    job_key = jobs.followed(SWEEP_KEY, "sweep-", "sweep")
    job = jobs.get(job_key) if job_key else None
    blocked = (job is not None and job.running) or (not confirmed and "sweep_confirm" in st.session_state
                                                    and not st.session_state["sweep_confirm"])
    if st.button("Run sweep", type="primary", key="sweep_run", disabled=blocked):
        try:
            sweep_request = dec.build_request(model, prompts, tuple(grid_configs), samples=int(sweep_samples),
                                          max_new_tokens=int(sweep_max_new), seed=int(sweep_seed),
                                          threshold=threshold, quantization=quantization, scorers=scorers,
                                          full_length=full_length, confirmed=confirmed)
            sweep_plan = dec.plan_decoding(sweep_request, common.get_store())
        except dec.RequestError as error:
            st.error(common.escape_markdown(str(error)))
            st.stop()
        store, executor = common.get_store(), common.get_executor()
        job_key = jobs.key_for("sweep", {"request": sweep_plan.manifest(), "store": str(store.path)})
        st.session_state[SWEEP_KEY] = job_key
        st.session_state[SERVED_USED] = st.session_state.get(SERVED_USED, 0) + sweep_plan.plan.n_to_generate
        jobs.start(job_key, lambda on_progress, cancel: dec.run_decoding(sweep_plan, store, on_progress, cancel,
                                                                     executor=executor, threads=jobs.threads_now()),
                   label="Sweep", estimate_of=dec.sweep_work(sweep_plan.plan.n_to_generate, int(sweep_max_new)))
        st.rerun()  # draw "Run sweep" disabled while this sweep runs (the progress fragment never redraws it)
    job = jobs.show(job_key, label="Sweep") if job_key else None
    result = job.result if job is not None and job.done and job.error is None else None

with sweep_tab:
    if result is not None:
        sweep_views(result, result.plan.request.prompts.families, threshold)  # the groups the sweep ran with
        plan_view.decoding_plan(result, "sweep_plan")  # the sweep's own run as a pilot (issue 43)
        slices_view.slices_panel(result.run_ids, [m.name if m.kind == "rate" else m.column for m in
                                                  dec.measures_for(scorers)], "sweep_slices")  # issue 46 §2
