"""Numbers for people: 4 significant digits, floating-point noise shown as 0.

A paired difference of two equal estimates comes out as -1.1e-16, not 0 (the sums are added in another order).
Printed as is, it reads as a real, tiny effect. So a value is *noise* when its magnitude is at most
`NOISE` × the scale of the numbers shown with it (the largest finite magnitude of the table or chart, and at
least 1: a metric's scale is its units), and is shown as 0. Only what people read is changed: JSON and CSV
outputs keep every digit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

SIGNIFICANT = 4
NOISE = 1e-12


def number_scale(values: Iterable[Any]) -> float:
    """The scale noise is measured against: the largest finite magnitude among `values`, at least 1."""
    array = np.asarray(list(values), dtype=float)
    finite = np.abs(array[np.isfinite(array)])
    return max(1.0, float(finite.max())) if finite.size else 1.0


def clean_number(value: float, scale: float = 1.0, digits: int = SIGNIFICANT) -> float:
    """`value` rounded to `digits` significant digits; noise (≤ NOISE × scale) becomes 0.0; NaN/inf unchanged."""
    if not math.isfinite(value):
        return value
    if abs(value) <= NOISE * max(scale, 1.0):
        return 0.0
    return float(f"{value:.{digits}g}")


def format_number(value: Any, scale: float = 1.0, digits: int = SIGNIFICANT) -> str:
    """`value` as text for people: 4 significant digits, noise as "0", missing or non-finite as "—"."""
    if value is None or value is pd.NA:
        return "—"
    number = float(value)
    if not math.isfinite(number):
        return "—"
    return f"{clean_number(number, scale, digits):.{digits}g}"


def display_numbers(frame: pd.DataFrame, digits: int = SIGNIFICANT) -> pd.DataFrame:
    """A copy of `frame` for showing: its float columns rounded to `digits` significant digits, noise as 0 (the
    scale is the whole frame's, so a difference is judged against the estimates beside it)."""
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    if not floats:
        return frame.copy()
    scale = number_scale(frame[floats].to_numpy().ravel())
    shown = frame.copy()
    for column in floats:
        shown[column] = [clean_number(float(v), scale, digits) for v in shown[column]]
    return shown
