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


def submatrix_interval(human: np.ndarray, metric: np.ndarray, rule: str, statistic: str, unit: str,
                       n_resamples: int, seed: int) -> tuple[float, float]:
    """Deutsch, Dror & Roth's resampling written out: draw documents (rows) and/or systems (columns) with
    replacement, build the resampled matrix, compute the rule with scipy (the document rule: a document people
    score alike has no correlation, one the metric scores alike counts 0), take the percentiles."""
    rng = np.random.default_rng(seed)
    n_items, n_systems = human.shape
    rows = rng.integers(0, n_items, (n_resamples, n_items)) if unit in ("documents", "both") else None
    cols = rng.integers(0, n_systems, (n_resamples, n_systems)) if unit in ("systems", "both") else None
    scipy_statistic = {"spearman": spearmanr, "pearson": pearsonr, "kendall": kendalltau}[statistic]

    def stat(x: np.ndarray, y: np.ndarray) -> float:
        return np.nan if np.ptp(x) == 0 or np.ptp(y) == 0 else scipy_statistic(x, y).statistic

    values = []
    for r in range(n_resamples):
        pick_rows = rows[r] if rows is not None else np.arange(n_items)
        pick_cols = cols[r] if cols is not None else np.arange(n_systems)
        h, m = human[pick_rows][:, pick_cols], metric[pick_rows][:, pick_cols]
        if rule == "pooled":
            values.append(stat(m.ravel(), h.ravel()))
        elif rule == "system":
            values.append(stat(m.mean(axis=0), h.mean(axis=0)))
        else:
            per_item = [np.nan if np.ptp(h[i]) == 0 or len(set(pick_cols)) < 3 else
                        0.0 if np.ptp(m[i]) == 0 else stat(m[i], h[i]) for i in range(len(h))]
            defined = [v for v in per_item if np.isfinite(v)]
            values.append(np.mean(defined) if defined else np.nan)
    finite = np.array([v for v in values if np.isfinite(v)])
    return tuple(np.quantile(finite, [0.025, 0.975]))


@pytest.mark.parametrize("unit", ["documents", "systems", "both"])
@pytest.mark.parametrize("rule", ["pooled", "document", "system"])
def test_every_unit_equals_resampling_the_matrix_itself(rule: str, unit: str) -> None:
    """The weighted computation (a candidate drawn k times is a row of weight k) gives the numbers of the
    resampled matrix, with ties on both sides, a document the metric scores alike, and every statistic."""
    judgments, scores = small_judgments(n_items=8, n_systems=6, seed=2)
    scores = scores.copy()
    scores[6:12] = 0.25  # doc1: the metric scores every system alike
    human, metric = judgments.human.reshape(8, 6), scores.reshape(8, 6)
    for statistic in ("spearman", "pearson", "kendall"):
        got = metric_quality.correlate(judgments, scores, rule=rule, statistic=statistic, n_resamples=60, seed=3,
                                       resample=unit)
        expected = submatrix_interval(human, metric, rule, statistic, unit, 60, seed=3)
        assert (got.ci_low, got.ci_high) == pytest.approx(expected, abs=1e-9), (statistic, got)
        assert got.resample == unit and got.to_json()["resample"] == unit


def test_the_system_rule_resamples_documents_and_systems_by_default() -> None:
    judgments, scores = small_judgments(n_items=8, n_systems=6, seed=2)
    default = metric_quality.correlate(judgments, scores, rule="system", n_resamples=60, seed=3)
    both = metric_quality.correlate(judgments, scores, rule="system", n_resamples=60, seed=3, resample="both")
    assert default.resample == "both" and (default.ci_low, default.ci_high) == (both.ci_low, both.ci_high)
    assert "other documents and other systems" in default.to_json()["interval_generalises"]
    pooled = metric_quality.correlate(judgments, scores, rule="pooled", n_resamples=20)
    assert pooled.resample == "documents" and "for these systems only" in pooled.scope


#: (rule, unit, design, population truth?). Sizes are the smallest at which the right unit covers ~95% and the
#: wrong one clearly does not: 24 systems for the system rule (with 10, an interval over systems is nearly
#: [-1, 1]); 30 x 10 elsewhere. 100 datasets: binomial s.e. ~2.2%, so the bounds catch an interval that leaves a
#: source of variation out (documents alone when the systems vary: ~0.6, below) or a broken draw.
COVERAGE = [
    ("pooled", "documents", Design(n_items=30, n_systems=10), False),
    ("document", "documents", Design(n_items=30, n_systems=10), False),
    ("system", "documents", Design(n_items=30, n_systems=10), False),
    ("system", "systems", Design(n_items=40, n_systems=24, random_systems=True, fixed_documents=True), True),
    ("document", "systems", Design(n_items=30, n_systems=10, random_systems=True, fixed_documents=True), True),
    ("system", "both", Design(n_items=40, n_systems=24, random_systems=True), True),
    ("pooled", "both", Design(n_items=30, n_systems=10, random_systems=True), True),
    ("document", "both", Design(n_items=30, n_systems=10, random_systems=True), True),
]


def coverage(rule: str, unit: str, design: Design, population: bool, datasets: int = 100) -> float:
    truth = design.population_truth(rule) if population else design.truth(rule)
    covered = 0
    for seed in range(datasets):
        judgments, scores = design.judgments(seed)
        result = metric_quality.correlate(judgments, scores, rule=rule, n_resamples=150, seed=seed, resample=unit)
        covered += result.ci_low <= truth <= result.ci_high
    return covered / datasets


@pytest.mark.parametrize(("rule", "unit", "design", "population"), COVERAGE,
                         ids=[f"{rule}-{unit}" for rule, unit, _, _ in COVERAGE])
def test_each_interval_covers_what_it_claims_to_generalise_over(rule: str, unit: str, design: Design,
                                                                population: bool) -> None:
    """Documents resampled: the truth of these systems on the document population. Systems or both resampled:
    the truth over the system (and document) population, drawn afresh for each dataset."""
    assert 0.86 <= coverage(rule, unit, design, population) <= 1.0


def test_an_interval_over_documents_alone_misses_when_the_systems_vary() -> None:
    """Why the system rule resamples both: with the systems drawn afresh, the old interval (documents only)
    covers the system-level truth about 60% of the time at 40 x 24 (0.51 at REALSumm's 100 x 24)."""
    design = Design(n_items=40, n_systems=24, random_systems=True)
    assert coverage("system", "documents", design, population=True) < 0.8


def twin_metrics(n_items: int = 20, n_systems: int = 5, flat: int = 5) -> tuple[metric_quality.Judgments,
                                                                                np.ndarray, np.ndarray]:
    """Metric B equals metric A except on the first `flat` documents, where B scores every system alike (the
    review's case: identical wherever both define a correlation)."""
    rng = np.random.default_rng(7)
    human = rng.normal(0, 1, (n_items, n_systems))
    a = human + rng.normal(0, 0.8, human.shape)
    b = a.copy()
    b[:flat] = 0.5
    frame = pd.DataFrame({"item_id": np.repeat([f"doc{i}" for i in range(n_items)], n_systems),
                          "system": np.tile([f"sys{k}" for k in range(n_systems)], n_items),
                          "candidate": "c", "reference": "r", "human": human.ravel()})
    return metric_quality.from_frame(frame, "twins"), a.ravel(), b.ravel()


def test_a_paired_document_difference_averages_both_metrics_over_the_same_documents() -> None:
    """Leaving a constant document out of one metric's average alone compared A over 20 documents with B over
    15 and reported a difference between two metrics that agree wherever both are defined."""
    judgments, a, b = twin_metrics()
    dropped = metric_quality.paired_difference(judgments, a, b, rule="document", n_resamples=200, constant="drop")
    assert dropped.difference == pytest.approx(0.0, abs=1e-12) and dropped.n_documents == 15
    assert dropped.ci_low == pytest.approx(0.0, abs=1e-12) and dropped.ci_high == pytest.approx(0.0, abs=1e-12)
    assert dropped.n_dropped_documents == 5 and "5 where one metric scores every system alike" in dropped.dropped_why
    assert dropped.to_json()["n_dropped_documents"] == 5


def test_a_document_the_metric_scores_all_alike_counts_as_no_agreement() -> None:
    """Dropping ties rewards them: a metric that gives up on its hardest documents would lose nothing. By default
    such a document counts 0 (the metric ranks none of the systems people tell apart)."""
    judgments, a, b = twin_metrics()
    per_document = [spearmanr(a.reshape(20, 5)[i], judgments.human.reshape(20, 5)[i]).statistic for i in range(20)]
    flat = metric_quality.correlate(judgments, b, rule="document", n_resamples=0)
    assert flat.spearman == pytest.approx(np.sum(per_document[5:]) / 20, abs=1e-12)
    assert (flat.n_documents, flat.n_constant_documents, flat.constant) == (20, 5, "zero")
    assert "on 5 document(s) it scores every system alike" in " ".join(metric_quality.notes({"b": flat}))
    difference = metric_quality.paired_difference(judgments, a, b, rule="document", n_resamples=200)
    assert difference.difference == pytest.approx(-np.sum(per_document[:5]) / 20, abs=1e-12)
    assert difference.n_documents == 20 and difference.n_dropped_documents == 0


def test_a_difference_counts_its_undefined_resamples() -> None:
    """The metric varies on one document only: every resample that misses it has a constant metric (undefined)."""
    judgments, scores = small_judgments(n_items=5, n_systems=4, seed=1)
    flat_elsewhere = np.where(np.arange(20) < 4, scores, 0.0)
    difference = metric_quality.paired_difference(judgments, scores, flat_elsewhere, n_resamples=300, seed=0)
    missed = (np.random.default_rng(0).integers(0, 5, (300, 5)) != 0).all(axis=1).sum()
    assert difference.n_undefined_resamples == missed > 0
    assert difference.to_json()["n_undefined_resamples"] == missed


def wmt_like(seed: int = 0) -> tuple[metric_quality.Judgments, np.ndarray]:
    """Two language pairs, each with its own segments and its own systems (two share a name across pairs)."""
    rng = np.random.default_rng(seed)
    rows, scores = [], []
    for group, systems in (("de-en", ["Online-A", "uedin", "sys3", "sys4", "sys5"]),
                           ("en-de", ["Online-A", "tilde", "sysB", "sysC"])):
        quality = rng.normal(0, 1, len(systems))
        for segment in range(12):
            for k, system in enumerate(systems):
                human = quality[k] + rng.normal(0, 1)
                rows.append({"item_id": f"{group}:{segment}", "system": system, "candidate": "c", "reference": "r",
                             "group": group, "human": human})
                scores.append(0.5 * quality[k] + rng.normal(0, 1))
    return metric_quality.from_frame(pd.DataFrame(rows), "wmt-like"), np.array(scores)


def test_group_averaging_is_sun_et_al_s_wmt_protocol() -> None:
    """System-level Pearson within each language pair, averaged over pairs (Tables 4, 5 and 8); the interval
    draws segments and systems within each pair."""
    judgments, scores = wmt_like()
    assert judgments.n_groups == 2 and judgments.n_systems == 8 and len(set(judgments.system_codes)) == 9
    frame = judgments.frame.assign(metric=scores)
    per_pair = [pearsonr(*g.groupby("system")[["metric", "human"]].mean().to_numpy().T).statistic
                for _, g in frame.groupby("group")]
    result = metric_quality.correlate(judgments, scores, rule="system", statistic="pearson", group_average=True,
                                      n_resamples=200)
    assert result.pearson == pytest.approx(np.mean(per_pair), abs=1e-12) and result.n_groups == 2
    assert result.ci_low <= result.pearson <= result.ci_high and result.to_json()["ci_of"] == "pearson"
    assert result.to_json()["value"] == pytest.approx(result.pearson)
    pooled_over_pairs = metric_quality.correlate(judgments, scores, rule="system", statistic="pearson",
                                                 n_resamples=0)
    assert pooled_over_pairs.n_systems == 9  # Online-A of de-en and of en-de are two systems
    with pytest.raises(metric_quality.AgreementError, match="has no groups to average over"):
        metric_quality.correlate(small_judgments()[0], small_judgments()[1], group_average=True)
