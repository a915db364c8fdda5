"""Compare's verdicts over several line-ups hold a false discovery rate (issue 42 §2): each difference carries its
bootstrap p (the one its percentile interval inverts) and a Benjamini-Hochberg q over the comparison's line-ups; the
chart and the sentence call a line-up different only where q < 0.05."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_core.bias.multiplicity import benjamini_hochberg
from fairness_core.compare.figures import ADJUSTED, disparity_figure
from fairness_core.reading import CellMatrix, bootstrap_p, percentile_bounds, poisson_weights


def test_the_bootstrap_p_is_the_one_the_interval_inverts() -> None:
    rng = np.random.default_rng(3)
    draws = rng.normal(loc=[0.0, 0.5, 2.5, -3.0], scale=1.0, size=(4000, 4))
    p = bootstrap_p(draws)
    low, high = percentile_bounds(draws)
    assert ((p < 0.05) == ((low > 0) | (high < 0))).all()
    assert p[0] > 0.5 and p[2] < 0.05 and p[3] < 0.01
    assert bootstrap_p(np.zeros((100, 1)))[0] == 1.0  # two equal sides: no evidence of a difference
    assert np.isnan(bootstrap_p(np.full((10, 1), np.nan))[0])


def _screen(rng: np.random.Generator, n_cells: int = 40, n_units: int = 30, n_resamples: int = 1000,
            shifted: int = 0) -> np.ndarray:
    """The p of each line-up of one comparison of two runs (unpaired; Compare's 1,000 resamples): every cell's
    units drawn alike on both sides, except the first `shifted` cells, whose rate is 0.3 → 0.6 on the second."""
    units, cells = np.meshgrid(np.arange(n_units), np.arange(n_cells), indexing="ij")

    def run(rate: np.ndarray) -> CellMatrix:
        counts = np.full(units.size, 5.0)
        totals = rng.binomial(5, rate[cells.ravel()]).astype(float)
        return CellMatrix.build(units.ravel(), cells.ravel(), totals, counts, n_units, n_cells)

    rates = np.full(n_cells, 0.3)
    a = run(rates)
    rates[:shifted] = 0.6
    b = run(rates)
    weights = poisson_weights(n_units, n_resamples, rng)
    rep_a, rep_b = a.replicates(weights), b.replicates(poisson_weights(n_units, n_resamples, rng))
    return bootstrap_p(rep_b - rep_a)


def test_under_a_global_null_q_holds_the_screen_where_the_intervals_do_not() -> None:
    rng = np.random.default_rng(11)
    screens = np.array([_screen(rng) for _ in range(150)])
    raw = np.mean([(p < 0.05).any() for p in screens])
    adjusted = np.mean([(benjamini_hochberg(p) < 0.05).any() for p in screens])
    assert raw > 0.5  # 40 line-ups read one by one: most screens show a "difference" in pure noise
    assert adjusted <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 150)  # under a global null the FDR is the familywise rate
    assert (screens < 0.05).mean() == pytest.approx(0.05, abs=0.02)  # each line-up's own test holds its size


def test_real_differences_are_still_found_among_many_line_ups() -> None:
    rng = np.random.default_rng(5)
    found = [benjamini_hochberg(_screen(rng, shifted=4)) < 0.05 for _ in range(40)]
    assert np.mean([f[:4].mean() for f in found]) > 0.8  # power on the four real differences (0.3 → 0.6)
    assert np.mean([f[4:].sum() / max(f.sum(), 1) for f in found]) <= 0.1  # the share of false flags among flags


def test_an_interval_off_zero_with_a_large_q_is_grey_and_said_so() -> None:
    rows = pd.DataFrame({"metric": ["negative_sentiment_disparity"] * 2, "family": ["gender", "race"],
                         "contrast": ["top_p 0.9 → 0.3"] * 2, "arm_a": ["a"] * 2, "arm_b": ["b"] * 2,
                         "run_b_id": ["r"] * 2, "run_a": [0.1, 0.1], "run_b": [0.2, 0.2], "run_a_low": [0.0] * 2,
                         "run_a_high": [0.2] * 2, "run_b_low": [0.1] * 2, "run_b_high": [0.3] * 2,
                         "difference": [0.1, 0.1], "ci_low": [0.01, 0.01], "ci_high": [0.2, 0.2],
                         "q_difference": [0.03, 0.2], "pairing": ["paired by 10 prompts"] * 2})
    names = [trace["name"] for trace in disparity_figure(rows)["data"]]
    assert names == ["higher (interval above 0)", ADJUSTED]
    from fairness_core.compare.wording import difference_sentence

    said = difference_sentence(rows.iloc[1].to_dict())
    assert said.endswith("the interval excludes 0, but not after the false-discovery adjustment over the "
                         "comparison's line-ups (q = 0.20, Benjamini-Hochberg), so treat it as a lead.")
