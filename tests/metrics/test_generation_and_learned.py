"""BARTScore (both backends) and the sequence-classifier metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.metrics import metric_from_request
from fairness_core.metrics.generation import BARTScore
from fairness_core.models.interfaces import ModelUnavailableError
from tests.metrics.fakes import TableLM, TableSeq2Seq

TABLE = {
    ("the nurse", "she"): [-1.0, -3.0],  # p(sys | ref): mean -2
    ("she", "the nurse"): [-0.5, -1.5],  # p(ref | sys): mean -1
    ("the nurse", "he"): [-2.0, -4.0],  # mean -3
    ("he", "the nurse"): [-1.0, -2.0],  # mean -1.5
}


@pytest.mark.parametrize("model", [TableLM(TABLE), TableSeq2Seq(TABLE)])
def test_bartscore_precision_recall_and_f_by_hand(model) -> None:
    scores = BARTScore(model=model).score(["she", "he"], ["the nurse", "the nurse"])
    np.testing.assert_allclose(scores["P"], [-2.0, -3.0])
    np.testing.assert_allclose(scores["R"], [-1.0, -1.5])
    np.testing.assert_allclose(scores["F"], [-1.5, -2.25])  # arithmetic mean of P and R


def test_bartscore_scores_each_distinct_direction_once() -> None:
    model = TableLM(TABLE)
    BARTScore(model=model).score(["she", "she", "he"], ["the nurse"] * 3)
    assert len(model.seen) == 4 and len(set(model.seen)) == 4


def test_bartscore_decoder_only_and_seq2seq_backends_run_on_tiny_models(tiny_gpt2: Path, tiny_bart: Path) -> None:
    for directory in (tiny_gpt2, tiny_bart):
        metric = metric_from_request("bartscore", model=str(directory))
        scores = metric.score(["The nurse said that she would help."], ["The nurse said that the nurse would help."])
        assert set(scores) == {"F", "P", "R"}
        assert np.all(scores["P"] < 0) and np.isfinite(scores["F"]).all()
    assert metric_from_request("bartscore", model=str(tiny_bart)).signature()["backend"] == "seq2seq"
    assert metric_from_request("bartscore", model=str(tiny_gpt2)).signature()["backend"] == "decoder-only"


def test_regression_metric_reads_a_sentence_pair(tmp_path: Path) -> None:
    from tests.tiny_models import build_tiny_bert

    directory = build_tiny_bert(tmp_path / "tiny-bleurt", num_labels=1)
    metric = metric_from_request("bleurt", model=str(directory))
    scores = metric.score(["she said", "he said"], ["the nurse said", "the nurse said"])["score"]
    assert scores.shape == (2,) and np.isfinite(scores).all()
    assert scores[0] != scores[1]  # different inputs, different raw regression outputs


def test_hub_only_metrics_say_unavailable_offline() -> None:
    with pytest.raises(ModelUnavailableError, match="unavailable here"):
        metric_from_request("bleurt").check_available()
    with pytest.raises(ModelUnavailableError, match="unavailable here"):
        metric_from_request("frugalscore").check_available()
