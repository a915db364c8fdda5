"""A segment's DATScore headline with its scale (issue 30): what the sum adds up, per token, and where it sits.

Built on what the real pipeline writes (a tiny M2M-100 scores the synthetic set), not on a hand-made frame.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import datscore as ds
from fairness_core.datscore import synthetic
from fairness_core.datscore.request import ScoreRequest
from fairness_core.datscore.task import run_pipeline


@pytest.fixture(scope="module")
def scored(tiny_m2m100: Path, tmp_path_factory: pytest.TempPathFactory):
    from fairness_core.store import RunStore

    store = RunStore(tmp_path_factory.mktemp("datscore-summary") / "runs.duckdb")
    data = synthetic.load().subset(2)
    return run_pipeline(ScoreRequest(data, "fr", "en", str(tiny_m2m100), max_new_tokens=4), store)


def test_the_entropy_weighted_sum_is_divided_by_the_weighted_token_count(scored) -> None:
    ids, matrix = ds.score_matrix(scored.scores, ds.ENTROPY)
    result = ds.corpus_scores(ids, ds.DIRECTION_LABELS, matrix)
    summary = ds.segment_summary(scored.scores, ids[0], result, ds.ENTROPY)
    mine = scored.scores[scored.scores["segment_id"] == ids[0]].set_index("direction")
    tokens = mine["n_tokens"].reindex(list(ds.DIRECTION_LABELS)).to_numpy()
    assert summary.score == pytest.approx(float(matrix[0] @ result.weights), rel=1e-9)
    # Eq. 3's one-vs-rest weights are unnormalised and may be negative: on two segments of a random tiny model their
    # sums sit near 0 and their sign can differ between CPUs, so each figure is checked against its own rule
    weighted_tokens, weight_sum = float(result.weights @ tokens), float(result.weights.sum())
    assert summary.per_token == pytest.approx(
        summary.score / weighted_tokens if weighted_tokens > 0 else math.nan, rel=1e-9, nan_ok=True)
    assert summary.mean_direction == pytest.approx(
        summary.score / weight_sum if weight_sum > 0 else math.nan, rel=1e-9, nan_ok=True)
    assert summary.tokens == (int(tokens.min()), int(tokens.max()))
    assert summary.lowest[1] == pytest.approx(float(np.nanmin(matrix[0])))
    assert summary.highest[1] == pytest.approx(float(np.nanmax(matrix[0])))
    sentence = summary.sentence()
    assert "Eq. 2 adds the 8 direction scores" in sentence
    assert f"{summary.tokens[0]}–{summary.tokens[1]} tokens" in sentence
    if math.isfinite(summary.per_token):
        assert "per token" in sentence and f"{summary.per_token:.3f}" in sentence


def test_weights_that_sum_to_zero_or_less_give_no_mean_direction_nor_per_token_figure(scored) -> None:
    """Both rules of the scale on the same pipeline scores: positive weights give the figures, the same weights
    negated (a sum below 0) give none, and the sentence says why instead of printing NaN."""
    import dataclasses

    ids, matrix = ds.score_matrix(scored.scores, ds.ENTROPY)
    result = ds.corpus_scores(ids, ds.DIRECTION_LABELS, matrix)
    positive = dataclasses.replace(result, weights=np.abs(result.weights))
    positive = dataclasses.replace(positive, scores=matrix @ positive.weights)
    shown = ds.segment_summary(scored.scores, ids[0], positive, ds.ENTROPY)
    assert shown.mean_direction == pytest.approx(shown.score / float(positive.weights.sum()), rel=1e-9)
    assert shown.lowest[1] <= shown.mean_direction <= shown.highest[1]
    assert f"{shown.per_token:.3f}" in shown.sentence() and "nan" not in shown.sentence().lower()
    negative = dataclasses.replace(positive, weights=-positive.weights, scores=-positive.scores)
    hidden = ds.segment_summary(scored.scores, ids[0], negative, ds.ENTROPY)
    assert math.isnan(hidden.mean_direction) and math.isnan(hidden.per_token)
    sentence = hidden.sentence()
    assert "The weights sum to 0 or less, so there is no per-token figure." in sentence
    assert "nan" not in sentence.lower()


def test_ranks_count_from_the_highest_segment(scored) -> None:
    ids, matrix = ds.score_matrix(scored.scores, ds.SUM)
    result = ds.corpus_scores(ids, ds.DIRECTION_LABELS, matrix)
    ranks = [ds.segment_summary(scored.scores, i, result, ds.SUM).rank for i in ids]
    assert sorted(ranks) == list(range(1, len(ids) + 1))  # the synthetic scores have no ties
    best = ids[int(np.argmax(result.scores))]
    assert ds.segment_summary(scored.scores, best, result, ds.SUM).rank == 1


def test_a_mean_aggregation_is_already_per_token(scored) -> None:
    ids, matrix = ds.score_matrix(scored.scores, ds.UNIFORM)
    result = ds.corpus_scores(ids, ds.DIRECTION_LABELS, matrix, ds.UNIFORM)
    summary = ds.segment_summary(scored.scores, ids[0], result, ds.UNIFORM)
    assert not summary.summed
    # uniform weights 1/8: the per-token figure is the mean over directions of their mean log-probabilities
    assert summary.per_token == pytest.approx(float(np.mean(matrix[0])), rel=1e-9)
    assert "mean log-probability per target token" in summary.sentence()


def test_weights_that_sum_to_zero_give_no_per_token_figure() -> None:
    ids = ["a", "b"]
    matrix = np.array([[-1.0, -2.0], [-3.0, -1.0]])
    result = ds.corpus_scores(ids, ["X→Y", "Y→X"], matrix, ds.ONE_VS_REST)  # two directions anti-correlated: r = -1
    assert result.weights.sum() < 0
    frame = pd.DataFrame({"segment_id": ["a", "a", "b", "b"], "direction": ["X→Y", "Y→X"] * 2,
                          "n_tokens": [3.0, 4.0, 3.0, 4.0]})
    summary = ds.segment_summary(frame, "a", result, ds.SUM)
    assert math.isnan(summary.per_token) and math.isnan(summary.mean_direction)
    assert "no per-token figure" in summary.sentence()
