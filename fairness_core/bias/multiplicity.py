"""Several verdicts on one screen: adjusted p-values that hold a stated error rate over the whole screen.

- `holm` (Holm 1979, step-down Bonferroni): controls the familywise error rate — the chance that *any* of the
  verdicts is a false alarm — at α when each adjusted p is compared with α. Used where a single false alarm
  misleads: a check's criteria, a page's headline verdicts.
- `benjamini_hochberg` (Benjamini & Hochberg 1995, step-up): q-values that control the false discovery rate —
  the expected share of false alarms among the cells flagged — at q. Used where users screen many cells (audit
  terms, per-attribute labels, Compare's rows). Valid for independent or positively dependent tests (PRDS).

Both take any shape; NaN entries (no test) stay NaN and do not count towards the number of tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: how each rule is named on a page and in docs
RULES = {
    "holm": "Holm's step-down correction (familywise error rate)",
    "bh": "Benjamini-Hochberg q-values (false discovery rate)",
    "none": "no correction (a single verdict)",
}


def _step(p_values: Sequence[float] | np.ndarray, factor: Callable[[int], np.ndarray], down: bool) -> np.ndarray:
    """The finite p-values sorted ascending, each times `factor(m)[i]`, made monotone (non-decreasing from the
    smallest for a step-down rule, from the largest down for a step-up one), capped at 1, put back in place; NaN
    stays NaN and does not count towards m."""
    p = np.asarray(p_values, dtype=float)
    finite = np.isfinite(p)
    out = np.full(p.shape, np.nan)
    values = p[finite]
    m = values.size
    if m == 0:
        return out
    order = np.argsort(values, kind="stable")
    scaled = values[order] * factor(m)
    monotone = np.maximum.accumulate(scaled) if down else np.minimum.accumulate(scaled[::-1])[::-1]
    result = np.empty(m)
    result[order] = np.minimum(monotone, 1.0)
    out[finite] = result
    return out


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (same shape): sorted ascending, p_(i)·(m − i + 1), made non-decreasing, capped at 1."""
    return _step(p_values, lambda m: m - np.arange(m), down=True)


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg q-values (same shape): sorted ascending, p_(i)·m / i, made non-decreasing from the
    largest down, capped at 1."""
    return _step(p_values, lambda m: m / np.arange(1, m + 1), down=False)


def adjust(p_values: Sequence[float] | np.ndarray, rule: str) -> np.ndarray:
    """`holm`, `bh` or `none` (the p-values as they are), by name."""
    if rule == "holm":
        return holm(p_values)
    if rule == "bh":
        return benjamini_hochberg(p_values)
    if rule == "none":
        return np.asarray(p_values, dtype=float).copy()
    raise ValueError(f"unknown multiplicity rule {rule!r}: one of {', '.join(RULES)}")
