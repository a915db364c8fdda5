"""Issue 42: what a metric-bias interval generalises over, and direction labels that hold their error rate over
the attribute x metric cells. Simulated where the truth is known; full-size numbers in docs/statistics.md,
"Metric bias"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_core.data import winobias
from fairness_core.metric_bias import bias_table, direction_screen
from fairness_core.metric_bias.summary import occupation_factors


@pytest.fixture(scope="module")
def type1_dev() -> pd.DataFrame:
    """WinoBias type-1 dev (the paper's 396 gender pairs) as a pair frame without scores."""
    pairs = winobias.build("type1-dev").pairs
    return pd.DataFrame({"item": [p.item for p in pairs], "candidate1": [p.candidate1 for p in pairs],
                         "attribute": "gender", "metric": "simulated", "stereotypical": 1})


def test_every_winobias_pair_names_one_occupation_of_each_list(type1_dev: pd.DataFrame) -> None:
    male, female = occupation_factors(type1_dev["item"].tolist(), type1_dev["candidate1"].tolist())
    assert len(set(male)) == len(set(female)) == 20  # 40 occupations behind 396 pairs
    first = type1_dev["candidate1"].iloc[0].lower()  # "The developer argued with the designer because he …"
    assert "developer" in first and "designer" in first
    assert occupation_factors(["p1", "p2"], ["The nurse sang.", "The driver ran."]) is None  # not WinoBias


def test_the_stereotypical_difference_interval_covers_across_occupations(type1_dev: pd.DataFrame) -> None:
    """Gaps x_i = μ + a_male + b_female + e_i: each occupation shifts every pair that names it (σ = 0.3 each,
    e ~ N(0, 1)), raw units so the truth is μ. Resampling pairs as independent (round 5) covers μ 0.66 of the
    time; the two-way interval over the 20 + 20 occupations 0.95 (the goal: >= 0.93), about twice as wide (3,000
    datasets, docs/statistics.md). Here 200 datasets (s.e. ~0.016: the bound is the goal less one s.e.)."""
    male, female = occupation_factors(type1_dev["item"].tolist(), type1_dev["candidate1"].tolist())
    rng = np.random.default_rng(3)
    mu, hits, trials = 0.4, {"auto": 0, "pairs": 0}, 200
    widths = {"auto": [], "pairs": []}
    for _ in range(trials):
        gaps = mu + rng.normal(0, 0.3, 20)[male] + rng.normal(0, 0.3, 20)[female] + rng.normal(0, 1, len(male))
        frame = type1_dev.assign(score1=gaps, score2=0.0)
        for clusters in hits:
            row = bias_table(frame, "raw", n_resamples=20, clusters=clusters).iloc[0]
            hits[clusters] += row["stereo_ci_low"] <= mu <= row["stereo_ci_high"]
            widths[clusters].append(row["stereo_ci_high"] - row["stereo_ci_low"])
    print({k: v / trials for k, v in hits.items()}, {k: float(np.mean(v)) for k, v in widths.items()})
    assert hits["auto"] / trials >= 0.92, hits
    assert hits["pairs"] / trials <= 0.85, hits
    assert row["interval_unit"] == "pairs" and "occupations" in bias_table(frame, "raw", 20).iloc[0]["interval_unit"]


def test_direction_labels_hold_the_false_discovery_rate() -> None:
    """24 attribute x metric cells of 60 independent pairs each, 20 with no stereotypical difference and 4 with one
    (0.5 sd). Labelling a cell by q < 0.05 (Benjamini-Hochberg over the cells) keeps the false discovery rate at
    ~0.03 (the bound: 0.05 x 20/24); labelling it whenever its own 95% interval excludes 0 (round 5) gives ~0.19.
    The rule still labels most true differences."""
    rng = np.random.default_rng(11)
    cells = [(a, m) for a in ("gender", "race", "religion") for m in range(8)]
    true = {("gender", 0): 0.5, ("race", 3): -0.5, ("religion", 5): 0.5, ("religion", 7): 0.5}
    fdp = {"q": [], "interval": []}
    found = []
    for _ in range(60):
        frames = []
        for attribute, metric in cells:
            gaps = true.get((attribute, metric), 0.0) + rng.normal(0, 1, 60)
            frames.append(pd.DataFrame({"item": [f"{attribute}-{i}" for i in range(60)], "attribute": attribute,
                                        "metric": f"m{metric}", "candidate1": "", "score1": gaps, "score2": 0.0,
                                        "stereotypical": 1}))
        table = direction_screen(bias_table(pd.concat(frames), "raw", n_resamples=10))
        is_true = [(a, int(m[1:])) in true for a, m in zip(table["attribute"], table["metric"], strict=True)]
        is_true = np.array(is_true)
        labelled = table["direction"] != "no clear direction"
        excludes = (table["stereo_ci_low"] > 0) | (table["stereo_ci_high"] < 0)
        for rule, flagged in (("q", labelled), ("interval", excludes)):
            fdp[rule].append((flagged & ~is_true).sum() / max(flagged.sum(), 1))
        found.append((labelled & is_true).sum())
        # the interval and the unadjusted p are one computation: they agree on every cell
        assert (excludes == (table["stereo_p_value"] < 0.05)).all()
    print({k: float(np.mean(v)) for k, v in fdp.items()}, float(np.mean(found)))
    assert np.mean(fdp["q"]) <= 0.06, np.mean(fdp["q"])
    assert np.mean(fdp["interval"]) >= 0.12, np.mean(fdp["interval"])
    assert np.mean(found) >= 2.5, np.mean(found)
    assert (table["stereo_q_value"] >= table["stereo_p_value"] - 1e-12).all()  # equal at the largest p
