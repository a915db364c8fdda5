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

Every number carries a 95% interval over the design's clusters — the patterns of the built-in set, the `Template`
of IPTTS rows, or single templates where nothing groups them (`design.py`): a cluster brings all of its templates
and all of their terms' texts, because fillers of one pattern share how the judge reacts to a term in it. The
interval is the delete-a-cluster jackknife with a t reference (issue 42 §3): SE² = (C − 1)/C · Σ_c (θ_(c) −
θ_(·))², θ ± t_{ν, 0.975} · SE, ν the jackknife's effective degrees of freedom (`effective_df`: C − 1 for clusters
of one size, 7.2 for the built-in set's 11 unequal patterns) (Quenouille 1956, Tukey 1958; for clusters,
Wolter 2007, *Introduction to Variance Estimation*, §4.5; the t reference for few clusters: Cameron & Miller
2015, *A Practitioner's Guide to Cluster-Robust Inference*, §VI). The percentile bootstrap over the 11 patterns it
replaces covered 0.891 in simulation (a bootstrap of 11 units is too narrow by about √(10/11) and more); the
jackknife-t covers 0.952 (docs/statistics.md, "Judge audit"). More than `MAX_GROUPS` clusters are dealt into that many
random groups and a group is left out (Kott's delete-a-group jackknife, Kott 2001, *J. Official Statistics*
17(4)), so the cost stays one small matrix product per statistic. A statistic that cannot be computed is refused
with its reason (`refused`), never shown as NaN.

Per term, the shift's test is the t of the same jackknife, p = 2 · P(t_ν ≥ |shift / SE|), so the interval
excludes 0 exactly when p < 0.05; the terms are screened together, so a term is flagged by its Benjamini-Hochberg
q-value (false discovery rate ≤ 0.05 over the terms; `bias.multiplicity`), the unadjusted p shown beside it (the
groups are a family of their own). The "largest shift" is the maximum over the terms, so its interval must hold
whichever term came out on top: a max-T band (Westfall & Young 1993, *Resampling-Based Multiple Testing*, §2.6;
Romano & Wolf 2005, *Econometrica* 73(4)) whose critical value c is the 95% quantile of max_t |T*_t| over a wild
cluster bootstrap — each cluster's residual total u_ct = T_ct − N_ct · shift_t times one random sign shared by all
terms (Rademacher weights; Cameron, Gelbach & Miller 2008, *REStat* 90(3)), each T*_t studentised by its own
jackknife SE. The band shift ± c · SE holds every term at once; the largest shift's p is (1 + #{max|T*| ≥
|T_top|}) / (1 + B), the test the band inverts.

FPED is a sum of absolute values, so its plug-in estimate is above 0 whenever the per-term rates differ by
chance, and an interval of it sits above 0 almost by construction. Beside it: a permutation test of "the judge
treats every term alike" that holds its size — the term labels are permuted within each cluster (one permutation
for all the cluster's templates, so a pattern × term reaction moves as a block), the p-value is (1 + #{FPED* ≥
FPED}) / (1 + B) — and the mean of FPED* (what chance alone gives under that null). Round 5 also showed FPED −
mean(FPED*) as a "corrected" estimate; it is dropped (issue 42 §3): under a real difference the chance part of
|FPR − FPR_t| is smaller than under the null, so subtracting the null's mean over-corrects by an amount that depends
on the unknown rates, and it had no interval. The test, not a corrected number, says whether the rates differ.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.audit.request import Judge
from fairness_core.bias.multiplicity import RULES, benjamini_hochberg

LEVEL = 0.95
ALPHA = 0.05
PERMUTATIONS = 1000
#: at most this many jackknife units: more clusters are dealt into this many random groups (Kott 2001)
MAX_GROUPS = 200
#: the per-term flag's rule (a screen of many terms: false discovery rate), as the page and docs name it
TERM_RULE = RULES["bh"]
#: what the intervals are, in words (page help, CLI, JSON `resampled.method`)
METHOD = "delete-a-cluster jackknife, t on its effective degrees of freedom"
ROW_KEYS = ("term", "group", "n", "mean", "shift", "ci_low", "ci_high", "p_value", "q_value", "flagged", "fpr",
            "flip_rate", "subgroup_auc", "bpsn_auc", "bnsp_auc")


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
        scored = set(frame["term"])  # once: a set built per term made this a third of a small audit's time
        terms = [t for ts in groups.values() for t in ts if t in scored]
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
    and a drawn cluster brings all its templates. (The percentile bootstrap round 5 used; kept to measure it
    against the jackknife in docs/statistics.md.)"""
    clusters = np.arange(n_templates) if clusters is None else np.asarray(clusters)
    n_clusters = int(clusters.max()) + 1 if clusters.size else 0
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(resamples, n_clusters))
    counts = np.zeros((resamples, n_clusters))
    np.add.at(counts, (np.arange(resamples)[:, None], draws), 1.0)
    return np.vstack([np.ones((1, n_templates)), counts[:, clusters]])


def jackknife_units(clusters: np.ndarray, seed: int = 0) -> np.ndarray:
    """(J,): each template's jackknife unit — its cluster, or, above `MAX_GROUPS` clusters, one of that many random
    groups of whole clusters (a cluster is never split)."""
    clusters = np.asarray(clusters, dtype=np.int64)
    n_clusters = int(clusters.max()) + 1 if clusters.size else 0
    if n_clusters <= MAX_GROUPS:
        return clusters
    deal = np.random.default_rng(seed + 104729).permutation(n_clusters) % MAX_GROUPS
    return deal[clusters]


def jackknife_weights(units: np.ndarray) -> np.ndarray:
    """(1 + G, J): row 0 all ones (the point estimate), then row g leaves out every template of unit g."""
    units = np.asarray(units)
    n_units = int(units.max()) + 1 if units.size else 0
    return np.vstack([np.ones((1, units.size)), (units[None, :] != np.arange(n_units)[:, None]).astype(float)])


def weighted_mean(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(1 + B, K): per row of template weights, the weighted mean of each column of `values` (J, K) over its
    non-NaN entries; NaN where a row weighs none."""
    present = ~np.isnan(values)
    total = weights @ np.where(present, values, 0.0)
    count = weights @ present.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan)


def jackknife_se(draws: np.ndarray) -> np.ndarray:
    """SE of each column of (1 + G, ...) jackknife rows (row 0 the estimate): √((G − 1)/G · Σ_g (θ_(g) − θ_(·))²);
    NaN where a leave-one-out value is undefined or G < 2."""
    loo = draws[1:]
    n_units = loo.shape[0]
    if n_units < 2:
        return np.full(draws.shape[1:], np.nan)
    with np.errstate(invalid="ignore"):
        return np.sqrt((n_units - 1) / n_units * ((loo - loo.mean(axis=0)) ** 2).sum(axis=0))


def effective_df(units: np.ndarray) -> float:
    """Degrees of freedom of the jackknife variance (module docstring): θ_(g) − θ = −n_g/(N − n_g) · (ȳ_g − θ) for
    a mean, so the variance is Σ_g a_g e_g² with a_g = (n_g / (N − n_g))²; Satterthwaite's (1946) df of such a sum,
    with the units' means equally variable, is (Σ a_g)² / Σ a_g², less 1 for the centring — G − 1 exactly when the
    units are of one size, fewer when a few large units carry the variance (the built-in set: 3 single-template
    patterns and 8 of 5 templates give 7.2, not 10; t on 10 made the per-term test reject 5.7% and, in the tail
    Benjamini-Hochberg reads, a p of 0.001 on 10 df is 0.0024 on 7.2: the false discovery rate reached 0.07).
    NaN below two units."""
    sizes = np.bincount(np.asarray(units, dtype=np.int64)).astype(float)
    sizes = sizes[sizes > 0]
    total = sizes.sum()
    if sizes.size < 2:
        return float("nan")
    leverage = (sizes / (total - sizes)) ** 2
    return float(leverage.sum() ** 2 / (leverage**2).sum() - 1.0)


@functools.lru_cache(maxsize=64)
def t_quantile(df: float, level: float = LEVEL) -> float:
    from scipy.stats import t

    return float(t.ppf(1 - (1 - level) / 2, df))


def interval(draws: np.ndarray, bounds: tuple[float, float] | None = None, df: float | None = None
             ) -> tuple[float | None, float | None, float | None]:
    """(point, low, high) from a (1 + G,) column of jackknife rows: point ± t_df · SE (module docstring; df the
    units' `effective_df`, G − 1 when not given), kept within `bounds` (a rate or an AUC stays in [0, 1]); None
    where undefined (a unit whose removal leaves the statistic undefined, or fewer than two units)."""
    point = None if not np.isfinite(draws[0]) else float(draws[0])
    se = float(jackknife_se(draws[:, None])[0])
    df = float(draws.shape[0] - 2) if df is None else df
    if point is None or not np.isfinite(se) or not df > 0:
        return point, None, None
    half = t_quantile(df) * se
    low, high = point - half, point + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return point, float(low), float(high)


def t_p_values(draws: np.ndarray, df: float | None = None) -> np.ndarray:
    """(K,): two-sided p of "the statistic is 0" for each column of (1 + G, K) jackknife rows: 2 · P(t_df ≥
    |θ / SE|) — the test the jackknife-t interval inverts; NaN where the SE is undefined, 1 where SE = θ = 0."""
    from scipy.stats import t

    df = float(draws.shape[0] - 2) if df is None else df
    point, se = draws[0], jackknife_se(draws)
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(se > 0, np.abs(point) / np.where(se > 0, se, 1.0), np.where(point == 0, 0.0, np.inf))
        return np.where(np.isfinite(se) & np.isfinite(point) & (df > 0), 2 * t.sf(statistic, df), np.nan)


def max_t(values: np.ndarray, units: np.ndarray, flips: int, seed: int, level: float = LEVEL) -> dict[str, Any]:
    """The max-T band of the per-term shifts and the p of the largest (module docstring). `values`: (J, T) the
    templates' s_jt − β_j (NaN = unscored); `units`: (J,) jackknife units. Returns the critical value, and per
    term the shift, SE and max-T adjusted p (Westfall & Young's single-step: the share of max|T*| ≥ |T_t|)."""
    present = ~np.isnan(values)
    n_units = int(units.max()) + 1
    member = (units[None, :] == np.arange(n_units)[:, None]).astype(float)  # (G, J)
    totals, counts = member @ np.where(present, values, 0.0), member @ present.astype(float)  # (G, T)

    def estimate_and_se(unit_totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(..., G, T) unit totals -> the shift and its jackknife SE, as `weighted_mean` + `jackknife_se` give."""
        total, count = unit_totals.sum(axis=-2), counts.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            shift = total / count
            loo = (total[..., None, :] - unit_totals) / (count - counts)
            se = np.sqrt((n_units - 1) / n_units * ((loo - loo.mean(axis=-2, keepdims=True)) ** 2).sum(axis=-2))
        return shift, se

    shift, se = estimate_and_se(totals)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.abs(shift) / se
    usable = np.isfinite(observed)
    if flips < 1 or n_units < 2 or not usable.any():
        return {"critical": None, "shift": shift, "se": se, "p_adjusted": np.full(shift.shape, np.nan), "flips": 0}
    residuals = totals - counts * shift  # u_ct: the wild bootstrap flips these, so the band is centred on the truth
    rng = np.random.default_rng(seed + 15485863)  # its own stream: the other draws stay as they were
    maxima = np.empty(flips)
    chunk = max(1, 2_000_000 // (n_units * shift.size))
    for start in range(0, flips, chunk):
        size = min(chunk, flips - start)
        signs = rng.choice([-1.0, 1.0], size=(size, n_units, 1))  # one sign per unit, shared by every term
        drawn, drawn_se = estimate_and_se(counts * shift + signs * residuals)
        with np.errstate(invalid="ignore", divide="ignore"):
            statistic = np.abs(drawn - shift) / drawn_se
        maxima[start:start + size] = np.nanmax(np.where(usable, statistic, np.nan), axis=1)
    maxima = maxima[np.isfinite(maxima)]
    critical = float(np.quantile(maxima, level)) if maxima.size else None
    p_adjusted = np.array([(1 + np.sum(maxima >= value - 1e-12)) / (1 + maxima.size) if ok else np.nan
                           for value, ok in zip(observed, usable, strict=True)])
    return {"critical": critical, "shift": shift, "se": se, "p_adjusted": p_adjusted, "flips": int(maxima.size)}


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
    random order of the terms per permutation. Returns the p-value, the null's mean (what chance alone gives) and
    the headline sentence; no "corrected" FPED (module docstring: why it was dropped)."""
    rows = ~np.isnan(flagged).all(axis=1)
    flagged, clusters = flagged[rows], np.asarray(clusters)[rows]
    observed = float(fped_of(flagged))
    if permutations < 1 or not flagged.size:
        return {"p_value": None, "null_mean": None, "n_permutations": 0,
                "headline": "no permutation test (no non-toxic template was scored)"}
    rng = np.random.default_rng(seed + 7919)  # its own stream: the bootstrap's draws stay as they were
    n_clusters, n_terms = int(clusters.max()) + 1, flagged.shape[1]
    orders = np.argsort(rng.random((permutations, n_clusters, n_terms)), axis=2)  # one order per cluster
    permuted = np.take_along_axis(np.broadcast_to(flagged, (permutations, *flagged.shape)),
                                  orders[:, clusters, :], axis=2)
    null = fped_of(permuted)
    p_value = float((1 + np.sum(null >= observed - 1e-12)) / (1 + permutations))
    if p_value >= ALPHA:
        headline = f"no difference between the terms' false-positive rates is detectable here (p = {p_value:.2f})"
    else:
        headline = (f"the terms' false-positive rates differ (p = {p_value:.3f}; FPED {observed:.2f} where chance "
                    f"alone gives {float(null.mean()):.2f} on average)")
    return {"p_value": p_value, "null_mean": float(null.mean()), "n_permutations": permutations,
            "headline": headline}


def largest_shift(values: np.ndarray, units: np.ndarray, terms: list[str], flips: int, seed: int
                  ) -> dict[str, Any] | None:
    """The largest shift with the max-T band's interval and p (module docstring): the headline picks the top of
    ~50 terms, so its interval is the simultaneous one, wider than the term's own row. None without terms."""
    if not terms or values.size == 0:
        return None
    found = max_t(values, units, flips, seed)
    shift, se = found["shift"], found["se"]
    if not np.isfinite(shift).any():
        return None
    top = int(np.nanargmax(shift))
    critical = found["critical"]
    low = high = None
    if critical is not None and np.isfinite(se[top]):
        low, high = float(shift[top] - critical * se[top]), float(shift[top] + critical * se[top])
    p_value = float(found["p_adjusted"][top]) if np.isfinite(found["p_adjusted"][top]) else None
    return {"term": terms[top], "shift": float(shift[top]), "ci_low": low, "ci_high": high, "p_value": p_value,
            "critical": critical, "n_flips": found["flips"], "n_terms": len(terms),
            "rule": f"max-T over the {len(terms)} terms (wild cluster bootstrap, {found['flips']} sign flips)"}


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
    units = jackknife_units(matrix.clusters, seed)
    weights = jackknife_weights(units)  # row 0 the estimate, then one row per unit left out
    df = effective_df(units)
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
            flip: np.ndarray | None, fpr: np.ndarray | None, aucs: dict[str, np.ndarray], n: int,
            p: np.ndarray, q: np.ndarray) -> dict[str, Any]:
        point, low, high = interval(shift[:, index], df=df)
        p_value, q_value = (None if not np.isfinite(x[index]) else float(x[index]) for x in (p, q))
        out: dict[str, Any] = {"term": term, "group": group, "level": level, "n": n,
                               "mean": interval(mean[:, index])[0], "shift": point, "ci_low": low, "ci_high": high,
                               "p_value": p_value, "q_value": q_value,
                               "flagged": q_value is not None and q_value < ALPHA}
        for name, draws in (("fpr", fpr), ("flip_rate", flip), *((k, aucs.get(k)) for k in
                                                                  ("subgroup_auc", "bpsn_auc", "bnsp_auc"))):
            value, lo, hi = interval(draws[:, index], (0.0, 1.0), df) if draws is not None else (None, None, None)
            out[name], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = value, lo, hi
        return out

    # per-term tests of "shift 0", screened together: BH q-values over the terms; the groups are their own family
    p_t, p_g = t_p_values(shift_t, df), t_p_values(shift_g, df)
    q_t, q_g = benjamini_hochberg(p_t), benjamini_hochberg(p_g)
    present = ~np.isnan(matrix.scores)
    term_rows = [row(term, matrix.groups[matrix.group_of[i]], i, "term", shift_t, mean_t, flip_t, fpr_t, aucs_t,
                     int(present[:, i].sum()), p_t, q_t) for i, term in enumerate(matrix.terms)]
    term_rows.sort(key=lambda r: -np.inf if r["shift"] is None else -r["shift"])
    group_rows = [row(None, group, g, "group", shift_g, mean_g, flip_g, fpr_g, aucs_g,
                      int(present[:, in_group[g]].sum()), p_g, q_g) for g, group in enumerate(matrix.groups)]
    largest = largest_shift(matrix.scores - beta[:, None], units, matrix.terms, resamples, seed)

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
        extra["fpr_overall"] = dict(zip(("value", "ci_low", "ci_high"), interval(overall, (0.0, 1.0), df), strict=True))
        extra["fped"] = dict(zip(("value", "ci_low", "ci_high"), interval(fped, (0.0, np.inf), df), strict=True))
        extra["fped"] |= fped_test(on_non_toxic, matrix.clusters, PERMUTATIONS, seed)
    extra["resampled"] = {"unit": cluster_unit, "n_clusters": int(matrix.clusters.max()) + 1 if n_j else 0,
                          "n_jackknife_units": int(units.max()) + 1 if n_j else 0, "df": df, "method": METHOD}
    extra["term_rule"] = {"rule": TERM_RULE, "alpha": ALPHA,
                          "flagged": sum(bool(r["flagged"]) for r in term_rows),
                          "unadjusted_below_alpha": sum(r["p_value"] is not None and r["p_value"] < ALPHA
                                                        for r in term_rows)}
    if largest is not None:
        extra["largest_shift"] = largest

    texts = frame.copy()
    where = {t: i for i, t in enumerate(matrix.templates)}
    texts["background"] = texts["template_id"].map(lambda t: beta[where[t]])
    texts["shift"] = texts["score"] - texts["background"]
    if judge.threshold is not None:
        texts["flipped"] = judge.flagged(texts["score"]) != judge.flagged(texts["background"])
    texts = texts.reindex(texts["shift"].abs().sort_values(ascending=False, na_position="last").index)
    return AuditTable(judge, term_rows + group_rows, texts.reset_index(drop=True), refused, extra)
