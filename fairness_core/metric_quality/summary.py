"""What the page and the CLI show: the agreement table, the JSON contract, the per-candidate drill-down, and the
bias–quality points (gender bias from the metric-bias study beside agreement with people).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.data.judgments import Judgments
from fairness_core.metric_quality.agreement import RULE_LABELS, Correlation

#: Published REALSumm Spearman (pooled rule) of Sun et al. 2022, for comparison only (never shown as computed):
#: Table 4 (backbone swaps) and Table 5 (adapters). The backbones are hub models that do not run offline here.
PAPER_REALSUMM = {
    "BERTScore, BERT-large": 0.464, "BERTScore, Zari-Dropout": 0.440, "BERTScore, Zari-CDA": 0.470,
    "BERTScore, BERT-large + adapter": 0.468, "BERTScore, BERT-base": 0.465, "BERTScore, BERT-base + adapter": 0.473,
    "MoverScore, BERT-large": 0.412, "MoverScore, Zari-Dropout": 0.435, "MoverScore, Zari-CDA": 0.440,
    "BARTScore, BART-base": 0.325, "BARTScore, BART-base + adapter": 0.307,
}
#: The WinoBias subset the gender bias of the bias–quality chart is measured on (the paper's gender set: 396 pairs)
BIAS_SOURCE = ("winobias", "type1-dev")


def agreement_table(correlations: Mapping[str, Correlation], labels: Mapping[str, str] | None = None
                    ) -> pd.DataFrame:
    """One row per metric: the three correlations under its rule, the interval (of `ci_of`, Spearman by default;
    `value` is that statistic), what the interval resamples, counts."""
    rows = []
    for name, c in correlations.items():
        rows.append({"metric": name, "label": (labels or {}).get(name, name), "rule": c.rule,
                     "value": c.value, "ci_low": c.ci_low, "ci_high": c.ci_high, "ci_of": c.statistic,
                     "resample": c.resample, "spearman": c.spearman, "pearson": c.pearson,
                     "kendall": c.kendall, "n": c.n, "n_documents": c.n_documents, "n_systems": c.n_systems,
                     "n_excluded": c.n_excluded})
    columns = ["metric", "label", "rule", "value", "ci_low", "ci_high", "ci_of", "resample", "spearman", "pearson",
               "kendall", "n", "n_documents", "n_systems", "n_excluded"]
    return pd.DataFrame(rows, columns=columns)


def summary_json(correlations: Mapping[str, Correlation]) -> dict[str, dict[str, Any]]:
    """The CLI contract: {"<metric>": {"spearman", "ci_low", "ci_high", "pearson", "kendall", "value", "n",
    "n_documents", "rule", "ci_of", "resample", "interval_generalises", ...}} with null for an undefined number
    (never NaN)."""
    return {name: c.to_json() for name, c in correlations.items()}


def notes(correlations: Mapping[str, Correlation]) -> list[str]:
    """One sentence per metric with left-out candidates, undefined correlations, documents without a correlation,
    constant documents or undefined resamples."""
    out = []
    for name, c in correlations.items():
        if c.n_excluded:
            out.append(f"{name}: {c.n_excluded} candidate(s) have no finite score and are left out")
        if c.n_undefined_documents:
            out.append(f"{name}: {c.n_undefined_documents} document(s) have no correlation for any metric (people "
                       "score every system alike there, or fewer than 3 candidates were scored) and are left out")
        if c.n_constant_documents:
            treated = ("count as 0 (the metric ranks none of the systems people tell apart)" if c.constant == "zero"
                       else "are left out of its average (which rewards ties: see docs/metric-quality.md)")
            out.append(f"{name}: on {c.n_constant_documents} document(s) it scores every system alike while people "
                       f"do not; they {treated}")
        if not math.isfinite(c.spearman):
            out.append(f"{name}: the correlation is undefined (the scores are constant under the {c.rule} rule)")
        if c.n_undefined_resamples:
            out.append(f"{name}: {c.n_undefined_resamples} of {c.n_resamples} resamples had an undefined "
                       "correlation and are left out of the interval")
    return out


def rule_label(rule: str) -> str:
    return RULE_LABELS[rule]


def _percentile_rank(values: np.ndarray) -> np.ndarray:
    """0 = lowest, 1 = highest (average ranks for ties), NaN stays NaN."""
    from scipy.stats import rankdata

    out = np.full(len(values), np.nan)
    finite = np.isfinite(values)
    if finite.sum() >= 2:
        out[finite] = (rankdata(values[finite]) - 1) / (finite.sum() - 1)
    return out


def drilldown(judgments: Judgments, scores: Sequence[float] | np.ndarray, rule: str = "pooled",
              limit: int | None = None) -> pd.DataFrame:
    """Which candidates does the metric rank most differently from people? Ranks are percentiles (0 = worst,
    1 = best) among what the rule compares: all candidates (pooled), the candidates of the same document
    (document), or the systems' means (system: one row per system). `rank_gap` = metric rank − human rank:
    positive = the metric likes it more than people do. Sorted by |rank_gap|, largest first."""
    values = np.asarray(scores, dtype=float)
    frame = judgments.frame[["item_id", "system", "candidate", "reference", "human"]].copy()
    frame["score"] = values
    if rule == "system":
        frame = frame.groupby("system", sort=False).agg(human=("human", "mean"), score=("score", "mean"),
                                                        n_items=("item_id", "nunique")).reset_index()
        frame["human_rank"] = _percentile_rank(frame["human"].to_numpy())
        frame["metric_rank"] = _percentile_rank(frame["score"].to_numpy())
    elif rule == "document":
        frame["human_rank"] = frame.groupby("item_id", sort=False)["human"].transform(
            lambda s: pd.Series(_percentile_rank(s.to_numpy()), index=s.index))
        frame["metric_rank"] = frame.groupby("item_id", sort=False)["score"].transform(
            lambda s: pd.Series(_percentile_rank(s.to_numpy()), index=s.index))
    else:
        frame["human_rank"] = _percentile_rank(frame["human"].to_numpy())
        frame["metric_rank"] = _percentile_rank(frame["score"].to_numpy())
    frame["rank_gap"] = frame["metric_rank"] - frame["human_rank"]
    frame = frame.iloc[np.argsort(-frame["rank_gap"].abs().fillna(-1).to_numpy(), kind="stable")]
    frame = frame.reset_index(drop=True)
    return frame if limit is None else frame.head(limit)


# -- the bias–quality picture (Sun et al. 2022, Tables 4-5: bias down, agreement kept?) ---------------------------
def gender_bias(metrics: Sequence[Any], store: Any, stored: Sequence[str] = (), n_resamples: int = 1000,
                on_progress: Callable[[Any], None] | None = None, cancel: Any = None, executor: Any = None
                ) -> tuple[pd.DataFrame, list[str]]:
    """Gender bias (Eq. 1-2, min-max, 95% CI over pairs) of the same metric objects on WinoBias type1-dev (the
    paper's 396 gender pairs), through the metric-bias study: stored runs are read back. For stored quality
    columns ("X (stored)"), a stored metric-bias column of the same name (or "X-F") on a gender attribute is used
    when one is in the store (e.g. the released gender.tsv loaded with --stored-scores). Returns (rows: metric,
    bias, ci_low, ci_high, n_pairs, source, run_id; notes)."""
    from fairness_core import metric_bias as mb

    columns = ["metric", "bias", "ci_low", "ci_high", "n_pairs", "source", "run_id"]
    rows: list[dict[str, Any]] = []
    found_notes: list[str] = []
    if metrics:
        dataset = mb.load_dataset(BIAS_SOURCE[0], [BIAS_SOURCE[1]])
        if on_progress is not None or cancel is not None:
            from fairness_core.jobs import CancelToken

            runs, skipped = mb.run_metric_steps(dataset, list(metrics), [], store, on_progress or (lambda p: None),
                                                cancel if cancel is not None else CancelToken(), executor=executor)
            found_notes += skipped
        else:
            runs = mb.run_metrics(dataset, list(metrics), store, executor=executor)
        complete = [r for r in runs if not r.partial]
        if complete:
            table = mb.bias_table(mb.pair_table(store, [r.run_id for r in complete]), normalisation="minmax",
                                  n_resamples=n_resamples, expected=mb.expected_pairs(dataset))
            by_name = {r.name: r.run_id for r in complete}
            for row in table.itertuples(index=False):
                if row.metric in by_name:
                    rows.append({"metric": row.metric, "bias": row.bias, "ci_low": row.ci_low,
                                 "ci_high": row.ci_high, "n_pairs": row.n_pairs,
                                 "source": f"WinoBias {BIAS_SOURCE[1]} ({dataset.name})",
                                 "run_id": by_name[row.metric]})
    for column in stored:
        found = _stored_bias_run(store, column)
        if found is None:
            found_notes.append(f"{column}: no gender-bias run of this stored column in the store (load the released "
                               f"gender.tsv in the metric-bias study with its stored scores to place it)")
            continue
        run_id, bias_metric = found
        table = mb.bias_table(mb.pair_table(store, [run_id], attributes=["gender"]), normalisation="minmax",
                              n_resamples=n_resamples)
        for row in table.itertuples(index=False):
            if row.metric == bias_metric:
                rows.append({"metric": column, "bias": row.bias, "ci_low": row.ci_low, "ci_high": row.ci_high,
                             "n_pairs": row.n_pairs, "source": f"stored {bias_metric}, gender", "run_id": run_id})
    return pd.DataFrame(rows, columns=columns), found_notes


def _stored_bias_run(store: Any, column: str) -> tuple[str, str] | None:
    """(run_id, metric name) of a complete metric-bias run of the stored column `column` ("X (stored)" or its
    "X-F (stored)" F-score) with gender pairs, newest first."""
    if not store.path.exists():
        return None
    base = column.removesuffix(" (stored)")
    names = [f"{base} (stored)", f"{base}-F (stored)"]
    found = store.query(
        "SELECT r.run_id, json_extract_string(r.manifest, '$.request.metric.name') AS metric FROM runs r "
        "WHERE r.kind = 'metric-bias' AND r.status = 'complete' "
        "AND list_contains(?, json_extract_string(r.manifest, '$.request.metric.name')) "
        "AND EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.run_id AND x.grp = 'gender') "
        "ORDER BY r.created_at DESC", [names])
    if found.empty:
        return None
    return str(found.iloc[0]["run_id"]), str(found.iloc[0]["metric"])


def bias_quality_points(correlations: Mapping[str, Correlation], bias: pd.DataFrame,
                        labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One point per metric that has both numbers: gender bias (x, with its interval) and agreement with people
    (y: the correlations' statistic under their rule, with its interval and what that interval resamples)."""
    rows = []
    by_metric = {row.metric: row for row in bias.itertuples(index=False)} if not bias.empty else {}
    for name, c in correlations.items():
        row = by_metric.get(name)
        if row is None:
            continue
        rows.append({"metric": name, "label": (labels or {}).get(name, name), "bias": row.bias,
                     "bias_ci_low": row.ci_low, "bias_ci_high": row.ci_high, "agreement": c.value,
                     "agreement_ci_low": c.ci_low, "agreement_ci_high": c.ci_high, "rule": c.rule,
                     "agreement_of": c.statistic, "agreement_resample": c.resample, "bias_source": row.source})
    columns = ["metric", "label", "bias", "bias_ci_low", "bias_ci_high", "agreement", "agreement_ci_low",
               "agreement_ci_high", "rule", "agreement_of", "agreement_resample", "bias_source"]
    return pd.DataFrame(rows, columns=columns)


def metric_labels(metrics: Sequence[Any], stored: Sequence[str] = ()) -> dict[str, str]:
    """{name: label}: a model-based metric names its backbone ("BERTScore (all-minilm-l6-v2)")."""
    labels = {}
    for metric in metrics:
        model = getattr(metric, "model_id", None)
        labels[metric.name] = f"{metric.label} ({model})" if model else metric.label
    return labels | {column: column for column in stored}


def gender_bias_estimate_s(metrics: Sequence[Any]) -> float:
    """Seconds to score WinoBias type1-dev (396 pairs, 792 candidates) with these metrics on the 2-core reference
    machine (the metric-bias study's documented rates; stored runs are read back instead)."""
    from fairness_core.metric_bias.request import RATE_MS

    return sum(792 * RATE_MS.get(m.family, 30.0) / 1000 for m in metrics)


def gender_bias_work(metrics: Sequence[Any]) -> Any:
    """What the bias tab's job costs (`fairness_core.jobs.estimates.Work`): WinoBias type1-dev's 792 candidates per
    metric, torch-bound when a model-based metric runs."""
    from fairness_core.jobs.estimates import SHARE, TORCH, Work

    units = 792 * max(len(metrics), 1)
    torch_bound = any(getattr(m, "family", "") != "n-gram" for m in metrics)
    return Work("metric-quality-bias", units, gender_bias_estimate_s(metrics) / units, "candidates × metrics", 0.0,
                TORCH if torch_bound else SHARE)
