"""Meta-evaluation of DATScore against human (or synthetic) judgements, with bootstrap CIs and the paper's
ablations (Table 6, Fig. 2).

* Relative ranking: WMT Kendall τ-like (Eq. 5, metric ties Discordant). The bootstrap resamples the *units
  that were sampled*: the source segments (`group` of each judgement: all pairs of one source move together;
  a pair without a group is its own unit).
* Direct assessment: Pearson |r|; the bootstrap resamples segments, metric and human score kept paired.
* Corpus state is never re-derived inside a resample: the Eq. 3 weights are computed once over the whole
  corpus and held fixed; a resample only re-draws which judgements are counted.

Ablations on one set of stored direction scores (no model call): each single direction, DATScore without one
direction (Eq. 3 recomputed over the remaining 7), and the 2 × 2 of term weighting (entropy Eq. 4 / uniform)
× direction averaging (one-vs-rest Eq. 3 / uniform), plus BARTScore's facets as baselines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairness_core.translation import directions as D
from fairness_core.translation import weights as W

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    value: float
    ci_low: float
    ci_high: float
    n: int  # judgements counted (pairs for τ, segments for |r|)
    units: int  # resampled units


def _quantiles(samples: np.ndarray) -> tuple[float, float]:
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return float("nan"), float("nan")
    alpha = (1 - LEVEL) / 2
    low, high = np.quantile(finite, [alpha, 1 - alpha])
    return float(low), float(high)


def tau_interval(metric: Mapping[str, float], ranking: Sequence[tuple[str, str, str]], n_resamples: int = 1000,
                 seed: int = 0) -> Interval:
    """Eq. 5 τ-like with a percentile bootstrap over ranking units (groups)."""
    groups: dict[str, list[int]] = {}
    for better, worse, group in ranking:
        c, d = W.concordance(metric, [(better, worse)])
        counts = groups.setdefault(group, [0, 0])
        counts[0] += c
        counts[1] += d
    if not groups:
        return Interval(float("nan"), float("nan"), float("nan"), 0, 0)
    per = np.array(list(groups.values()), dtype=np.float64)  # (G, 2)
    total = per.sum(axis=0)
    value = float((total[0] - total[1]) / total.sum()) if total.sum() else float("nan")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(per), size=(n_resamples, len(per)))
    sums = per[draws].sum(axis=1)  # (R, 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = (sums[:, 0] - sums[:, 1]) / sums.sum(axis=1)
    low, high = _quantiles(samples)
    return Interval(value, low, high, int(total.sum()), len(per))


def pearson_interval(metric: Sequence[float], human: Sequence[float], n_resamples: int = 1000,
                     seed: int = 0) -> Interval:
    """|Pearson r| with a percentile bootstrap over segments (metric and human score resampled together)."""
    x, y = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    value = W.pearson_abs(x, y)
    if x.size < 3:
        return Interval(value, float("nan"), float("nan"), int(x.size), int(x.size))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, x.size, size=(n_resamples, x.size))
    samples = np.array([W.pearson_abs(x[d], y[d]) for d in draws])
    low, high = _quantiles(samples)
    return Interval(value, low, high, int(x.size), int(x.size))


@dataclass(frozen=True)
class Variant:
    name: str
    kind: str  # combined | single | leave-one-out | facet
    term_weighting: str
    averaging: str | None
    scores: dict[str, float]
    weights: dict[str, float] | None = None


def _named(segments: Sequence[str], values: np.ndarray) -> dict[str, float]:
    return {s: float(v) for s, v in zip(segments, values, strict=True)}


def variants(matrices: Mapping[str, tuple[list[str], np.ndarray]], labels: Sequence[str] = D.LABELS,
             term_weighting: str = W.ENTROPY) -> list[Variant]:
    """Every scoring to compare: the 2 × 2 weightings (Table 6), single directions and leave-one-out (Fig. 2)
    under `term_weighting`, and BARTScore's facets (uniform terms, as BARTScore)."""
    out: list[Variant] = []
    for tw in (W.ENTROPY, W.UNIFORM):
        segments, matrix = matrices[tw]
        for averaging in (W.ONE_VS_REST, W.UNIFORM):
            w = W.direction_weights(matrix, averaging)
            out.append(Variant(f"terms={tw}, directions={averaging}", "combined", tw, averaging,
                               _named(segments, W.combine(matrix, w)), dict(zip(labels, map(float, w), strict=True))))
    segments, matrix = matrices[term_weighting]
    for j, label in enumerate(labels):
        out.append(Variant(f"only {label}", "single", term_weighting, None, _named(segments, matrix[:, j])))
    for j, label in enumerate(labels):
        rest = [k for k in range(len(labels)) if k != j]
        w = W.one_vs_rest_weights(matrix[:, rest])
        out.append(Variant(f"without {label}", "leave-one-out", term_weighting, W.ONE_VS_REST,
                           _named(segments, W.combine(matrix[:, rest], w)),
                           {labels[k]: float(v) for k, v in zip(rest, w, strict=True)}))
    segments, matrix = matrices[W.UNIFORM]
    columns = {label: matrix[:, j] for j, label in enumerate(labels)}
    facets = {"BARTScore P (Ref→Hypo)": columns[D.PRECISION], "BARTScore R (Hypo→Ref)": columns[D.RECALL],
              "BARTScore F": (columns[D.PRECISION] + columns[D.RECALL]) / 2}
    if D.FAITHFULNESS in columns:
        facets["BARTScore faithfulness (Src→Hypo)"] = columns[D.FAITHFULNESS]
    for name, values in facets.items():
        out.append(Variant(name, "facet", W.UNIFORM, None, _named(segments, values)))
    return out


def meta_table(variant_list: Sequence[Variant], ranking: Sequence[tuple[str, str, str]] | None = None,
               human: Mapping[str, float] | None = None, n_resamples: int = 1000, seed: int = 0
               ) -> list[dict[str, Any]]:
    """One row per variant: τ-like (with a ranking) or |r| (with DA scores), 95% bootstrap CI."""
    rows = []
    for variant in variant_list:
        if ranking:
            interval = tau_interval(variant.scores, ranking, n_resamples, seed)
            statistic = "kendall_tau_like"
        elif human:
            ids = [s for s in variant.scores if s in human]
            interval = pearson_interval([variant.scores[s] for s in ids], [human[s] for s in ids], n_resamples, seed)
            statistic = "pearson_abs"
        else:
            continue
        rows.append({"variant": variant.name, "kind": variant.kind, "term_weighting": variant.term_weighting,
                     "averaging": variant.averaging, "statistic": statistic, "value": interval.value,
                     "ci_low": interval.ci_low, "ci_high": interval.ci_high, "n": interval.n,
                     "units": interval.units})
    return rows


def pipeline_report(outcome: Any, ranking: Sequence[tuple[str, str, str]] | None = None, n_resamples: int = 1000,
                    seed: int = 0) -> dict[str, Any]:
    """The `datscore score --json` payload: weights, per-segment scores, meta-evaluation rows, notes."""
    from fairness_core.datscore.task import score_matrix
    from fairness_core.translation.backbones import metric_label_for

    request = outcome.request
    order = [s.segment_id for s in request.segments.segments]
    matrices = {tw: score_matrix(outcome.scores, tw, segment_order=order) for tw in W.TERM_WEIGHTINGS}
    found = variants(matrices)
    label = metric_label_for(outcome.backbone["kind"])
    default = next(v for v in found if v.kind == "combined" and v.term_weighting == W.ENTROPY
                   and v.averaging == W.ONE_VS_REST)
    human = {s.segment_id: s.human for s in request.segments.segments if s.human is not None}
    notes = []
    if request.segments.synthetic:
        notes.append("synthetic: the quality order comes from known degradations, not from human judgements")
    if outcome.backbone["kind"] != "seq2seq":
        notes.append(f"{label} is the LM variant: a causal LM translates and scores with a prompt; it is not the "
                     "paper's seq2seq DATScore")
    missing = int((~np.isfinite(matrices[W.ENTROPY][1])).any(axis=1).sum())
    if missing:
        notes.append(f"{missing} segment(s) have a direction with no scored token: no score, not in the weights")
    return {
        "metric": label, "model": outcome.backbone["model"].get("source"), "backbone": outcome.backbone["kind"],
        "data": request.segments.name, "synthetic": request.segments.synthetic,
        "languages": D.entity_languages(request.src_lang, request.tgt_lang),
        "n_segments": len(order), "runs": {"translations": outcome.translations_run,
                                           "directions": outcome.directions_run},
        "from_cache": outcome.from_cache,
        "weights": {v.term_weighting: v.weights for v in found
                    if v.kind == "combined" and v.averaging == W.ONE_VS_REST},
        "scores": {k: (None if not np.isfinite(x) else x) for k, x in default.scores.items()},
        "meta_evaluation": meta_table(found, ranking, human or None, n_resamples, seed),
        "notes": notes,
    }
