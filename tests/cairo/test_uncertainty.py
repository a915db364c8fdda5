"""Prompt-bootstrap intervals for the mean-r baseline and the rank agreement τ/ρ (before/after CAIRO)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_core.cairo.bias import bias_table
from fairness_core.cairo.request import read_bias_table
from fairness_core.cairo.summary import search_json
from fairness_core.cairo.uncertainty import add_uncertainty, prompt_scores


def generations(seed: int, n_systems: int = 6, per_group: int = 4) -> pd.DataFrame:
    """Annotated generations: two metrics, three sets each, 2 subgroups × `per_group` original prompts, 2 seeds;
    system s is biased by 0.05·s on both metrics (so the metrics agree) plus prompt noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for metric, groups in (("A", ("f", "m")), ("B", ("x", "y"))):
        for index in range(2 * per_group):
            group = groups[index % 2]
            prompt_effect = rng.normal(0, 0.05)
            for prompt_set in ("original", "P1", "P2"):
                for system in range(n_systems):
                    for sample in range(2):
                        shift = 0.05 * system if group == groups[0] else 0.0
                        rows.append({"system_name": f"s{system}", "metric": metric, "prompt_set": prompt_set,
                                     "group": group, "orig_index": index,
                                     "prompt_id": f"{metric}|{prompt_set}|{index}",
                                     "score": float(np.clip(0.2 + shift + prompt_effect + rng.normal(0, 0.05), 0, 1)),
                                     "sample": sample})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("combination", ["weighted", "released"])
def test_an_undrawn_replicate_is_the_bias_table(combination: str) -> None:
    frame = generations(0)
    table = read_bias_table(bias_table(frame, "score"))
    sets_a, _, systems = table.pair("A", "B", combination)
    scores = prompt_scores(frame, "score", "A", sets_a.names, systems)
    same = scores.replicate(np.arange(len(scores.groups)), pooled=combination == "released")
    if combination == "released":
        assert same.means == pytest.approx(sets_a.means, abs=1e-12)
        assert (same.counts == sets_a.counts).all()
    else:
        assert same.values == pytest.approx(sets_a.values, abs=1e-12)


@pytest.mark.parametrize("combination", ["weighted", "released"])
def test_intervals_for_the_baseline_and_the_rank_agreement(combination: str) -> None:
    frame = generations(1)
    table = read_bias_table(bias_table(frame, "score"))
    payload = add_uncertainty(search_json(table, heldout=False, combination=combination), table, frame, "score",
                              combination, n_boot=150)
    (pair,) = payload["pairs"]
    found = pair["uncertainty"]
    assert found["n_boot"] == 150 and found["resampled"] == "original prompts within subgroups"
    # the systems' bias grows with s on both metrics: the rankings agree, robustly
    assert 0.5 < found["kendall_tau_original_low"] <= found["kendall_tau_original_high"] <= 1.0
    assert 0.5 < found["spearman_rho_original_low"] <= 1.0
    for row, size in zip(found["by_size"], pair["by_size"], strict=True):
        assert row["size"] == size["size"]
        assert row["mean_r_low"] <= row["mean_r_high"]
        assert row["mean_r_low"] - 0.05 <= size["mean_r"] <= row["mean_r_high"] + 0.05


def test_noise_only_systems_give_wide_rank_intervals() -> None:
    frame = generations(2)
    frame["score"] = np.random.default_rng(9).beta(0.5, 2.0, len(frame))  # no system effect at all
    table = read_bias_table(bias_table(frame, "score"))
    payload = add_uncertainty(search_json(table, heldout=False), table, frame, "score", n_boot=150)
    found = payload["pairs"][0]["uncertainty"]
    assert found["kendall_tau_original_high"] - found["kendall_tau_original_low"] > 0.5
