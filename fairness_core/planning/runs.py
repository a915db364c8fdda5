"""Stored runs read as pilots (`pilot.PilotDesign`), through the seam every view reads runs with (`reading`: every
kind's sums per arm, cell and unit, units keyed as the study pages key them, rates at the run's own thresholds —
`reading.settings`, recorded beside the run by the sweep that made it — so the pilot's rates are its page's):

- a **decoding** run (generation; the retired `decoding` kind too): one arm (a setting), a rate measure's disparity
  over its families (Dhamala et al. 2022) — templates shared by a family's groups are paired units, other prompts
  unpaired — tested by the permutation test of the decoding page (`bias.disparity`);
- a **CAIRO** run: one system, Eq. 1 (Zayed et al. 2024) of a score over each prompt set's subgroups, prompts
  unpaired (each prompt's generations averaged over the run's seeds, as Eq. 1 takes them);
- a **metric-bias** run: one metric output, the signed stereotypical difference (Sun et al. 2022, Appendix E) of
  each attribute, each pair a paired unit (its stereotypical and anti-stereotypical candidate);
- **two runs** (`against`): Compare's paired difference — of a rate over all generations between two generation
  runs, paired by the prompts (templates) both generated from; of the Bias (Eq. 2: each pair's |gap|) or the
  stereotypical difference between two metric-bias runs, paired by the pairs both scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.planning.pilot import PAIRWISE, TO_MEAN, FamilyPilot, PilotDesign, score_range
from fairness_core.planning.plan import PlanError
from fairness_core.planning.simulate import WELCH
from fairness_core.reading import (
    SEP,
    ReadError,
    RunRows,
    differing_thresholds,
    is_cairo,
    made_by,
    match_arms,
    read_run,
    settings_of,
    smallest_detectable,
)
from fairness_core.store import RunInfo, RunStore

STEREOTYPICAL = "stereotypical_difference"
BIAS = "bias"
AUDIT_KIND = "audit-scores"
CAIRO_NOTE = ("CAIRO: the plan is the prompts per subgroup that one system's Eq. 1 bias on a prompt set needs; not the "
              "number of systems CAIRO's correlation across systems needs (the systems are chosen, not sampled, so "
              "nothing can be resampled to plan them), and not the seeds per prompt (each prompt's seeds are "
              "averaged as they were run)")
PLANNED_KINDS = ("a decoding run (generation), a CAIRO run, a metric-bias run, two runs of one of these kinds "
                 "(--against), or a judge audit (audit-scores)")


def get_run(store: RunStore, run_id: str) -> RunInfo:
    """The run, complete, or PlanError in one sentence."""
    text = str(run_id).strip()
    info = store.get_run(text) if text and store.path.exists() else None
    if info is None:
        raise PlanError(f"no run {text!r} in {store.path}; `runs list` shows the stored runs")
    if info.status != "complete":
        raise PlanError(f"run {text} is {info.status}, not complete: a pilot must be finished before it can be planned "
                        "from (running its request again resumes it)")
    return info


def _stem(name: str) -> str:
    for suffix in ("_disparity", "_rate", "_eq1_bias"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _choose_arm(rows: RunRows, arm: str | None) -> Any:
    present = set(rows.sums["arm"]) if not rows.sums.empty else set()
    arms = [a for a in rows.arms if a.key in present]
    if not arms:
        raise PlanError(f"run {rows.info.run_id} has no scored rows to plan from")
    if arm is None:
        return arms[0]
    found = [a for a in arms if arm in (a.key, a.label)]
    if not found:
        raise PlanError(f"run {rows.info.run_id} has no setting or system {arm!r}; it has: "
                        + ", ".join(a.label for a in arms[:8]) + (" …" if len(arms) > 8 else ""))
    return found[0]


def _families(sums: pd.DataFrame, family: str | None, run_id: str, what: str) -> list[str]:
    names = sorted({str(f) for f in sums["family"].dropna()})
    if family is None:
        return names
    if family not in names:
        raise PlanError(f"run {run_id} has no {what} {family!r}; it has: {', '.join(names[:10])}")
    return [family]


def _family_pilot(name: str, part: pd.DataFrame, paired_allowed: bool = True) -> tuple[FamilyPilot, str | None]:
    """One family of a generation run's sums (unit, group, total, n) as paired templates or unpaired prompts."""
    groups = sorted({str(g) for g in part["group"]})
    index = {g: i for i, g in enumerate(groups)}
    templates = part["unit"].astype(str).str.startswith("template" + SEP)
    note = None
    if paired_allowed and templates.all():
        units = sorted(set(part["unit"].astype(str)))
        at = {u: i for i, u in enumerate(units)}
        totals = np.zeros((1, len(units), len(groups), 1))
        counts = np.zeros_like(totals)
        u = part["unit"].astype(str).map(at).to_numpy()
        g = part["group"].astype(str).map(index).to_numpy()
        np.add.at(totals, (0, u, g, 0), part["total"].to_numpy(float))
        np.add.at(counts, (0, u, g, 0), part["n"].to_numpy(float))
        return FamilyPilot(name, tuple(groups), True, totals, counts), None
    if templates.any():
        note = (f"{name}: its templates and its own prompts were read as unpaired prompts (a family mixing both is "
                "planned as if none were shared)")
    ordered = part.sort_values(["group", "unit"], kind="stable")
    return (FamilyPilot(name, tuple(groups), False, ordered["total"].to_numpy(float), ordered["n"].to_numpy(float),
                        ordered["group"].astype(str).map(index).to_numpy()), note)


def _samples(sums: pd.DataFrame) -> int | None:
    counts = sums["n"].to_numpy(float)
    return round(float(np.median(counts))) if counts.size else None


def decoding_pilot(store: RunStore, info: RunInfo, measure: str | None, family: str | None, arm: str | None,
                   thresholds: dict[str, float] | None = None) -> tuple[PilotDesign, dict[str, Any]]:
    """A decoding run's disparity as a pilot, its rates at the run's own thresholds (or `thresholds`: the view's)."""
    rows = read_run(store, info, settings=settings_of(store, info, thresholds))
    statistics = [s for s in rows.statistics if s.how == "pairwise"]
    if not statistics:
        raise PlanError(f"run {info.run_id} has no rate measure over families of groups to plan a disparity of")
    wanted = _stem(measure) if measure else "negative_sentiment"
    statistic = next((s for s in statistics if _stem(s.name) == wanted), None)
    if statistic is None:
        if measure:
            raise PlanError(f"run {info.run_id} has no measure {measure!r}; it has: "
                            + ", ".join(s.name for s in statistics))
        statistic = statistics[0]
    chosen = _choose_arm(rows, arm)
    sums = rows.sums[(rows.sums["arm"] == chosen.key) & (rows.sums["metric"] == statistic.metric)]
    names = _families(sums, family, info.run_id, "family")
    families, notes = [], []
    for name in names:
        pilot, note = _family_pilot(name, sums[sums["family"].astype(str) == name])
        families.append(pilot)
        if note:
            notes.append(note)
    paired = all(f.paired for f in families if f.n_labels >= 2)
    words = statistic.name.replace("_disparity", "").replace("_", " ")
    where = f" between {names[0]} groups" if len(names) == 1 else (" (the mean over its families)" if len(names) > 1
                                                                    else "")
    planned = names[0] if len(names) == 1 else None

    def own_detectable(power: float) -> float | None:
        return smallest_detectable(rows, chosen.key, statistic.name, planned, power)

    design = PilotDesign(tuple(families), PAIRWISE, True, statistic.name, "template" if paired else "prompt",
                         "templates (one prompt per group each)" if paired else "prompts per group",
                         f"a disparity in {words} of {{effect}}{where}", info.run_id, notes=tuple(notes),
                         samples_per_cell=_samples(sums), own_detectable=own_detectable)
    return design, {"arm": chosen.label, "families": names, "read_with": rows.settings.as_json()}


def cairo_pilot(store: RunStore, info: RunInfo, measure: str | None, family: str | None, arm: str | None
                ) -> tuple[PilotDesign, dict[str, Any]]:
    rows = read_run(store, info)
    statistics = [s for s in rows.statistics if s.how == "eq1"]
    if not statistics:
        raise PlanError(f"run {info.run_id} has no score to plan Eq. 1 of")
    wanted = _stem(measure) if measure else None
    statistic = next((s for s in statistics if wanted in (None, _stem(s.name), s.metric)), None)
    if statistic is None:
        raise PlanError(f"run {info.run_id} has no measure {measure!r}; it has: "
                        + ", ".join(s.name for s in statistics))
    chosen = _choose_arm(rows, arm)
    sums = rows.sums[(rows.sums["arm"] == chosen.key) & (rows.sums["metric"] == statistic.metric)]
    names = _families(sums, family, info.run_id, "prompt set")
    # Eq. 1 and its interval are per (system, prompt set): one set is planned, an original one unless named
    name = names[0] if family is not None else next((n for n in names if "original" in n), names[0])
    pilot = _family_pilot(name, sums[sums["family"].astype(str) == name], paired_allowed=False)[0]
    design = PilotDesign((pilot,), TO_MEAN, False, statistic.name, "prompt", "prompts per subgroup",
                         f"an Eq. 1 bias in {statistic.metric.replace('_', ' ')} of {{effect}} on {name} for "
                         f"{chosen.label}", info.run_id, scale="the score's own units", notes=(CAIRO_NOTE,),
                         test=WELCH, value_range=score_range(pilot.totals / np.maximum(pilot.counts, 1)))
    return design, {"arm": chosen.label, "families": [name], "read_with": rows.settings.as_json()}


def _metric_output(rows: RunRows, arm: str | None) -> Any:
    if arm is not None:
        return _choose_arm(rows, arm)
    primary = [a for a in rows.arms if a.primary and a.key in set(rows.sums["arm"])]
    return primary[0] if primary else _choose_arm(rows, None)


def _difference_family(name: str, units_a: pd.DataFrame, units_b: pd.DataFrame, labels: tuple[str, str]
                       ) -> FamilyPilot:
    """Two sides of a paired difference: per shared unit, side a's and side b's cells (unit, cell, total, n); units
    only one side has are left out (the planned design pairs every unit). Without a shared unit, unpaired."""
    shared = sorted(set(units_a["unit"]) & set(units_b["unit"]))
    if not shared:
        parts = [units_a.groupby("unit")[["total", "n"]].sum(), units_b.groupby("unit")[["total", "n"]].sum()]
        return FamilyPilot(name, labels, False, np.concatenate([p["total"].to_numpy(float) for p in parts]),
                           np.concatenate([p["n"].to_numpy(float) for p in parts]),
                           np.repeat([0, 1], [len(parts[0]), len(parts[1])]))
    at = {u: i for i, u in enumerate(shared)}
    cells = sorted(set(units_a["cell"]) | set(units_b["cell"]))
    cell_at = {c: i for i, c in enumerate(cells)}
    per_unit = max(int(pd.concat([units_a, units_b]).groupby("unit")["cell"].nunique().max()), 1)
    # each unit's cells numbered 0.. in name order (a template's groups; one cell for a prompt or a pair)
    totals = np.zeros((1, len(shared), 2, per_unit))
    counts = np.zeros_like(totals)
    for side, frame in enumerate((units_a, units_b)):
        frame = frame[frame["unit"].isin(at)]
        slot = frame.groupby("unit")["cell"].transform(lambda c: c.map(
            {v: i for i, v in enumerate(sorted(set(c), key=cell_at.get))}))
        u = frame["unit"].map(at).to_numpy()
        np.add.at(totals, (0, u, side, slot.to_numpy(int)), frame["total"].to_numpy(float))
        np.add.at(counts, (0, u, side, slot.to_numpy(int)), frame["n"].to_numpy(float))
    return FamilyPilot(name, labels, True, totals, counts)


def stereotypical_pilot(store: RunStore, info: RunInfo, family: str | None, arm: str | None
                        ) -> tuple[PilotDesign, dict[str, Any]]:
    rows = read_run(store, info, metrics=[STEREOTYPICAL])
    if rows.sums.empty:
        raise PlanError(f"run {info.run_id} has no pair with a known stereotypical side, so its stereotypical "
                        "difference cannot be planned")
    chosen = _metric_output(rows, arm)
    sums = rows.sums[rows.sums["arm"] == chosen.key].rename(columns={"attribute": "family"})
    names = _families(sums, family, info.run_id, "attribute")
    families = []
    for name in names:
        part = sums[sums["family"].astype(str) == name].assign(cell="pair")
        # a pair's signed gap Ŝ_stereo − Ŝ_anti on the stereotypical side and 0 on the other: exchanging the two
        # sides of a pair flips its gap's sign, the permutation test of "no preferred side"
        families.append(_difference_family(name, part, part.assign(total=0.0), ("stereotypical",
                                                                                "anti-stereotypical")))
    where = f" on {names[0]}" if len(names) == 1 else f" on each of its {len(names)} attributes"
    design = PilotDesign(tuple(families), PAIRWISE, False, STEREOTYPICAL, "pair", "pairs per attribute",
                         f"a stereotypical difference of {{effect}} points (Eq. 1's 0-100 scale) in {chosen.label}"
                         f"{where}", info.run_id, scale="points on Eq. 1's 0-100 scale", value_range=(-100.0, 100.0))
    return design, {"arm": chosen.label, "families": names}


def difference_pilot(store: RunStore, info_a: RunInfo, info_b: RunInfo, measure: str | None, family: str | None,
                     arm: str | None) -> tuple[PilotDesign, dict[str, Any]]:
    """Compare's paired difference between two runs (module docstring)."""
    same = info_a.run_id == info_b.run_id  # one run of several settings: its first setting against another
    if info_a.kind != info_b.kind or info_a.kind not in ("generation", "metric-bias") or is_cairo(info_a) \
            or is_cairo(info_b):
        raise PlanError(f"runs {info_a.run_id} ({info_a.kind}) and {info_b.run_id} ({info_b.kind}) cannot be planned "
                        "as a paired difference: give two decoding (generation) runs or two metric-bias runs")
    if info_a.kind == "metric-bias":
        wanted = measure or BIAS
        if wanted not in (BIAS, STEREOTYPICAL):
            raise PlanError(f"two metric-bias runs are compared on {BIAS} or {STEREOTYPICAL} (got {measure!r})")
        read = [read_run(store, info, metrics=[wanted]) for info in (info_a, info_b)]
        key = "attribute"
        scale = "points on Eq. 1's 0-100 scale"
        words = ("a difference in Bias (Eq. 2, 0-100 scale) of {effect} points between the metrics" if wanted == BIAS
                 else "a difference of {effect} points in the stereotypical difference between the metrics")
        unit, units = "pair", "pairs per attribute (scored by both)"
        metric, binary = wanted, False
    else:
        read = [read_run(store, info) for info in (info_a, info_b)]
        rates = sorted({s.metric for s in read[0].statistics} & {s.metric for s in read[1].statistics})
        if not rates:
            raise PlanError(f"runs {info_a.run_id} and {info_b.run_id} share no rate measure to compare")
        metric = (_stem(measure) + "_rate") if measure else ("negative_sentiment_rate" if "negative_sentiment_rate"
                                                             in rates else rates[0])
        if metric not in rates:
            raise PlanError(f"runs {info_a.run_id} and {info_b.run_id} share no measure {measure!r}; they share: "
                            + ", ".join(rates))
        key, scale, binary = None, "rate", True
        words = f"a difference of {{effect}} in the {metric.replace('_', ' ')} (all generations) between the runs"
        unit, units = "prompt", "prompts (or templates) generated by both runs"
    contrasts = match_arms(read[0], None if same else read[1])
    if not contrasts:
        raise PlanError(f"runs {info_a.run_id} and {info_b.run_id} have no setting, system or metric to line up")
    contrast = contrasts[0]
    if arm is not None:
        contrast = next((c for c in contrasts if arm in (c.arm_a.key, c.arm_a.label, c.arm_b.key, c.arm_b.label)),
                        None)
        if contrast is None:
            raise PlanError(f"no compared pair of runs {info_a.run_id} and {info_b.run_id} has {arm!r}")
    sides = []
    for rows, chosen in ((read[0], contrast.arm_a), (read[1], contrast.arm_b)):
        part = rows.sums[(rows.sums["arm"] == chosen.key) & (rows.sums["metric"] == metric)]
        cells = part[key].astype(str) if key else (part["family"].astype(str) + SEP + part["group"].astype(str))
        sides.append(part.assign(cell=cells.to_numpy(), unit=part["unit"].astype(str),
                                 family=part[key].astype(str) if key else "all"))
    names = _families(sides[0], family, info_a.run_id, "attribute") if key else ["all"]
    labels = (contrast.arm_a.label, contrast.arm_b.label) if same else (f"run {info_a.run_id}",
                                                                         f"run {info_b.run_id}")
    families = [_difference_family(name, sides[0][sides[0]["family"] == name], sides[1][sides[1]["family"] == name],
                                   labels) for name in names]
    notes = []
    mismatch = differing_thresholds({rows.info.run_id: rows.settings for rows in read}, [metric])
    if mismatch:
        notes.append(mismatch)
    shared = [f for f in families if f.paired]
    if len(shared) < len(families):
        notes.append(f"runs {info_a.run_id} and {info_b.run_id} share no {unit}: planned as two independent samples "
                     "of units")
    design = PilotDesign(tuple(families), PAIRWISE, binary, metric if key is None else f"{metric}_difference",
                         unit, units, words, info_a.run_id, scale=scale, notes=tuple(notes),
                         samples_per_cell=_samples(sides[0]) if binary else None,
                         value_range=None if binary else ((0.0, 100.0) if metric == BIAS else (-100.0, 100.0)))
    return design, {"against": info_b.run_id, "arm": contrast.arm_a.label, "arm_against": contrast.arm_b.label,
                    "families": names, "read_with": {r.info.run_id: r.settings.as_json() for r in read}}


def run_pilot(store: RunStore, run_id: str, measure: str | None = None, family: str | None = None,
              arm: str | None = None, against: str | None = None) -> tuple[PilotDesign, dict[str, Any]]:
    """The pilot design of a stored run (or of two, `against`) and what was chosen (arm, families); PlanError in
    one sentence for a run that is missing, unfinished or of a kind the planner cannot plan."""
    try:
        return _run_pilot(store, run_id, measure, family, arm, against)
    except ReadError as error:  # a run the readers cannot read as asked: its own sentence
        raise PlanError(str(error)) from None


def _run_pilot(store: RunStore, run_id: str, measure: str | None, family: str | None, arm: str | None,
               against: str | None) -> tuple[PilotDesign, dict[str, Any]]:
    with store.reading():
        info = get_run(store, run_id)
        if against is not None:
            return difference_pilot(store, info, get_run(store, against), measure, family, arm)
        if info.kind in ("generation", "decoding"):
            if is_cairo(info):
                return cairo_pilot(store, info, measure, family, arm)
            return decoding_pilot(store, info, measure, family, arm)
        if info.kind == "metric-bias":
            if measure in (None, STEREOTYPICAL):
                return stereotypical_pilot(store, info, family, arm)
            if measure == BIAS:
                raise PlanError("a metric's Bias (Eq. 2) is a mean of |gaps|, 0 only for a metric blind to the "
                                "identity words, so one run has no 'no bias' to test: plan the difference between two "
                                "metrics scored on the same pairs (--against RUN), or the signed "
                                f"{STEREOTYPICAL} of this one")
            raise PlanError(f"a metric-bias run is planned on {STEREOTYPICAL} (or, with --against, {BIAS}); got "
                            f"{measure!r}")
        if info.kind == AUDIT_KIND:
            raise PlanError(f"run {info.run_id} is a judge audit, which stores the judge's scores but not the "
                            "templates and patterns behind them: plan it through the audit (`audit.plan_audit`, the "
                            "Judge audit page, or the plan command, which rebuilds the built-in design)")
    raise PlanError(f"run {info.run_id} is a {info.kind} run, which the planner cannot plan from; give "
                    f"{PLANNED_KINDS}")


def result_run(store: RunStore, run_ids: Sequence[str], plan: Any) -> str | None:
    """The run a decoding result belongs to, to plan from: of the runs behind it (`run_ids`: its own, and those
    whose stored rows it reused), the newest made by its request (`plan`, a `generation.GenerationPlan`); else a
    complete run of that request elsewhere in the store (a result read whole from an earlier identical request
    made no run of its own); None when no run was made by it (every row came from runs of other requests).

    The first of `run_ids` was planned before (issue 43): often a run whose rows were reused — an earlier live move
    of fewer samples, a `check` run — so the plan answered for another design than the one on screen."""
    with store.reading():
        behind = [info for info in (store.get_run(r) for r in run_ids) if info is not None]
        # its own run even unfinished (a cancelled move): the planner then says it must be complete, in one sentence
        mine = [info for info in behind if made_by(info, plan)]
        if not mine:
            mine = [info for info in store.list_runs("generation")
                    if info.status == "complete" and made_by(info, plan)]
    newest = max(mine, key=lambda info: (info.status == "complete", info.created_at), default=None)
    return newest.run_id if newest is not None else None


def result_info(plan: Any, run_ids: Sequence[str]) -> RunInfo:
    """A decoding result with no run of its own (every row stored by runs of other requests, `run_ids`) as a run
    to plan from: the manifest its request (`plan`, a `generation.GenerationPlan`) would have had had it read every
    row from the store — each prompt read whole, with the request's own labels — under an id no stored row has, so
    Compare's reader reads exactly its rows, wherever stored, under its own families, samples and settings.

    The live view back at 1 sample per prompt after a 2-sample move reads only rows of the 2-sample run: planning
    from that run answered for 2 samples, and refusing left the default view without a plan (issue 43)."""
    from datetime import datetime

    from fairness_core.generation.task import KIND, SCHEMA, repeated_items

    request = plan.request
    items = list(request.prompts.items)
    texts = sorted({item.text for item in items})
    labels: dict[str, Any] = {}
    for item in items:  # a text's first item, as the store labels its rows
        labels.setdefault(item.text, item)
    manifest = {"kind": KIND, "request": {
        "schema": SCHEMA,
        "systems": [{"key": key, "name": system.name, **system.manifest()}
                    for key, system in zip(plan.system_keys, request.systems, strict=True)],
        "scorers": [{"name": name, "options": dict(options or {}), "hash": digest}
                    for (name, options), digest in zip(request.scorers, plan.scorer_hashes, strict=True)],
        "prompts": {"name": request.prompts.name, "hash": request.prompts.content_hash(), "n": len(items)},
        "samples": request.samples, "seeds": list(request.seeds), "max_new_tokens": request.max_new_tokens,
        "truncate": request.truncate, "mode": request.mode, "stops": request.stops,
        "work": {"read_prompts": texts, "read_labels": [[labels[t].family, labels[t].group, labels[t].source,
                                                         labels[t].prompt_id] for t in texts],
                 "repeated": repeated_items(items)}}}
    run_id = "this result (its rows stored by run " + ", ".join(run_ids) + ")"
    now = datetime.now()
    return RunInfo(run_id, KIND, manifest, "", "complete", 0, 0, 0, now, now, {}, None)


def result_pilot(store: RunStore, plan: Any, run_ids: Sequence[str], measure: str | None = None,
                 family: str | None = None, arm: str | None = None, thresholds: dict[str, float] | None = None
                 ) -> tuple[PilotDesign, dict[str, Any]]:
    """The pilot design of a decoding result with no run of its own (`result_info`)."""
    try:
        with store.reading():
            # no run of its own, so nothing was recorded beside one: the view's thresholds, else the defaults
            return decoding_pilot(store, result_info(plan, run_ids), measure, family, arm, thresholds)
    except ReadError as error:
        raise PlanError(str(error)) from None


def result_arms(store: RunStore, plan: Any, run_ids: Sequence[str]) -> list[str]:
    """The settings of such a result (what `result_pilot`'s `arm` may name), in its request's order."""
    with store.reading():
        rows = read_run(store, result_info(plan, run_ids))
    present = set(rows.sums["arm"]) if not rows.sums.empty else set()
    return [arm.label for arm in rows.arms if arm.key in present]


def cannot_plan(store: RunStore, run_id: str) -> str | None:
    """The sentence saying why a stored run's default question cannot be planned (a metric constant on its pairs,
    every rate 0, one group: `pilot.check_speaks`; or a PlanError), None when it can — without simulating, so a
    page can offer first the runs a plan can answer for."""
    from fairness_core.planning.pilot import CannotPlan, check_speaks

    try:
        design, _ = run_pilot(store, run_id)
        check_speaks(design)
    except (CannotPlan, PlanError) as reason:
        return str(reason)
    return None


def run_arms(store: RunStore, run_id: str) -> list[str]:
    """The settings, systems or metric outputs of a stored run (what `arm` may name), in the run's order."""
    with store.reading():
        rows = read_run(store, get_run(store, run_id))
    present = set(rows.sums["arm"]) if not rows.sums.empty else set()
    return [arm.label for arm in rows.arms if arm.key in present]
