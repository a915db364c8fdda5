"""Comparing stored runs: aligned cells, paired intervals where the units match, the paper's Bias for metric-bias."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.bias.paired import paired_bias
from fairness_core.compare import CompareError, compare_runs, per_example
from fairness_core.store import RunStore
from tests.compare.stored_runs import write_decoding_run, write_metric_bias_run


def test_runs_over_the_same_prompts_are_compared_paired_by_prompt(store: RunStore) -> None:
    a = write_decoding_run(store, "model-a", seed=1)
    b = write_decoding_run(store, "model-b", shift=0.1, seed=1)  # same prompts (and prompt effects)
    rows = compare_runs(store, [a, b]).rows
    assert set(rows["metric"]) == {"vader_compound", "offensive_prob", "negative_sentiment"}
    assert set(rows["setting"]) == {"T=1.0 p=0.5", "T=1.0 p=0.9"} and set(rows["group"]) == {"man", "woman"}
    assert rows["paired"].all() and set(rows["unit"]) == {"prompt"} and (rows["n_shared"] == 20).all()
    vader = rows[rows["metric"] == "vader_compound"]
    assert (vader["ci_low"] <= vader["difference"]).all() and (vader["difference"] <= vader["ci_high"]).all()
    assert np.allclose(vader["difference"], vader["run_b"] - vader["run_a"], rtol=1e-12)


def test_a_run_against_its_copy_differs_by_zero_with_a_zero_interval(store: RunStore) -> None:
    a = write_decoding_run(store, "model-a", seed=2)
    b = write_decoding_run(store, "model-b", seed=2)  # the same values under another model name
    rows = compare_runs(store, [a, b]).rows
    assert rows["paired"].all()
    # DuckDB may sum in another order per run: zero up to float rounding of values within [-1, 1]
    for column in ("difference", "ci_low", "ci_high"):
        assert np.abs(rows[column]).max() < 1e-12, column


def test_runs_over_different_prompts_are_compared_unpaired_and_say_so(store: RunStore) -> None:
    a = write_decoding_run(store, "model-a", seed=3)
    b = write_decoding_run(store, "model-b", seed=4, prompt_prefix="bold-")
    rows = compare_runs(store, [a, b]).rows
    assert not rows["paired"].any() and (rows["n_shared"] == 0).all()
    assert (rows["ci_high"] > rows["ci_low"]).all()


def test_metric_bias_estimate_is_the_papers_bias(store: RunStore) -> None:
    rng = np.random.default_rng(5)
    s1, s2 = rng.random(40), rng.random(40)
    a = write_metric_bias_run(store, "bleu", s1, s2)
    b = write_metric_bias_run(store, "bleu", s1, s2 * 0.5, system="b")
    (row,) = compare_runs(store, [a, b]).rows.to_dict(orient="records")
    assert row["attribute"] == "gender" and row["unit"] == "pair" and row["paired"]
    assert row["run_a"] == pytest.approx(paired_bias(s1, s2).bias.value, rel=1e-9)  # Eq. 1-2
    assert row["run_b"] == pytest.approx(paired_bias(s1, s2 * 0.5).bias.value, rel=1e-9)


def test_runs_that_share_nothing_get_a_sentence(store: RunStore) -> None:
    a = write_decoding_run(store, "model-a", seed=1)
    b = write_metric_bias_run(store, "bleu", [0.1, 0.2], [0.3, 0.1])
    with pytest.raises(CompareError, match="group by fields both kinds have"):
        compare_runs(store, [a, b])
    comparison = compare_runs(store, [a, b], by=["grp"])
    assert comparison.rows.empty
    assert comparison.message.startswith(f"Runs {a} (decoding) and {b} (metric-bias) share no metric / grp cell")
    assert comparison.as_json()["rows"] == []


def test_grouping_by_a_typed_field(store: RunStore) -> None:
    a = write_decoding_run(store, "model-a", seed=1)
    b = write_decoding_run(store, "model-b", shift=0.2, seed=1)
    rows = compare_runs(store, [a, b], by=["config.top_p"], metrics=["vader_compound"]).rows
    assert rows["config.top_p"].tolist() == [0.5, 0.9] and rows["n_units_a"].tolist() == [40, 40]
    with pytest.raises(CompareError, match="no field 'colour'; choose one of: item, grp, variant"):
        compare_runs(store, [a, b], by=["colour"])


def test_json_has_no_nan(store: RunStore) -> None:
    a = write_decoding_run(store, "model-a", prompts=1, seed=1)  # one prompt per cell: no interval
    b = write_decoding_run(store, "model-b", prompts=1, seed=1)
    payload = compare_runs(store, [a, b]).as_json()
    assert {row["ci_low"] for row in payload["rows"]} == {None}
    assert [run["run_id"] for run in payload["runs"]] == [a, b]


def test_per_example_rows_put_the_largest_change_first_and_filter(store: RunStore) -> None:
    a = write_decoding_run(store, "model-a", seed=1)
    b = write_decoding_run(store, "model-b", shift=0.3, seed=9)
    rows = per_example(store, a, b, metric="vader_compound", limit=10)
    assert len(rows) == 10
    changes = rows["change"].abs().to_numpy()
    assert (np.diff(changes) <= 0).all()
    assert (rows["value_b"] - rows["value_a"] == rows["change"]).all()
    assert rows["text_a"].str.contains("model-a").all() and rows["text_b"].str.contains("model-b").all()
    women = per_example(store, a, b, metric="vader_compound", filters={"grp": "woman", "config.top_p": "0.9"},
                         limit=100)
    assert set(women["grp"]) == {"woman"} and set(women["setting"]) == {"T=1.0 p=0.9"} and len(women) == 60
    thieves = per_example(store, a, b, search="THIEF", limit=1000)
    assert thieves["text_a"].str.contains("thief").all() and len(thieves) == 2 * 2 * 20 * 2
