"""Scoring an audit's texts as one stored job (kind "audit-scores"): shards of distinct texts, each scored by the
judge in one batch, so a repeated audit is read back from the run store and an interrupted one resumes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.audit.request import AuditRequest
from fairness_core.audit.summary import AuditTable, audit_table

KIND = "audit-scores"
SCHEMA = 1
SHARD = 512
#: the page's job kind (its estimates are learnt per kind)
JOB_KIND = "audit"
#: seconds per distinct text a judge scores on the quiet reference machine, and which slowdown scales it
#: (`fairness_core.jobs.estimates`): the offline judges, from `python -m bench.job_estimates` (docs/audit.md). The
#: Jigsaw classifier's BiLSTM runs small torch operations that do not spread over threads: a core's share scales it
#: (the four scorers' figures and the summary's below were 1.4x high on the quiet machine — two runs of
#: `python -m bench.job_estimates` at load 0.9-1.6 on 2026-11-29: 0.8-0.9 s where 1.2 s was documented — and scaled
#: by 0.72; they had been fitted at loads of 2-5)
JUDGE_SECONDS = {"jigsaw-toxicity": (2.9e-4, "share"), "vader": (1.1e-4, "share"), "offensive": (1.1e-4, "share"),
                 "negative-words": (1.3e-4, "share"),
                 # an LLM judge reads each text in a filled rubric: ~0.25 s of CPU a text on SmolLM2 (docs/judges.md)
                 "llm-judge": (0.25, "torch"),
                 # read by text it writes a greedy reply of up to 12 tokens: 258 texts took 138 s of CPU (user +
                 # system, model load included) on this machine, ~0.5 s a text (docs/judges.md)
                 "llm-judge:text": (0.5, "torch")}
#: any other judge (a transformer classifier, a model-based metric): a small encoder's rate
OTHER_JUDGE_SECONDS = (0.01, "torch")
#: the summary after scoring, per judged text and bootstrap resample (the template bootstrap of every statistic)
SUMMARY_SECONDS_PER_TEXT_RESAMPLE = 1.15e-7
#: reading the scores back and building the table, per judged text
READ_SECONDS_PER_TEXT = 1.45e-5


def _text_id(text: str, reference: str) -> str:
    return hashlib.sha256((text + "\u241e" + reference).encode()).hexdigest()[:20]


def score_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Score a shard of texts (scorer) or of (text, reference) pairs (metric) with the judge; NaN stays None."""
    from fairness_core.jobs import checkpoint

    judge = request["judge"]
    texts = [pair[0] for pair in shard["pairs"]]
    if judge["kind"] == "scorer":
        from fairness_core.scorers import scorer_from_request

        values = scorer_from_request(judge["name"], **judge["options"]).score(texts)[judge["column"]]
    else:
        from fairness_core.metrics import metric_from_request

        metric = metric_from_request(judge["name"], **judge["options"])
        references = [pair[1] for pair in shard["pairs"]]
        values = metric.score(texts, references, state=metric.prepare(texts, references))[judge["column"]]
    values = np.asarray(values, dtype=float)
    checkpoint(len(texts), len(texts))
    return [{"item": _text_id(text, reference), "grp": None, "variant": "score", "metric": judge["column"],
             "value": float(v) if np.isfinite(v) else None, "text": text, "attrs": {"reference": reference}}
            for (text, reference), v in zip(shard["pairs"], values, strict=True)]


def score_task(request: AuditRequest) -> Any:
    from fairness_core.jobs import Task

    design = request.design.texts
    if request.judge.kind == "scorer":  # a scorer reads the text alone: one score per distinct text
        pairs = list(dict.fromkeys((t, "") for t in design["text"]))
    else:
        pairs = list(dict.fromkeys(zip(design["text"], design["reference"], strict=True)))
    digest = hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode()).hexdigest()[:16]
    payload = {"schema": SCHEMA, "judge": request.judge.record(), "texts": {"hash": digest, "n": len(pairs)}}
    shards = [{"pairs": [list(p) for p in pairs[start:start + SHARD]]} for start in range(0, len(pairs), SHARD)]
    return Task(KIND, payload, shards, score_work)


@dataclass
class AuditResult:
    request: AuditRequest
    status: str = "complete"  # complete | cancelled
    run_id: str = ""
    from_cache: bool = False
    table: AuditTable | None = None
    scores: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def complete(self) -> bool:
        return self.status == "complete" and self.table is not None


def _scored(request: AuditRequest) -> int:
    """How many distinct texts (scorer) or (text, reference) pairs (metric) the judge scores."""
    design = request.design.texts
    if request.judge.kind == "scorer":
        return int(design["text"].nunique())
    return int(design[["text", "reference"]].drop_duplicates().shape[0])


def _judge_rate(request: AuditRequest) -> tuple[float, str]:
    """Seconds per distinct text and their scaling for this judge (an LLM judge's by its reading rule)."""
    if request.judge.kind != "scorer":
        return OTHER_JUDGE_SECONDS
    read = dict(request.judge.options).get("read")
    if request.judge.name == "llm-judge" and read == "text":
        return JUDGE_SECONDS["llm-judge:text"]
    return JUDGE_SECONDS.get(request.judge.name, OTHER_JUDGE_SECONDS)


def audit_parts(request: AuditRequest) -> tuple[float, float]:
    """(scoring, summary) seconds on the quiet reference machine."""
    per_text, _ = _judge_rate(request)
    judged = len(request.design.texts)
    summary = judged * (READ_SECONDS_PER_TEXT + SUMMARY_SECONDS_PER_TEXT_RESAMPLE * request.resamples)
    return _scored(request) * per_text, summary


def audit_work(request: AuditRequest) -> Any:
    """What the audit costs (`fairness_core.jobs.estimates.Work`): its distinct texts scored by the judge, then the
    summary over every judged text with its bootstrap resamples."""
    from fairness_core.jobs.estimates import Work

    scoring, summary = audit_parts(request)
    _, scaling = _judge_rate(request)
    scored = _scored(request)
    return Work(JOB_KIND, scored, scoring / scored if scored else 0.0, "texts scored", summary, scaling)


def run_audit(request: AuditRequest, store: Any, on_progress: Callable[[Any], None] | None = None,
              cancel: Any = None, executor: Any = None) -> AuditResult:
    """Score every text of the design (stored, resumable), then the per-term and per-group table. Progress is the
    share of both parts done, weighted by their costs (`audit_parts`): the summary after the last batch is part of
    the time left."""
    from dataclasses import replace

    from fairness_core.jobs import run_task

    scoring, summary = audit_parts(request)
    share = scoring / (scoring + summary) if scoring + summary > 0 else 1.0

    def forward(progress: Any) -> None:
        if on_progress is not None:
            on_progress(replace(progress, weighted=progress.fraction * share))

    outcome = run_task(score_task(request), store, on_progress=forward, cancel=cancel, executor=executor)
    result = AuditResult(request, outcome.status, outcome.run_id, outcome.from_cache)
    if outcome.status != "complete":
        return result
    rows = store.rows(outcome.run_id)
    by_pair = {(t, a.get("reference", "")): v for t, a, v in zip(rows["text"], rows["attrs"], rows["value"],
                                                                 strict=True)}
    frame = request.design.texts.copy()
    keys = zip(frame["text"], frame["reference"] if request.judge.kind == "metric" else [""] * len(frame),
               strict=True)
    frame["score"] = pd.to_numeric(pd.Series([by_pair.get(k) for k in keys], index=frame.index), errors="coerce")
    result.scores = frame
    result.table = audit_table(frame, request.design.groups, request.judge, request.resamples, request.seed,
                               request.design.cluster_unit)
    return result
