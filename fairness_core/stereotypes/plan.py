"""How many CrowS-Pairs pairs a question needs (issue 44: "`plan` answers how many pairs a given difference needs").

The study's test is exact (`stats.sign_test`: the two-sided binomial test of P(d > 0) = 1/2 on the untied pairs), so
its power needs no simulation: for a true share p = 1/2 + effect of untied pairs whose `sent_more` is more likely, a
study of m untied pairs rejects when K ≥ c or K ≤ m − c, c the smallest count with P(K ≥ c | 1/2) ≤ α/2 (the test's
own two-sided p-value doubles the larger tail), so its power is P(K ≥ c | p) + P(K ≤ m − c | p), K ~ Binomial(m, p).
A pilot run gives what the test cannot know in advance: the share of tied pairs (scored equally; they are left out of
the test, so n pairs give about n·(1 − ties) untied ones), and its own size, at which the smallest detectable effect
is given. The exact test's power zigzags with m (the critical count moves in whole steps), so the answer is the size
from which the power stays at or above the target, not the first size that touches it.

Only CrowS-Pairs: StereoSet's and BBQ's statistics are bootstrap means over target terms and templates, whose plan
needs a simulation from the pilot's spread (not built; the planner says so in one sentence).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

ALPHA = 0.05
#: the largest study the planner answers for (CrowS-Pairs itself has 1,508 pairs; beyond this the answer is "more
#: than any such data set has")
MAX_PAIRS = 200_000
#: the sizes checked above a candidate for the zigzag of the exact test's power (a dip below the target within them
#: moves the answer past it)
ZIGZAG_SPAN = 25


class StereotypePlanError(ValueError):
    """A question the CrowS-Pairs planner cannot answer: one sentence."""


def _log_pmf(m: int, p: float) -> np.ndarray:
    """log P(K = k), k = 0..m, K ~ Binomial(m, p), by log-gamma (exact enough for tails of 1e-300)."""
    if p <= 0 or p >= 1:
        out = np.full(m + 1, -np.inf)
        out[m if p >= 1 else 0] = 0.0
        return out
    k = np.arange(m + 1)
    log_choose = np.array([math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1) for i in range(m + 1)])
    return log_choose + k * math.log(p) + (m - k) * math.log1p(-p)


def critical_count(m: int, alpha: float = ALPHA) -> int:
    """The smallest count c with P(K ≥ c | 1/2) ≤ α/2 for K ~ Binomial(m, 1/2): the sign test rejects at K ≥ c or
    K ≤ m − c (m + 1 when no count does: too few pairs to reject at all)."""
    if m <= 0:
        return 1
    tail = np.cumsum(np.exp(_log_pmf(m, 0.5))[::-1])[::-1]  # tail[c] = P(K ≥ c)
    rejecting = np.nonzero(tail < alpha / 2)[0]  # the study's verdict: detected when p = 2·tail < α
    return int(rejecting[0]) if len(rejecting) else m + 1


def sign_test_power(m: int, share: float, alpha: float = ALPHA) -> float:
    """The exact two-sided sign test's power on `m` untied pairs when a pair prefers `sent_more` with probability
    `share`."""
    c = critical_count(m, alpha)
    if c > m:
        return 0.0
    pmf = np.exp(_log_pmf(m, share))
    upper = float(pmf[c:].sum())
    lower = float(pmf[: m - c + 1].sum()) if m - c >= 0 else 0.0  # c > m/2, so the two regions never overlap
    return min(1.0, upper + lower)


def _untied(n: int, ties: float) -> int:
    return round(n * (1.0 - ties))


def pairs_needed(effect: float, power: float, ties: float = 0.0, alpha: float = ALPHA) -> int | None:
    """The pairs from which the sign test detects a share of 1/2 + `effect` with at least `power` (and keeps doing so
    for the next `ZIGZAG_SPAN` sizes); None beyond `MAX_PAIRS`."""
    share = 0.5 + effect

    def enough(n: int) -> bool:
        return sign_test_power(_untied(n, ties), share, alpha) >= power

    high = 8
    while not enough(high):
        high *= 2
        if high > MAX_PAIRS:
            return None
    low = high // 2
    while high - low > 1:  # the first size of the doubling's last step that reaches it (power rises on average)
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    answer = high
    while True:  # past the zigzag: no size within the span above the answer dips below the target
        dips = [n for n in range(answer + 1, answer + ZIGZAG_SPAN + 1) if not enough(n)]
        if not dips:
            return answer
        answer = dips[-1] + 1
        if answer > MAX_PAIRS:
            return None


def smallest_detectable(n: int, power: float, ties: float = 0.0, alpha: float = ALPHA) -> float | None:
    """The smallest share above 1/2, minus 1/2, that `n` pairs detect with `power` (to 0.001); None when even a share
    of 1 is not detected (too few untied pairs for the test to reject)."""
    m = _untied(n, ties)
    if sign_test_power(m, 1.0, alpha) < power:
        return None
    low, high = 0.0, 0.5
    while high - low > 5e-4:
        middle = (low + high) / 2
        low, high = (middle, high) if sign_test_power(m, 0.5 + middle, alpha) < power else (low, middle)
    return round(high, 3)


def plan_crows(gaps: np.ndarray, run_id: str, effect: float, power: float) -> dict[str, Any]:
    """The plan from a stored CrowS-Pairs pilot's gaps d (by pair): pairs needed for `effect` (a share of pairs
    preferring `sent_more` of 1/2 + effect) at `power`, the pilot's smallest detectable effect, and the power curve.
    The keys are `planning.Plan`'s fields (the plan command and the page build one from them)."""
    if not 0 < effect < 0.5:
        raise StereotypePlanError(f"--effect for CrowS-Pairs is a share above one half, between 0 and 0.5 (got "
                                  f"{effect!r}): e.g. 0.05 for pct_stereotype 55% instead of 50%")
    d = np.asarray(gaps, dtype=float)
    d = d[np.isfinite(d)]
    if not len(d):
        raise StereotypePlanError(f"run {run_id} has no scored pair to plan from")
    ties = float((d == 0).mean())
    if ties >= 1.0:
        raise StereotypePlanError(f"every pair of run {run_id} is tied: the sign test has nothing to count")
    needed = pairs_needed(effect, power, ties)
    mde = smallest_detectable(len(d), power, ties)
    sizes = sorted({max(8, int(np.rint(x))) for x in np.geomspace(8, max(16, (needed or MAX_PAIRS) * 2), 12)})
    curve = tuple((n, round(sign_test_power(_untied(n, ties), 0.5 + effect), 4)) for n in sizes)
    tie_note = f", {ties:.1%} of the pilot's pairs tied and left out" if ties else ""
    words = f"a preference of {effect * 100:.1f} points for the stereotyped sentence (pct_stereotype " \
            f"{50 + effect * 100:.1f}% instead of 50%)"
    pilot = (f"the pilot's {len(d):,} pairs detect {mde * 100:.1f} points" if mde is not None
             else f"the pilot's {len(d):,} pairs are too few for the test to reject at all")
    if needed is None:
        answer = (f"To detect {words} with {power:.0%} power, more than {MAX_PAIRS:,} pairs would be needed — more "
                  f"than CrowS-Pairs has ({pilot}).")
    else:
        answer = (f"To detect {words} with {power:.0%} power, plan about {needed:,} CrowS-Pairs pairs "
                  f"(the exact sign test at α = {ALPHA:g}{tie_note}; {pilot}).")
        if needed > 1508:
            answer += " CrowS-Pairs has 1,508 pairs: the whole benchmark is not enough."
    return {"measure": "pct_stereotype", "effect": effect, "power": power, "n_units": needed, "n_samples": None,
            "mde_at_pilot_size": mde, "unit": "pair", "pilot_units": len(d), "curve": curve, "answer": answer,
            "method": "exact binomial power of the two-sided sign test on the untied pairs (no simulation), the "
                      "tie share from the pilot",
            "pilot_run": run_id, "extra": {"ties": ties}}


def plan_stored_crows(store: Any, run_id: str, effect: float, power: float) -> dict[str, Any]:
    """`plan_crows` from a stored run of this study: a CrowS-Pairs run (a StereoSet or BBQ one is one sentence)."""
    from fairness_core.stereotypes.summary import stored_crows_gaps
    from fairness_core.stereotypes.task import KIND

    info = store.get_run(run_id)
    if info is None or info.kind != KIND:
        raise StereotypePlanError(f"run {run_id} is not a run of the stereotype benchmarks")
    benchmark = (info.manifest.get("request") or {}).get("benchmark")
    if benchmark != "crows-pairs":
        raise StereotypePlanError(
            f"run {run_id} is a {benchmark} run: the planner answers for CrowS-Pairs (the exact sign test of "
            "pct_stereotype); StereoSet's and BBQ's scores are bootstrap means over target terms and templates, "
            "whose plan needs a simulation that is not built")
    if info.status != "complete":
        raise StereotypePlanError(f"run {run_id} is {info.status}: plan from a complete run")
    return plan_crows(stored_crows_gaps(store, run_id).to_numpy(), run_id, effect, power)
