"""Rank agreement τ between normalisations (min-max vs z-score / raw), with its pair-bootstrap interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_core.bias.paired import rank_agreement
from fairness_core.metric_bias.summary import bias_table, rank_agreement_interval


def pair_frame(seed: int, spreads: dict[str, float], n_pairs: int = 40) -> pd.DataFrame:
    """Pairs scored by several metrics: metric m's two candidates differ by noise of size spreads[m]."""
    rng = np.random.default_rng(seed)
    rows = []
    for attribute in ("gender", "race"):
        base = rng.random(n_pairs)
        for metric, spread in spreads.items():
            for i in range(n_pairs):
                rows.append({"attribute": attribute, "metric": metric, "item": f"{attribute}{i}",
                             "score1": base[i] * 10, "score2": base[i] * 10 + rng.normal(0, spread),
                             "stereotypical": None})
    return pd.DataFrame(rows)


def test_the_estimate_is_the_tau_of_the_bias_tables() -> None:
    pairs = pair_frame(0, {"a": 0.2, "b": 0.5, "c": 1.0, "d": 0.3})
    found = rank_agreement_interval(pairs, ["a", "b", "c", "d"], ["minmax", "zscore", "raw"], n_resamples=200)
    per_norm = {n: bias_table(pairs, n, n_resamples=10).groupby("metric")["bias"].mean().to_dict()
                for n in ("minmax", "zscore", "raw")}
    expected = rank_agreement(per_norm)
    assert set(found) == {"zscore", "raw"}
    for name, value in found.items():
        assert value["tau"] == pytest.approx(expected[name], abs=1e-12)
        assert -1 <= value["ci_low"] <= value["ci_high"] <= 1


def test_close_metrics_give_a_wide_interval_and_far_apart_ones_a_tight_one() -> None:
    # a and b have nearly the same bias: resampling pairs swaps their order, so τ is uncertain
    close = rank_agreement_interval(pair_frame(1, {"a": 0.5, "b": 0.51, "c": 0.52}), ["a", "b", "c"],
                                    ["minmax", "raw"], n_resamples=300)["raw"]
    apart = rank_agreement_interval(pair_frame(1, {"a": 0.1, "b": 1.0, "c": 5.0}), ["a", "b", "c"],
                                    ["minmax", "raw"], n_resamples=300)["raw"]
    assert close["ci_high"] - close["ci_low"] > 0.5
    assert apart["ci_low"] == apart["ci_high"] == apart["tau"]  # the order never changes


def test_fewer_than_two_metrics_give_nothing() -> None:
    assert rank_agreement_interval(pair_frame(2, {"a": 0.5}), ["a"], ["minmax", "raw"]) == {}
