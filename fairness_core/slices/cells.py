"""Every cell of a run over a few attributes, each with its n, value, interval, gap to the rest and a test.

Input: per-unit sums (`reading.read_run(...).sums`, the seam every view reads runs with): one row per (attribute
values, unit) with `total` (Σ values) and `n` (rows). A unit is the design's (`fairness_core.bias.cluster`): a
regard template shared by a family's groups is one unit holding all its groups, any other prompt is its own unit.
Everything below reads the per-unit sums: a bootstrap resample is a product with the units' draw counts, a
permutation a draw of units.

For a cell, each unit is either outside it, wholly inside it (all its rows are in the cell), or *split* (it holds
rows of the cell and rows of the rest: a template holds every group of its family; a prompt holds every setting).

- A cell whose units are split is compared **within its units** (paired): per unit d_u = cell mean − rest mean of
  that unit, gap = Σ n_u d_u / Σ n_u (n_u = the cell's rows in unit u). Test: sign-flip — under the null each d_u
  is symmetric about 0 (within a unit, the cell's rows and the unit's other rows are exchangeable), so flipping
  signs at random gives the null distribution. Units wholly inside a mixed cell have no rest to pair with and are
  left out of its gap (counted in `n_unpaired`).
- A cell whose units are all wholly inside it is compared **with the rest of the run** (every unit with no row in
  the cell): gap = cell mean − rest mean. Test: permutation — under the null the units' labels are exchangeable
  (a unit's measure does not depend on whether it is in the cell), so random relabelings that keep the cell's
  number of units give the null distribution.

p-values are two-sided Monte Carlo p-values, (1 + #{|T*| ≥ |T|}) / (1 + B): valid at any B. q-values are
Benjamini-Hochberg's over the tested cells. Intervals are 95% percentile intervals of the design's cluster
bootstrap (units resampled within their strata, `Design.weights`); a cell drawing on a stratum where it has a
single unit gets no interval (as on the decoding page). For a rate, the cell's interval is at least the Wilson
score interval at the cell's effective number of generations, n_rows / deff with the design effect
deff = 1 + (rows per unit − 1) · ICC and the intraclass correlation of generations within a prompt estimated once
from the whole run (one-way ANOVA estimator); the gap's interval widens to match. Why: when a cell's few prompts
all agree the bootstrap has nothing to resample and would claim certainty (a 2-prompt cell at 1.0 with interval
[1, 1]); where samples of a prompt always agree (greedy decoding) the ICC is 1 and each prompt counts once.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias.cluster import design_from_keys
from fairness_core.bias.multiplicity import benjamini_hochberg

DEFAULT_MIN_UNITS = 5
DEFAULT_FDR = 0.1
DEFAULT_RESAMPLES = 1000
DEFAULT_PERMUTATIONS = 2000
Z95 = 1.959963984540054

CELL_COLUMNS = ("attributes", "n_units", "n_rows", "value", "ci_low", "ci_high", "rest", "gap", "gap_ci_low",
                "gap_ci_high", "test", "n_unpaired", "p_value", "q_value", "flagged", "too_small", "direction")


class SlicesError(ValueError):
    """Bad input for a slice table (an attribute the run lacks, --min-units 0, ...): one sentence."""


@dataclass
class SliceTable:
    """The cells of one run (or simulated sums), ranked: the worse side's interval bound first."""

    measure: str
    by: list[list[str]]  # the attribute sets the cells are made of
    min_units: int
    fdr: float
    worse: str  # "higher" or "lower": which side of the gap counts as worse
    cells: pd.DataFrame  # CELL_COLUMNS, ranked
    notes: list[str] = field(default_factory=list)


def check_options(min_units: int, fdr: float) -> None:
    """Refuse a minimum cell size under 1 and an FDR level outside (0, 1), in one sentence."""
    if isinstance(min_units, bool) or not isinstance(min_units, int | np.integer) or min_units < 1:
        raise SlicesError(f"--min-units must be a whole number of units, at least 1 (got {min_units!r})")
    if not isinstance(fdr, float | int) or not math.isfinite(float(fdr)) or not 0.0 < float(fdr) < 1.0:
        raise SlicesError(f"--fdr must be a false discovery rate strictly between 0 and 1, e.g. 0.1 (got {fdr!r})")


def wilson(rate: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval of a proportion `rate` seen on `n` independent answers."""
    if n <= 0 or not math.isfinite(rate):
        return math.nan, math.nan
    rate = min(max(rate, 0.0), 1.0)
    denominator = 1 + Z95**2 / n
    centre = (rate + Z95**2 / (2 * n)) / denominator
    half = Z95 * math.sqrt(rate * (1 - rate) / n + Z95**2 / (4 * n * n)) / denominator
    # at a rate of 0 (or 1) the bound is exactly 0 (or 1); the subtraction leaves float noise (5.6e-17) either side
    low = 0.0 if rate == 0.0 else max(0.0, min(rate, centre - half))
    high = 1.0 if rate == 1.0 else min(1.0, max(rate, centre + half))
    return low, high


def attribute_sets(present: Sequence[str], varying: Sequence[str], by: Sequence[Sequence[str]] | None
                   ) -> list[list[str]]:
    """The attribute sets to slice by: those asked for, or each varying attribute and every pair of them."""
    if by:
        out = []
        for names in by:
            missing = [name for name in names if name not in present]
            if missing:
                raise SlicesError(f"this run has no attribute {missing[0]!r}; choose among: {', '.join(present)}")
            if len(set(names)) != len(names):
                raise SlicesError(f"--by names {names[0]!r} twice in one set; name each attribute once")
            out.append(list(names))
        return out
    singles = [[name] for name in varying]
    return singles + [list(pair) for pair in itertools.combinations(varying, 2)]


def slice_cells(sums: pd.DataFrame, attributes: Sequence[str], by: Sequence[Sequence[str]] | None = None,
                measure: str = "measure", rate: bool = True, worse: str = "higher",
                min_units: int = DEFAULT_MIN_UNITS, fdr: float = DEFAULT_FDR,
                n_resamples: int = DEFAULT_RESAMPLES, n_permutations: int = DEFAULT_PERMUTATIONS,
                seed: int = 0, crossed: Sequence[str] = (), default_sets: Sequence[Sequence[str]] | None = None
                ) -> SliceTable:
    """The slice table of per-unit sums: `sums` has the `attributes` columns, `unit` (a `unit_key`), `total`, `n`.

    `by` lists attribute sets (default: `default_sets` where given, else `attribute_sets` over the attributes that
    vary). Cells with the same rows as a cell of fewer attributes (a group nested in its family) are shown once,
    under the fewer attributes, so the multiplicity correction counts each distinct comparison once. `crossed`
    names attributes that are crossed by design (a prompt's several attributes, issue 46): a set of two or more of
    them lists every combination of their values, an empty one with n = 0 (too small, never tested or flagged), as
    fairlearn's MetricFrame shows empty intersections.
    """
    check_options(min_units, fdr)
    if worse not in ("higher", "lower"):
        raise SlicesError(f"worse must be 'higher' or 'lower' (got {worse!r})")
    frame = sums[sums["n"] > 0].copy()
    if frame.empty:
        raise SlicesError(f"there are no finite values of {measure} to slice")
    for name in attributes:
        frame[name] = frame[name].astype("string").fillna("(none)")
    varying = [name for name in attributes if frame[name].nunique() > 1]
    if by is None and default_sets is not None:
        by = [list(names) for names in default_sets if all(name in varying for name in names)] or None
    sets = attribute_sets(list(attributes), varying, by)
    notes = []
    if not sets:
        notes.append("no attribute takes two values in this run, so there is no cell to set against a rest")

    design = design_from_keys(frame["unit"].astype(str).tolist())
    unit = design.unit
    totals, counts = frame["total"].to_numpy(float), frame["n"].to_numpy(float)
    unit_total = np.bincount(unit, weights=totals, minlength=design.n_units)
    unit_n = np.bincount(unit, weights=counts, minlength=design.n_units)
    weights = design.weights(max(int(n_resamples), 1), seed) if n_resamples else None
    run = _Run(unit_total, unit_n, design.stratum, np.bincount(design.stratum),
               None if weights is None else np.ascontiguousarray(weights.T),
               (weights @ unit_total, weights @ unit_n) if weights is not None else None,  # every resample's run
               np.random.default_rng(seed + 1),
               intraclass_correlation(totals, counts) if rate else math.nan, int(min_units), int(n_permutations))

    rows: list[dict[str, Any]] = []
    seen: set[bytes] = set()
    columns = {name: frame[name].to_numpy(object) for name in attributes}
    for names in sets:
        codes = frame.groupby(list(names), sort=True, observed=True).ngroup().to_numpy()
        order = np.argsort(codes, kind="stable")
        for positions in np.split(order, np.flatnonzero(np.diff(codes[order])) + 1):
            signature = np.sort(positions).tobytes()
            if signature in seen:  # same rows as a cell already listed (fewer attributes come first)
                continue
            seen.add(signature)
            inside, where = np.unique(unit[positions], return_inverse=True)
            t_in = np.bincount(where, weights=totals[positions], minlength=len(inside))
            n_in = np.bincount(where, weights=counts[positions], minlength=len(inside))
            rows.append(_cell({name: str(columns[name][positions[0]]) for name in names}, inside, t_in, n_in, run))
        if len(names) > 1 and all(name in crossed for name in names):
            rows += _empty_cells(frame, names)
    cells = pd.DataFrame(rows, columns=list(CELL_COLUMNS))
    if not cells.empty:
        cells["q_value"] = benjamini_hochberg(cells["p_value"].to_numpy(float))
        cells["flagged"] = cells["q_value"].le(fdr).fillna(False).astype(bool) & ~cells["too_small"].astype(bool)
        signed = (1.0 if worse == "higher" else -1.0) * cells["gap"].to_numpy(float)
        cells["direction"] = np.select([signed > 0, signed < 0], ["worse", "better"], "")  # no gap, or none known
        bound = cells["gap_ci_low"] if worse == "higher" else -cells["gap_ci_high"]
        tested = cells["p_value"].notna()
        cells = cells.assign(_tested=~tested, _bound=-bound.astype(float).fillna(-np.inf)) \
            .sort_values(["_tested", "_bound", "n_units"], ascending=[True, True, False], kind="stable") \
            .drop(columns=["_tested", "_bound"]).reset_index(drop=True)
    return SliceTable(measure, [list(s) for s in sets], int(min_units), float(fdr), worse, cells, notes)


def _empty_cells(frame: pd.DataFrame, names: Sequence[str]) -> list[dict[str, Any]]:
    """The combinations of `names`' values (each value seen in the run) that no row has: listed with n = 0 as too
    small, so an empty intersection is seen as empty rather than missing, and never counts as a test."""
    present = set(map(tuple, frame[list(names)].drop_duplicates().to_numpy(object).tolist()))
    values = [sorted(set(frame[name])) for name in names]
    out = []
    for combination in itertools.product(*values):
        if combination in present:
            continue
        out.append({"attributes": dict(zip(names, map(str, combination), strict=True)), "n_units": 0, "n_rows": 0,
                    "value": math.nan, "ci_low": math.nan, "ci_high": math.nan, "rest": math.nan, "gap": math.nan,
                    "gap_ci_low": math.nan, "gap_ci_high": math.nan, "test": "", "n_unpaired": 0,
                    "p_value": math.nan, "q_value": math.nan, "flagged": False, "too_small": True,
                    "direction": ""})
    return out


@dataclass(frozen=True)
class _Run:
    """What every cell of one table reads: the run's per-unit sums, design, resamples and test settings."""

    unit_total: np.ndarray
    unit_n: np.ndarray
    stratum: np.ndarray  # per unit
    stratum_size: np.ndarray  # units per stratum
    weights: np.ndarray | None  # (units, R) bootstrap counts, a unit's row contiguous (cells gather a few units)
    run_sums: tuple[np.ndarray, np.ndarray] | None  # (R,) the whole run's resampled totals and counts
    rng: np.random.Generator
    icc: float  # NaN: not a rate (no Wilson floor)
    min_units: int
    n_permutations: int


def _cell(attributes: dict[str, str], inside: np.ndarray, t_in: np.ndarray, n_in: np.ndarray,
          run: _Run) -> dict[str, Any]:
    """One cell: `inside` the units holding its rows, `t_in`/`n_in` its sums in each. Reads only those units'
    columns, so a run of thousands of prompts and thousands of one-prompt cells stays quick."""
    t_out, n_out = run.unit_total[inside] - t_in, run.unit_n[inside] - n_in
    split = n_out > 0
    n_units = len(inside)
    value = float(t_in.sum() / n_in.sum())
    row: dict[str, Any] = {"attributes": attributes, "n_units": n_units, "n_rows": round(float(n_in.sum())),
                           "value": value, "ci_low": math.nan, "ci_high": math.nan, "rest": math.nan,
                           "gap": math.nan, "gap_ci_low": math.nan, "gap_ci_high": math.nan, "test": "",
                           "n_unpaired": 0, "p_value": math.nan, "q_value": math.nan, "flagged": False,
                           "too_small": n_units < run.min_units, "direction": ""}
    stratum_here = np.bincount(run.stratum[inside], minlength=len(run.stratum_size))
    single = bool((stratum_here == 1).any())  # a stratum where the cell has one unit: nothing to resample there
    cell_t = cell_n = None
    if run.weights is not None:
        columns = run.weights[inside]
        cell_t, cell_n = t_in @ columns, n_in @ columns
        if not single:
            row["ci_low"], row["ci_high"] = _interval(_ratio(cell_t, cell_n))
    rate = math.isfinite(run.icc)
    if rate:  # a few agreeing prompts must not make the interval narrower than their generations allow
        per_unit = n_in.sum() / n_units
        w_low, w_high = wilson(value, n_in.sum() / (1.0 + (per_unit - 1.0) * run.icc))
        row["ci_low"] = w_low if math.isnan(row["ci_low"]) else min(row["ci_low"], w_low)
        row["ci_high"] = w_high if math.isnan(row["ci_high"]) else max(row["ci_high"], w_high)
    boot = None
    if split.any():
        row["test"] = "paired sign-flip over units holding both"
        row["n_unpaired"] = int((~split).sum())
        d = t_in[split] / n_in[split] - t_out[split] / n_out[split]
        w = n_in[split]
        gap = float(w @ d / w.sum())
        row["rest"] = float(w @ (t_out[split] / n_out[split]) / w.sum())  # the rest on the same units
        paired = inside[split]
        if run.weights is not None and not (np.bincount(run.stratum[paired]) == 1).any():
            sub = run.weights[paired]
            boot = _ratio((w * d) @ sub, w @ sub)
    else:
        if n_units == len(run.unit_total):
            return row  # the cell is the whole run: nothing to set it against
        row["test"] = "permutation of units between the cell and the rest"
        rest_t, rest_n = run.unit_total.sum() - t_in.sum(), run.unit_n.sum() - n_in.sum()
        row["rest"] = float(rest_t / rest_n)
        gap = value - row["rest"]
        rest_single = bool(((run.stratum_size - stratum_here) == 1).any())
        if run.run_sums is not None and cell_t is not None and not single and not rest_single:
            # the rest is every other unit: the run's resampled sums less the cell's
            boot = _ratio(cell_t, cell_n) - _ratio(run.run_sums[0] - cell_t, run.run_sums[1] - cell_n)
    row["gap"] = gap
    if boot is not None:
        row["gap_ci_low"], row["gap_ci_high"] = _interval(boot)
    if rate:  # the gap's interval at least as wide as the cell's own uncertainty allows
        reference = value - gap
        row["gap_ci_low"] = np.nanmin([row["gap_ci_low"], row["ci_low"] - reference])
        row["gap_ci_high"] = np.nanmax([row["gap_ci_high"], row["ci_high"] - reference])
    if row["too_small"]:
        return row
    if split.any():
        row["p_value"] = _sign_flip_p(d, w, gap, run.rng, run.n_permutations)
    else:
        row["p_value"] = _permutation_p(run.unit_total, run.unit_n, inside, gap, run.rng, run.n_permutations)
    return row


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """top / bottom, NaN where a resample drew none of the units (left out of the interval)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return top / bottom


def _interval(resampled: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of the finite resamples (`percentile_interval`'s rule, without its slow NaN path)."""
    finite = np.sort(resampled[np.isfinite(resampled)])
    if finite.size == 0:
        return math.nan, math.nan
    # numpy's default ("linear") quantile, written out: np.quantile's overhead dominates for thousands of cells
    position = np.array([0.025, 0.975]) * (finite.size - 1)
    below = np.floor(position).astype(int)
    above = np.minimum(below + 1, finite.size - 1)
    low, high = finite[below] + (position - below) * (finite[above] - finite[below])
    return float(low), float(high)


def intraclass_correlation(total: np.ndarray, n: np.ndarray) -> float:
    """ICC of a 0/1 measure within clusters (one-way ANOVA estimator, clipped to [0, 1]); `total` and `n` per
    cluster (here: a prompt unit within one cell of the finest attributes)."""
    keep = n > 0
    total, n = total[keep], n[keep]
    k, rows = len(n), n.sum()
    if k < 2 or rows <= k:
        return 1.0  # no replication to tell within from between: count each cluster once
    mean = total.sum() / rows
    between = float(np.sum(n * (total / n - mean) ** 2) / (k - 1))
    within = float(np.sum(total - total**2 / n) / (rows - k))
    n0 = (rows - np.sum(n**2) / rows) / (k - 1)
    denominator = between + (n0 - 1) * within
    if denominator <= 0:
        return 0.0
    return float(min(max((between - within) / denominator, 0.0), 1.0))


def _sign_flip_p(d: np.ndarray, w: np.ndarray, observed: float, rng: np.random.Generator, draws: int,
                 block: int = 256) -> float:
    exceed = 0
    for start in range(0, draws, block):  # in blocks, as the permutations
        signs = rng.choice(np.array([-1.0, 1.0]), size=(min(block, draws - start), len(d)))
        exceed += int(np.sum(np.abs(signs @ (w * d) / w.sum()) >= abs(observed) - 1e-12))
    return float((1 + exceed) / (1 + draws))


def _permutation_p(total: np.ndarray, n: np.ndarray, inside: np.ndarray, observed: float,
                   rng: np.random.Generator, draws: int) -> float:
    """Two-sided p of the gap cell − rest when the cell's units are relabelled at random among all units."""
    m, k = len(total), len(inside)
    all_t, all_n = total.sum(), n.sum()
    small = min(k, m - k)  # draw the smaller side; the other side's sums are the run's less these
    exceed = 0
    if m * draws <= 4_000_000:  # a few thousand units: every draw at once, in blocks
        for start in range(0, draws, 256):
            size = min(256, draws - start)
            picked = np.argpartition(rng.random((size, m)), small - 1, axis=1)[:, :small]
            exceed += _exceeding(total[picked].sum(axis=1), n[picked].sum(axis=1), small == k, all_t, all_n,
                                 observed)
    else:  # many units (BOLD): a k-subset per draw costs O(k), not O(units)
        sums = np.array([(total[p].sum(), n[p].sum()) for p in (rng.choice(m, small, replace=False)
                                                                  for _ in range(draws))])
        exceed = _exceeding(sums[:, 0], sums[:, 1], small == k, all_t, all_n, observed)
    return float((1 + exceed) / (1 + draws))


def _exceeding(picked_t: np.ndarray, picked_n: np.ndarray, picked_is_cell: bool, all_t: float, all_n: float,
               observed: float) -> int:
    in_t, in_n = (picked_t, picked_n) if picked_is_cell else (all_t - picked_t, all_n - picked_n)
    with np.errstate(invalid="ignore", divide="ignore"):
        null = in_t / in_n - (all_t - in_t) / (all_n - in_n)
    return int(np.sum(np.abs(null) >= abs(observed) - 1e-12))
