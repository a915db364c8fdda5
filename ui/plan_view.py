"""The "Plan" panel beside a study's headline: from the run on screen (the pilot), how many prompts (pairs,
patterns) a question needs, in one sentence and a power curve (`fairness_core.planning`, docs/planning.md).

Nothing is simulated until the reader presses *Plan*: a plan costs a few seconds, and a live slider move must not
pay for it. Each answer is kept for the session, keyed by the pilot and the inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from fairness_core import audit, planning
from fairness_core import stereotypes as ster
from ui import common

RESULTS = "plan_results"  # session state: (panel, pilot, inputs) -> Plan or the sentence that refused it
TITLE = "Plan: how many {units} would a question need?"
HOW_TO_READ = (
    "The pilot is the run above. The planner draws many new studies from the pilot's own {units} (with "
    "replacement, each kept whole), makes the groups equal, then sets one group apart by the effect you typed, "
    "and runs on each study the test this page uses (α = 0.05). The *power* is the share of those studies in "
    "which the test detects the effect; the curve shows it for each simulated size (dots), and the answer is the "
    "size where it reaches your target (the dashed line). A pilot is a small sample too: a second pilot of the "
    "same size could give a plan a third smaller or larger, so round up, and plan from the largest pilot you have.")


#: the power axis's title, one line each (the chart is 260 px tall)
POWER_TITLE = ("power: the chance a study", "of this size detects it")


def _chart(plan: Any) -> alt.LayerChart:
    curve = pd.DataFrame(plan.curve, columns=["units", "power"])
    x = alt.X("units:Q", title=f"{plan.unit}s" + (" per group" if "per group" in plan.answer else ""),
              scale=alt.Scale(type="log"))
    line = alt.Chart(curve).mark_line(point=True).encode(
        x=x, y=alt.Y("power:Q", title=list(POWER_TITLE),  # two lines: one line was cut at 260 px (issue 43)
                     scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("units:Q", title=f"{plan.unit}s"), alt.Tooltip("power:Q", format=".2f")])
    target = alt.Chart(pd.DataFrame({"power": [plan.power]})).mark_rule(strokeDash=[4, 4]).encode(y="power:Q")
    layers = [line, target]
    if plan.n_units is not None:
        layers.append(alt.Chart(pd.DataFrame({"units": [plan.n_units]})).mark_rule(color="#D55E00").encode(x="units:Q"))
    return alt.layer(*layers).properties(height=260)


#: how to read a plan whose power is computed exactly (the CrowS-Pairs sign test), not simulated
EXACT_HOW_TO_READ = (
    "The pilot is the run above. The test is exact, so its power needs no simulation: for each number of {units} "
    "the curve gives the chance that the study's own test (α = 0.05) detects the effect you typed, counted out "
    "over every result the study could have; the answer is the size from which it stays at or above your target "
    "(the dashed line). The pilot gives only the share of tied pairs, which the test leaves out.")
UNITS_HOW_TO_READ = (
    "The pilot is the run above. Its score is a mean over {units}, read with a bootstrap over them: the plan takes "
    "the pilot's standard error and lets it shrink as one over the square root of the number of {units} (a normal "
    "approximation); the curve gives the chance that a study of that many {units} tells the score from no "
    "preference at α = 0.05, and the answer is where it reaches your target (the dashed line).")


def show_plan(plan: Any, units: str, reading: str = HOW_TO_READ) -> None:
    """One plan: its sentence, its notes, the power curve, how it was made (`reading`: how to read it)."""
    st.markdown(f"**{common.escape_markdown(plan.answer)}**")
    for note in plan.notes:
        st.caption(common.escape_markdown(note))
    if plan.curve:
        st.altair_chart(_chart(plan), width="stretch")
    if plan.method:  # a pilot that cannot speak to the effect simulated nothing: no "How: ." (issue 43)
        st.caption(common.escape_markdown(f"How: {plan.method}."))
        common.how_to_read(reading.format(units=units))


def plan_panel(key: str, pilot: str, compute: Callable[..., Any], units: str = "prompts", effect: float = 0.05,
               effect_label: str = "Effect to detect", effect_help: str = "", samples: int | None = None,
               choices: dict[str, Sequence[str]] | Callable[[dict[str, str]], dict[str, Sequence[str]]] | None = None,
               unavailable: str = "", questions: dict[str, Sequence[str]] | None = None,
               reading: str = HOW_TO_READ) -> None:
    """The panel: the effect and power (and samples per prompt, and any `choices` — label -> options) in a form,
    `compute(effect, power, samples, **chosen)` run on *Plan*, the answer below (`unavailable`: a sentence instead
    of the form, when there is no pilot). `questions` (label -> options) are asked above the form, so that a
    change redraws it at once: `choices` may then be a function of them (a choice that does not apply to the
    question asked is not shown)."""
    with st.expander(TITLE.format(units=units)):
        if unavailable:
            st.info(common.escape_markdown(unavailable))
            return
        if samples is not None and st.session_state.get(f"{key}_pilot") != pilot:
            # a new pilot starts from its own samples per prompt: a keyed widget keeps the last value it showed, so
            # after a 2-sample run the field still said 1 (issue 43)
            st.session_state[f"{key}_samples"] = int(samples)
        st.session_state[f"{key}_pilot"] = pilot
        asked_first = {label: str(st.selectbox(label, list(options), key=f"{key}_{label}"))
                       for label, options in (questions or {}).items() if options}
        if callable(choices):
            choices = choices(asked_first)
        with st.form(f"{key}_form", border=False):
            picked: dict[str, str] = dict(asked_first)
            for label, options in (choices or {}).items():
                if options:
                    picked[label] = st.selectbox(label, list(options), key=f"{key}_{label}")
            columns = st.columns(3 if samples is not None else 2)
            chosen_effect = columns[0].number_input(effect_label, min_value=0.0, value=float(effect), step=0.01,
                                                    format="%.3f", key=f"{key}_effect", help=effect_help)
            power = columns[1].number_input("Power", min_value=0.5, max_value=0.99, value=0.8, step=0.05,
                                            key=f"{key}_power",
                                            help="The share of studies of the planned size that should detect "
                                                 "the effect (0.8 is the usual choice).")
            chosen_samples = int(columns[2].number_input(
                "Samples per prompt", min_value=1, max_value=1000, key=f"{key}_samples",
                help="The pilot's by default; the pilot's spread between and within prompts says what another "
                     "number would need.")) if samples is not None else None
            # no tooltip on the button: it opened over the inputs beside it (issue 43); the caption says it
            asked = st.form_submit_button("Plan")
            st.caption("*Plan* simulates a few thousand studies from the pilot (a few seconds).")
        results = st.session_state.setdefault(RESULTS, {})
        wanted = (key, pilot, float(chosen_effect), float(power), chosen_samples, tuple(sorted(picked.items())))
        if asked and wanted not in results:
            try:
                with st.spinner("Simulating studies from this pilot…"):
                    results[wanted] = compute(float(chosen_effect), float(power), chosen_samples, **picked)
            except planning.PlanError as error:
                results[wanted] = str(error)
        found = results.get(wanted)
        if found is None:
            st.caption("Type the smallest effect worth finding and press *Plan*.")
        elif isinstance(found, str):
            st.error(common.escape_markdown(found))
        else:
            show_plan(found, units, reading)


# -- the studies' panels (each page calls one of these in one line) ------------------------------------------
def decoding_plan(outcome: Any, key: str) -> None:
    """Beside the decoding page's disparity headline: plan the disparity of a measure from the result on screen —
    its own run (`planning.result_run`: made by its request, not a run whose rows it reused), or, for a result
    read whole from runs of other requests, its rows under its own design (`planning.plan_result`) — at its samples
    per prompt (the first setting, or one chosen)."""
    if not outcome.run_ids:
        return
    store = common.get_store()
    generation, run_ids = outcome.plan.plan, list(outcome.run_ids)
    run_id = planning.result_run(store, run_ids, generation)
    try:
        settings = (planning.run_arms(store, run_id) if run_id is not None
                    else planning.result_arms(store, generation, run_ids))
    except planning.PlanError as error:
        plan_panel(key, run_id or "", lambda *_: None, unavailable=str(error))
        return

    def compute(effect: float, power: float, samples: int | None, **chosen: str) -> Any:
        if run_id is None:  # read at the page's threshold, as the result on screen is (issue 42 §5)
            return planning.plan_result(store, generation, run_ids, effect, power, samples=samples,
                                        arm=chosen.get("Setting"), thresholds=dict(outcome.plan.request.thresholds))
        return planning.plan_run(store, run_id, effect, power, samples=samples, arm=chosen.get("Setting"))

    plan_panel(key, run_id or _result_key(generation, run_ids), compute, units="prompts", effect=0.05,
               effect_label="Disparity to detect (negative sentiment)",
               effect_help="The mean absolute difference between related groups' negative rates that the study "
                           "should detect, e.g. 0.05 (five percentage points).",
               samples=int(outcome.plan.request.samples), choices={"Setting": settings} if len(settings) > 1 else None)


def imported_plan(run_id: str, samples: int = 1, key: str = "imp_plan") -> None:
    """Below an imported run's disparity: plan the disparity of negative sentiment from that run (its systems are
    the settings to choose from), at its samples per prompt."""
    store = common.get_store()
    try:
        why = planning.cannot_plan(store, run_id)
        settings = [] if why else planning.run_arms(store, run_id)
    except planning.PlanError as error:
        why, settings = str(error), []
    if why:
        plan_panel(key, run_id, lambda *_: None, unavailable=why)
        return

    def compute(effect: float, power: float, samples: int | None, **chosen: str) -> Any:
        return planning.plan_run(store, run_id, effect, power, samples=samples, arm=chosen.get("System"))

    plan_panel(key, run_id, compute, units="prompts", effect=0.05,
               effect_label="Disparity to detect (negative sentiment)",
               effect_help="The mean absolute difference between related groups' negative rates that the study "
                           "should detect, e.g. 0.05 (five percentage points).",
               samples=int(samples), choices={"System": settings} if len(settings) > 1 else None)


def stereotype_plan(run_id: str, key: str = "st_plan", benchmark: str = "crows-pairs") -> None:
    """Below a stereotype benchmark's result: the pairs a preference for the stereotyped sentence needs
    (CrowS-Pairs: the sign test's exact power), or the target terms (StereoSet's SS) or templates (BBQ's bias
    scores) a distance from "no preference" needs (`stereotypes.plan_stored_crows`)."""
    store = common.get_store()

    def compute(effect: float, power: float, samples: int | None, **chosen: str) -> Any:
        try:
            return planning.Plan(**ster.plan_stored_crows(store, run_id, effect, power, chosen.get("Score")))
        except ster.StereotypePlanError as error:  # the panel says a refusal in one sentence
            raise planning.PlanError(str(error)) from None

    if benchmark == "stereoset":
        plan_panel(key, run_id, compute, units="target terms", effect=5.0,
                   effect_label="SS distance from 50 to detect (points)",
                   effect_help="How far from 50 (no preference) the stereotype score SS is, e.g. 5 for SS 55.",
                   reading=UNITS_HOW_TO_READ)
    elif benchmark == "bbq":
        plan_panel(key, run_id, compute, units="templates", effect=0.1,
                   effect_label="Bias score to detect (distance from 0)",
                   effect_help="How far from 0 (no bias) the bias score is, e.g. 0.1.",
                   choices={"Score": ["bias_disambig", "bias_ambig"]}, reading=UNITS_HOW_TO_READ)
    else:
        plan_panel(key, run_id, compute, units="pairs", effect=0.05,
                   effect_label="Preference to detect (share of pairs above 50%)",
                   effect_help="How far above one half the share of pairs preferring the stereotyped sentence is, "
                               "e.g. 0.05 for pct_stereotype 55%.", reading=EXACT_HOW_TO_READ)


def _result_key(generation: Any, run_ids: Sequence[str]) -> str:
    """The pilot's key for a result with no run of its own: what decides its rows (its request) and the runs that
    stored them, so another move is another pilot (its answers and samples field are not carried over)."""
    request = generation.request
    parts = [request.prompts.content_hash(), str(request.samples), ",".join(map(str, request.seeds)),
             str(request.max_new_tokens), ",".join(sorted(generation.system_keys)),
             ",".join(sorted(generation.scorer_hashes)), ",".join(run_ids)]
    return "result:" + "|".join(parts)


def compare_plan(run_ids: Sequence[str], key: str = "cmp_plan") -> None:
    """Beside Compare's headline: plan the paired difference between the first run and the second (or, for one
    sweep, between its first setting and the next)."""
    if not run_ids:
        return
    store = common.get_store()
    first, second = run_ids[0], run_ids[1] if len(run_ids) > 1 else run_ids[0]

    def compute(effect: float, power: float, samples: int | None, **_: str) -> Any:
        return planning.plan_run(store, first, effect, power, against=second, samples=samples)

    plan_panel(key, f"{first}|{second}", compute, units="prompts or pairs", effect=0.05,
               effect_label="Difference to detect",
               effect_help="Between the two sides, in the measure's units: a rate (0.05 = five points) for decoding "
                           "runs, points of Eq. 1's 0-100 scale for metric-bias runs.")


def metric_bias_plan(runs: Sequence[Any], key: str = "mb_plan") -> None:
    """Beside the metric-bias table: plan a metric's stereotypical difference, or the difference in Bias between two
    of the metrics scored here (the same pairs). The metrics a plan can answer for come first (the default was
    BLEU, constant 0 on the demo pairs, so the first press was refused); "Against" is asked only for a difference."""
    scored = [r for r in runs if not getattr(r, "partial", False)]
    if not scored:
        return
    store = common.get_store()
    names = {r.label: r.run_id for r in scored}
    speaks = {label: _cannot_plan(str(store.path), run_id) is None for label, run_id in names.items()}
    labels = sorted(names, key=lambda label: not speaks[label])  # stable: the page's order within each part
    difference = "the difference in Bias between two metrics"
    questions = ["a metric's stereotypical difference"] + ([difference] if len(labels) > 1 else [])

    def compute(effect: float, power: float, samples: int | None, **chosen: str) -> Any:
        first = names[chosen["Metric"]]
        if chosen["Question"] == difference:
            other = names.get(chosen.get("Against", ""), "")
            if not other or other == first:
                raise planning.PlanError("choose a second metric to set against the first")
            return planning.plan_run(store, first, effect, power, against=other)
        return planning.plan_run(store, first, effect, power)

    def choices(asked: dict[str, str]) -> dict[str, Sequence[str]]:
        against = {"Against": labels[1:] + labels[:1]} if asked.get("Question") == difference else {}
        return {"Metric": labels, **against}

    plan_panel(key, ",".join(names.values()), compute, units="pairs", effect=2.0,
               effect_label="Difference to detect (points on the 0-100 scale)",
               effect_help="A stereotypical difference (Appendix E), or a difference between two metrics' Bias "
                           "(Eq. 2), both in points of the min-max scale (Eq. 1).",
               questions={"Question": questions}, choices=choices)


@st.cache_data(show_spinner=False, max_entries=256)
def _cannot_plan(store_path: str, run_id: str) -> str | None:
    """`planning.cannot_plan` of a complete run of the session's store (`store_path` keys the cache: a complete run
    never changes, so its answer is kept)."""
    return planning.cannot_plan(common.get_store(), run_id)


def audit_plan(result: Any, key: str = "au_plan") -> None:
    """Beside the judge audit's headline: plan a term's shift (or FPED) from the audit on screen."""
    measures = ["shift", *(["fped"] if "fpr" not in result.table.refused else [])]
    terms = ["(every term, averaged)", *sorted(set(result.scores["term"]))]

    def compute(effect: float, power: float, samples: int | None, **chosen: str) -> Any:
        term = chosen.get("Term")
        return audit.plan_audit(result, effect, power, chosen.get("Measure", "shift"),
                                None if term is None or term.startswith("(") else term)

    plan_panel(key, result.run_id, compute, units="patterns", effect=0.05,
               effect_label="Shift (or FPED) to detect",
               effect_help="A term's shift in the judge's own units (0.05 of a toxicity probability), or an FPED "
                           "(a sum of false-positive-rate differences).",
               choices={"Measure": measures, "Term": terms})


def cairo_plan(run_ids: Sequence[str] | None, key: str = "cairo_plan") -> None:
    """Beside CAIRO's bias table: plan the prompts per subgroup one system's Eq. 1 needs (a run computed here)."""
    if not run_ids:
        plan_panel(key, "", lambda *_: None, units="prompts",
                   unavailable="The planner needs each prompt's scores: compute a bias table here (section 2, "
                               "'Compute one here'; its runs are stored) and plan from it. The shipped and uploaded "
                               "tables hold one bias per system and prompt set, nothing to resample.")
        return
    store = common.get_store()
    run_id = run_ids[0]
    try:
        systems = planning.run_arms(store, run_id)
    except planning.PlanError as error:
        plan_panel(key, run_id, lambda *_: None, unavailable=str(error))
        return

    def compute(effect: float, power: float, samples: int | None, **chosen: str) -> Any:
        return planning.plan_run(store, run_id, effect, power, arm=chosen.get("System"))

    plan_panel(key, run_id, compute, units="prompts", effect=0.05, effect_label="Eq. 1 bias to detect",
               effect_help="An Eq. 1 bias of one system on one prompt set, in the score's units (e.g. 0.05 of a "
                           "toxicity probability), detected when the page's interval excludes 0.",
               choices={"System": systems} if len(systems) > 1 else None)
