"""How many CrowS-Pairs pairs a question needs (issue 44: "`plan` answers how many pairs a given difference needs").

The study's test is exact (`stats.sign_test`: the two-sided binomial test of P(d > 0) = 1/2 on the untied pairs), so
its power needs no simulation: for a true share p = 1/2 + effect of untied pairs whose `sent_more` is more likely, a
study of m untied pairs rejects when K ≥ c or K ≤ m − c, c the smallest count with P(K ≥ c | 1/2) ≤ α/2 (the test's
own two-sided p-value doubles the larger tail), so its power is P(K ≥ c | p) + P(K ≤ m − c | p), K ~ Binomial(m, p).
A pilot run gives what the test cannot know in advance: the share of tied pairs (scored equally; they are left out of
the test, so n pairs give about n·(1 − ties) untied ones), and its own size, at which the smallest detectable effect
is given. The exact test's power zigzags with m (the critical count moves in whole steps), so the answer is the size
from which the power stays at or above the target, not the first size that touches it.

StereoSet's SS and BBQ's bias scores are means over target terms and over templates, read with a bootstrap over
those units: their plans (`plan_by_units`) take the pilot's standard error (its bootstrap interval's width over
2·1.96) and let it shrink as 1/√units, the normal approximation n = n₀·((z₁₋α/₂ + z_power)·se₀/effect)² for a
two-sided test of "no preference" (SS = 50, a bias score of 0) at α = 0.05; `tests/stereotypes/test_plan.py`
simulates studies of the planned size through the study's own statistics to check the power it reaches.
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


def plan_stored_crows(store: Any, run_id: str, effect: float, power: float, measure: str | None = None
                      ) -> dict[str, Any]:
    """The plan from a stored run of this study: `plan_crows` for a CrowS-Pairs run (the exact sign test), and
    `plan_stored_by_units` for a StereoSet or BBQ run (`measure`: ss; bias_disambig or bias_ambig)."""
    from fairness_core.stereotypes.summary import stored_crows_gaps
    from fairness_core.stereotypes.task import KIND

    info = store.get_run(run_id)
    if info is None or info.kind != KIND:
        raise StereotypePlanError(f"run {run_id} is not a run of the stereotype benchmarks")
    benchmark = (info.manifest.get("request") or {}).get("benchmark")
    if info.status != "complete":
        raise StereotypePlanError(f"run {run_id} is {info.status}: plan from a complete run")
    if benchmark != "crows-pairs":
        return plan_stored_by_units(store, info, effect, power, measure)
    if measure not in (None, "pct_stereotype"):
        raise StereotypePlanError(f"run {run_id} is a CrowS-Pairs run, planned on pct_stereotype (got {measure!r})")
    return plan_crows(stored_crows_gaps(store, run_id).to_numpy(), run_id, effect, power)


#: what each benchmark's plan reads: the statistic, its "no preference" value, its unit, and the words for it
UNIT_PLANS = {
    "stereoset": {"measures": ("ss",), "null": 50.0, "unit": "target term", "units": "target terms",
                  "words": "an SS of {value} instead of 50 (overall over both splits)"},
    "bbq": {"measures": ("bias_disambig", "bias_ambig"), "null": 0.0, "unit": "template", "units": "templates",
            "words": "a bias score {name} of {value} instead of 0 (overall)"},
}


def _z(p: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def _normal_power(effect: float, se: float, alpha: float = ALPHA) -> float:
    from statistics import NormalDist

    z, shift = _z(1 - alpha / 2), abs(effect) / se
    return NormalDist().cdf(shift - z) + NormalDist().cdf(-shift - z)


def plan_by_units(se: float, units: int, effect: float, power: float, run_id: str, measure: str,
                  benchmark: str, most: int) -> dict[str, Any]:
    """A plan for a mean over units (StereoSet's target terms, BBQ's templates) from the pilot's standard error
    `se` at `units` units (module docstring); `most`: how many units the whole benchmark has."""
    spec = UNIT_PLANS[benchmark]
    if not (math.isfinite(se) and se > 0):
        raise StereotypePlanError(f"run {run_id} has no interval for {measure} (too few {spec['units']} to resample):"
                                  f" it cannot be a pilot; run more {spec['units']}")
    multiplier = _z(1 - ALPHA / 2) + _z(power)
    needed = math.ceil(units * (multiplier * se / effect) ** 2)
    mde = multiplier * se
    sizes = sorted({max(2, int(np.rint(x))) for x in np.geomspace(2, max(8, needed * 2), 12)})
    curve = tuple((n, round(_normal_power(effect, se * math.sqrt(units / n)), 4)) for n in sizes)
    value = spec["null"] + effect
    words = spec["words"].format(value=f"{value:g}", name=measure)
    shown = (lambda x: f"{x:.1f} points") if benchmark == "stereoset" else (lambda x: f"{x:.3f}")
    pilot = f"the pilot's {units:,} {spec['units']} detect {shown(mde)}"
    answer = (f"To detect {words} with {power:.0%} power, plan about {needed:,} {spec['units']} (a normal "
              f"approximation from the pilot's bootstrap standard error, {se:.3g} at {units:,} "
              f"{spec['units']}, shrinking as 1/√{spec['units'].split()[-1]}; α = {ALPHA:g}; {pilot}).")
    if needed > most:
        answer += f" {benchmark} has {most:,} {spec['units']} here: the whole benchmark is not enough."
    return {"measure": measure, "effect": effect, "power": power, "n_units": needed, "n_samples": None,
            "mde_at_pilot_size": mde, "unit": spec["unit"], "pilot_units": units, "curve": curve, "answer": answer,
            "method": f"normal approximation: the pilot's bootstrap standard error over {spec['units']}, scaled by "
                      f"√(pilot {spec['units']} / planned {spec['units']})",
            "pilot_run": run_id, "extra": {"standard_error": se, "benchmark": benchmark}}


def plan_stored_by_units(store: Any, info: Any, effect: float, power: float, measure: str | None = None
                         ) -> dict[str, Any]:
    """`plan_by_units` from a stored StereoSet or BBQ run: its request rebuilt from the manifest's selection (the
    same items, checked by their hash), its statistics read from its stored rows as its page reads them, with the
    page's default 1,000 resamples (a run does not record the resamples it was first shown with)."""
    from dataclasses import replace

    from fairness_core.stereotypes import data as D
    from fairness_core.stereotypes.request import StereotypeInputError, build_request
    from fairness_core.stereotypes.task import summarise

    request_record = info.manifest.get("request") or {}
    benchmark = request_record.get("benchmark")
    spec = UNIT_PLANS[benchmark]
    measure = measure or spec["measures"][0]
    if measure not in spec["measures"]:
        raise StereotypePlanError(f"run {info.run_id} is a {benchmark} run, planned on "
                                  f"{' or '.join(spec['measures'])} (got --measure {measure!r})")
    limit_effect = 50.0 if benchmark == "stereoset" else 2.0
    if not 0 < effect < limit_effect:
        raise StereotypePlanError(f"--effect for {benchmark} {measure} is a distance from "
                                  f"{spec['null']:g}, between 0 and {limit_effect:g} (got {effect!r}): e.g. "
                                  + ("5 for SS 55" if benchmark == "stereoset" else "0.1 for a bias score of 0.1"))
    selection = request_record.get("selection") or {}
    try:
        request = build_request(benchmark, "stored", selection.get("subset") or None, selection.get("limit"),
                                int(selection.get("seed") or 0), 1000)
    except StereotypeInputError as error:
        raise StereotypePlanError(f"run {info.run_id} cannot be read back: {error}") from None
    if request.items_hash() != (request_record.get("data") or {}).get("hash"):
        raise StereotypePlanError(f"run {info.run_id} was made from data this lab no longer selects the same way; "
                                  "run the benchmark again to plan from it")
    if "predictions" in request_record:  # imported scores are read as given, not as log-probabilities
        request = replace(request, model=None, predictions={})
    _, summary = summarise(request, store.rows(info.run_id))
    if benchmark == "stereoset":
        cell = summary["overall"]
        low, high, units = cell.get("ss_ci_low", math.nan), cell.get("ss_ci_high", math.nan), int(cell["n_terms"])
        splits = set(request.subset) or set(D.STEREOSET_SPLITS)
        most = len({c.target for c in D.stereoset() if c.split in splits})
    else:
        cell = summary["overall"][measure.rsplit("_", 1)[1]]
        low, high, units = cell["bias_ci_low"], cell["bias_ci_high"], int(cell["n_templates"])
        most = len({item.template for category in (request.subset or D.BBQ_CATEGORIES) for item in D.bbq(category)})
    se = (high - low) / (2 * _z(0.975))
    return plan_by_units(se, units, effect, power, info.run_id, measure, benchmark, max(most, units))
