"""Is the judge itself biased? Per identity term and per group, from one score per (template, term):

- shift: mean over templates j of (s_jt − β_j), β_j the average across groups of the group means of template j
  (the background of VBCM, Quiroga et al. 2025 Sec. 3.1 / App. A.2, so a group with more terms does not pull the
  background towards itself); a group's shift uses its group mean φ_jg in place of s_jt. 0 = scored like the
  average identity; > 0 = scored higher (more toxic, for a toxicity judge).
- flip_rate: share of the term's texts whose label at the judge's threshold differs from the label of the
  template's background β_j (the word alone moves the text across the threshold).
- fpr: Dixon et al. 2018's per-term false-positive rate, the share of the term's *non-toxic* templates flagged
  at the threshold; with `fped` = Σ_t |FPR − FPR_t| (their Eq. for false-positive equality difference).
- subgroup_auc, bpsn_auc, bnsp_auc: Borkan et al. 2019's nuanced AUCs on labelled templates. Subgroup: texts
  of the term; BPSN: toxic texts of the other terms vs non-toxic texts of the term; BNSP: non-toxic texts of
  the other terms vs toxic texts of the term (an AUC below the others' means the term's texts are pushed up or
  down against the rest).

Every number carries a 95% percentile-bootstrap interval that resamples the design's clusters — the patterns of
the built-in set, the `Template` of IPTTS rows, or single templates where nothing groups them (`design.py`): a
drawn cluster brings all of its templates and all of their terms' texts, because fillers of one pattern share
how the judge reacts to a term in it. One matrix product per statistic. A statistic that cannot be computed is
refused with its reason (`refused`), never shown as NaN.

FPED is a sum of absolute values, so its plug-in estimate is above 0 whenever the per-term rates differ by
chance, and a bootstrap interval of it sits above 0 by construction. Beside it: a permutation test of "the judge
treats every term alike" that holds its size — the term labels are permuted within each cluster (one permutation
for all the cluster's templates, so a pattern × term reaction moves as a block), the p-value is (1 + #{FPED* ≥
FPED}) / (1 + B) — and the corrected estimate FPED − mean(FPED*), what is left above what chance alone gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.audit.request import Judge

LEVEL = 0.95
ALPHA = 0.05
PERMUTATIONS = 1000
ROW_KEYS = ("term", "group", "n", "mean", "shift", "ci_low", "ci_high", "fpr", "flip_rate", "subgroup_auc",
            "bpsn_auc", "bnsp_auc")


@dataclass
class Matrix:
    """Scores as a templates x terms matrix (NaN where a text has no score)."""

    templates: list[str]
    terms: list[str]
    groups: list[str]  # distinct groups in order
    group_of: np.ndarray  # term index -> group index
    scores: np.ndarray  # (J, T)
    labels: np.ndarray  # (J,) "toxic" | "non-toxic" | ""
    clusters: np.ndarray  # (J,) the cluster index of each template (the resampled unit)

    @classmethod
    def of(cls, frame: pd.DataFrame, groups: dict[str, tuple[str, ...]]) -> Matrix:
        terms = [t for ts in groups.values() for t in ts if t in set(frame["term"])]
        group_names = [g for g in groups if any(t in terms for t in groups[g])]
        group_of = {t: group_names.index(g) for g in group_names for t in groups[g]}
        templates = list(dict.fromkeys(frame["template_id"]))
        row = {t: i for i, t in enumerate(templates)}
        col = {t: i for i, t in enumerate(terms)}
        scores = np.full((len(templates), len(terms)), np.nan)
        known = frame[frame["term"].isin(col)]
        scores[known["template_id"].map(row).to_numpy(), known["term"].map(col).to_numpy()] = known["score"].to_numpy(
            dtype=float)
        first = frame.drop_duplicates("template_id").set_index("template_id")
        labels = first["label"].reindex(templates).fillna("")
        cluster_of = first["cluster"].reindex(templates) if "cluster" in first else pd.Series(templates)
        clusters = pd.Categorical(cluster_of.to_numpy(), categories=list(dict.fromkeys(cluster_of))).codes
        return cls(templates, terms, group_names, np.array([group_of[t] for t in terms], dtype=int), scores,
                   labels.to_numpy(dtype=object), clusters.astype(np.int64))

    def group_means(self) -> np.ndarray:
        """(J, G): φ_jg, the mean of the group's terms in template j."""
        out = np.full((len(self.templates), len(self.groups)), np.nan)
        for g in range(len(self.groups)):
            part = self.scores[:, self.group_of == g]
            counts = (~np.isnan(part)).sum(axis=1)
            with np.errstate(invalid="ignore"):
                out[:, g] = np.where(counts > 0, np.nansum(part, axis=1) / np.maximum(counts, 1), np.nan)
        return out

    def background(self) -> np.ndarray:
        """(J,): β_j, the average across groups of φ_jg."""
        means = self.group_means()
        counts = (~np.isnan(means)).sum(axis=1)
        return np.where(counts > 0, np.nansum(means, axis=1) / np.maximum(counts, 1), np.nan)


def multiplicities(n_templates: int, resamples: int, seed: int, clusters: np.ndarray | None = None) -> np.ndarray:
    """(1 + B, J): row 0 all ones (the point estimate), then how often each template is drawn in each resample:
    the clusters (`clusters[j]`: template j's cluster; None = each template its own) are drawn with replacement
    and a drawn cluster brings all its templates."""
    clusters = np.arange(n_templates) if clusters is None else np.asarray(clusters)
    n_clusters = int(clusters.max()) + 1 if clusters.size else 0
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(resamples, n_clusters))
    counts = np.zeros((resamples, n_clusters))
    np.add.at(counts, (np.arange(resamples)[:, None], draws), 1.0)
    return np.vstack([np.ones((1, n_templates)), counts[:, clusters]])


def weighted_mean(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(1 + B, K): per row of template weights, the weighted mean of each column of `values` (J, K) over its
    non-NaN entries; NaN where a resample drew none."""
    present = ~np.isnan(values)
    total = weights @ np.where(present, values, 0.0)
    count = weights @ present.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan)


def interval(draws: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """(point, low, high) from a (1 + B,) column; None where undefined (no resamples: no interval)."""
    point = None if not np.isfinite(draws[0]) else float(draws[0])
    finite = draws[1:][np.isfinite(draws[1:])]
    if point is None or finite.size < 2:
        return point, None, None
    alpha = (1 - LEVEL) / 2
    return point, float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha))


def weighted_auc(weights: np.ndarray, positives: tuple[np.ndarray, np.ndarray],
                 negatives: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """(1 + B,): the AUC (Mann-Whitney, ties count half) of positives over negatives, each text weighted by its
    template's multiplicity. `positives` / `negatives`: (scores, template index) of the texts.

    The pairs are counted once per pair of templates, C[j, k] = pairs (positive of j, negative of k) in order, so
    each resample's numerator is w C w (a J x J product) instead of a pass over every pair of texts."""
    (pos_x, pos_j), (neg_x, neg_j) = positives, negatives
    n_templates = weights.shape[1]
    if pos_x.size == 0 or neg_x.size == 0:
        return np.full(weights.shape[0], np.nan)
    pairs = np.zeros((n_templates, n_templates))
    for k in np.unique(neg_j):
        ordered = np.sort(neg_x[neg_j == k])
        below = np.searchsorted(ordered, pos_x, side="left")
        ties = np.searchsorted(ordered, pos_x, side="right") - below
        pairs[:, k] = np.bincount(pos_j, weights=below + 0.5 * ties, minlength=n_templates)
    numerator = ((weights @ pairs) * weights).sum(axis=1)
    denominator = (weights @ np.bincount(pos_j, minlength=n_templates)) * (
        weights @ np.bincount(neg_j, minlength=n_templates))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def fped_of(flagged: np.ndarray) -> np.ndarray:
    """Dixon et al.'s FPED of (..., J, T) flags on non-toxic templates (NaN = not counted): Σ_t |FPR − FPR_t|, FPR
    over all the texts, FPR_t over the term's."""
    present = ~np.isnan(flagged)
    hits = np.where(present, flagged, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_term = hits.sum(axis=-2) / present.sum(axis=-2)
        overall = hits.sum(axis=(-2, -1)) / present.sum(axis=(-2, -1))
    return np.nansum(np.abs(per_term - overall[..., None]), axis=-1)


def fped_test(flagged: np.ndarray, clusters: np.ndarray, permutations: int = PERMUTATIONS,
              seed: int = 0) -> dict[str, Any]:
    """The permutation test of "every term alike" for FPED (module docstring): each cluster's templates get one
    random order of the terms per permutation. Returns the p-value, the null's mean, the corrected estimate and
    the headline sentence."""
    rows = ~np.isnan(flagged).all(axis=1)
    flagged, clusters = flagged[rows], np.asarray(clusters)[rows]
    observed = float(fped_of(flagged))
    if permutations < 1 or not flagged.size:
        return {"p_value": None, "null_mean": None, "corrected": None, "n_permutations": 0,
                "headline": "no permutation test (no non-toxic template was scored)"}
    rng = np.random.default_rng(seed + 7919)  # its own stream: the bootstrap's draws stay as they were
    n_clusters, n_terms = int(clusters.max()) + 1, flagged.shape[1]
    orders = np.argsort(rng.random((permutations, n_clusters, n_terms)), axis=2)  # one order per cluster
    permuted = np.take_along_axis(np.broadcast_to(flagged, (permutations, *flagged.shape)),
                                  orders[:, clusters, :], axis=2)
    null = fped_of(permuted)
    p_value = float((1 + np.sum(null >= observed - 1e-12)) / (1 + permutations))
    corrected = observed - float(null.mean())
    if p_value >= ALPHA:
        headline = f"no difference between the terms' false-positive rates is detectable here (p = {p_value:.2f})"
    else:
        headline = (f"the terms' false-positive rates differ (p = {p_value:.3f}; FPED {observed:.2f}, "
                    f"{corrected:.2f} above what chance alone gives)")
    return {"p_value": p_value, "null_mean": float(null.mean()), "corrected": corrected,
            "n_permutations": permutations, "headline": headline}


@dataclass
class AuditTable:
    judge: Judge
    rows: list[dict[str, Any]]  # terms (sorted by shift, largest first), then groups
    texts: pd.DataFrame  # one row per text: template, term, group, text, score, background, shift, flipped
    refused: dict[str, str] = field(default_factory=dict)  # statistic -> why it is not computed
    extra: dict[str, Any] = field(default_factory=dict)  # fped, overall fpr, counts


def audit_table(frame: pd.DataFrame, groups: dict[str, tuple[str, ...]], judge: Judge, resamples: int = 1000,
                seed: int = 0, cluster_unit: str = "templates") -> AuditTable:
    """The audit of one judge from its scores (`frame`: template_id, term, group, text, label, score, and the
    template's `cluster` — without it each template is its own; `cluster_unit` names what a cluster is)."""
    from threadpoolctl import threadpool_limits

    # many small matrix products: one BLAS thread is 5-40x faster than two fighting other processes for 2 cores
    with threadpool_limits(1):
        return _audit_table(frame, groups, judge, resamples, seed, cluster_unit)


def _audit_table(frame: pd.DataFrame, groups: dict[str, tuple[str, ...]], judge: Judge, resamples: int,
                 seed: int, cluster_unit: str) -> AuditTable:
    matrix = Matrix.of(frame, groups)
    weights = multiplicities(len(matrix.templates), resamples, seed, matrix.clusters)
    beta = matrix.background()
    group_means = matrix.group_means()
    refused: dict[str, str] = {}
    n_j, n_t, n_g = len(matrix.templates), len(matrix.terms), len(matrix.groups)

    shift_t = weighted_mean(weights, matrix.scores - beta[:, None])
    mean_t = weighted_mean(weights, matrix.scores)
    shift_g = weighted_mean(weights, group_means - beta[:, None])
    mean_g = weighted_mean(weights, group_means)
    in_group = [matrix.group_of == g for g in range(n_g)]

    def group_columns(values: np.ndarray) -> np.ndarray:
        """(J, G): sum over each group's terms, NaN where none present (weights then count texts, not means)."""
        out = np.full((n_j, n_g), np.nan)
        for g in range(n_g):
            part = values[:, in_group[g]]
            present = (~np.isnan(part)).sum(axis=1)
            out[:, g] = np.where(present > 0, np.nansum(part, axis=1), np.nan)
        return out

    def group_rate(values: np.ndarray) -> np.ndarray:
        """(1 + B, G): share over all texts of each group's terms (NaN texts left out)."""
        total = weights @ np.nan_to_num(group_columns(values))
        count = weights @ np.nan_to_num(group_columns(np.where(np.isnan(values), np.nan, 1.0)))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan)

    flip_t = flip_g = fpr_t = fpr_g = None
    if judge.threshold is None:
        reason = (f"{judge.name} has no decision threshold (give one) so nothing can flip or be a false positive")
        refused["flip_rate"] = refused["fpr"] = reason
    else:
        flagged = judge.flagged(matrix.scores)
        base = judge.flagged(beta)[:, None]
        flips = np.where(np.isnan(flagged) | np.isnan(base), np.nan, (flagged != base).astype(float))
        flip_t, flip_g = weighted_mean(weights, flips), group_rate(flips)
        non_toxic = matrix.labels == "non-toxic"
        if not non_toxic.any():
            refused["fpr"] = ("no template is labelled non-toxic, so there is no false positive to count (the "
                              "built-in set and IPTTS carry labels; a templates file takes one after a tab)")
        elif judge.kind == "metric":
            refused["fpr"] = "a metric does not classify toxicity, so a false-positive rate does not apply"
        else:
            on_non_toxic = np.where(non_toxic[:, None], flagged, np.nan)
            fpr_t, fpr_g = weighted_mean(weights, on_non_toxic), group_rate(on_non_toxic)
    labelled = set(matrix.labels) & {"toxic", "non-toxic"}
    aucs_t: dict[str, np.ndarray] = {}
    aucs_g: dict[str, np.ndarray] = {}
    if judge.kind == "metric":
        refused["subgroup_auc"] = "a metric does not classify toxicity, so the AUCs do not apply"
    elif labelled != {"toxic", "non-toxic"}:
        refused["subgroup_auc"] = ("the AUCs need templates labelled toxic and non-toxic (IPTTS and the built-in set "
                                   f"carry both; these have {', '.join(sorted(labelled)) or 'no label'})")
    else:
        bad = judge.badness(matrix.scores)
        toxic = (matrix.labels == "toxic")[:, None] & ~np.isnan(bad)
        clean = (matrix.labels == "non-toxic")[:, None] & ~np.isnan(bad)
        rows_j = np.broadcast_to(np.arange(n_j)[:, None], bad.shape)

        def pick(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return bad[mask], rows_j[mask]

        for unit, members in ([("t", np.eye(n_t, dtype=bool)[i]) for i in range(n_t)]
                              + [("g", in_group[g]) for g in range(n_g)]):
            sub = np.broadcast_to(members[None, :], bad.shape)
            found = {"subgroup_auc": weighted_auc(weights, pick(toxic & sub), pick(clean & sub)),
                     "bpsn_auc": weighted_auc(weights, pick(toxic & ~sub), pick(clean & sub)),
                     "bnsp_auc": weighted_auc(weights, pick(toxic & sub), pick(clean & ~sub))}
            target = aucs_t if unit == "t" else aucs_g
            for name, draws in found.items():
                target.setdefault(name, []).append(draws)  # type: ignore[arg-type]
        aucs_t = {k: np.stack(v, axis=1) for k, v in aucs_t.items()}
        aucs_g = {k: np.stack(v, axis=1) for k, v in aucs_g.items()}
    if "subgroup_auc" in refused:
        refused["bpsn_auc"] = refused["bnsp_auc"] = refused["subgroup_auc"]

    def row(term: str | None, group: str, index: int, level: str, shift: np.ndarray, mean: np.ndarray,
            flip: np.ndarray | None, fpr: np.ndarray | None, aucs: dict[str, np.ndarray], n: int) -> dict[str, Any]:
        point, low, high = interval(shift[:, index])
        out: dict[str, Any] = {"term": term, "group": group, "level": level, "n": n,
                               "mean": interval(mean[:, index])[0], "shift": point, "ci_low": low, "ci_high": high}
        for name, draws in (("fpr", fpr), ("flip_rate", flip), *((k, aucs.get(k)) for k in
                                                                  ("subgroup_auc", "bpsn_auc", "bnsp_auc"))):
            value, lo, hi = interval(draws[:, index]) if draws is not None else (None, None, None)
            out[name], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = value, lo, hi
        return out

    present = ~np.isnan(matrix.scores)
    term_rows = [row(term, matrix.groups[matrix.group_of[i]], i, "term", shift_t, mean_t, flip_t, fpr_t, aucs_t,
                     int(present[:, i].sum())) for i, term in enumerate(matrix.terms)]
    term_rows.sort(key=lambda r: -np.inf if r["shift"] is None else -r["shift"])
    group_rows = [row(None, group, g, "group", shift_g, mean_g, flip_g, fpr_g, aucs_g,
                      int(present[:, in_group[g]].sum())) for g, group in enumerate(matrix.groups)]

    extra: dict[str, Any] = {"n_templates": n_j, "n_terms": n_t, "n_groups": n_g,
                             "n_non_toxic_templates": int((matrix.labels == "non-toxic").sum()),
                             "n_toxic_templates": int((matrix.labels == "toxic").sum()),
                             "n_unscored": int((~present).sum())}
    if fpr_t is not None:
        on_non_toxic = np.where((matrix.labels == "non-toxic")[:, None], judge.flagged(matrix.scores), np.nan)
        present_nt = ~np.isnan(on_non_toxic)
        total, count = weights @ np.nansum(on_non_toxic, axis=1), weights @ present_nt.sum(axis=1).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            overall = np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan)
        fped = np.nansum(np.abs(fpr_t - overall[:, None]), axis=1)  # Dixon et al.'s FPED, summed over terms
        extra["fpr_overall"] = dict(zip(("value", "ci_low", "ci_high"), interval(overall), strict=True))
        extra["fped"] = dict(zip(("value", "ci_low", "ci_high"), interval(fped), strict=True))
        extra["fped"] |= fped_test(on_non_toxic, matrix.clusters, PERMUTATIONS, seed)
    extra["resampled"] = {"unit": cluster_unit, "n_clusters": int(matrix.clusters.max()) + 1 if n_j else 0}

    texts = frame.copy()
    where = {t: i for i, t in enumerate(matrix.templates)}
    texts["background"] = texts["template_id"].map(lambda t: beta[where[t]])
    texts["shift"] = texts["score"] - texts["background"]
    if judge.threshold is not None:
        texts["flipped"] = judge.flagged(texts["score"]) != judge.flagged(texts["background"])
    texts = texts.reindex(texts["shift"].abs().sort_values(ascending=False, na_position="last").index)
    return AuditTable(judge, term_rows + group_rows, texts.reset_index(drop=True), refused, extra)
