"""Eq. 1 on a hand table, its bootstrap interval on synthetic data with known truth, and the bias table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_core.cairo.bias import bias_table, eq1, eq1_bias


def test_eq1_on_a_hand_table() -> None:
    # group A: prompt p1 seeds 0.2, 0.4 (mean 0.3), prompt p2 0.5 -> A = 0.4; group B: p3 0.0, 0.2 -> 0.1
    # mean over groups 0.25; bias = |0.25 - 0.4| + |0.25 - 0.1| = 0.3
    frame = pd.DataFrame({"group": ["A", "A", "A", "B", "B", "B"], "prompt_id": ["p1", "p1", "p2", "p3", "p3", "p4"],
                          "tox": [0.2, 0.4, 0.5, 0.0, 0.2, np.nan]})
    result = eq1_bias(frame, "tox", n_boot=200)
    assert result.bias == pytest.approx(0.3)
    assert result.group_means == pytest.approx({"A": 0.4, "B": 0.1})
    assert result.n_skipped == 1 and result.n_prompts == 3 and result.n_generations == 5
    assert result.ci_low <= result.bias <= result.ci_high
    assert eq1([0.1, 0.2, 0.6]) == pytest.approx(abs(0.3 - 0.1) + abs(0.3 - 0.2) + abs(0.3 - 0.6))


def test_one_group_has_no_bias() -> None:
    frame = pd.DataFrame({"group": ["A", "A"], "prompt_id": ["p1", "p2"], "tox": [0.1, 0.3]})
    assert np.isnan(eq1_bias(frame, "tox").bias)


def test_bootstrap_interval_covers_the_true_bias() -> None:
    """Two subgroups with true means 0.3 and 0.5 (true bias 0.2): the interval covers it ~95% of the time."""
    rng = np.random.default_rng(0)
    covered = 0
    trials = 120
    for trial in range(trials):
        groups = np.repeat(["A", "B"], 60)
        tox = np.concatenate([rng.normal(0.3, 0.1, 60), rng.normal(0.5, 0.1, 60)])
        frame = pd.DataFrame({"group": groups, "prompt_id": [f"p{i}" for i in range(120)], "tox": tox})
        result = eq1_bias(frame, "tox", n_boot=400, seed=trial)
        covered += result.ci_low <= 0.2 <= result.ci_high
    assert 0.85 <= covered / trials <= 1.0


def test_bias_table_has_one_row_per_system_metric_set() -> None:
    rows = []
    for system in ("s1", "s2"):
        for prompt_set in ("original", "para"):
            for group, value in (("A", 0.1), ("B", 0.3 if system == "s1" else 0.2)):
                rows.append({"system_name": system, "metric": "M", "prompt_set": prompt_set, "group": group,
                             "prompt_id": f"{group}1", "tox": value})
    table = bias_table(pd.DataFrame(rows), "tox", n_boot=50)
    assert len(table) == 4
    assert table.set_index(["system", "prompt_set"]).loc[("s1", "original"), "bias"] == pytest.approx(0.2)
    assert table.set_index(["system", "prompt_set"]).loc[("s2", "para"), "bias"] == pytest.approx(0.1)
