"""Meta-evaluation of DATScore against human (or synthetic) judgements, with bootstrap CIs and the paper's
ablations (Table 6, Fig. 2).

* Relative ranking: WMT Kendall τ-like (Eq. 5, metric ties Discordant). The bootstrap resamples the *units
  that were sampled*: the source segments (`group` of each judgement: all pairs of one source move together;
  a pair without a group is its own unit).
* Direct assessment: Pearson |r|; the bootstrap resamples the *source segments* too (`units`: all hypotheses of
  one source move together, metric and human score kept paired; a segment without a source is its own unit).
  Until issue 30 it resampled hypotheses one by one, as if the hypotheses of one source were independent: a
  source's difficulty moves both the metric and the human score of all its hypotheses, and that interval
  covered the true |r| far less often than 95% at the shipped 30 sources × 6 hypotheses
  (`tests/datscore/test_metaeval_units.py`).
* Corpus state is never re-derived inside a resample: the Eq. 3 weights are computed once over the whole
  corpus and held fixed; a resample only re-draws which judgements are counted.

Ablations on one set of stored direction scores (no model call), each changing **one** thing relative to
the full DATScore (entropy-weighted sum of Eq. 1 + Eq. 4, one-vs-rest Eq. 3): the three other token
aggregations (mean, plain sum, entropy-normalised mean — so weighting and length normalisation are told
apart), uniform direction averaging, Eq. 3 with negative weights clipped to 0; then each single direction,
DATScore without one direction (Eq. 3 recomputed over the remaining 7), BARTScore's facets as baselines, and
length alone (fewer hypothesis tokens = better) as a covariate. Every row also carries a *paired* bootstrap
interval of its difference from the full DATScore: both are computed on the same resampled source segments,
so the interval says whether the difference is distinguishable from 0 — overlapping marginal intervals do not.

Eq. 3 weights get their own bootstrap (`weight_intervals`): the resample re-draws source segments (with all
their hypotheses, as the design sampled them) and recomputes the correlations, so the interval shows how
much the weights depend on which sources were drawn.
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


def _group_counts(metric: Mapping[str, float], ranking: Sequence[tuple[str, str, str]],
                  groups: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """(group order, (G, 2) concordant/discordant counts per ranking unit)."""
    counts: dict[str, list[int]] = {g: [0, 0] for g in groups} if groups is not None else {}
    for better, worse, group in ranking:
        c, d = W.concordance(metric, [(better, worse)])
        row = counts.setdefault(group, [0, 0])
        row[0] += c
        row[1] += d
    return list(counts), np.array(list(counts.values()), dtype=np.float64).reshape(-1, 2)


def _tau_of(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums[..., 0] - sums[..., 1]) / sums.sum(axis=-1)


def tau_interval(metric: Mapping[str, float], ranking: Sequence[tuple[str, str, str]], n_resamples: int = 1000,
                 seed: int = 0) -> Interval:
    """Eq. 5 τ-like with a percentile bootstrap over ranking units (groups)."""
    _, per = _group_counts(metric, ranking)
    if not len(per):
        return Interval(float("nan"), float("nan"), float("nan"), 0, 0)
    total = per.sum(axis=0)
    value = float((total[0] - total[1]) / total.sum()) if total.sum() else float("nan")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(per), size=(n_resamples, len(per)))
    low, high = _quantiles(_tau_of(per[draws].sum(axis=1)))
    return Interval(value, low, high, int(total.sum()), len(per))


def tau_difference_interval(metric: Mapping[str, float], reference: Mapping[str, float],
                            ranking: Sequence[tuple[str, str, str]], n_resamples: int = 1000,
                            seed: int = 0) -> Interval:
    """τ(metric) − τ(reference) with a *paired* percentile bootstrap: each resample draws one set of ranking
    units (source segments) and computes both τ on it, so what the two share cancels out."""
    groups, ref = _group_counts(reference, ranking)
    _, per = _group_counts(metric, ranking, groups)
    if not len(per):
        return Interval(float("nan"), float("nan"), float("nan"), 0, 0)
    value = float(_tau_of(per.sum(axis=0)) - _tau_of(ref.sum(axis=0)))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(per), size=(n_resamples, len(per)))
    low, high = _quantiles(_tau_of(per[draws].sum(axis=1)) - _tau_of(ref[draws].sum(axis=1)))
    return Interval(value, low, high, int(per.sum()), len(per))


def unit_multiplicities(units: Sequence[str], n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n_rows) weights of a bootstrap that draws *units* with replacement (as many as there are):
    each row gets the number of times its unit was drawn, so all rows of a unit move together."""
    names, index = np.unique(np.asarray(units, dtype=object).astype(str), return_inverse=True)
    draws = np.random.default_rng(seed).integers(0, len(names), size=(n_resamples, len(names)))
    counts = np.zeros((n_resamples, len(names)))
    np.add.at(counts, (np.arange(n_resamples)[:, None], draws), 1.0)
    return counts[:, index]


def weighted_pearson_abs(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|Pearson r| of x and y for each row of multiplicity `weights` (R, n): (R,); NaN where a side is constant."""
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = (weights @ x) / total, (weights @ y) / total
        sxy = weights @ (x * y) / total - mx * my
        sxx = weights @ (x * x) / total - mx * mx
        syy = weights @ (y * y) / total - my * my
        denominator = np.sqrt(np.maximum(sxx, 0.0) * np.maximum(syy, 0.0))
        relative = 1e-12 * (weights @ (x * x) / total) * (weights @ (y * y) / total)  # a constant side's rounding
        return np.where(denominator**2 > relative, np.abs(sxy) / denominator, np.nan)


def _units_of(units: Sequence[str] | None, n: int) -> list[str]:
    if units is None:
        return [f"segment {i}" for i in range(n)]
    if len(units) != n:
        raise ValueError("units must name one unit per segment")
    return [str(u) for u in units]


def pearson_interval(metric: Sequence[float], human: Sequence[float], n_resamples: int = 1000,
                     seed: int = 0, units: Sequence[str] | None = None) -> Interval:
    """|Pearson r| with a percentile bootstrap over `units` (the source segment of each row; None: each row its
    own unit), metric and human score resampled together."""
    x, y = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    unit = np.asarray(_units_of(units, x.size), dtype=object)[keep]
    x, y = x[keep], y[keep]
    value = W.pearson_abs(x, y)
    n_units = len(set(unit))
    if x.size < 3 or n_units < 2:
        return Interval(value, float("nan"), float("nan"), int(x.size), n_units)
    weights = unit_multiplicities(unit, n_resamples, seed)
    low, high = _quantiles(weighted_pearson_abs(weights, x, y))
    return Interval(value, low, high, int(x.size), n_units)


def pearson_difference_interval(metric: Sequence[float], reference: Sequence[float], human: Sequence[float],
                                n_resamples: int = 1000, seed: int = 0,
                                units: Sequence[str] | None = None) -> Interval:
    """|r(metric)| − |r(reference)| against the same human scores, paired: one draw of units (source segments;
    None: each row its own) for both."""
    x, z, y = (np.asarray(v, dtype=np.float64) for v in (metric, reference, human))
    keep = np.isfinite(x) & np.isfinite(z) & np.isfinite(y)
    unit = np.asarray(_units_of(units, x.size), dtype=object)[keep]
    x, z, y = x[keep], z[keep], y[keep]
    value = W.pearson_abs(x, y) - W.pearson_abs(z, y)
    n_units = len(set(unit))
    if x.size < 3 or n_units < 2:
        return Interval(value, float("nan"), float("nan"), int(x.size), n_units)
    weights = unit_multiplicities(unit, n_resamples, seed)
    low, high = _quantiles(weighted_pearson_abs(weights, x, y) - weighted_pearson_abs(weights, z, y))
    return Interval(value, low, high, int(x.size), n_units)


def weight_intervals(matrix: np.ndarray, units: Sequence[str], labels: Sequence[str] = D.LABELS,
                     n_resamples: int = 1000, seed: int = 0) -> dict[str, dict[str, float]]:
    """Eq. 3 weights with a percentile bootstrap over sampling units (`units[i]` = the source group of row i;
    all rows of a drawn unit come together, as the design sampled them). Per direction: value, ci_low,
    ci_high and `p_negative`, the share of resamples in which the weight is below 0."""
    matrix = np.asarray(matrix, dtype=np.float64)
    value = W.one_vs_rest_weights(matrix)
    names = list(dict.fromkeys(units))
    rows_of = [np.flatnonzero(np.asarray([u == name for u in units])) for name in names]
    rng = np.random.default_rng(seed)
    samples = []
    for draw in rng.integers(0, len(names), size=(n_resamples, len(names))):
        rows = np.concatenate([rows_of[k] for k in draw])
        try:
            samples.append(W.one_vs_rest_weights(matrix[rows]))
        except ValueError:  # fewer than 2 complete segments drawn: no weights for this resample
            continue
    table = np.array(samples).reshape(-1, matrix.shape[1])
    out = {}
    for j, label in enumerate(labels):
        low, high = _quantiles(table[:, j]) if len(table) else (float("nan"), float("nan"))
        out[label] = {"value": float(value[j]), "ci_low": low, "ci_high": high,
                      "p_negative": float((table[:, j] < 0).mean()) if len(table) else float("nan")}
    return out


def negative_weight_note(weights: Mapping[str, float]) -> str | None:
    """One sentence when Eq. 3 gave a direction a negative weight (faithful to the paper, not its intent)."""
    negative = {d: w for d, w in weights.items() if np.isfinite(w) and w < 0}
    if not negative:
        return None
    listed = ", ".join(f"{d} {w:.4g}" for d, w in negative.items())
    return (f"Eq. 3 gave negative weight(s): {listed}. This is Eq. 3 as written (a direction that anti-correlates "
            "with the others counts against DATScore), not what the paper intends; the option 'negatives clipped "
            "to 0' shows the combination without them.")


@dataclass(frozen=True)
class Variant:
    name: str
    kind: str  # full | ablation | single | leave-one-out | facet | covariate
    term_weighting: str
    averaging: str | None
    scores: dict[str, float]
    weights: dict[str, float] | None = None
    changes: str = ""  # what differs from the full DATScore (one thing per ablation row)


FULL_NAME = "full DATScore (entropy-weighted sum, one-vs-rest Eq. 3)"


def _named(segments: Sequence[str], values: np.ndarray) -> dict[str, float]:
    return {s: float(v) for s, v in zip(segments, values, strict=True)}


def _combined(name: str, kind: str, tw: str, averaging: str, segments: Sequence[str], matrix: np.ndarray,
              labels: Sequence[str], changes: str) -> Variant:
    w = W.direction_weights(matrix, averaging)
    return Variant(name, kind, tw, averaging, _named(segments, W.combine(matrix, w)),
                   dict(zip(labels, map(float, w), strict=True)), changes)


def variants(matrices: Mapping[str, tuple[list[str], np.ndarray]], labels: Sequence[str] = D.LABELS,
             term_weighting: str = W.ENTROPY, hypo_tokens: Mapping[str, float] | None = None) -> list[Variant]:
    """Every scoring to compare. First the full DATScore, then Table 6's ablations, each changing exactly one
    thing: the token aggregation (each of the other three in `matrices`) or the direction averaging (uniform;
    Eq. 3 with negatives clipped). Then single directions and leave-one-out (Fig. 2) under `term_weighting`,
    BARTScore's facets (mean terms, as BARTScore), and with `hypo_tokens` the length covariate: fewer
    hypothesis tokens = better, alone."""
    segments, matrix = matrices[W.ENTROPY]
    out = [_combined(FULL_NAME, "full", W.ENTROPY, W.ONE_VS_REST, segments, matrix, labels, "")]
    for tw in W.TERM_WEIGHTINGS:
        if tw == W.ENTROPY or tw not in matrices:
            continue
        other_segments, other = matrices[tw]
        out.append(_combined(f"terms: {W.TERM_LABELS[tw]}", "ablation", tw, W.ONE_VS_REST, other_segments, other,
                             labels, f"token aggregation → {tw}"))
    out.append(_combined("directions: uniform average", "ablation", W.ENTROPY, W.UNIFORM, segments, matrix, labels,
                         "direction weights → uniform"))
    out.append(_combined("directions: Eq. 3, negatives clipped to 0", "ablation", W.ENTROPY, W.ONE_VS_REST_CLIPPED,
                         segments, matrix, labels, "negative Eq. 3 weights → 0"))
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
    if hypo_tokens:
        out.append(Variant("length alone (fewer hypothesis tokens = better)", "covariate", "", None,
                           {s: -float(n) for s, n in hypo_tokens.items()},
                           changes="covariate: −(hypothesis tokens) instead of any score"))
    return out


def meta_table(variant_list: Sequence[Variant], ranking: Sequence[tuple[str, str, str]] | None = None,
               human: Mapping[str, float] | None = None, n_resamples: int = 1000, seed: int = 0,
               reference: str | None = None, units: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """One row per variant: τ-like (with a ranking) or |r| (with DA scores), 95% bootstrap CI, and the paired
    bootstrap interval of its difference from the `reference` variant (default: the first one). The ranking
    carries its units (groups); for |r|, `units` maps a segment id to its source (the unit resampled; a segment
    not in it is its own unit)."""
    if not variant_list:
        return []
    base = next((v for v in variant_list if v.name == reference), variant_list[0])
    rows = []
    for variant in variant_list:
        if ranking:
            interval = tau_interval(variant.scores, ranking, n_resamples, seed)
            difference = tau_difference_interval(variant.scores, base.scores, ranking, n_resamples, seed)
            statistic = "kendall_tau_like"
        elif human:
            ids = [s for s in variant.scores if s in human and s in base.scores]
            unit = [(units or {}).get(s) or f"segment {s}" for s in ids]
            interval = pearson_interval([variant.scores[s] for s in ids], [human[s] for s in ids], n_resamples, seed,
                                        unit)
            difference = pearson_difference_interval([variant.scores[s] for s in ids], [base.scores[s] for s in ids],
                                                     [human[s] for s in ids], n_resamples, seed, unit)
            statistic = "pearson_abs"
        else:
            continue
        rows.append({"variant": variant.name, "kind": variant.kind, "changes": variant.changes,
                     "term_weighting": variant.term_weighting, "averaging": variant.averaging,
                     "statistic": statistic, "value": interval.value, "ci_low": interval.ci_low,
                     "ci_high": interval.ci_high, "n": interval.n, "units": interval.units,
                     "difference": difference.value, "difference_ci_low": difference.ci_low,
                     "difference_ci_high": difference.ci_high, "difference_from": base.name})
    return rows


def hypothesis_tokens(scores: Any, direction: str = D.PRECISION) -> dict[str, float]:
    """Scored hypothesis tokens per segment (the target of `direction`, Ref→Hypo by default)."""
    if "n_tokens" not in getattr(scores, "columns", ()):
        return {}
    rows = scores[scores["direction"] == direction]
    return {str(s): float(n) for s, n in zip(rows["segment_id"], rows["n_tokens"], strict=True) if np.isfinite(n)}


def pipeline_report(outcome: Any, ranking: Sequence[tuple[str, str, str]] | None = None, n_resamples: int = 1000,
                    seed: int = 0) -> dict[str, Any]:
    """The `datscore score --json` payload: weights (with bootstrap CIs), per-segment scores, meta-evaluation
    rows (each with its paired difference from the full DATScore), the length covariate, notes."""
    from fairness_core.datscore.request import backbone_name
    from fairness_core.datscore.task import score_matrix
    from fairness_core.translation.backbones import metric_label_for

    request = outcome.request
    order = [s.segment_id for s in request.segments.segments]
    matrices = {tw: score_matrix(outcome.scores, tw, segment_order=order) for tw in W.TERM_WEIGHTINGS}
    tokens = hypothesis_tokens(outcome.scores)
    found = variants(matrices, hypo_tokens=tokens)
    label = metric_label_for(outcome.backbone["kind"])
    default = found[0]
    human = {s.segment_id: s.human for s in request.segments.segments if s.human is not None}
    units = [s.group or s.segment_id for s in request.segments.segments]
    notes = []
    if request.segments.synthetic:
        notes.append("synthetic: the quality order comes from known degradations, not from human judgements")
    if outcome.backbone["kind"] != "seq2seq":
        notes.append(f"{label} is the LM variant: a causal LM translates and scores with a prompt; it is not the "
                     "paper's seq2seq DATScore")
    if outcome.backbone.get("entropy"):  # an endpoint: entropies from its top-k log-probs only
        notes.append(f"entropy weights (Eq. 4) are {outcome.backbone['entropy']}; the entropy-weighted variants are "
                     "approximations")
    missing = int((~np.isfinite(matrices[W.ENTROPY][1])).any(axis=1).sum())
    if missing:
        notes.append(f"{missing} segment(s) have a direction with no scored token: no score, not in the weights")
    negative = negative_weight_note(default.weights or {})
    if negative:
        notes.append(negative)
    clipped = next(v for v in found if v.averaging == W.ONE_VS_REST_CLIPPED and v.kind == "ablation")
    return {
        "metric": label, "model": backbone_name(outcome.backbone), "backbone": outcome.backbone["kind"],
        "data": request.segments.name, "synthetic": request.segments.synthetic,
        "languages": D.entity_languages(request.src_lang, request.tgt_lang),
        "n_segments": len(order), "runs": {"translations": outcome.translations_run,
                                           "directions": outcome.directions_run},
        "from_cache": outcome.from_cache,
        "weights": {tw: dict(zip(D.LABELS, map(float, W.one_vs_rest_weights(matrices[tw][1])), strict=True))
                    for tw in W.TERM_WEIGHTINGS},
        "weight_intervals": weight_intervals(matrices[W.ENTROPY][1], units, n_resamples=n_resamples, seed=seed),
        "weights_negatives_clipped": clipped.weights,
        "scores": {k: (None if not np.isfinite(x) else x) for k, x in default.scores.items()},
        "meta_evaluation": meta_table(found, ranking, human or None, n_resamples, seed,
                                      units={s.segment_id: s.group or s.segment_id
                                             for s in request.segments.segments}),
        "hypothesis_tokens": tokens_by_level(tokens) if request.segments.synthetic else None,
        "notes": notes,
    }


def tokens_by_level(tokens: Mapping[str, float]) -> dict[str, float]:
    """Mean scored hypothesis tokens per synthetic degradation level (the length covariate)."""
    from fairness_core.datscore.synthetic import level_of

    by_level: dict[int, list[float]] = {}
    for segment, n in tokens.items():
        by_level.setdefault(level_of(segment), []).append(n)
    return {str(level): float(np.mean(values)) for level, values in sorted(by_level.items())}


def uploaded_variants(result: Any, segments: Sequence[str], directions: Sequence[str],
                      matrix: np.ndarray) -> list[Variant]:
    """For uploaded direction scores: Eq. 2 with one-vs-rest weights, then each direction alone."""
    found = [Variant("Eq. 2, one-vs-rest", "combined", "given", W.ONE_VS_REST, result.scores_dict())]
    found += [Variant(f"only {d}", "single", "given", None,
                      dict(zip(segments, map(float, matrix[:, j]), strict=True))) for j, d in enumerate(directions)]
    return found


def eq3_weights(matrix: np.ndarray, labels: Sequence[str] = D.LABELS) -> dict[str, float]:
    """Eq. 3 one-vs-rest weight of each direction over a (segments x directions) score matrix."""
    return dict(zip(labels, map(float, W.one_vs_rest_weights(matrix)), strict=True))


def with_weight_intervals(table: Any, matrix: np.ndarray, units: Sequence[str], n_resamples: int = 1000) -> Any:
    """The weights table with the 95% interval of each Eq. 3 weight (`weight_intervals`: source units resampled,
    correlations recomputed) as "Eq. 3 CI low" / "Eq. 3 CI high"."""
    intervals = weight_intervals(matrix, units, n_resamples=n_resamples)
    table = table.copy()
    table["Eq. 3 CI low"] = [intervals[d]["ci_low"] for d in table["direction"]]
    table["Eq. 3 CI high"] = [intervals[d]["ci_high"] for d in table["direction"]]
    return table
