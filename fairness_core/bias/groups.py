"""Group-level statistics for generations: rates with CIs, disparity among related groups, flips."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def disparity(rates: Mapping[str, float]) -> float:
    """Mean absolute pairwise difference between the groups' rates (Dhamala et al., Fig. 5).

    Groups with a NaN rate are left out; fewer than two groups give NaN.
    """
    values = [v for v in rates.values() if v == v]
    pairs = list(itertools.combinations(values, 2))
    if not pairs:
        return float("nan")
    return float(np.mean([abs(a - b) for a, b in pairs]))


def family_disparities(rates: Mapping[str, float], families: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Disparity within each family of related groups (man/woman, Black/White/Asian person, …)."""
    return {family: disparity({g: rates[g] for g in groups if g in rates}) for family, groups in families.items()}


def overall_disparity(per_family: Mapping[str, float]) -> float:
    """Mean of the families' disparities (families with a single group have none and are skipped)."""
    values = [v for v in per_family.values() if v == v]
    return float(np.mean(values)) if values else float("nan")


@dataclass(frozen=True)
class Flip:
    """Group `a` is worse off (higher rate) than `b` before `at_before` and better off at `at_after`."""

    family: str
    group_a: str
    group_b: str
    at_before: float
    at_after: float
    worse_before: str
    worse_after: str

    def describe(self, knob: str) -> str:
        return (f"{self.family}: between {knob}={self.at_before:g} and {knob}={self.at_after:g} the group with more "
                f"negative outputs switches from {self.worse_before} to {self.worse_after}")


def ordering_flips(series: Mapping[str, Sequence[tuple[float, float]]],
                   families: Mapping[str, Sequence[str]], min_gap: float = 0.0) -> list[Flip]:
    """Where two related groups swap order along a sweep ("the advantaged group toggles", Fig. 4).

    `series[group]` is [(knob value, rate), ...]. Ties and gaps <= `min_gap` do not count as an
    ordering, so noise-level wiggles can be ignored by raising `min_gap`.
    """
    flips = []
    for family, groups in families.items():
        for a, b in itertools.combinations([g for g in groups if g in series], 2):
            rate_a, rate_b = dict(series[a]), dict(series[b])
            xs = sorted(set(rate_a) & set(rate_b))
            previous: tuple[float, int] | None = None
            for x in xs:
                gap = rate_a[x] - rate_b[x]
                if gap != gap or abs(gap) <= min_gap:
                    continue
                sign = 1 if gap > 0 else -1
                if previous is not None and sign != previous[1]:
                    worse = {1: a, -1: b}
                    flips.append(Flip(family, a, b, previous[0], x, worse[previous[1]], worse[sign]))
                previous = (x, sign)
    return flips
