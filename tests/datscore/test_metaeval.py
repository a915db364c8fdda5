"""Meta-evaluation (Table 6, Fig. 2) on direction scores built by hand: ablations that change one thing each,
paired bootstrap differences from the full DATScore, bootstrap intervals of the Eq. 3 weights, the clipped
option for negative weights, and the length covariate. No model."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.datscore import metaeval as M
from fairness_core.translation import directions as D
from fairness_core.translation import weights as W


def matrices_for(n_groups: int = 12, levels: int = 6, seed: int = 0):
    """Direction scores of `n_groups` sources × `levels` hypotheses that get worse with the level, one matrix
    per token aggregation (different noise each), and the within-source ranking."""
    rng = np.random.default_rng(seed)
    segments = [f"s{g}-h{level}" for g in range(n_groups) for level in range(levels)]
    quality = -np.array([level for _ in range(n_groups) for level in range(levels)], dtype=float)
    matrices = {}
    for k, tw in enumerate(W.TERM_WEIGHTINGS):
        noise = rng.normal(0, 1.5 + k, size=(len(segments), len(D.LABELS)))
        matrices[tw] = (segments, quality[:, None] * np.linspace(1, 0.2, len(D.LABELS)) + noise)
    ranking = [(f"s{g}-h{a}", f"s{g}-h{b}", f"s{g}") for g in range(n_groups) for a in range(levels)
               for b in range(a + 1, levels)]
    return matrices, ranking


def test_each_ablation_row_changes_exactly_one_thing_from_the_full_datscore() -> None:
    matrices, _ = matrices_for()
    found = M.variants(matrices)
    full = found[0]
    assert full.kind == "full" and full.term_weighting == W.ENTROPY and full.averaging == W.ONE_VS_REST
    ablations = [v for v in found if v.kind == "ablation"]
    # the three other token aggregations, uniform direction averaging, clipped Eq. 3
    assert sorted(v.term_weighting for v in ablations if v.averaging == W.ONE_VS_REST) == sorted(
        [W.UNIFORM, W.SUM, W.ENTROPY_MEAN])
    assert sorted(v.averaging for v in ablations if v.term_weighting == W.ENTROPY) == sorted(
        [W.UNIFORM, W.ONE_VS_REST_CLIPPED])
    for variant in ablations:
        changed = (variant.term_weighting != full.term_weighting) + (variant.averaging != full.averaging)
        assert changed == 1 and variant.changes, variant.name
    # a term-aggregation row uses that aggregation's matrix with its own Eq. 3 weights, nothing else
    mean_row = next(v for v in ablations if v.term_weighting == W.UNIFORM)
    segments, matrix = matrices[W.UNIFORM]
    np.testing.assert_allclose([mean_row.scores[s] for s in segments],
                               matrix @ W.one_vs_rest_weights(matrix), rtol=1e-12)


def test_four_token_aggregations_of_eq1() -> None:
    logprobs, entropies = [-1.0, -2.0, -4.0], [0.5, 1.5, 0.0]
    assert W.direction_score(logprobs, entropies, W.UNIFORM) == pytest.approx(-7 / 3)
    assert W.direction_score(logprobs, entropies, W.SUM) == pytest.approx(-7.0)
    assert W.direction_score(logprobs, entropies, W.ENTROPY) == pytest.approx(-3.5)  # Eq. 1 + Eq. 4
    assert W.direction_score(logprobs, entropies, W.ENTROPY_MEAN) == pytest.approx(-3.5 / 2.0)
    assert np.isnan(W.direction_score([-1.0], [0.0], W.ENTROPY_MEAN))  # no weight at all: no score
    # Length: a copy of the same tokens twice keeps both means and doubles both sums.
    assert W.direction_score(logprobs * 2, entropies * 2, W.ENTROPY_MEAN) == pytest.approx(-1.75)
    assert W.direction_score(logprobs * 2, entropies * 2, W.SUM) == pytest.approx(-14.0)


def test_paired_difference_sees_what_overlapping_marginal_intervals_hide() -> None:
    """Two metrics that differ by one pair in every source: their marginal intervals overlap, but the paired
    interval of the difference (same resampled sources for both) excludes 0."""
    rng = np.random.default_rng(3)
    n_groups, levels = 20, 6
    ranking = [(f"s{g}-h{a}", f"s{g}-h{b}", f"s{g}") for g in range(n_groups) for a in range(levels)
               for b in range(a + 1, levels)]
    reference, better = {}, {}
    for g in range(n_groups):
        # the reference always swaps the two best, and orders the rest at random (τ varies a lot by source)
        order = [1, 0, *(int(k) for k in rng.permutation(np.arange(2, levels)))]
        for rank, level in enumerate(order):
            reference[f"s{g}-h{level}"] = -float(rank)
        fixed = dict((f"s{g}-h{level}", -float(rank)) for rank, level in enumerate(order))
        fixed[f"s{g}-h0"], fixed[f"s{g}-h1"] = fixed[f"s{g}-h1"], fixed[f"s{g}-h0"]  # the variant does not
        better.update(fixed)
    a = M.tau_interval(better, ranking, 2000, 0)
    b = M.tau_interval(reference, ranking, 2000, 0)
    assert a.ci_low < b.ci_high  # marginal intervals overlap
    difference = M.tau_difference_interval(better, reference, ranking, 2000, 0)
    assert difference.value == pytest.approx(a.value - b.value)
    assert difference.ci_low > 0  # ... but the paired difference is clearly positive
    assert difference.value == pytest.approx(2 / 15)  # one pair per source turns from discordant to concordant


def test_meta_table_reports_each_rows_paired_difference_from_the_full_datscore() -> None:
    matrices, ranking = matrices_for()
    found = M.variants(matrices, hypo_tokens={s: float(len(s)) for s in matrices[W.ENTROPY][0]})
    rows = M.meta_table(found, ranking, n_resamples=200)
    assert rows[0]["kind"] == "full" and rows[0]["difference"] == 0.0
    assert rows[0]["difference_ci_low"] == rows[0]["difference_ci_high"] == 0.0
    for row in rows:
        assert row["difference_from"] == M.FULL_NAME
        assert row["difference"] == pytest.approx(row["value"] - rows[0]["value"])
        assert row["difference_ci_low"] <= row["difference"] + 1e-12 <= row["difference_ci_high"] + 2e-12
    assert next(r for r in rows if r["kind"] == "covariate")["variant"].startswith("length alone")
    # With DA scores the paired difference is of |Pearson r| over the same resampled segments.
    human = {s: -float(s.rsplit("-h", 1)[1]) for s in matrices[W.ENTROPY][0]}
    da_rows = M.meta_table(found[:3], human=human, n_resamples=200)
    assert da_rows[1]["difference"] == pytest.approx(da_rows[1]["value"] - da_rows[0]["value"])


def test_eq3_weight_intervals_resample_whole_sources() -> None:
    matrices, _ = matrices_for(n_groups=10)
    segments, matrix = matrices[W.ENTROPY]
    units = [s.split("-")[0] for s in segments]
    found = M.weight_intervals(matrix, units, n_resamples=300, seed=1)
    weights = W.one_vs_rest_weights(matrix)
    assert list(found) == list(D.LABELS)
    for j, label in enumerate(D.LABELS):
        entry = found[label]
        assert entry["value"] == pytest.approx(weights[j])
        assert entry["ci_low"] < entry["value"] < entry["ci_high"]
        assert 0.0 <= entry["p_negative"] <= 1.0
    # Every source identical: any draw of sources gives the same correlations, the interval is a point.
    same = np.tile(matrix[:6], (5, 1))
    flat = M.weight_intervals(same, [f"u{i // 6}" for i in range(30)], n_resamples=50)
    for j, label in enumerate(D.LABELS):
        assert flat[label]["ci_low"] == pytest.approx(flat[label]["ci_high"], abs=1e-9)
        assert flat[label]["ci_low"] == pytest.approx(W.one_vs_rest_weights(same)[j], abs=1e-9)


def test_negative_eq3_weights_are_said_and_can_be_clipped() -> None:
    """Issue 18 §2.7: Eq. 3 can give a direction a large negative weight (here C, which runs against A and B)."""
    scores = np.array([[1.0, 1.2, 4.0], [2.0, 1.9, 3.1], [3.0, 3.2, 1.8], [4.0, 3.9, 1.2]])
    weights = W.one_vs_rest_weights(scores)
    assert weights[2] < -1.9 and abs(weights[0]) < 0.01  # A 0.0007, B −0.0056, C −1.989
    note = M.negative_weight_note(dict(zip("ABC", weights, strict=True)))
    assert note is not None and "C -1.989" in note and "clipped" in note
    assert M.negative_weight_note({"A": 0.1, "B": 0.0}) is None
    clipped = W.direction_weights(scores, W.ONE_VS_REST_CLIPPED)
    np.testing.assert_allclose(clipped, np.maximum(weights, 0.0))
    assert clipped[2] == 0.0 and (clipped >= 0).all()
    np.testing.assert_allclose(W.combine(scores, clipped), scores @ np.maximum(weights, 0.0))
