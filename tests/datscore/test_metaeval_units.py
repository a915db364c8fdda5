"""Direct assessment |r| and its paired difference resample the source segments the hypotheses share (issue 30 §2):
coverage of the true |r| at the shipped design, 30 sources x 6 hypotheses."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.datscore.metaeval import (
    Variant,
    meta_table,
    pearson_difference_interval,
    pearson_interval,
    unit_multiplicities,
    weighted_pearson_abs,
)

SOURCES, HYPOTHESES = 30, 6


def population_r() -> tuple[float, float]:
    """human = a + b, metric 1 = a + b/2 + e, metric 2 = a/5 + b + e; a ~ N(0, 1) per source (difficulty, shared by
    its hypotheses), b ~ N(0, 0.5²) per hypothesis, e ~ N(0, 0.7²): the population Pearson r of each metric."""
    var_human = 1 + 0.25
    return ((1 + 0.5 * 0.25) / np.sqrt(var_human * (1 + 0.25 * 0.25 + 0.49)),
            (0.2 + 0.25) / np.sqrt(var_human * (0.04 + 0.25 + 0.49)))


def test_resampling_sources_covers_the_true_r_where_resampling_hypotheses_does_not() -> None:
    """In these 300 simulated corpora the segment bootstrap covered |r| 0.77 of the time (the difference of two
    metrics' |r|: 0.92); the source bootstrap 0.92 (0.93)."""
    r1, r2 = population_r()
    rng = np.random.default_rng(0)
    units = np.repeat([f"source {i}" for i in range(SOURCES)], HYPOTHESES)
    hits = {"segments": np.zeros(2), "sources": np.zeros(2)}
    reps = 300
    for rep in range(reps):
        difficulty = np.repeat(rng.normal(0, 1, SOURCES), HYPOTHESES)
        quality = rng.normal(0, 0.5, SOURCES * HYPOTHESES)
        human = difficulty + quality
        metric1 = difficulty + 0.5 * quality + rng.normal(0, 0.7, human.size)
        metric2 = 0.2 * difficulty + quality + rng.normal(0, 0.7, human.size)
        for name, unit in (("segments", None), ("sources", units)):
            ci = pearson_interval(metric1, human, 400, rep, units=unit)
            difference = pearson_difference_interval(metric1, metric2, human, 400, rep, units=unit)
            hits[name] += [ci.ci_low <= r1 <= ci.ci_high, difference.ci_low <= r1 - r2 <= difference.ci_high]
    sources, segments = hits["sources"] / reps, hits["segments"] / reps
    assert sources[0] >= 0.88 and sources[1] >= 0.88, sources
    assert segments[0] <= 0.82, segments  # hypotheses treated as independent: far too narrow


def test_all_hypotheses_of_a_drawn_source_come_together() -> None:
    weights = unit_multiplicities(["a", "a", "b", "c", "c", "c"], 200, seed=0)
    assert (weights[:, 0] == weights[:, 1]).all() and (weights[:, 3] == weights[:, 5]).all()
    assert (weights[:, [0, 2, 3]].sum(axis=1) == 3).all()  # three units drawn each time
    x, y = np.array([1.0, 2.0, 0.5, 4.0, 3.0, 1.0]), np.array([0.3, 0.1, 0.9, 0.5, 0.2, 0.4])
    assert weighted_pearson_abs(np.ones((1, 6)), x, y)[0] == pytest.approx(abs(np.corrcoef(x, y)[0, 1]))


def test_the_meta_table_reports_sources_as_its_units() -> None:
    rng = np.random.default_rng(1)
    ids = [f"s{i}-h{k}" for i in range(5) for k in range(3)]
    human = {s: float(v) for s, v in zip(ids, rng.normal(size=len(ids)), strict=True)}
    variant = Variant("full", "full", "entropy", "one-vs-rest", {s: human[s] + float(rng.normal()) for s in ids})
    rows = meta_table([variant], human=human, n_resamples=100, units={s: s.split("-")[0] for s in ids})
    assert rows[0]["units"] == 5 and rows[0]["n"] == 15
    assert meta_table([variant], human=human, n_resamples=100)[0]["units"] == 15  # no sources named: each its own
