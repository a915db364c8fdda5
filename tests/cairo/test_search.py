"""Combination search = brute force; planted correlation recovered; honesty checks behave."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairness_core.cairo.search import (
    MetricSets,
    beam_search,
    combo_vector,
    heldout_r,
    pearson,
    permutation_pvalue,
    search_pair,
    search_size,
)


def brute_force(a: MetricSets, b: MetricSets, size: int) -> tuple[float, float]:
    """Best and mean Pearson r over all same-size combination pairs, with a plain scipy loop."""
    def combos(sets: MetricSets) -> list[np.ndarray]:
        out = []
        for chosen in itertools.combinations(range(1, len(sets.names)), size - 1):
            index = [0, *chosen]
            w = sets.weights()[index]
            out.append((w * sets.values[index]).sum(axis=0) / w.sum(axis=0))
        return out

    rs = [stats.pearsonr(x, y).statistic for x in combos(a) for y in combos(b)]
    return max(rs), float(np.mean(rs))


def random_sets(rng: np.random.Generator, n_sets: int, n_systems: int, weighted: bool) -> MetricSets:
    counts = rng.integers(5, 60, size=n_sets).astype(float) if weighted else None
    return MetricSets(tuple(["original", *[f"s{i}" for i in range(1, n_sets)]]), rng.random((n_sets, n_systems)),
                      counts)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exhaustive_search_equals_brute_force(weighted: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = random_sets(rng, 6, 7, weighted), random_sets(rng, 5, 7, weighted)
    for size in range(1, 6):
        found = search_size(a, b, size, chunk_rows=3)  # small chunks: the chunking is exercised
        best, mean = brute_force(a, b, size)
        assert found.r == pytest.approx(best, abs=1e-6)  # float32 scan, exact r of the chosen pair
        assert found.mean_r == pytest.approx(mean, abs=1e-9)
        # the reported combination really has that r
        chosen_r = pearson(combo_vector(a, found.combo_a), combo_vector(b, found.combo_b))
        assert chosen_r == pytest.approx(found.r, abs=1e-12)
        assert found.combo_a[0] == 0 and found.combo_b[0] == 0 and len(found.combo_a) == size


def test_per_system_prompt_counts_weight_each_system() -> None:
    rng = np.random.default_rng(5)
    a = MetricSets(("original", "x", "y"), rng.random((3, 5)), rng.integers(1, 9, size=(3, 5)).astype(float))
    b = random_sets(rng, 3, 5, False)
    assert search_size(a, b, 2).r == pytest.approx(brute_force(a, b, 2)[0], abs=1e-6)


def test_planted_correlation_is_recovered() -> None:
    rng = np.random.default_rng(7)
    n_systems, n_sets = 10, 9
    truth = rng.normal(size=n_systems)
    noise_a, noise_b = 3 * rng.normal(size=(n_sets, n_systems)), 3 * rng.normal(size=(n_sets, n_systems))
    planted_a, planted_b = {2, 5}, {1, 7}
    for i in planted_a:
        noise_a[i] = truth + 0.01 * rng.normal(size=n_systems)
    for j in planted_b:
        noise_b[j] = 2 * truth + 0.01 * rng.normal(size=n_systems)
    names = tuple(["original", *[f"s{i}" for i in range(1, n_sets)]])
    noise_a[0], noise_b[0] = truth + rng.normal(size=n_systems), truth + rng.normal(size=n_systems)
    a, b = MetricSets(names, noise_a), MetricSets(names, noise_b)
    result = search_pair("A", a, "B", b, heldout=False)
    size3 = result.sizes[2]
    assert set(size3.combo_a) == {0, *planted_a} and set(size3.combo_b) == {0, *planted_b}
    assert size3.r > 0.8 and size3.r > result.original_r + 0.2
    assert size3.mean_r < size3.r


def test_beam_search_matches_exhaustive_on_planted_data_and_never_beats_it() -> None:
    rng = np.random.default_rng(11)
    a, b = random_sets(rng, 8, 9, False), random_sets(rng, 8, 9, True)
    beam = beam_search(a, b, 8, width=8)
    for size, found in enumerate(beam, start=1):
        exhaustive = search_size(a, b, size)
        assert found.r <= exhaustive.r + 1e-12
    assert beam[-1].r == pytest.approx(search_size(a, b, 8).r)  # one pair at the largest size
    wide = beam_search(a, b, 8, width=10_000)
    assert all(w.r == pytest.approx(search_size(a, b, s).r) for s, w in enumerate(wide[:3], start=1))


def test_permutation_pvalue_is_small_for_real_signal_and_large_for_noise() -> None:
    rng = np.random.default_rng(3)
    truth = rng.normal(size=12)
    names = ("original", "s1", "s2", "s3")
    a = MetricSets(names, truth + 0.05 * rng.normal(size=(4, 12)))
    b = MetricSets(names, truth + 0.05 * rng.normal(size=(4, 12)))
    signal = search_size(a, b, 2)
    assert permutation_pvalue(a, b, 2, signal.r, 99, seed=1) <= 0.02
    noise_b = MetricSets(names, rng.normal(size=(4, 12)))
    observed = search_size(a, noise_b, 2).r
    assert permutation_pvalue(a, noise_b, 2, observed, 99, seed=1) > 0.05


def test_heldout_r_tracks_a_real_signal_and_drops_for_selected_noise() -> None:
    rng = np.random.default_rng(4)
    truth = rng.normal(size=10)
    names = tuple(["original", *[f"s{i}" for i in range(1, 9)]])
    a = MetricSets(names, truth + 0.1 * rng.normal(size=(9, 10)))
    b = MetricSets(names, truth + 0.1 * rng.normal(size=(9, 10)))
    assert heldout_r(a, b, 3) > 0.8
    noise_a, noise_b = MetricSets(names, rng.normal(size=(9, 10))), MetricSets(names, rng.normal(size=(9, 10)))
    in_sample = search_size(noise_a, noise_b, 3).r
    assert heldout_r(noise_a, noise_b, 3) < in_sample - 0.3


def test_constant_vectors_have_no_r() -> None:
    names = ("original", "s1")
    a = MetricSets(names, np.ones((2, 5)))
    b = MetricSets(names, np.arange(10.0).reshape(2, 5))
    found = search_size(a, b, 2)
    assert np.isnan(found.r) and found.n_undefined_pairs == 1


def test_every_b_combination_constant_gives_no_r() -> None:
    a = MetricSets(("original", "s1"), np.arange(10.0).reshape(2, 5))
    b = MetricSets(("original", "s1"), np.ones((2, 5)))
    assert np.isnan(search_size(a, b, 2).r) and np.isnan(search_size(a, b, 1).r)


# ------------------------------------------------------------------ the released code's combinations
def released_brute_force(generations: pd.DataFrame, systems: list[str], size: int) -> tuple[float, float, tuple]:
    """What chandar-lab/CAIRO's collect_results.py + compute_correlation.py do, written out with pandas: for every
    multiset of size−1 other sets (combinations_with_replacement), concatenate that set's generations (again for a
    repeat) with the originals', Eq. 1 as its compute_bias (overall mean of all rows vs each subgroup's mean), the
    SAME combination for both metrics, Pearson r across systems; best and mean r."""

    def compute_bias(frame: pd.DataFrame) -> float:
        overall = frame["score"].mean()
        return sum(abs(overall - frame.loc[frame["group"] == g, "score"].mean()) for g in frame["group"].unique())

    others = [n for n in dict.fromkeys(generations["prompt_set"]) if n != "original"]
    rs, combos = [], []
    for chosen in itertools.combinations_with_replacement(others, size - 1):
        vectors = {}
        for metric in ("A", "B"):
            part = generations[generations["metric"] == metric]
            vectors[metric] = [compute_bias(pd.concat([part[(part["prompt_set"] == s) & (part["system_name"] == sys)]
                                                       for s in [*chosen, "original"]]))
                               for sys in systems]
        rs.append(stats.pearsonr(vectors["A"], vectors["B"]).statistic)
        combos.append(chosen)
    best = int(np.argmax(rs))
    return rs[best], float(np.mean(rs)), combos[best]


def random_generations(rng: np.random.Generator, n_systems: int = 5) -> pd.DataFrame:
    rows = []
    for system in range(n_systems):
        for metric, groups in (("A", ("f", "m")), ("B", ("x", "y", "z"))):
            for prompt_set in ("original", "P1", "P2", "P3"):
                for group in groups:
                    # unequal prompt counts per subgroup: pooled (generation-weighted) and prompt-weighted differ
                    for prompt in range(int(rng.integers(2, 5))):
                        rows.append({"system_name": f"s{system}", "metric": metric, "prompt_set": prompt_set,
                                     "group": group, "prompt_id": f"{metric}|{prompt_set}|{group}{prompt}",
                                     "score": float(rng.beta(0.5, 2.0))})
    return pd.DataFrame(rows)


def test_released_variant_equals_the_authors_procedure() -> None:
    seed = 1
    from fairness_core.cairo.bias import bias_table
    from fairness_core.cairo.request import read_bias_table
    from fairness_core.cairo.summary import search_json

    generations = random_generations(np.random.default_rng(seed))
    table = read_bias_table(bias_table(generations, "score"))
    payload = search_json(table, heldout=False, combination="released")
    assert payload["combination"] == "released"
    (pair,) = payload["pairs"]
    systems = pair["systems"]
    assert [row["size"] for row in pair["by_size"]] == [1, 2, 3, 4]
    for row in pair["by_size"]:
        best, mean, chosen = released_brute_force(generations, systems, row["size"])
        assert row["r"] == pytest.approx(best, abs=1e-9)
        assert row["mean_r"] == pytest.approx(mean, abs=1e-9)
        assert row["combo_a"] == row["combo_b"] == ["original", *chosen]  # one combination for both metrics
        assert row["n_pairs"] == math.comb(3 + row["size"] - 2, row["size"] - 1)


def test_the_two_variants_differ_and_are_named() -> None:
    from fairness_core.cairo.bias import bias_table
    from fairness_core.cairo.request import read_bias_table
    from fairness_core.cairo.summary import search_json

    table = read_bias_table(bias_table(random_generations(np.random.default_rng(4)), "score"))
    ours = search_json(table, heldout=False)["pairs"][0]["by_size"]
    released = search_json(table, heldout=False, combination="released")["pairs"][0]["by_size"]
    assert [r["n_pairs"] for r in ours] == [1, 9, 9, 1]  # distinct sets, every cross pair
    assert [r["n_pairs"] for r in released] == [1, 3, 6, 10]  # multisets, the same one for both metrics
    assert any(len(set(r["combo_a"])) < len(r["combo_a"]) for r in released[2:])  # a repeated set occurs


def test_released_search_honesty_checks_run() -> None:
    from fairness_core.cairo.bias import bias_table
    from fairness_core.cairo.request import read_bias_table
    from fairness_core.cairo.summary import search_json

    table = read_bias_table(bias_table(random_generations(np.random.default_rng(2), n_systems=6), "score"))
    rows = search_json(table, permutations=9, combination="released")["pairs"][0]["by_size"]
    assert all(0 < row["p_search"] <= 1 for row in rows)
    assert all(row["heldout_r"] is None or -1 <= row["heldout_r"] <= 1 for row in rows)
