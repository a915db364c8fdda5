"""Run a check: the studies its criteria need (each through its public face, so every number is read from or written
to the run store), the criteria, and the check itself stored as a run of kind `check`.

Order: the system's generations (decoding), the baseline's (paired criteria), the judge audit, the metric bias;
then the criteria, in the spec's order; then the check's run, whose manifest digests every input, so a repeat on an
unchanged system and spec is read back whole (`from_store`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from fairness_core.check.criteria import CriterionResult, Pending, adjust_family, judge, unevaluated
from fairness_core.check.record import (
    INPUT_BASELINE,
    INPUT_SYSTEM,
    KIND,
    SCHEMA,
    CheckResult,
    check_rows,
    latest_check,
    read_check,
    stored_rows,
)
from fairness_core.check.spec import CheckSpec
from fairness_core.check.studies import (
    AuditOutcome,
    CheckInputError,
    GenerationSet,
    MetricBiasOutcome,
    StereotypesOutcome,
    generate,
    judge_audit,
    judge_decoding,
    judge_metric_bias,
    judge_relative,
    judge_stereotypes,
    run_audit_study,
    run_metric_bias_study,
    run_stereotypes_study,
    settings_note,
    stored_check_inputs,
    stored_run,
    summarise,
)

Progress = Callable[[str, Any], None]  # (what is running, jobs.Progress)


def resolve_baseline(spec: CheckSpec, store: Any, override: str | None, system: GenerationSet | None,
                     on_progress: Progress | None = None, executor: Any = None
                     ) -> tuple[GenerationSet | None, str, str | None]:
    """(the baseline's generations, why there are none, its label) for the paired criteria.

    `override` (the command line's --baseline) wins over the spec's [baseline]: a check id, a generation run id, or
    `last` (the newest stored check of the same name)."""
    assert spec.decoding is not None
    prefer = system.frame if system is not None and not system.unavailable else None
    if override:
        if override == "last":
            found = latest_check(store, spec.name)
            if found is None:
                return None, (f"no earlier check named {spec.name!r} is stored in {store.path} to compare with (this "
                              "is the first; name a baseline run or check)"), None
            return stored_check_inputs(store, found, prefer), "", f"check {found}"
        info = store.get_run(override) if store.path.exists() else None
        if info is None:
            raise CheckInputError(f"--baseline {override!r}: no run or check with that id in {store.path}")
        if info.kind == KIND:
            return stored_check_inputs(store, override, prefer), "", f"check {override}"
        return stored_run(store, override, prefer=prefer, what="baseline run"), "", f"run {override}"
    baseline = spec.baseline
    if baseline is None:
        return None, ("no baseline: give --baseline RUN_OR_CHECK_ID (or last), or a [baseline] table in the spec"), None
    if baseline.check:
        return stored_check_inputs(store, baseline.check, prefer), "", f"check {baseline.check}"
    if baseline.run:
        return stored_run(store, baseline.run, prefer=prefer, what="baseline run"), "", f"run {baseline.run}"
    assert baseline.model is not None and baseline.setting is not None
    label = baseline.label()
    found = generate(baseline.model, baseline.setting, baseline.quantization, spec.decoding, store,
                     on_progress=_bound(on_progress, f"baseline {label}"), executor=executor, label=label)
    return found, "", label


def check_named_runs(spec: CheckSpec, store: Any, override: str | None) -> None:
    """Every run or check the spec or the command line names exists, is complete and of a kind that fits; else one
    sentence (CheckInputError) before anything is computed or written."""
    named = [(spec.system.generations, "run", "the system's generations ([system] generations)")]
    if spec.relative:
        if override and override != "last":
            named.append((override, "any", "--baseline"))
        elif not override and spec.baseline is not None:
            named += [(spec.baseline.run, "run", "[baseline] run"), (spec.baseline.check, KIND, "[baseline] check")]
    for run_id, kind, where in named:
        if not run_id:
            continue
        info = store.get_run(run_id) if store.path.exists() else None
        if info is None:
            raise CheckInputError(f"{where} {run_id!r}: no run or check with that id in {store.path}")
        if kind == KIND and info.kind != KIND:
            raise CheckInputError(f"{where} {run_id} is a {info.kind} run, not a check")
        if info.kind not in ("generation", KIND) or (kind == "run" and info.kind != "generation"):
            raise CheckInputError(f"{where} {run_id} is a {info.kind} run; give a generation run (a decoding sweep, a "
                                  "live move, an import)" + (" or a check" if kind == "any" else ""))
        if info.status != "complete":
            raise CheckInputError(f"{where} {run_id} is {info.status}, not complete; finish it first (running its "
                                  "request again resumes it)")
        if info.kind == KIND and store.query("SELECT count(*) AS n FROM results WHERE run_id = ? AND variant = ?",
                                             [run_id, INPUT_SYSTEM])["n"].iloc[0] == 0:
            raise CheckInputError(f"{where}: check {run_id} judged no generations (it has no decoding criterion), so "
                                  "it cannot be a baseline")


def _bound(on_progress: Progress | None, what: str) -> Callable[[Any], None] | None:
    if on_progress is None:
        return None
    return lambda progress: on_progress(what, progress)


def run_check(spec: CheckSpec, store: Any, baseline: str | None = None, on_progress: Progress | None = None,
              executor: Any = None) -> CheckResult:
    """Run the spec's studies and criteria and store the check (see the module docstring). A study that cannot run
    here fails its criteria with the reason; a run or check named that is not in the store is a CheckInputError."""
    from fairness_core.jobs import Task, run_task

    check_named_runs(spec, store, baseline)  # a run or check named that is not there: said before any work
    studies = spec.studies
    notes: list[str] = []
    system: GenerationSet | None = None
    base: GenerationSet | None = None
    base_why, base_label = "", None
    audit = AuditOutcome()
    metric_bias = MetricBiasOutcome()
    stereotypes = StereotypesOutcome()
    if "decoding" in studies:
        assert spec.decoding is not None
        if spec.system.generations:
            system = stored_run(store, spec.system.generations, spec.system.system)
        else:
            assert spec.system.model is not None
            system = generate(spec.system.model, spec.system.setting, spec.system.quantization, spec.decoding, store,
                              on_progress=_bound(on_progress, f"system {spec.system.label()}"), executor=executor,
                              label=spec.system.label())
        summarise(system, spec.decoding)
        notes += list(spec.decoding.notes) + system.notes
        notes += [note for note in [settings_note(store, system, spec.decoding)] if note]
        if spec.relative:
            base, base_why, base_label = resolve_baseline(spec, store, baseline, system, on_progress, executor)
            if base is not None:
                summarise(base, spec.decoding)
                notes += [note for note in [settings_note(store, base, spec.decoding)] if note]
    if "audit" in studies:
        assert spec.audit is not None
        audit = run_audit_study(spec.audit, store, _bound(on_progress, "judge audit"), executor)
    if "metric-bias" in studies:
        assert spec.metric_bias is not None
        metric_bias = run_metric_bias_study(spec.metric_bias, store, _bound(on_progress, "metric bias"), executor)
    if "stereotypes" in studies:
        assert spec.stereotypes is not None
        stereotypes = run_stereotypes_study(spec.stereotypes, spec.system.model, store,
                                            _bound(on_progress, f"{spec.stereotypes.benchmark}"), executor)
    judged: list[CriterionResult | Pending] = []  # in the spec's order; a Pending waits for its family's Holm
    for criterion in spec.criteria:
        if criterion.study == "decoding":
            assert system is not None and spec.decoding is not None
            judged.append(judge_relative(criterion, system, base, spec.decoding, base_why) if criterion.against
                          else judge_decoding(criterion, system, spec.decoding, store))
        elif criterion.study == "audit":
            judged.append(judge_audit(criterion, audit))
        elif criterion.study == "metric-bias":
            judged.append(judge_metric_bias(criterion, metric_bias))
        elif criterion.study == "stereotypes":
            assert spec.stereotypes is not None
            judged.append(judge_stereotypes(criterion, stereotypes, spec.stereotypes))
        else:  # the spec allows no other study; kept so a new one fails loudly instead of passing
            judged.append(unevaluated(criterion, f"the study {criterion.study!r} is not available here"))
    # Every p-value the verdicts read is one family, Holm-adjusted before any verdict: the chance that one of
    # them fires on a fair system stays at most alpha however many criteria the spec lists (issue 42 §2).
    adjust_family([item for item in judged if isinstance(item, Pending)])
    results = [judge(item) if isinstance(item, Pending) else item for item in judged]
    inputs: dict[str, tuple[list[str], list[str]]] = {}
    if system is not None and not system.unavailable:
        inputs[INPUT_SYSTEM] = (system.generation_ids, system.run_ids)
    if base is not None and not base.unavailable:
        inputs[INPUT_BASELINE] = (base.generation_ids, base.run_ids)
    result = CheckResult("", spec.name, _title(spec), base_label, results, notes=notes, spec_file=spec.path)
    digests = {"system": system.digest() if system is not None else None,
               "baseline": base.digest() if base is not None else base_why,
               "audit": audit.run_ids or audit.unavailable, "metric_bias": [metric_bias.run_ids,
                                                                            metric_bias.unavailable],
               **({"stereotypes": stereotypes.run_ids or stereotypes.unavailable} if spec.stereotypes else {})}
    request = {"schema": SCHEMA, "name": spec.name, "spec": spec.record(), "spec_file": spec.path,
               "system_label": result.system, "model": result.system, "baseline_label": base_label,
               "inputs": digests, "notes": notes,
               "criteria": [{"name": c.name, "rule": c.rule, "passed": c.passed} for c in results],
               "results": hashlib.sha256(json.dumps([c.as_json() for c in results], sort_keys=True, default=str)
                                         .encode()).hexdigest()[:16]}
    task = Task(KIND, request, [{"rows": check_rows(result, inputs)}], stored_rows)
    outcome = run_task(task, store)
    if outcome.from_cache:
        stored = read_check(store, outcome.run_id)
        stored.notes = notes
        return stored
    result.check_id = outcome.run_id
    return result


def _title(spec: CheckSpec) -> str:
    """What the check is of, for its first line: the system, or for a check with no system of its own (only the
    judge audit or the metric bias, which name their own models) those studies — never "None · top_p=0.9"."""
    if spec.system.model is not None or spec.system.generations:
        return spec.system.label()
    parts = []
    if spec.audit is not None:
        parts.append(f"the judge audit of {spec.audit.scorer or spec.audit.metric or 'its judge'}")
    if spec.metric_bias is not None:
        parts.append(f"the metric bias of {', '.join(spec.metric_bias.metrics) or 'its metrics'}")
    return " and ".join(parts) or "no system"
