"""Plan a judge audit from a pilot audit (`fairness_core.planning`): how many patterns (the design's clusters, each
with its templates filled with every term) detect a term's shift, or an FPED, of a given size.

- **shift** (per term, against its template's background β_j): each cluster is a paired unit with two labels — the
  term's scores and the background's, over the cluster's templates — exchanged within the cluster by the
  permutation test (the test the shift's jackknife interval over clusters approximates); one planned question per
  term, the power averaged over the terms (or one term, `term`). The effect is in the judge's own units (a
  toxicity probability for a toxicity scorer).
- **fped** (Dixon et al. 2018: Σ_t |FPR − FPR_t| over the non-toxic templates): the terms are the labels of a
  cluster, exchanged within it as the audit's own permutation test does (`summary.fped_test`).

A stored audit run holds the judge's scores but not its templates: `plan_stored_audit` rebuilds the built-in design
(the only one it can rebuild) and checks that it is the design the run scored.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.audit.request import Judge
from fairness_core.audit.summary import Matrix
from fairness_core.planning import (
    PAIRWISE,
    TO_POOLED,
    FamilyPilot,
    PilotDesign,
    Plan,
    PlanError,
    check_target,
    plan_design,
    score_range,
)

MEASURES = ("shift", "fped")


def _cells(matrix: Matrix, values: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(U, C) index arrays into the templates: each cluster's kept templates, padded with -1."""
    clusters = np.unique(matrix.clusters[keep])
    members = [np.flatnonzero(keep & (matrix.clusters == c)) for c in clusters]
    width = max((len(m) for m in members), default=0)
    index = np.full((len(clusters), max(width, 1)), -1)
    for u, m in enumerate(members):
        index[u, : len(m)] = m
    return index, clusters


def audit_design(scores: pd.DataFrame, groups: dict[str, tuple[str, ...]], judge: Judge, run_id: str,
                 measure: str = "shift", term: str | None = None, cluster_unit: str = "patterns") -> PilotDesign:
    """The pilot design of an audit's scores (`AuditResult.scores`: template_id, term, group, label, cluster,
    score); PlanError for a measure the audit does not compute."""
    if measure not in MEASURES:
        raise PlanError(f"an audit is planned on {' or '.join(MEASURES)} (got {measure!r})")
    matrix = Matrix.of(scores, groups)
    unit = {"templates": "template", "patterns": "pattern", "IPTTS templates": "IPTTS template",
            "EEC templates": "EEC template"}.get(cluster_unit, "template family")
    units = {"template family": "template families"}.get(unit, unit + "s")
    if measure == "shift":
        terms = list(matrix.terms) if term is None else [term]
        if term is not None and term not in matrix.terms:
            raise PlanError(f"the audit has no term {term!r}; its terms include {', '.join(matrix.terms[:8])}")
        beta = matrix.background()
        index, _ = _cells(matrix, np.ones(len(matrix.templates), dtype=bool), np.ones(len(matrix.templates), bool))
        present = index >= 0
        safe = np.where(present, index, 0)
        totals = np.zeros((len(terms), index.shape[0], 2, index.shape[1]))
        counts = np.zeros_like(totals)
        for v, name in enumerate(terms):
            column = matrix.scores[:, matrix.terms.index(name)]
            scored = present & np.isfinite(column[safe]) & np.isfinite(beta[safe])
            totals[v, :, 0] = np.where(scored, column[safe], 0.0)
            totals[v, :, 1] = np.where(scored, beta[safe], 0.0)
            counts[v, :, 0] = counts[v, :, 1] = scored.astype(float)
        family = FamilyPilot("shift", ("term", "background"), True, totals, counts)
        what = f"a shift of {{effect}} in {judge.label} for {term}" if term else \
            f"a term's shift of {{effect}} in {judge.label} (the power averaged over the {len(terms)} terms)"
        return PilotDesign((family,), PAIRWISE, False, "shift", unit, f"{units} (each with its templates, filled "
                           "with every term)", what, run_id, scale=f"{judge.label}'s units",
                           value_range=score_range(matrix.scores))
    if judge.threshold is None:
        raise PlanError(f"{judge.name} has no decision threshold, so the audit has no false positives and no FPED to "
                        "plan")
    non_toxic = matrix.labels == "non-toxic"
    if not non_toxic.any():
        raise PlanError("no template of this audit is labelled non-toxic, so it has no FPED to plan")
    flagged = judge.flagged(matrix.scores)
    index, _ = _cells(matrix, flagged[:, 0], non_toxic)
    present = index >= 0
    safe = np.where(present, index, 0)
    values = flagged[safe]  # (U, C, T)
    scored = present[..., None] & np.isfinite(values)
    totals = np.where(scored, values, 0.0).transpose(0, 2, 1)[None]  # (1, U, T, C)
    counts = scored.astype(float).transpose(0, 2, 1)[None]
    family = FamilyPilot("terms", tuple(matrix.terms), True, totals, counts)
    return PilotDesign((family,), TO_POOLED, True, "fped", unit, f"{units} (each with its non-toxic templates, "
                       "filled with every term)", f"an FPED of {{effect}} in {judge.label}", run_id,
                       scale="a sum of rate differences")


def plan_audit(result: Any, effect: float, power: float, measure: str = "shift", term: str | None = None,
               seed: int = 0) -> Plan:
    """The plan from a finished audit (`AuditResult`), see the module docstring."""
    check_target(effect, power)
    if result is None or getattr(result, "scores", None) is None or result.scores.empty:
        raise PlanError("the audit has no scores to plan from; run it first")
    design = audit_design(result.scores, result.request.design.groups, result.request.judge, result.run_id, measure,
                          term, result.request.design.cluster_unit)
    return plan_design(design, effect, power, None, seed, extra={"term": term} if term else {})


def plan_stored_audit(store: Any, run_id: str, effect: float, power: float, measure: str = "shift",
                      term: str | None = None, seed: int = 0) -> Plan:
    """The plan from a stored audit run of the built-in design (module docstring); PlanError otherwise."""
    from fairness_core.audit.design import DATA_DIR, builtin_templates, design_from_templates, parse_terms

    check_target(effect, power)
    info = store.get_run(run_id)
    request = info.manifest.get("request", {}) if info is not None and isinstance(info.manifest, dict) else {}
    record = request.get("judge") or {}
    judge = Judge(str(record.get("kind", "scorer")), str(record.get("name", "")),
                  tuple(sorted((record.get("options") or {}).items())), str(record.get("column", "")),
                  record.get("threshold"), str(record.get("op", ">=")), dict(record.get("signature") or {}))
    groups = parse_terms((DATA_DIR / "identity_terms.txt").read_text(encoding="utf-8"), "identity_terms.txt")
    design = design_from_templates(builtin_templates(), groups, "built-in IPTTS-style templates", source="builtin")
    texts = design.texts
    if judge.kind == "scorer":
        pairs = list(dict.fromkeys((t, "") for t in texts["text"]))
    else:
        pairs = list(dict.fromkeys(zip(texts["text"], texts["reference"], strict=True)))
    digest = hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode()).hexdigest()[:16]
    if (request.get("texts") or {}).get("hash") != digest:
        raise PlanError(f"run {run_id} audited texts other than the built-in templates (a templates file, an import "
                        "or swapped texts), which are not stored with its scores; plan it on the Judge audit page, "
                        "where the audit's design is at hand")
    rows = store.rows(run_id)
    by_pair = {(t, (a or {}).get("reference", "")): v for t, a, v in zip(rows["text"], rows["attrs"], rows["value"],
                                                                        strict=True)}
    frame = texts.copy()
    keys = zip(frame["text"], frame["reference"] if judge.kind == "metric" else [""] * len(frame), strict=True)
    frame["score"] = pd.to_numeric(pd.Series([by_pair.get(k) for k in keys], index=frame.index), errors="coerce")
    pilot = audit_design(frame, groups, judge, run_id, measure, term, design.cluster_unit)
    return plan_design(pilot, effect, power, None, seed, extra={"term": term} if term else {})
