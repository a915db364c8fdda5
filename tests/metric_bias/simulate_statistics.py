"""Metric bias and mitigation numbers in docs/statistics.md ("Metric bias"), full size:
`python -m tests.metric_bias.simulate_statistics` (~2 minutes on one core). The focused tests
(`tests/metric_bias/test_intervals.py`, `tests/mitigation/test_summary.py`) run the same simulations smaller."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from fairness_core.data import winobias
from fairness_core.metric_bias import bias_table, direction_screen, mean_interval, occupation_factors

PINNED = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "metric_bias_pinned.json"


def type1_dev() -> tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray]]:
    pairs = sorted(winobias.build("type1-dev").pairs, key=lambda p: p.item)
    frame = pd.DataFrame({"item": [p.item for p in pairs], "candidate1": [p.candidate1 for p in pairs],
                          "attribute": "gender", "stereotypical": 1})
    return frame, occupation_factors(frame["item"].tolist(), frame["candidate1"].tolist())


def coverage(trials: int = 3000) -> None:
    """The stereotypical difference's interval on the 396 type-1 dev pairs, gaps μ + a_male + b_female + e."""
    _, (male, female) = type1_dev()
    rng = np.random.default_rng(5)
    for sd_occupation, sd_pair in ((0.3, 1.0), (0.5, 0.5), (0.0, 1.0)):
        hits = {"pairs": 0, "occupations": 0}
        widths: dict[str, list[float]] = {"pairs": [], "occupations": []}
        for _ in range(trials):
            x = (0.4 + rng.normal(0, sd_occupation, 20)[male] + rng.normal(0, sd_occupation, 20)[female]
                 + rng.normal(0, sd_pair, len(male)))
            for unit, factors in (("pairs", None), ("occupations", (male, female))):
                found = mean_interval(x, factors)
                hits[unit] += found["low"] <= 0.4 <= found["high"]
                widths[unit].append(found["high"] - found["low"])
        print(f"σ_occupation {sd_occupation}, σ_pair {sd_pair}: coverage pairs {hits['pairs'] / trials:.3f}, "
              f"occupations {hits['occupations'] / trials:.3f}; width ratio "
              f"{np.mean(widths['occupations']) / np.mean(widths['pairs']):.2f}")


def screen(trials: int = 1000) -> None:
    """Direction labels over 24 cells (20 null, 4 true at 0.5 sd, 60 pairs each): FDR of q-labels vs interval-labels."""
    rng = np.random.default_rng(11)
    cells = [(a, m) for a in ("gender", "race", "religion") for m in range(8)]
    true = {("gender", 0): 0.5, ("race", 3): -0.5, ("religion", 5): 0.5, ("religion", 7): 0.5}
    fdp: dict[str, list[float]] = {"q": [], "interval": []}
    false: dict[str, list[int]] = {"q": [], "interval": []}
    found = []
    for _ in range(trials):
        frames = [pd.DataFrame({"item": [f"{a}-{i}" for i in range(60)], "attribute": a, "metric": f"m{m}",
                                "candidate1": "", "score1": true.get((a, m), 0.0) + rng.normal(0, 1, 60),
                                "score2": 0.0, "stereotypical": 1}) for a, m in cells]
        table = direction_screen(bias_table(pd.concat(frames), "raw", n_resamples=10))
        is_true = np.array([(a, int(m[1:])) in true for a, m in zip(table["attribute"], table["metric"], strict=True)])
        labelled = table["direction"] != "no clear direction"
        excludes = (table["stereo_ci_low"] > 0) | (table["stereo_ci_high"] < 0)
        for rule, flagged in (("q", labelled), ("interval", excludes)):
            fdp[rule].append((flagged & ~is_true).sum() / max(flagged.sum(), 1))
            false[rule].append(int((flagged & ~is_true).sum()))
        found.append(int((labelled & is_true).sum()))
    print(f"labels: FDR by q {np.mean(fdp['q']):.3f} ({np.mean(false['q']):.2f} false labels per screen), by "
          f"interval {np.mean(fdp['interval']):.3f} ({np.mean(false['interval']):.2f}); true labelled by q "
          f"{np.mean(found):.2f} of 4")


def bare_two_way(values: np.ndarray, male: np.ndarray, female: np.ndarray) -> float:
    """The two-way variance without the floors (for the docs: how much the floors change)."""
    from fairness_core.metric_bias.summary import cluster_variance

    residuals = values - values.mean()
    return (cluster_variance(residuals, male)[0] + cluster_variance(residuals, female)[0]
            - cluster_variance(residuals, male * 20 + female)[0])


def widths() -> None:
    """Interval widths on the pinned WinoBias type-1 dev scores (min-max, Eq. 1-2): pairs vs occupations."""
    frame, (male, female) = type1_dev()
    pinned = json.loads(PINNED.read_text())["sets"]
    for key in ("winobias-type1-dev/default", "winobias-type1-dev/metric-fairness-2022"):
        for metric, (s1, s2) in pinned[key]["scores"].items():
            scored = frame.assign(metric=metric, score1=s1, score2=s2)
            rows = {unit: bias_table(scored, "minmax", 1000, clusters=unit).iloc[0] for unit in ("pairs", "auto")}
            p, o = rows["pairs"], rows["auto"]
            if p["ci_high"] == p["ci_low"]:
                print(f"{key} {metric}: every gap is 0 (bias {p['bias']:.2f}), no width to compare")
                continue
            ratio = (o["ci_high"] - o["ci_low"]) / (p["ci_high"] - p["ci_low"])
            print(f"{key} {metric}: bias {p['bias']:.2f} pairs [{p['ci_low']:.2f}, {p['ci_high']:.2f}] occupations "
                  f"[{o['ci_low']:.2f}, {o['ci_high']:.2f}] ratio {ratio:.2f}; "
                  f"stereo {p['stereo_diff']:+.2f} pairs [{p['stereo_ci_low']:+.2f}, {p['stereo_ci_high']:+.2f}] "
                  f"p {p['stereo_p_value']:.3g}, occupations [{o['stereo_ci_low']:+.2f}, {o['stereo_ci_high']:+.2f}] "
                  f"p {o['stereo_p_value']:.3g} ratio "
                  f"{(o['stereo_ci_high'] - o['stereo_ci_low']) / (p['stereo_ci_high'] - p['stereo_ci_low']):.2f}")
            gaps = (np.array(s1) - np.array(s2)) * 100 / (max(s1 + s2) - min(s1 + s2))
            pair_variance = np.var(gaps, ddof=1) / gaps.size
            bias_ratio = bare_two_way(np.abs(gaps), male, female) / (np.var(np.abs(gaps), ddof=1) / gaps.size)
            print(f"   bare two-way / pairs variance: bias {bias_ratio:.2f}, "
                  f"stereo {bare_two_way(gaps, male, female) / pair_variance:.2f}")


def mitigation(trials: int = 2000) -> None:
    """The change after − before (tests/mitigation/test_summary.py's occupation model)."""
    from fairness_core.mitigation.summary import bias_change

    _, factors = type1_dev()
    rng = np.random.default_rng(99)
    n = len(factors[0])
    truth = 50 * (0.5 * 0.04 - 0.04) * (n - 2) / n
    hits = {"pairs": 0, "occupations": 0}
    width: dict[str, list[float]] = {"pairs": [], "occupations": []}
    for _ in range(trials):
        base, gap = rng.uniform(0, 1, n), rng.gamma(2.0, 0.02, n)
        shrink = (0.5 + rng.normal(0, 0.1, 20)[factors[0]] + rng.normal(0, 0.1, 20)[factors[1]]
                  + rng.uniform(-0.2, 0.2, n))
        b1, b2, a1, a2 = base + gap, base.copy(), base + gap * shrink, base.copy()
        b1[:2], b2[:2], a1[:2], a2[:2] = [0, 2], [0, 2], [0, 2], [0, 2]
        for unit, given in (("pairs", None), ("occupations", factors)):
            change = bias_change(b1, b2, a1, a2, n_resamples=1000 if given is None else 1, seed=1, factors=given)
            hits[unit] += change.ci_low <= truth <= change.ci_high
            width[unit].append(change.ci_high - change.ci_low)
    ratio = np.mean(width["occupations"]) / np.mean(width["pairs"])
    print(f"mitigation change: coverage pairs {hits['pairs'] / trials:.3f}, occupations "
          f"{hits['occupations'] / trials:.3f}; width ratio {ratio:.2f}")


if __name__ == "__main__":
    parts = {"coverage": coverage, "screen": screen, "widths": widths, "mitigation": mitigation}
    for name in sys.argv[1:] or list(parts):
        parts[name]()
