"""CAIRO's combination search (Zayed et al. 2024, Sec. 5 and Algorithm 1), exhaustive and fast, plus honesty checks.

A combination of a metric = its `original` set plus any subset of its other prompt sets; its size =
the number of sets including the original. Its bias vector over systems = the mean of its sets' bias
vectors, weighted by their prompt counts when known (the bias of the pooled prompts if Eq. 1 were
linear; it is not, so this is the paper's "average over prompt sets"). For a metric pair and a size,
CAIRO picks the pair of same-size combinations with the highest Pearson r across systems
(Algorithm 1 lines 9–23); Fig. 6's baseline is the mean r over all pairs of that size.

Speed: Pearson r of two vectors = the dot product of their z-normalised forms (centred, unit norm).
Each metric's combination vectors are built at once as a matrix product (indicator × weighted bias),
z-normalised row-wise, and every pair's r is one entry of Z_A · Z_Bᵀ, computed in row chunks. The
mean r needs no pairs at all: Σ_ij z_ai·z_bj = (Σ_i z_ai)·(Σ_j z_bj).

Released variant (`combination="released"`, the authors' `collect_results.py` / `compute_correlation.py`):
a combination is the original plus a multiset of other sets (`combinations_with_replacement`, so a set can
repeat), its bias is Eq. 1 recomputed on the POOLED generations of its sets (a repeated set counted twice; the
overall mean over all pooled generations, each subgroup's mean over its pooled generations, as the released
`compute_bias` does), and both metrics use the SAME combination (the released code pairs them by sample number,
i.e. the same set titles): the pairs searched are the sets both metrics have by name (by position when they
share no name). Its baseline is the mean r over those combinations. Sizes 1 … 6 as in the released code
(`range(1, 7)`), fewer when fewer sets are shared.

Honesty (not in the paper, which selects in-sample): `heldout` re-runs the search without each system
in turn and correlates the left-out systems' values under the combinations chosen without them
(leave-one-system-out); `permutation_pvalue` shuffles the systems of one metric and redoes the whole
search, so the best r is compared with the best r that chance plus the search produce.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairness_core.cairo.data import ORIGINAL

CHUNK_ROWS = 512
#: The released variant's sizes: 1 … 6 (collect_results.py: `for num_prompts in range(1, 7)`).
RELEASED_MAX_SIZE = 6
#: Above this many multisets at one size, the released variant leaves the size out (r NaN, method "too many").
RELEASED_LIMIT = 2_000_000
RELEASED_CHUNK = 16_384
#: Above this many combination pairs for one size, `search_pair` switches to the beam heuristic.
EXHAUSTIVE_LIMIT = 2_000_000_000


@dataclass(frozen=True)
class MetricSets:
    """One metric's bias values: sets (original first) × systems, and optional prompt counts per set."""

    names: tuple[str, ...]
    values: np.ndarray  # (n_sets, n_systems)
    n_prompts: np.ndarray | None = None  # (n_sets,) or (n_sets, n_systems)

    @property
    def n_others(self) -> int:
        return len(self.names) - 1

    def weights(self) -> np.ndarray:
        """(n_sets, n_systems) weights of each set in a combination's mean."""
        if self.n_prompts is None:
            return np.ones_like(self.values)
        weights = np.asarray(self.n_prompts, dtype=float)
        return np.broadcast_to(weights[:, None] if weights.ndim == 1 else weights, self.values.shape)

    def take(self, systems: Sequence[int]) -> MetricSets:
        index = list(systems)
        counts = self.n_prompts
        if counts is not None and np.ndim(counts) == 2:
            counts = counts[:, index]
        return MetricSets(self.names, self.values[:, index], counts)


# ------------------------------------------------------------------------------------ combinations
def indicator(n_others: int, size: int) -> np.ndarray:
    """(C(n_others, size-1), 1 + n_others) 0/1 matrix: column 0 (the original) always 1."""
    picks = list(itertools.combinations(range(n_others), size - 1))
    matrix = np.zeros((len(picks), n_others + 1))
    matrix[:, 0] = 1.0
    for row, chosen in enumerate(picks):
        matrix[row, [c + 1 for c in chosen]] = 1.0
    return matrix


def combination_vectors(sets: MetricSets, chooser: np.ndarray) -> np.ndarray:
    """(n_combos, n_systems): each combination's weighted mean bias per system."""
    weights = sets.weights()
    return (chooser @ (weights * sets.values)) / (chooser @ weights)


def znormalise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows centred and scaled to unit norm; (z, defined) where a constant row (r undefined) is all zero."""
    centred = vectors - vectors.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    scale = np.abs(vectors).max(axis=1, keepdims=True) + 1e-300
    defined = (norms[:, 0] > 1e-12 * scale[:, 0])
    z = np.where(defined[:, None], centred / np.where(norms > 0, norms, 1.0), 0.0)
    return z, defined


@dataclass(frozen=True)
class SizeResult:
    size: int
    r: float
    combo_a: tuple[int, ...]  # set indices (0 = original)
    combo_b: tuple[int, ...]
    mean_r: float
    n_pairs: int
    n_undefined_pairs: int = 0  # pairs with a constant vector (no r)
    method: str = "exhaustive"


def _combo(chooser_row: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(chooser_row))


def search_size(a: MetricSets, b: MetricSets, size: int, chunk_rows: int = CHUNK_ROWS) -> SizeResult:
    """Exhaustive: the best and the mean Pearson r over all pairs of size-`size` combinations."""
    choose_a, choose_b = indicator(a.n_others, size), indicator(b.n_others, size)
    za, da = znormalise(combination_vectors(a, choose_a))
    zb, db = znormalise(combination_vectors(b, choose_b))
    n_pairs = len(za) * len(zb)
    defined_pairs = int(da.sum()) * int(db.sum())
    mean_r = float(za.sum(axis=0) @ zb.sum(axis=0)) / defined_pairs if defined_pairs else float("nan")
    best, best_i, best_j = -np.inf, -1, -1
    # The pair products run in float32 (half the memory traffic of this memory-bound scan); the chosen
    # pair's r is then recomputed in float64, so a reported r is exact and can differ from the true
    # maximum only by float32 rounding (< 1e-6) when two pairs are that close.
    zb_t = np.ascontiguousarray(zb[db].T, dtype=np.float32)
    za32 = za.astype(np.float32)
    b_rows = np.flatnonzero(db)
    a_rows = np.flatnonzero(da) if len(b_rows) else np.array([], dtype=int)
    for start in range(0, len(a_rows), chunk_rows):
        rows = a_rows[start : start + chunk_rows]
        block = za32[rows] @ zb_t
        flat = int(np.argmax(block))
        value = block.flat[flat]
        if value > best:
            best, best_i, best_j = float(value), int(rows[flat // block.shape[1]]), int(b_rows[flat % block.shape[1]])
    if best_i < 0:
        return SizeResult(size, float("nan"), (0,), (0,), mean_r, n_pairs, n_pairs - defined_pairs)
    exact = float(za[best_i] @ zb[best_j])
    return SizeResult(size, min(1.0, max(-1.0, exact)), _combo(choose_a[best_i]), _combo(choose_b[best_j]), mean_r,
                      n_pairs, n_pairs - defined_pairs)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    zx, dx = znormalise(np.asarray(x, dtype=float)[None, :])
    zy, dy = znormalise(np.asarray(y, dtype=float)[None, :])
    return float(zx[0] @ zy[0]) if dx[0] and dy[0] else float("nan")


def combo_vector(sets: MetricSets, combo: Sequence[int]) -> np.ndarray:
    chooser = np.zeros((1, len(sets.names)))
    chooser[0, list(combo)] = 1.0
    return combination_vectors(sets, chooser)[0]


# --------------------------------------------------------------------------- released variant
@dataclass(frozen=True)
class PooledSets:
    """One metric's per-subgroup generation scores: sets (original first) × systems × subgroups, as the mean score
    over each cell's generations and their count (0: the subgroup has no generation there)."""

    names: tuple[str, ...]
    means: np.ndarray  # (n_sets, n_systems, n_subgroups)
    counts: np.ndarray  # (n_sets, n_systems, n_subgroups)

    @property
    def n_others(self) -> int:
        return len(self.names) - 1

    def take(self, systems: Sequence[int]) -> PooledSets:
        index = list(systems)
        return PooledSets(self.names, self.means[:, index], self.counts[:, index])


def released_pairing(names_a: Sequence[str], names_b: Sequence[str]) -> list[tuple[int, int]]:
    """(index in A, index in B) of the other sets both metrics use in the released variant: the shared names in A's
    order, or, when the metrics share no name, position by position."""
    shared = [(i, list(names_b).index(n)) for i, n in enumerate(names_a) if i > 0 and n in names_b[1:]]
    if shared:
        return shared
    return [(i, i) for i in range(1, min(len(names_a), len(names_b)))]


def multisets(n_items: int, size: int) -> np.ndarray:
    """(C(n_items + size − 1, size), n_items) multiplicities of every multiset of `size` items
    (itertools.combinations_with_replacement order)."""
    picks = list(itertools.combinations_with_replacement(range(n_items), size))
    matrix = np.zeros((len(picks), n_items))
    for row, chosen in enumerate(picks):
        for item in chosen:
            matrix[row, item] += 1.0
    return matrix


def pooled_vectors(sets: PooledSets, chooser: np.ndarray) -> np.ndarray:
    """(n_combos, n_systems): Eq. 1 on each combination's pooled generations (chooser = multiplicity per set)."""
    weights = sets.counts
    sums = np.tensordot(chooser, sets.means * weights, axes=(1, 0))  # (combos, systems, subgroups)
    counts = np.tensordot(chooser, weights, axes=(1, 0))
    present = counts > 0
    subgroup_means = np.divide(sums, counts, out=np.zeros_like(sums), where=present)
    overall = sums.sum(axis=2) / np.maximum(counts.sum(axis=2), 1e-300)
    return np.where(present, np.abs(overall[:, :, None] - subgroup_means), 0.0).sum(axis=2)


def pooled_vector(sets: PooledSets, combo: Sequence[int]) -> np.ndarray:
    """One combination's pooled Eq. 1 per system; `combo` lists set indices, a repeated index counted again."""
    chooser = np.zeros((1, len(sets.names)))
    for index in combo:
        chooser[0, index] += 1.0
    return pooled_vectors(sets, chooser)[0]


def released_size(a: PooledSets, b: PooledSets, size: int, limit: int = RELEASED_LIMIT,
                  chunk: int = RELEASED_CHUNK) -> SizeResult:
    """The released search at one size: the original plus every multiset of size−1 paired sets, the same one for
    both metrics; best r and mean r over those combinations."""
    pairing = released_pairing(a.names, b.names)
    n_combos = 1 if size == 1 else (math.comb(len(pairing) + size - 2, size - 1) if pairing else 0)
    if n_combos > limit or n_combos == 0:
        return SizeResult(size, float("nan"), (0,), (0,), float("nan"), n_combos, 0,
                          "too many" if n_combos else "no shared sets")
    picks = multisets(len(pairing), size - 1) if size > 1 else np.zeros((1, len(pairing)))
    best, best_row, total, defined_count = -np.inf, -1, 0.0, 0
    for start in range(0, len(picks), chunk):
        block = picks[start : start + chunk]
        choose_a = np.zeros((len(block), len(a.names)))
        choose_b = np.zeros((len(block), len(b.names)))
        choose_a[:, 0] = choose_b[:, 0] = 1.0
        for column, (ia, ib) in enumerate(pairing):
            choose_a[:, ia] += block[:, column]
            choose_b[:, ib] += block[:, column]
        za, da = znormalise(pooled_vectors(a, choose_a))
        zb, db = znormalise(pooled_vectors(b, choose_b))
        r = np.einsum("ij,ij->i", za, zb)
        both = da & db
        total += float(r[both].sum())
        defined_count += int(both.sum())
        if both.any():
            row = int(np.flatnonzero(both)[np.argmax(r[both])])
            if r[row] > best:
                best, best_row = float(r[row]), start + row
    mean_r = total / defined_count if defined_count else float("nan")
    if best_row < 0:
        return SizeResult(size, float("nan"), (0,), (0,), mean_r, n_combos, n_combos, "released")
    chosen = np.repeat(np.arange(len(pairing)), picks[best_row].astype(int)) if size > 1 else np.array([], dtype=int)
    combo_a = (0, *(pairing[c][0] for c in chosen))
    combo_b = (0, *(pairing[c][1] for c in chosen))
    return SizeResult(size, min(1.0, max(-1.0, best)), combo_a, combo_b, mean_r, n_combos, n_combos - defined_count,
                      "released")


# -------------------------------------------------------------------------------------- heuristic
def beam_search(a: MetricSets, b: MetricSets, max_size: int, width: int = 64) -> list[SizeResult]:
    """Beyond exhaustive reach: grow combination pairs one set per metric at a time, keeping the `width`
    pairs with the highest r at each size (greedy when width=1). Mean r is not computed (NaN)."""
    beam: list[tuple[float, tuple[int, ...], tuple[int, ...]]] = [
        (pearson(combo_vector(a, (0,)), combo_vector(b, (0,))), (0,), (0,))]
    results = [SizeResult(1, beam[0][0], (0,), (0,), float("nan"), 1, method=f"beam{width}")]
    for size in range(2, max_size + 1):
        candidates: dict[tuple[tuple[int, ...], tuple[int, ...]], None] = {}
        for _, ca, cb in beam:
            for i in range(1, len(a.names)):
                if i in ca:
                    continue
                for j in range(1, len(b.names)):
                    if j not in cb:
                        candidates[(tuple(sorted((*ca, i))), tuple(sorted((*cb, j))))] = None
        if not candidates:
            break
        keys = list(candidates)
        za, _ = znormalise(np.stack([combo_vector(a, ca) for ca, _ in keys]))
        zb, _ = znormalise(np.stack([combo_vector(b, cb) for _, cb in keys]))
        scores = np.einsum("ij,ij->i", za, zb)
        order = np.argsort(-scores, kind="stable")[:width]
        beam = [(float(scores[k]), keys[k][0], keys[k][1]) for k in order]
        results.append(SizeResult(size, beam[0][0], beam[0][1], beam[0][2], float("nan"), len(keys),
                                  method=f"beam{width}"))
    return results


# ---------------------------------------------------------------------------------------- honesty
def permutation_pvalue(a: Any, b: Any, size: int, observed: float, n_perm: int,
                       seed: int = 0, search: SizeSearch | None = None) -> float:
    """P(best r of a search on system-shuffled data ≥ observed): shuffles metric B's systems (all its sets
    together), redoes the size's search each time; (1 + hits) / (1 + n_perm)."""
    if n_perm <= 0 or not np.isfinite(observed):
        return float("nan")
    rng = np.random.default_rng(seed)
    n = _n_systems(a)
    hits = 0
    for _ in range(n_perm):
        order = rng.permutation(n)
        if (search or search_size)(a, b.take(order), size).r >= observed - 1e-12:
            hits += 1
    return (1 + hits) / (1 + n_perm)


def heldout_r(a: Any, b: Any, size: int, search: SizeSearch | None = None,
              vector: Callable[[Any, Sequence[int]], np.ndarray] | None = None) -> float:
    """Leave-one-system-out r: each system's (A, B) values come from the combinations chosen without it."""
    n = _n_systems(a)
    if n < 4:
        return float("nan")
    xs, ys = np.empty(n), np.empty(n)
    for left in range(n):
        keep = [s for s in range(n) if s != left]
        chosen = (search or search_size)(a.take(keep), b.take(keep), size)
        if not np.isfinite(chosen.r):
            return float("nan")
        xs[left] = (vector or combo_vector)(a, chosen.combo_a)[left]
        ys[left] = (vector or combo_vector)(b, chosen.combo_b)[left]
    return pearson(xs, ys)


def _n_systems(sets: Any) -> int:
    return int((sets.values if isinstance(sets, MetricSets) else sets.means).shape[1])


def split_r(select_a: MetricSets, select_b: MetricSets, eval_a: MetricSets, eval_b: MetricSets,
            size: int) -> tuple[float, float]:
    """Prompt split: choose combinations on one half of the prompts, report (in-sample r, r on the other half)."""
    chosen = search_size(select_a, select_b, size)
    return chosen.r, pearson(combo_vector(eval_a, chosen.combo_a), combo_vector(eval_b, chosen.combo_b))


def pearson_pvalue(r: float, n: int) -> float:
    """Two-sided p of Pearson r with n points (t with n−2 df), as scipy.stats.pearsonr gives it."""
    from scipy import stats

    if not np.isfinite(r) or n < 3:
        return float("nan")
    if abs(r) >= 1.0:
        return 0.0
    t = r * math.sqrt((n - 2) / (1 - r * r))
    return float(2 * stats.t.sf(abs(t), n - 2))


SizeSearch = Callable[[Any, Any, int], SizeResult]


# ------------------------------------------------------------------------------------------- pair
@dataclass
class PairResult:
    metric_a: str
    metric_b: str
    n_systems: int
    original_r: float
    sizes: list[SizeResult]
    p_values: list[float]
    p_search: list[float] = field(default_factory=list)
    heldout: list[float] = field(default_factory=list)


def search_pair(metric_a: str, a: MetricSets, metric_b: str, b: MetricSets, permutations: int = 0,
                heldout: bool = True, seed: int = 0, beam_width: int = 64,
                exhaustive_limit: int = EXHAUSTIVE_LIMIT) -> PairResult:
    """Every size 1 … 1 + min(others): best pair (exhaustive, or beam beyond `exhaustive_limit` pairs),
    mean r, parametric p of the best r, and optionally the permutation p and the held-out r."""
    if isinstance(a, PooledSets):
        return _search_pair_released(metric_a, a, metric_b, b, permutations, heldout, seed)
    n = a.values.shape[1]
    max_size = 1 + min(a.n_others, b.n_others)
    beam: list[SizeResult] | None = None
    sizes = []
    for size in range(1, max_size + 1):
        pairs = math.comb(a.n_others, size - 1) * math.comb(b.n_others, size - 1)
        if pairs > exhaustive_limit:
            beam = beam or beam_search(a, b, max_size, beam_width)
            sizes.append(beam[size - 1])
        else:
            sizes.append(search_size(a, b, size))
    result = PairResult(metric_a, metric_b, n, sizes[0].r, sizes, [pearson_pvalue(s.r, n) for s in sizes])
    if permutations:
        result.p_search = [permutation_pvalue(a, b, s.size, s.r, permutations, seed + s.size)
                           if s.method == "exhaustive" else float("nan") for s in sizes]
    if heldout:
        result.heldout = [heldout_r(a, b, s.size) if s.method == "exhaustive" else float("nan") for s in sizes]
    return result


def _search_pair_released(metric_a: str, a: PooledSets, metric_b: str, b: PooledSets, permutations: int,
                          heldout: bool, seed: int) -> PairResult:
    """The released variant of `search_pair` (same combination for both metrics, repeats allowed, pooled Eq. 1)."""
    n = a.means.shape[1]
    top = min(RELEASED_MAX_SIZE, 1 + len(released_pairing(a.names, b.names)))
    sizes = [released_size(a, b, size) for size in range(1, top + 1)]
    result = PairResult(metric_a, metric_b, n, sizes[0].r, sizes, [pearson_pvalue(s.r, n) for s in sizes])
    if permutations:
        result.p_search = [permutation_pvalue(a, b, s.size, s.r, permutations, seed + s.size, released_size)
                           for s in sizes]
    if heldout:
        result.heldout = [heldout_r(a, b, s.size, released_size, pooled_vector) if np.isfinite(s.r) else float("nan")
                          for s in sizes]
    return result


def set_names(sets: MetricSets | PooledSets, combo: Sequence[int]) -> list[str]:
    """The combination's set names, the original first; a set repeated (released variant) is named again."""
    names = [sets.names[i] for i in combo]
    return [ORIGINAL, *[n for n in names if n != ORIGINAL]]
