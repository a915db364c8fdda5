"""Where a noisy, increasing power curve crosses the target, from a few simulated points.

Power rises with the number of units n about as Φ(c·√n − z₁₋α) does for a test of a mean (roughly so for a mean of
absolute differences too), and with the effect δ as Φ(c·δ − z₁₋α): on the probit scale, a line in √n (resp. δ).
Each step fits that line to the evaluated points nearest the target (weighted by how precisely each was simulated;
through (0, −z₁₋α) while only one point says anything) and evaluates the simulation where the line reaches the
target; the search stops when that is where a point already is (within 5%). A step never jumps more than 16-fold,
and a curve that has not left α yet is followed up four-fold. Each evaluation simulates a few hundred studies
(`simulate`), so a search costs a handful of evaluations, never one per n.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

#: evaluations per search, at most
MAX_STEPS = 6
#: a next point this close (relative) to an evaluated one is not worth simulating
TOLERANCE = 0.05


@dataclass
class Curve:
    """Evaluated points of a power curve: x (units or effect) -> power."""

    points: dict[float, float] = field(default_factory=dict)

    def sorted(self) -> list[tuple[float, float]]:
        return sorted(self.points.items())


def _probit(p: float, n_sims: int) -> float:
    # a power of 0 or 1 among n_sims simulated studies is read as half a study away from it
    edge = 0.5 / max(n_sims, 1)
    return float(norm.ppf(min(max(p, edge), 1.0 - edge)))


def _weight(p: float, n_sims: int) -> float:
    """Inverse variance of a simulated power on the probit scale (delta method)."""
    edge = 0.5 / max(n_sims, 1)
    q = min(max(p, edge), 1.0 - edge)
    density = norm.pdf(norm.ppf(q))
    return float(n_sims * density**2 / (q * (1.0 - q)))


def _estimate(points: list[tuple[float, float]], target: float, alpha: float, scale: Callable[[float], float],
              n_sims: int) -> float | None:
    """Where the power reaches the target, on the `scale` (√n or δ): between the neighbours that bracket it (a probit
    line through the two); beyond the evaluated points, along the line through the two nearest (or through
    (0, −z₁₋α) and the nearest, when those two do not rise); by a weighted probit fit over all the points where noise
    left them out of order. None when no point has left α (nothing to draw a line through)."""
    z_target, z_alpha = float(norm.ppf(target)), float(norm.ppf(1 - alpha))
    informative = sorted((scale(x), _probit(p, n_sims), _weight(p, n_sims), p) for x, p in points
                         if p > alpha + 2 * math.sqrt(alpha * (1 - alpha) / n_sims))
    if not informative:
        return None

    def line(a: tuple, b: tuple) -> float | None:
        (h0, z0, _, _), (h1, z1, _, _) = a, b
        if h1 == h0 or z1 <= z0:
            return None
        return h0 + (h1 - h0) * (z_target - z0) / (z1 - z0)

    def through_origin(a: tuple) -> float | None:
        h0, z0, _, _ = a
        slope = (z0 + z_alpha) / h0 if h0 > 0 else 0.0
        return (z_target + z_alpha) / slope if slope > 0 else None

    below = [t for t in informative if t[3] < target]
    above = [t for t in informative if t[3] >= target]
    if below and above:
        # Once the target is bracketed, a line fitted to every point that is not saturated (power below 0.995),
        # each weighted by its precision and by its nearness to the target on the probit scale, so that one noisy
        # point next to the answer does not decide it alone; the bracketing pair's line where that fit fails.
        usable = [t for t in informative if t[3] < 0.995]
        if len({t[0] for t in usable}) >= 2:
            h = np.array([t[0] for t in usable])
            z = np.array([t[1] for t in usable])
            w = np.array([t[2] for t in usable]) * np.exp(-0.5 * (z - z_target) ** 2)
            slope, intercept = np.polyfit(h, z, 1, w=np.sqrt(w))
            if slope > 0:
                return float((z_target - intercept) / slope)
        upper = [t for t in above if t[0] > below[-1][0]]
        return line(below[-1], upper[0]) if upper else None
    if below:  # every point falls short: along the two largest, or from the origin through the largest
        found = line(below[-2], below[-1]) if len(below) >= 2 else None
        return found if found is not None and found > below[-1][0] else through_origin(below[-1])
    found = line(above[0], above[1]) if len(above) >= 2 else None  # every point reaches it: below the smallest
    return found if found is not None and found < above[0][0] else through_origin(above[0])


def crossing(evaluate: Callable[[float], float], start: float, target: float, alpha: float, low: float, high: float,
             integer: bool, n_sims: int, curve: Curve | None = None) -> tuple[float | None, Curve]:
    """The smallest x in [low, high] whose power reaches `target` (None if even `high` does not), and the points
    evaluated. `integer`: x is a number of units (searched on √x); else an effect (searched on x)."""
    curve = curve or Curve()
    scale = math.sqrt if integer else (lambda v: v)
    unscale = (lambda v: v * v) if integer else (lambda v: v)

    def clamp(x: float) -> float:
        x = min(max(x, low), high)
        return float(max(low, math.ceil(x - 1e-9))) if integer else float(x)

    def at(x: float) -> None:
        if x not in curve.points:
            curve.points[x] = evaluate(x)

    at(clamp(start))
    for _ in range(MAX_STEPS - 1):
        points = curve.sorted()
        found = _estimate(points, target, alpha, scale, n_sims)
        largest = points[-1][0]
        if found is None or found <= 0:
            following = largest * 4 if found is None else points[0][0] / 4
        else:
            following = unscale(found)
        nearest = min(curve.points, key=lambda x: abs(math.log(max(following, 1e-12) / x)))
        following = min(max(following, nearest / 16), nearest * 16)
        following = clamp(following)
        if following >= high and high in curve.points and curve.points[high] < target:
            return None, curve
        if any(abs(following - x) <= max(1.0 if integer else 0.0, TOLERANCE * x) for x in curve.points):
            break
        at(following)
    points = curve.sorted()
    found = _estimate(points, target, alpha, scale, n_sims)
    if found is None or found <= 0:
        reached = [x for x, p in points if p >= target]
        return (reached[0] if reached else None), curve
    answer = unscale(found)
    if answer > high:
        return None, curve
    return clamp(answer), curve
