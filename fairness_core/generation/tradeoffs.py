"""Trade-offs between configurations: Pareto front, correlations, and sweep series for plotting."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

#: The objectives of the Pareto front: lower disparity, higher diversity, higher quality proxy.
OBJECTIVES: dict[str, str] = {"disparity": "min", "diversity": "max", "quality": "max"}


def pareto_front(table: pd.DataFrame, objectives: Mapping[str, str] = OBJECTIVES) -> pd.Series:
    """Boolean mask: True for configurations no other configuration beats on every objective.

    Objectives with no finite values (e.g. quality switched off) are ignored; a row with a NaN in
    a used objective is never on the front.
    """
    used = [c for c in objectives if c in table and np.isfinite(table[c].to_numpy(dtype=float)).any()]
    if not used:
        return pd.Series(False, index=table.index)
    signed = np.column_stack([table[c].to_numpy(dtype=float) * (1 if objectives[c] == "max" else -1) for c in used])
    finite = np.isfinite(signed).all(axis=1)
    on_front = []
    for i in range(len(table)):
        if not finite[i]:
            on_front.append(False)
            continue
        others = signed[finite]
        dominated = bool((np.all(others >= signed[i], axis=1) & np.any(others > signed[i], axis=1)).any())
        on_front.append(not dominated)
    return pd.Series(on_front, index=table.index)


def pearson(x: np.ndarray | pd.Series, y: np.ndarray | pd.Series) -> tuple[float, float, int]:
    """(r, two-sided p-value, n) over the finite pairs; NaNs when fewer than 3 pairs or no variance."""
    from scipy import stats

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan"), float("nan"), len(a)
    result = stats.pearsonr(a, b)
    return float(result.statistic), float(result.pvalue), len(a)
