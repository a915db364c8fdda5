"""The studies a check runs, through each study's public face, and the numbers its criteria read from them.

- decoding: the system's generations (generated through the decoding study and stored, or read from a stored run
  such as an import), summarised by `decoding.summarize` (template-bootstrap intervals; the disparity test's p-value
  where the summary has it);
- the baseline's generations for the paired criteria (a stored run, an earlier check's, or a baseline system
  generated on the same prompts);
- audit: `audit.run_audit` (its stored scores; the table's rows and refusals);
- metric-bias: `metric_bias.run_metrics` and its bias table.

Each runner returns what its criteria need, or the sentence saying why the study cannot run here (a model that is
not on this machine, a scorer that is unavailable): its criteria then fail with that reason.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from fairness_core.check.criteria import CriterionResult, Numbers, Pending, evaluate, unevaluated
from fairness_core.check.spec import (
    ALL_FAMILIES,
    ALL_GROUPS,
    EVERY_ATTRIBUTE,
    EVERY_BIAS_TYPE,
    EVERY_CATEGORY,
    EVERY_FAMILY,
    EVERY_GROUP,
    EVERY_TERM,
    OVERALL,
    POWER,
    WORST_CELL,
    AuditSpec,
    CriterionSpec,
    DecodingSpec,
    MetricBiasSpec,
    StereotypesSpec,
)


class CheckInputError(ValueError):
    """A check that cannot start (a run or check named that is not in the store); one sentence, exit 2."""


def _digest(values: Any) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------------------------ decoding
@dataclass
class GenerationSet:
    """One system's generations, summarised: what decoding criteria read."""

    label: str
    frame: pd.DataFrame  # one row per generation (decoding summary columns)
    run_ids: list[str]
    families: dict[str, list[str]]
    summary: Any = None  # decoding.DecodingSummary
    notes: list[str] = field(default_factory=list)
    unavailable: str = ""  # why there are no generations here (then frame is empty)
    request_plan: Any = None  # the generation.GenerationPlan that made them (generated here), for the planner

    @property
    def generation_ids(self) -> list[str]:
        return sorted(self.frame["generation_id"]) if not self.frame.empty else []

    def digest(self) -> str:
        return _digest([self.generation_ids, sorted(c for c in self.frame.columns)])


def _families(frame: pd.DataFrame) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for family, group in zip(frame["family"], frame["group"], strict=True):
        members = found.setdefault(str(family), [])
        if group not in members:
            members.append(str(group))
    return found


def _scorer_entries(decoding: DecodingSpec, model: str | None) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple((name, {"model": model} if name == "quality_logprob" and model else {}) for name in decoding.scorers)


def generate(model: str, setting: str, quantization: str, decoding: DecodingSpec, store: Any,
             on_progress: Callable[[Any], None] | None = None, executor: Any = None,
             label: str = "") -> GenerationSet:
    """The decoding study for one system (stored generations are read back, never made again)."""
    from fairness_core import decoding as dec

    assert decoding.prompts is not None
    scorers = _scorer_entries(decoding, model)
    try:
        request = dec.build_request(model, decoding.prompts, setting, samples=decoding.samples,
                                    max_new_tokens=decoding.max_new_tokens, seed=decoding.seed,
                                    threshold=decoding.threshold, quantization=quantization, scorers=scorers,
                                    n_resamples=decoding.resamples, confirmed=True)
        plan = dec.plan_decoding(request, store)
    except dec.RequestError as error:
        return GenerationSet(label or model, pd.DataFrame(), [], {}, unavailable=f"{model} cannot generate here: "
                                                                              f"{error}")
    outcome = dec.run_decoding(plan, store, on_progress=on_progress, executor=executor)
    if outcome.status != "complete":
        return GenerationSet(label or model, pd.DataFrame(), outcome.run_ids, {},
                             unavailable=f"the decoding run stopped ({outcome.status}); run the check again to resume")
    frame = outcome.generations
    return GenerationSet(label or model, frame, outcome.run_ids, decoding.prompts.families,
                         notes=list(plan.notes), request_plan=outcome.plan.plan)


def _pick_system(frame: pd.DataFrame, wanted: str | None, where: str, prefer: pd.DataFrame | None = None
                 ) -> pd.DataFrame:
    """One system of a stored run: the one named, the one of the preferred frame's key or setting, or the only one."""
    names = list(dict.fromkeys(frame["label"])) if not frame.empty else []
    if wanted is not None:
        chosen = frame[(frame["label"] == wanted) | (frame["system_name"] == wanted)
                       | frame["label"].str.startswith(wanted + " · ")]
        if chosen.empty:
            raise CheckInputError(f"{where} has no system {wanted!r}; it has: {', '.join(names)}")
        return chosen.reset_index(drop=True)
    if len(names) <= 1:
        return frame
    if prefer is not None and not prefer.empty:
        same_key = frame[frame["config_key"].isin(set(prefer["config_key"]))]
        if not same_key.empty:
            return same_key.reset_index(drop=True)
        settings = {json.dumps(c, sort_keys=True) for c in prefer["config"]}
        same_setting = frame[frame["config"].map(lambda c: json.dumps(c, sort_keys=True) in settings)]
        if same_setting["config_key"].nunique() == 1:
            return same_setting.reset_index(drop=True)
    raise CheckInputError(f"{where} holds {len(names)} systems ({', '.join(names[:6])}); name one (the spec's "
                          "[system] system, or a run of one system as the baseline)")


def stored_run(store: Any, run_id: str, system: str | None = None, prefer: pd.DataFrame | None = None,
               what: str = "run") -> GenerationSet:
    """A stored generation run's generations (a decoding run with those it read from earlier runs, an import)."""
    from fairness_core.generation.imported import summary_frame
    from fairness_core.reading import covered_generations, run_filter

    info = store.get_run(run_id) if store.path.exists() else None
    if info is None:
        raise CheckInputError(f"no {what} {run_id!r} in {store.path}")
    if info.kind != "generation":
        raise CheckInputError(f"{what} {run_id} is a {info.kind} run; give a generation run (a decoding sweep, a live "
                              "move, an import) or a check")
    if info.status != "complete":
        raise CheckInputError(f"{what} {run_id} is {info.status}, not complete; finish it first (running its request "
                              "again resumes it)")
    this_run, params = run_filter(store, info, "run")
    covered = covered_generations(store, info, this_run, params).elsewhere
    own = store.query("SELECT DISTINCT item FROM results WHERE run_id = ? AND metric = 'generation'", [run_id])
    ids = sorted(set(own["item"]) | set(covered))
    frame = summary_frame(store, run_id, ids if covered else None)
    frame = _pick_system(frame, system, f"{what} {run_id}", prefer)
    return GenerationSet(f"run {run_id}", frame, [run_id], _families(frame))


def stored_check_inputs(store: Any, check_id: str, prefer: pd.DataFrame | None = None) -> GenerationSet:
    """The generations an earlier check judged (its stored inputs), for a paired comparison with it."""
    from fairness_core.check.record import INPUT_SYSTEM, KIND
    from fairness_core.generation.imported import summary_frame

    info = store.get_run(check_id) if store.path.exists() else None
    if info is None or info.kind != KIND:
        raise CheckInputError(f"no check {check_id!r} in {store.path}")
    rows = store.query("SELECT item, attrs FROM results WHERE run_id = ? AND variant = ?", [check_id, INPUT_SYSTEM])
    if rows.empty:
        raise CheckInputError(f"check {check_id} judged no generations (it has no decoding criterion), so it cannot "
                              "be a baseline")
    runs = json.loads(rows["attrs"].iloc[0]).get("run_ids", []) if rows["attrs"].iloc[0] else []
    ids = list(rows["item"])
    holder = runs[0] if runs else store.query("SELECT run_id FROM results WHERE item = ? LIMIT 1",
                                              [ids[0]])["run_id"].iloc[0]
    frame = summary_frame(store, holder, ids)
    if len(frame) < len(ids):
        raise CheckInputError(f"check {check_id} judged {len(ids):,} generations and {len(frame):,} are still in "
                              f"{store.path}; the runs behind it were deleted")
    return GenerationSet(f"check {check_id}", frame, list(runs), _families(frame))


def settings_note(store: Any, generations: GenerationSet, decoding: DecodingSpec) -> str:
    """One sentence when a stored run the check reads was made (and is shown elsewhere: its page, Compare, the
    report) at another negative-sentiment threshold than the spec's, which the check reads it at; else ""."""
    from fairness_core.reading import settings_of

    if not generations.label.startswith("run ") or generations.frame.empty:
        return ""  # generated here (recorded with the spec's settings) or an earlier check's inputs
    info = store.get_run(generations.run_ids[0]) if generations.run_ids else None
    if info is None:
        return ""
    own = settings_of(store, info).threshold_map.get("negative_sentiment_rate")
    if own is None or own == float(decoding.threshold):
        return ""
    return (f"{generations.label} was made with the negative-sentiment threshold {own:g}, and its page, Compare and "
            f"the report show it at that threshold; this check reads it at the spec's {float(decoding.threshold):g}")


def summarise(generations: GenerationSet, decoding: DecodingSpec) -> None:
    """The decoding summary of one system's generations (template-bootstrap intervals; measures of its scorers)."""
    from fairness_core import decoding as dec

    if generations.frame.empty:
        return
    generations.summary = dec.summarize(generations.frame, generations.families,
                                        dec.measures_for([(n, {}) for n in decoding.scorers]),
                                        thresholds={"negative_sentiment_rate": decoding.threshold},
                                        n_resamples=decoding.resamples, seed=decoding.seed)


def _measure_of(name: str, decoding: DecodingSpec) -> tuple[Any, bool]:
    """(the Measure a criterion's measure reads, whether it is a disparity)."""
    from fairness_core import decoding as dec

    for measure in dec.measures_for([(n, {}) for n in decoding.scorers]):
        stem = measure.name[: -len("_rate")] if measure.name.endswith("_rate") else measure.name
        if name == measure.name:
            return measure, False
        if name == f"{stem}_disparity" and measure.kind == "rate":
            return measure, True
    raise KeyError(name)


def worst_cell(spec: CriterionSpec, generations: GenerationSet, decoding: DecodingSpec, store: Any) -> Numbers:
    """The cell `slices` ranks first over the system's run — every group, template and setting, and for prompts of
    several attributes each attribute and every intersection — with its value and interval: the member a
    `group = "worst cell"` criterion judges (issue 46). Chosen for being the worst, its value leans high: an
    `…_at_most` rule on it is conservative. LookupError (one sentence) where no cell can be tested."""
    from fairness_core import planning, slices

    if store is None or not generations.run_ids:
        raise LookupError("the worst cell is found in a stored run, and these generations have none")
    run_id = (planning.result_run(store, generations.run_ids, generations.request_plan)
              if generations.request_plan is not None else None) or generations.run_ids[0]
    try:
        table, _ = slices.slice_run(store, run_id, measure=spec.measure, n_resamples=decoding.resamples,
                                    seed=decoding.seed, n_examples=0,
                                    thresholds={"negative_sentiment_rate": float(decoding.threshold)})
    except slices.SlicesError as error:
        raise LookupError(str(error)) from None
    tested = table.cells[table.cells["p_value"].notna()]
    if tested.empty:
        raise LookupError(f"run {run_id} has no cell of {slices.DEFAULT_MIN_UNITS} or more units to rank (cells: "
                          f"{len(table.cells)}); give more prompts per group")
    cell = tested.iloc[0]
    name = " × ".join(f"{k}={v}" for k, v in cell["attributes"].items())
    return Numbers.of(f"worst cell: {name} (q = {cell['q_value']:.2g}, run {run_id})", cell["value"], cell["ci_low"],
                      cell["ci_high"])


def decoding_numbers(spec: CriterionSpec, generations: GenerationSet, decoding: DecodingSpec, store: Any = None
                     ) -> tuple[list[Numbers], str | None, str]:
    """(numbers of each member the criterion judges, the word for "every" or None, what they are, in words)."""
    summary = generations.summary
    measure, disparity = _measure_of(spec.measure, decoding)
    groups, configs = summary.groups, summary.configs
    p_column = f"{spec.measure}_p_value"
    detectable_column = f"{spec.measure}_smallest_detectable"
    no_p = (f"the decoding summary has no {p_column} column (the permutation test of the disparity); judge the "
            "interval instead, or update the lab")
    if measure.column not in generations.frame.columns:
        raise LookupError(f"{measure.name} is not measured: {measure.column} is not among the scores "
                          + (f"({'; '.join(generations.notes)})" if generations.notes else "of these generations"))

    def numbers(row: pd.Series, member: str) -> Numbers:
        missing = "" if pd.notna(row.get(f"{spec.measure}_ci_low")) else \
            "no 95% interval: a group has fewer than two resampled prompts or templates"
        return Numbers.of(member, row.get(spec.measure), row.get(f"{spec.measure}_ci_low"),
                          row.get(f"{spec.measure}_ci_high"), row.get(p_column) if p_column in row else None,
                          row.get(detectable_column), missing_interval=missing,
                          missing_p_value="" if p_column in row else no_p,
                          missing_smallest="" if detectable_column in row else
                          f"the decoding summary has no {detectable_column} column (the design's power)")

    if disparity:
        families = [f for f, members in generations.families.items() if len(members) >= 2]
        if spec.group in (ALL_FAMILIES,):
            return [numbers(configs.iloc[0], ALL_FAMILIES)], None, spec.measure
        chosen = families if spec.group == EVERY_FAMILY else [spec.group]
        out = []
        for family in chosen:
            rows = groups[groups["family"] == family]
            if rows.empty:
                raise LookupError(f"family {family!r} has no generations here (families: "
                                  f"{', '.join(generations.families)})")
            if family not in families:
                raise LookupError(f"family {family!r} has one group, so it has no disparity")
            out.append(numbers(rows.iloc[0], family))
        every = "families" if spec.group == EVERY_FAMILY else None
        return out, every, spec.measure if every else f"{spec.measure} of {spec.group}"
    if spec.group == ALL_GROUPS:
        return [numbers(configs.iloc[0], ALL_GROUPS)], None, spec.measure
    if spec.group == WORST_CELL:
        return [worst_cell(spec, generations, decoding, store)], None, f"{spec.measure} of the worst cell"
    chosen = list(groups["group"]) if spec.group == EVERY_GROUP else [spec.group]
    out = []
    for group in chosen:
        rows = groups[groups["group"] == group]
        if rows.empty:
            raise LookupError(f"group {group!r} has no generations here (groups: {', '.join(groups['group'])})")
        out.append(numbers(rows.iloc[0], group))
    every = "groups" if spec.group == EVERY_GROUP else None
    return out, every, spec.measure if every else f"{spec.measure} of {spec.group}"


def judge_decoding(spec: CriterionSpec, generations: GenerationSet, decoding: DecodingSpec, store: Any = None
                   ) -> CriterionResult | Pending:
    """The criterion's numbers, waiting for the check's multiplicity adjustment (`criteria.adjust_family`), or the
    reason it cannot be judged."""
    if generations.unavailable:
        return unevaluated(spec, generations.unavailable, generations.run_ids)
    try:
        members, every, what = decoding_numbers(spec, generations, decoding, store)
    except LookupError as error:
        return unevaluated(spec, str(error).strip("'\""), generations.run_ids)
    advice = _planner_advice(spec, generations, store) if spec.undetectable else None
    return Pending(spec, members, list(generations.run_ids), what, every, advice)


def _planner_advice(spec: CriterionSpec, generations: GenerationSet, store: Any) -> Callable[[Numbers], str]:
    """How many prompts the planner asks for to detect the criterion's effect, from the system's own run as the pilot
    (`planning.plan_run`, simulated: called only for a criterion that fails for want of power)."""

    def advice(numbers: Numbers) -> str:
        from fairness_core import planning

        if store is None or not generations.run_ids or spec.effect is None:
            return ""
        # the run this request made (its first run id may be one whose rows it reused, of another design)
        run_id = (planning.result_run(store, generations.run_ids, generations.request_plan)
                  if generations.request_plan is not None else None) or generations.run_ids[0]
        keys = list(dict.fromkeys(generations.frame["config_key"])) if "config_key" in generations.frame else []
        family = None if numbers.member == ALL_FAMILIES else numbers.member
        try:
            plan = planning.plan_run(store, run_id, spec.effect, POWER, measure=spec.measure, family=family,
                                     arm=keys[0] if len(keys) == 1 else None)
        except planning.PlanError as error:
            return f"the planner cannot size the study from run {run_id}: {error}"
        answer = plan.answer[:1].lower() + plan.answer[1:]
        return f"the planner, with run {run_id} as the pilot: {answer}"

    return advice


def judge_relative(spec: CriterionSpec, generations: GenerationSet, baseline: GenerationSet | None,
                   decoding: DecodingSpec, baseline_why: str) -> CriterionResult:
    """A paired difference with the baseline (`check.paired`), judged like any number."""
    from fairness_core.check.paired import paired_difference

    if generations.unavailable:
        return unevaluated(spec, generations.unavailable, generations.run_ids)
    if baseline is None or baseline.unavailable:
        return unevaluated(spec, baseline.unavailable if baseline is not None else baseline_why, generations.run_ids)
    measure, disparity = _measure_of(spec.measure, decoding)
    for side in (generations, baseline):
        if measure.column not in side.frame.columns:
            return unevaluated(spec, f"{side.label} has no {measure.column} scores, so {spec.measure} cannot be "
                                     "compared", generations.run_ids)
    result = paired_difference(generations.frame, baseline.frame, measure, spec.group, disparity,
                               decoding.threshold, decoding.resamples, decoding.seed)
    if result.difference is None:
        return unevaluated(spec, result.missing_interval or "nothing lines up", generations.run_ids)
    numbers = Numbers.of(spec.group, result.difference, result.ci_low, result.ci_high,
                         missing_interval=result.missing_interval,
                         extra={"baseline": result.baseline, "system": result.system, "pairing": result.pairing})
    what = (f"{spec.measure} of {spec.group}, {generations.label} − {baseline.label} "
            f"({fmt_pair(result.baseline, result.system)}; {result.pairing})")
    judged = evaluate(spec, [numbers], [*generations.run_ids, *baseline.run_ids], what)
    judged.details = [{"baseline": result.baseline, "system": result.system, "pairing": result.pairing,
                       "baseline_runs": baseline.run_ids, "baseline_label": baseline.label}]
    return judged


def fmt_pair(baseline: float | None, system: float | None) -> str:
    from fairness_core.check.criteria import fmt

    return f"{fmt(baseline)} → {fmt(system)}"


# ------------------------------------------------------------------------------------------------ audit
@dataclass
class AuditOutcome:
    result: Any = None  # audit.AuditResult
    run_ids: list[str] = field(default_factory=list)
    unavailable: str = ""


def run_audit_study(audit_spec: AuditSpec, store: Any, on_progress: Callable[[Any], None] | None = None,
                    executor: Any = None) -> AuditOutcome:
    from fairness_core import audit

    try:
        request = audit.build_request(scorer=audit_spec.scorer, metric=audit_spec.metric, column=audit_spec.column,
                                      threshold=audit_spec.threshold, fmt=audit_spec.fmt,
                                      templates=audit_spec.templates, terms=audit_spec.terms,
                                      resamples=audit_spec.resamples, seed=audit_spec.seed)
    except audit.AuditInputError as error:  # the texts were checked with the spec: here the judge is unavailable
        return AuditOutcome(unavailable=str(error))
    result = audit.run_audit(request, store, on_progress=on_progress, executor=executor)
    if not result.complete:
        return AuditOutcome(result, [result.run_id], f"the audit stopped ({result.status}); run the check again to "
                                                     "resume")
    return AuditOutcome(result, [result.run_id])


def judge_audit(spec: CriterionSpec, outcome: AuditOutcome) -> CriterionResult:
    if outcome.unavailable:
        return unevaluated(spec, outcome.unavailable, outcome.run_ids)
    table = outcome.result.table
    judge = outcome.result.request.judge
    measure = spec.measure
    if measure in table.refused or (measure in ("fped", "fpr_overall") and "fpr" in table.refused):
        return unevaluated(spec, f"the audit of {judge.label} does not compute {measure}: "
                                 f"{table.refused.get(measure) or table.refused.get('fpr')}", outcome.run_ids)
    what = f"{measure} of {judge.label}"
    if measure in ("fped", "fpr_overall"):
        found = table.extra.get(measure) or {}
        members = [Numbers.of(OVERALL, found.get("value"), found.get("ci_low"), found.get("ci_high"),
                              missing_interval="no resamples" if found.get("ci_low") is None else "")]
        return evaluate(spec, members, outcome.run_ids, what)
    low, high = ("ci_low", "ci_high") if measure == "shift" else (f"{measure}_ci_low", f"{measure}_ci_high")
    rows = [r for r in table.rows if (r["level"] == "term" and spec.group in (EVERY_TERM, r["term"]))
            or (r["level"] == "group" and r["term"] is None and spec.group in (EVERY_GROUP, r["group"]))]
    if spec.group in outcome.result.request.design.groups and spec.group not in (EVERY_TERM, EVERY_GROUP):
        rows = [r for r in rows if r["level"] == "group"]
    members = [Numbers.of(r["term"] or r["group"], r.get(measure), r.get(low), r.get(high),
                          missing_interval="no 95% interval (fewer than two templates to resample)")
               for r in rows]
    every = {EVERY_TERM: "terms", EVERY_GROUP: "groups"}.get(spec.group)
    return evaluate(spec, members, outcome.run_ids, what if every else f"{what} for {spec.group}", every)


# ------------------------------------------------------------------------------------------------ metric bias
@dataclass
class MetricBiasOutcome:
    table: Any = None  # pandas bias table
    run_ids: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)  # metric -> why it cannot run here


def run_metric_bias_study(spec: MetricBiasSpec, store: Any, on_progress: Callable[[Any], None] | None = None,
                          executor: Any = None) -> MetricBiasOutcome:
    from fairness_core import metric_bias as mb

    dataset = mb.load_dataset(spec.data, spec.files)
    metrics = mb.build_metrics(list(spec.metrics), model=spec.model)
    usable, unavailable = [], {}
    for metric in metrics:
        try:
            metric.check_available()
            usable.append(metric)
        except mb.ModelUnavailableError as error:
            unavailable[metric.name] = str(error)
    outcome = MetricBiasOutcome(unavailable=unavailable)
    if not usable:
        return outcome
    runs = mb.run_metrics(dataset, usable, store, executor=executor,
                          on_progress=(lambda name, progress: on_progress(progress)) if on_progress else None)
    outcome.run_ids = [r.run_id for r in runs]
    outcome.table = mb.bias_table(mb.pair_table(store, outcome.run_ids), n_resamples=spec.resamples,
                                  expected=mb.expected_pairs(dataset))
    return outcome


def judge_metric_bias(spec: CriterionSpec, outcome: MetricBiasOutcome) -> CriterionResult:
    assert spec.metric is not None
    base = spec.metric.split(".")[0]
    if base in outcome.unavailable:
        return unevaluated(spec, f"{base} cannot score here: {outcome.unavailable[base]}")
    table = outcome.table
    rows = table[(table["metric"] == spec.metric)] if table is not None else pd.DataFrame()
    if spec.group != EVERY_ATTRIBUTE:
        rows = rows[rows["attribute"] == spec.group]
    if rows.empty:
        return unevaluated(spec, f"no bias of {spec.metric} for {spec.group} was computed", outcome.run_ids)
    members = [Numbers.of(str(r.attribute), r.bias, r.ci_low, r.ci_high,
                          missing_interval="no 95% interval (fewer than two pairs)") for r in rows.itertuples()]
    every = "attributes" if spec.group == EVERY_ATTRIBUTE else None
    return evaluate(spec, members, outcome.run_ids, f"bias of {spec.metric}" + ("" if every else f" on {spec.group}"),
                    every)



# ------------------------------------------------------------------------------------------------ stereotypes
@dataclass
class StereotypesOutcome:
    summary: dict[str, Any] = field(default_factory=dict)  # the study's statistics (`stereotypes.stereotype_json`)
    run_ids: list[str] = field(default_factory=list)
    unavailable: str = ""  # why the benchmark could not be scored here


def run_stereotypes_study(spec: StereotypesSpec, model: str | None, store: Any,
                          on_progress: Callable[[Any], None] | None = None, executor: Any = None
                          ) -> StereotypesOutcome:
    """The [system] model scored on the benchmark's sample, as the Stereotype benchmarks page scores it (stored,
    resumable, read back on a second check)."""
    from fairness_core import stereotypes as ster
    from fairness_core.models import ModelUnavailableError

    try:
        request = ster.build_request(spec.benchmark, model, list(spec.subset) or None, spec.limit, spec.seed,
                                     spec.resamples)
        result = ster.run_stereotypes(request, store, on_progress=on_progress, executor=executor)
    except (ster.StereotypeInputError, ModelUnavailableError) as error:
        return StereotypesOutcome(unavailable=str(error))
    if result.status != "complete":
        return StereotypesOutcome(run_ids=[result.run_id] if result.run_id else [],
                                  unavailable=f"the scoring stopped ({result.status})")
    return StereotypesOutcome(dict(result.summary), [result.run_id])


def stereotype_numbers(spec: CriterionSpec, summary: dict[str, Any], benchmark: str) -> list[Numbers]:
    """The members a stereotypes criterion judges (one, or every bias type / category), each with its 95% interval
    (CrowS-Pairs' pct_stereotype in percent: Wilson over pairs; StereoSet over target terms; BBQ over templates)."""
    if benchmark == "crows-pairs":
        cells = ({"overall": summary["overall"]} if spec.group == OVERALL else dict(summary["by_bias_type"])
                 if spec.group == EVERY_BIAS_TYPE else {spec.group: summary["by_bias_type"].get(spec.group)})
        scale = 100.0 if spec.measure == "pct_stereotype" else 1.0
        out = []
        for name, cell in cells.items():
            if cell is None:
                raise LookupError(f"bias type {name!r} has no pairs in this sample (types: "
                                  f"{', '.join(summary['by_bias_type'])})")
            out.append(Numbers.of(f"{name} ({cell['n']} pairs)", cell[spec.measure] * scale,
                                  cell[f"{spec.measure}_ci_low"] * scale, cell[f"{spec.measure}_ci_high"] * scale,
                                  missing_interval="no interval (too few pairs)"))
        return out
    if benchmark == "stereoset":
        cell = summary["overall"]
        return [Numbers.of(f"overall ({cell['count']} clusters, {cell['n_terms']} target terms)", cell[spec.measure],
                           cell.get(f"{spec.measure}_ci_low"), cell.get(f"{spec.measure}_ci_high"),
                           missing_interval="no interval (too few target terms)")]
    what, condition = spec.measure.rsplit("_", 1)  # bias_ambig -> ("bias", "ambig")
    groups = ({"overall": summary["overall"]} if spec.group == OVERALL else dict(summary["by_category"])
              if spec.group == EVERY_CATEGORY else {spec.group: summary["by_category"].get(spec.group)})
    out = []
    for name, cells in groups.items():
        cell = (cells or {}).get(condition)
        if cell is None:
            raise LookupError(f"category {name!r} has no {condition} items in this sample")
        out.append(Numbers.of(f"{name} ({cell['n']} items, {cell['n_templates']} templates)", cell[what],
                              cell[f"{what}_ci_low"], cell[f"{what}_ci_high"],
                              missing_interval="no interval (fewer than two templates)"))
    return out


def judge_stereotypes(spec: CriterionSpec, outcome: StereotypesOutcome, stereotypes: StereotypesSpec
                      ) -> CriterionResult:
    if outcome.unavailable:
        return unevaluated(spec, f"{stereotypes.benchmark} could not be scored here: {outcome.unavailable}",
                           outcome.run_ids)
    try:
        members = stereotype_numbers(spec, outcome.summary, stereotypes.benchmark)
    except LookupError as error:
        return unevaluated(spec, str(error).strip("'\""), outcome.run_ids)
    every = {EVERY_BIAS_TYPE: "bias types", EVERY_CATEGORY: "categories"}.get(spec.group)
    what = f"{stereotypes.benchmark} {spec.measure}" + ("" if every or spec.group == OVERALL else
                                                         f" of {spec.group}")
    return evaluate(spec, members, outcome.run_ids, what, every)
