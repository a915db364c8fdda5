"""What the page and the CLI show: the JSON contract, the drill-down, and the bias–quality points."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import metric_bias, metric_quality
from fairness_core.jobs import CancelToken
from fairness_core.store import RunStore
from tests.metric_quality.test_task import judgments

RELEASE = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "metric_fairness_release"


def test_json_is_the_documented_contract_with_null_for_undefined() -> None:
    data = judgments()
    constant = metric_quality.correlate(data, np.zeros(len(data)), n_resamples=20)
    copy = metric_quality.correlate(data, "Copy rate (stored)", n_resamples=20)
    payload = metric_quality.summary_json({"flat": constant, "copy": copy})
    assert set(payload["copy"]) >= {"spearman", "ci_low", "ci_high", "pearson", "kendall", "n", "n_documents", "rule"}
    assert payload["flat"]["spearman"] is None and payload["copy"]["n"] == 32
    assert metric_quality.notes({"flat": constant}) == [
        "flat: the correlation is undefined (the scores are constant under the pooled rule)",
        "flat: 20 of 20 resamples had an undefined correlation and are left out of the interval"]


def test_drilldown_puts_the_largest_disagreements_first_under_each_rule() -> None:
    data = judgments()
    scores = -data.frame["Copy rate (stored)"].to_numpy()  # a metric that ranks everything backwards
    scores[0] = 10.0
    pooled = metric_quality.drilldown(data, scores, "pooled")
    assert pooled["rank_gap"].abs().is_monotonic_decreasing and len(pooled) == 32
    assert pooled.iloc[0]["rank_gap"] == pytest.approx(pooled["rank_gap"].abs().max())
    per_document = metric_quality.drilldown(data, scores, "document", limit=5)
    assert len(per_document) == 5 and per_document["human_rank"].between(0, 1).all()
    systems = metric_quality.drilldown(data, scores, "system")
    assert list(systems.columns[:4]) == ["system", "human", "score", "n_items"] and len(systems) == 4


def test_bias_quality_points_join_gender_bias_and_agreement(store: RunStore) -> None:
    data = judgments()
    metrics = metric_quality.build_metrics(["bleu"])
    outcome = metric_quality.run_quality(metric_quality.build_request(data, metrics, ["Copy rate (stored)"],
                                                                      n_resamples=100), store)
    bias, notes = metric_quality.gender_bias(metrics, store, stored=["Copy rate (stored)"], n_resamples=200)
    assert list(bias["metric"]) == ["bleu"] and bias.iloc[0]["n_pairs"] == 396
    assert notes == ["Copy rate (stored): no gender-bias run of this stored column in the store (load the released "
                     "gender.tsv in the metric-bias study with its stored scores to place it)"]
    points = metric_quality.bias_quality_points(outcome.correlations, bias, {"bleu": "BLEU"})
    row = points.iloc[0]
    assert (row["label"], row["rule"]) == ("BLEU", "pooled")
    assert row["agreement"] == pytest.approx(outcome.correlations["bleu"].spearman)
    assert row["bias_ci_low"] <= row["bias"] <= row["bias_ci_high"] and math.isfinite(row["bias"])
    again, _ = metric_quality.gender_bias(metrics, store, n_resamples=200)  # read back from the store
    assert again.iloc[0]["run_id"] == bias.iloc[0]["run_id"]


def test_a_stored_column_is_placed_by_a_stored_gender_bias_run(store: RunStore) -> None:
    """REALSumm's BARTScore-BART-base (stored) meets the released gender.tsv's BARTScore-BART-base-F column."""
    release = metric_bias.load_dataset("metric-fairness", [str(RELEASE / "gender.tsv")])
    metric_bias.run_metrics(release, [], store, stored=["BARTScore-BART-base-F"])
    realsumm = metric_quality.load_judgments("realsumm")
    column = "BARTScore-BART-base (stored)"
    correlations = {column: metric_quality.correlate(realsumm, column, n_resamples=100)}
    bias, notes = metric_quality.gender_bias([], store, stored=[column], n_resamples=100)
    assert notes == [] and bias.iloc[0]["source"] == "stored BARTScore-BART-base-F (stored), gender"
    expected = metric_bias.bias_table(metric_bias.pair_table(store, [bias.iloc[0]["run_id"]]), n_resamples=100)
    assert bias.iloc[0]["bias"] == pytest.approx(expected.iloc[0]["bias"])
    points = metric_quality.bias_quality_points(correlations, bias)
    assert points.iloc[0]["agreement"] == pytest.approx(0.3254103, abs=1e-7)


def test_a_cancelled_run_is_partial_and_stores_no_agreement(store: RunStore) -> None:
    data = judgments()
    cancel = CancelToken()
    cancel.cancel()
    request = metric_quality.build_request(data, metric_quality.build_metrics(["bleu", "chrf"]), n_resamples=50)
    outcome = metric_quality.run_quality(request, store, cancel=cancel)
    assert outcome.partial and outcome.agreement_run is None and outcome.correlations == {}
    assert store.query("SELECT count(*) AS n FROM runs WHERE kind = 'metric-quality'")["n"].iloc[0] == 0
    resumed = metric_quality.run_quality(request, store)
    assert not resumed.partial and set(resumed.correlations) == {"bleu", "chrf"}
    assert isinstance(resumed.scores, pd.DataFrame) and resumed.scores["bleu"].notna().all()
