"""DATScore-LM / BARTScore-LM as metric plug-ins: registered, and run by the Metric bias task on demo pairs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from fairness_core.data import demo_pairs
from fairness_core.metric_bias.summary import bias_table, pair_table
from fairness_core.metric_bias.task import run_metrics
from fairness_core.metrics import METRICS, metric_from_request
from fairness_core.translation import weights as W


@pytest.fixture(scope="module")
def long_tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random GPT-2 with 1024 positions (the translation prompt is longer than the shared fixture's 128)."""
    from tests.tiny_models import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2-long"), n_positions=1024, n_embd=32, n_layer=1)


def test_registered_with_the_lm_qualifier() -> None:
    for name, label in (("datscore-lm", "DATScore-LM"), ("bartscore-lm", "BARTScore-LM")):
        assert METRICS[name].label == label and METRICS[name].family == "translation"
    with pytest.raises(ValueError, match="term_weighting must be entropy or uniform"):
        metric_from_request("datscore-lm", term_weighting="idf")


def test_metric_bias_task_runs_datscore_lm_on_three_demo_pairs(long_tiny_gpt2: Path, store) -> None:
    dataset = demo_pairs.build()
    dataset = replace(dataset, pairs=dataset.pairs[:3])
    metrics = [metric_from_request("datscore-lm", model=str(long_tiny_gpt2), max_new_tokens=4),
               metric_from_request("bartscore-lm", model=str(long_tiny_gpt2))]
    runs = run_metrics(dataset, metrics, store)
    assert [r.name for r in runs] == ["datscore-lm", "bartscore-lm"]
    datscore_manifest = runs[0].manifest["request"]
    assert datscore_manifest["metric"]["backbone"] == "lm (LM variant)" and "corpus_state_sha256" in datscore_manifest
    pairs = pair_table(store, [r.run_id for r in runs])
    assert set(pairs["metric"]) >= {"datscore-lm", "bartscore-lm"} and len(pairs) >= 6
    rows = store.rows(runs[0].run_id)
    assert len(rows) == 6 and np.isfinite(rows["value"]).all()
    table = bias_table(pairs, n_resamples=50)
    assert {"datscore-lm", "bartscore-lm"} <= set(table["metric"])


def test_prepare_holds_eq3_weights_of_the_four_reference_side_directions(long_tiny_gpt2: Path) -> None:
    metric = metric_from_request("datscore-lm", model=str(long_tiny_gpt2), max_new_tokens=4)
    candidates = ["The nurse said that she would help.", "The doctor said that he would help.", "A person worked."]
    references = ["The nurse said that the nurse would help.", "The doctor said that he helps.", "A teacher worked."]
    state = metric.prepare(candidates, references)
    labels, matrix = metric.direction_matrix(candidates, references)
    assert state["directions"] == labels == ["Ref→Hypo", "Hypo→Ref", "Trans2→Hypo", "Hypo→Trans2"]
    np.testing.assert_allclose(state["weights"], W.one_vs_rest_weights(matrix), atol=1e-9)
    np.testing.assert_allclose(metric.score(candidates, references, state=state)["score"],
                               matrix @ np.asarray(state["weights"]))
    with_sources = metric.direction_matrix(candidates, references, ["Src one.", "Src two.", "Src three."])
    assert len(with_sources[0]) == 8
