"""The registry and pipeline rewrite changed no number: per-pair scores and min-max bias point values
on the demo set and WinoBias type1-dev, n-gram metrics (both configurations) + BERTScore all-MiniLM-L6-v2,
equal those computed on the code before the rewrite (fixture written from commit 40dbe3b)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fairness_core.data import demo_pairs, winobias
from fairness_core.metric_bias import request, summary, task
from fairness_core.store import RunStore

PINNED = json.loads((Path(__file__).parents[1] / "data" / "fixtures" / "metric_bias_pinned.json").read_text())
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("key", sorted(PINNED["sets"]))
def test_scores_and_bias_are_unchanged(key: str, store: RunStore) -> None:
    name, config = key.split("/")
    dataset = demo_pairs.build() if name == "demo-gender" else winobias.build("type1-dev")
    pinned = PINNED["sets"][key]
    names = list(pinned["scores"])
    metrics = request.build_metrics(names, config=config)
    runs = task.run_metrics(dataset, metrics, store)
    pairs = summary.pair_table(store, [r.run_id for r in runs])
    table = summary.bias_table(pairs, n_resamples=50, expected=summary.expected_pairs(dataset))
    for metric in names:
        mine = pairs[pairs["metric"] == metric].sort_values("item")
        assert len(mine) == pinned["n_items"]
        tolerance = 1e-5 if metric == "bertscore" else 1e-6  # float32 vs float64 normalisation for BERTScore
        np.testing.assert_allclose(mine["score1"], pinned["scores"][metric][0], atol=tolerance, err_msg=metric)
        np.testing.assert_allclose(mine["score2"], pinned["scores"][metric][1], atol=tolerance, err_msg=metric)
        bias = float(table.set_index("metric").loc[metric, "bias"])
        assert bias == pytest.approx(pinned["bias"][metric], abs=1e-3), metric
