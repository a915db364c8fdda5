"""Agreement with people under the three rules, and intervals that resample documents (the shared unit)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr

from fairness_core import metric_quality
from fairness_core.metric_quality.agreement import kendall_rows, weighted_pearson, weighted_ranks
from fairness_core.metric_quality.simulate import Design


def small_judgments(n_items: int = 6, n_systems: int = 5, seed: int = 0) -> tuple[metric_quality.Judgments,
                                                                                   np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 5, (n_items, n_systems)) / 4  # ties, as LitePyramid recall has
    metric = human + rng.normal(0, 0.3, human.shape)
    frame = pd.DataFrame({"item_id": np.repeat([f"doc{i}" for i in range(n_items)], n_systems),
                          "system": np.tile([f"sys{k}" for k in range(n_systems)], n_items),
                          "candidate": "a summary", "reference": "the reference", "human": human.ravel()})
    return metric_quality.from_frame(frame, "small"), metric.ravel()


def test_pooled_rule_is_one_correlation_over_all_candidates() -> None:
    judgments, scores = small_judgments()
    result = metric_quality.correlate(judgments, scores, rule="pooled", n_resamples=0)
    assert result.spearman == pytest.approx(spearmanr(scores, judgments.human).statistic, abs=1e-12)
    assert result.pearson == pytest.approx(pearsonr(scores, judgments.human).statistic, abs=1e-12)
    assert result.kendall == pytest.approx(kendalltau(scores, judgments.human).statistic, abs=1e-12)
    assert (result.n, result.n_documents, result.n_systems, result.rule) == (30, 6, 5, "pooled")
    assert math.isnan(result.ci_low) and result.to_json()["ci_low"] is None  # no resamples, no interval


def test_document_rule_averages_within_document_correlations() -> None:
    judgments, scores = small_judgments()
    frame = judgments.frame.assign(metric=scores)
    per_doc = [spearmanr(g["metric"], g["human"]).statistic for _, g in frame.groupby("item_id")]
    defined = [r for r in per_doc if np.isfinite(r)]
    result = metric_quality.correlate(judgments, scores, rule="document", n_resamples=0)
    assert result.spearman == pytest.approx(np.mean(defined), abs=1e-12)
    assert result.n_documents == len(defined)


def test_a_document_with_constant_human_scores_is_left_out_of_the_document_average() -> None:
    judgments, scores = small_judgments()
    frame = judgments.frame.copy()
    frame.loc[frame["item_id"] == "doc0", "human"] = 0.5
    constant = metric_quality.from_frame(frame, "one constant document")
    result = metric_quality.correlate(constant, scores, rule="document", n_resamples=200)
    assert result.n_documents == 5 and math.isfinite(result.spearman) and result.ci_low <= result.ci_high


def test_system_rule_correlates_system_means() -> None:
    judgments, scores = small_judgments()
    frame = judgments.frame.assign(metric=scores)
    means = frame.groupby("system", sort=False)[["metric", "human"]].mean()
    result = metric_quality.correlate(judgments, scores, rule="system", n_resamples=0)
    assert result.spearman == pytest.approx(spearmanr(means["metric"], means["human"]).statistic, abs=1e-12)
    assert result.kendall == pytest.approx(kendalltau(means["metric"], means["human"]).statistic, abs=1e-12)


def test_a_stored_column_is_named_and_an_unknown_one_is_one_sentence() -> None:
    judgments, scores = small_judgments()
    frame = judgments.frame.assign(BLEU=scores)
    with_stored = metric_quality.from_frame(frame, "with stored", stored=["BLEU"])
    by_name = metric_quality.correlate(with_stored, "BLEU (stored)", n_resamples=50)
    assert by_name == metric_quality.correlate(with_stored, scores, n_resamples=50)
    with pytest.raises(metric_quality.AgreementError, match="has no score column 'BLEURT'"):
        metric_quality.correlate(with_stored, "BLEURT")


def test_weighted_ranks_equal_the_ranks_of_the_expanded_sample() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 6, 40).astype(float)  # many ties
    other = values + rng.normal(0, 2, 40)
    weights = rng.integers(0, 3, (5, 40)).astype(float)
    ranks, other_ranks = weighted_ranks(values, weights), weighted_ranks(other, weights)
    got = weighted_pearson(ranks, other_ranks, weights)
    for r in range(5):
        rows = np.repeat(np.arange(40), weights[r].astype(int))
        expanded = spearmanr(values[rows], other[rows]).statistic
        assert got[r] == pytest.approx(expanded, abs=1e-12)


def test_row_wise_kendall_tau_b_equals_scipy_with_ties() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 4, (20, 24)).astype(float), rng.integers(0, 5, (20, 24)).astype(float)
    a[3] = 1.0  # a constant row: undefined
    got = kendall_rows(a, b)
    for r in range(20):
        expected = kendalltau(a[r], b[r]).statistic
        assert (np.isnan(got[r]) and np.isnan(expected)) or got[r] == pytest.approx(expected, abs=1e-12)


def test_a_resampled_interval_keeps_documents_whole() -> None:
    """Two datasets with the same candidates: a document effect shared by metric and people makes the
    candidates of a document move together; resampling documents must widen the interval compared with
    treating each candidate as its own document."""
    design = Design(n_items=60, c=1.2, a=1.2)
    judgments, scores = design.judgments(seed=1)
    by_document = metric_quality.correlate(judgments, scores, n_resamples=400, seed=0)
    frame = judgments.frame.assign(item_id=[f"row{i}" for i in range(len(judgments))])
    one_per_row = metric_quality.from_frame(frame.assign(system="only"), "rows as documents")
    naive = metric_quality.correlate(one_per_row, scores, n_resamples=400, seed=0)
    assert by_document.spearman == pytest.approx(naive.spearman, abs=1e-12)
    assert by_document.ci_high - by_document.ci_low > 1.3 * (naive.ci_high - naive.ci_low)


def test_non_finite_scores_are_left_out_and_counted() -> None:
    judgments, scores = small_judgments()
    holes = scores.copy()
    holes[[0, 7]] = [np.nan, np.inf]
    result = metric_quality.correlate(judgments, holes, n_resamples=100)
    keep = np.isfinite(holes)
    assert result.n_excluded == 2 and result.n == 28
    assert result.spearman == pytest.approx(spearmanr(holes[keep], judgments.human[keep]).statistic, abs=1e-12)
    assert all(v is None or math.isfinite(v) for v in result.to_json().values() if isinstance(v, float))


def test_a_constant_metric_has_no_correlation_and_json_says_null() -> None:
    judgments, _ = small_judgments()
    result = metric_quality.correlate(judgments, np.ones(len(judgments)), n_resamples=50)
    payload = result.to_json()
    assert payload["spearman"] is None and payload["ci_low"] is None and payload["rule"] == "pooled"


def test_misaligned_scores_and_unknown_rules_are_one_sentence() -> None:
    judgments, scores = small_judgments()
    with pytest.raises(metric_quality.AgreementError, match="got 29 scores for 30 candidates"):
        metric_quality.correlate(judgments, scores[:-1])
    with pytest.raises(metric_quality.AgreementError, match="unknown rule 'corpus'"):
        metric_quality.correlate(judgments, scores, rule="corpus")


def test_paired_difference_resamples_the_same_documents_for_both_metrics() -> None:
    design = Design(n_items=100)
    judgments, scores = design.judgments(seed=5)
    rng = np.random.default_rng(0)
    variant = scores + rng.normal(0, 0.05, scores.shape)  # nearly the same metric
    difference = metric_quality.paired_difference(judgments, scores, variant, n_resamples=500, seed=0)
    a = metric_quality.correlate(judgments, scores, n_resamples=500, seed=0)
    b = metric_quality.correlate(judgments, variant, n_resamples=500, seed=0)
    assert difference.a == pytest.approx(a.spearman) and difference.b == pytest.approx(b.spearman)
    assert difference.difference == pytest.approx(b.spearman - a.spearman)
    # paired: the interval of the difference is far narrower than either metric's own interval
    assert difference.ci_high - difference.ci_low < 0.25 * (a.ci_high - a.ci_low)
    assert difference.ci_low <= difference.difference <= difference.ci_high
    worse = scores + rng.normal(0, 3.0, scores.shape)  # a much noisier variant is detectably worse
    clearly = metric_quality.paired_difference(judgments, scores, worse, n_resamples=500)
    assert clearly.difference < 0 and clearly.excludes_zero and clearly.to_json()["rule"] == "pooled"


@pytest.mark.parametrize(("rule", "datasets", "low", "high"), [
    ("pooled", 150, 0.89, 0.99), ("document", 100, 0.88, 0.99), ("system", 100, 0.88, 1.0)])
def test_document_resampled_intervals_cover_the_truth_at_realsumm_size(rule: str, datasets: int, low: float,
                                                                       high: float) -> None:
    """100 documents × 24 systems (REALSumm's shape): the 95% interval covers the population value of the rule
    in about 95% of fresh samples of documents (binomial s.e. ~2% at these counts)."""
    design = Design(n_items=100, n_systems=24)
    truth = design.truth(rule)
    covered = 0
    for seed in range(datasets):
        judgments, scores = design.judgments(seed)
        result = metric_quality.correlate(judgments, scores, rule=rule, n_resamples=200, seed=seed)
        covered += result.ci_low <= truth <= result.ci_high
    assert low <= covered / datasets <= high, (rule, truth, covered / datasets)
