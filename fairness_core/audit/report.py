"""The audit as the CLI's JSON and the page's tables: rows per term and group, what was refused and why, the
texts with the largest shift."""

from __future__ import annotations

from typing import Any

import pandas as pd

from fairness_core.audit.summary import ROW_KEYS
from fairness_core.audit.task import AuditResult

EXAMPLE_COLUMNS = ["term", "group", "text", "score", "background", "shift", "label", "template_id"]


def rows_frame(result: AuditResult, level: str | None = None) -> pd.DataFrame:
    """The table's rows as a frame (level "term", "group" or both), the contract's columns first."""
    assert result.table is not None
    frame = pd.DataFrame(result.table.rows)
    if level is not None:
        frame = frame[frame["level"] == level]
    first = [c for c in ("level", *ROW_KEYS) if c in frame]
    return frame[first + [c for c in frame.columns if c not in first]].reset_index(drop=True)


def examples(result: AuditResult, n: int = 20, term: str | None = None) -> pd.DataFrame:
    """The texts with the largest |shift| (all terms, or one term's), for the drill-down."""
    assert result.table is not None
    texts = result.table.texts
    if term is not None:
        texts = texts[texts["term"] == term]
    columns = EXAMPLE_COLUMNS + (["flipped"] if "flipped" in texts else [])
    return texts[[c for c in columns if c in texts]].head(n).reset_index(drop=True)


def audit_json(result: AuditResult, n_examples: int = 10) -> dict[str, Any]:
    """`{"scorer", "rows": [{"term", "group", "n", "mean", "shift", "ci_low", "ci_high", "fpr", "flip_rate",
    "subgroup_auc", "bpsn_auc", "bnsp_auc", ...}, ...], ...}`: term rows (largest shift first), then group rows
    (term null). A refused statistic is null in every row, with its reason in "refused"."""
    request = result.request
    if not result.complete:
        return {"scorer": request.judge.name, "status": result.status, "run_id": result.run_id}
    assert result.table is not None
    judge = request.judge
    # a text without a score (an LLM judge's unparseable reply, a metric's NaN) is counted here, never dropped
    # silently: the statistics use the scored texts
    unscored = {"n": int(result.scores["score"].isna().sum()), "of": len(result.scores)} \
        if "score" in result.scores else {"n": 0, "of": 0}
    return {"scorer": judge.name, "kind": judge.kind, "column": judge.column, "threshold": judge.threshold,
            "flagged_when": None if judge.threshold is None else f"{judge.column} {judge.op} {judge.threshold:g}",
            "signature": judge.signature, "templates": request.design.record(), "notes": request.design.notes,
            "resamples": request.resamples, "seed": request.seed, "run_id": result.run_id,
            "from_cache": result.from_cache, "unscored": unscored, "refused": result.table.refused,
            **result.table.extra,
            "rows": result.table.rows,
            "examples": examples(result, n_examples).to_dict(orient="records")}


def audit_download(result: AuditResult, n_examples: int = 50) -> str:
    """The audit's JSON (`audit_json`) as strict JSON text (NaN and ±inf as null) for a download button."""
    from fairness_core.store.manifest import strict_json

    return strict_json(audit_json(result, n_examples), indent=2)
