"""Slices where the truth is known (issue 46 §3): simulated runs from tests/slices/simulate.py.

- fair data: the share of runs with any flagged cell stays at or below the FDR level asked (under the global null
  every flag is false, so that share is the FDR);
- one intersection (group × setting) planted worse, its group's marginal kept fair: found and ranked first;
- a 2-prompt cell at rate 1.0 is not ranked above a large cell with a real gap; small cells are reported as too
  small, never tested or flagged;
- bad options are refused in one sentence.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairness_core.slices import SlicesError, check_options, slice_cells, table_json, table_text, wilson
from tests.slices.simulate import SEP, simulated_sums

ATTRS = ("family", "group", "source", "setting")
FAST = {"n_resamples": 0, "n_permutations": 199}


def test_fair_data_flags_a_cell_in_at_most_the_fdr_share_of_runs() -> None:
    runs, fdr = 120, 0.1
    flagged = 0
    for seed in range(runs):
        sums = simulated_sums(seed, families=1, groups=4, templates=10, settings=2, samples=3)
        table = slice_cells(sums, ("group", "setting"), fdr=fdr, seed=seed, **FAST)
        assert table.cells["p_value"].notna().sum() == 14  # 4 groups + 2 settings + 8 intersections, all tested
        flagged += bool(table.cells["flagged"].any())
    share = flagged / runs
    # the share is a binomial proportion over `runs` runs: its 95% upper bound must reach the level asked
    assert wilson(share, runs)[0] <= fdr, f"{flagged} of {runs} fair runs flagged a cell"


def test_a_planted_intersection_is_found_and_ranked_first() -> None:
    # group1 under setting0 is worse and under setting1 better by the same amount: its marginal stays fair
    shift = {("family0-group1", "setting0"): 1.2, ("family0-group1", "setting1"): -1.2}
    found = 0
    for seed in range(10):
        sums = simulated_sums(100 + seed, families=1, groups=4, templates=16, settings=2, samples=4, shift=shift)
        table = slice_cells(sums, ("group", "setting"), n_resamples=200, n_permutations=499, seed=seed)
        top = table.cells.iloc[0]
        found += top["attributes"] == {"group": "family0-group1", "setting": "setting0"} and bool(top["flagged"])
        marginal = table.cells[table.cells["attributes"] == {"group": "family0-group1"}].iloc[0]
        assert abs(marginal["gap"]) < abs(top["gap"])
    assert found >= 8, f"the planted cell was flagged and first in {found} of 10 runs"


def test_the_planted_cell_is_found_with_prompt_units_too() -> None:
    """Groups with prompts of their own (no shared template): the permutation path."""
    shift = {(f"family0-group{g}", s): 1.0 for g in (2,) for s in ("setting0",)}
    sums = simulated_sums(7, families=1, groups=4, templates=20, settings=1, samples=4, shift=shift, shared=False)
    table = slice_cells(sums, ATTRS, n_resamples=300, n_permutations=999, seed=1)
    top = table.cells.iloc[0]
    assert top["attributes"] == {"group": "family0-group2"}
    assert top["test"].startswith("permutation") and top["flagged"] and top["gap_ci_low"] > 0
    assert top["n_units"] == 20 and top["p_value"] < 0.01


def _with_tiny_cell() -> pd.DataFrame:
    """A large group with a real gap, and a 2-prompt group whose generations are all negative."""
    shift = {("family0-group1", "setting0"): 1.5}
    sums = simulated_sums(3, families=1, groups=3, templates=20, settings=1, samples=6, shift=shift, shared=False)
    tiny = pd.DataFrame([("family0", "tiny", "custom", "setting0", SEP.join(("prompt", "family0", "tiny", f"p{i}")),
                          4.0, 4.0) for i in range(2)], columns=sums.columns)
    return pd.concat([sums, tiny], ignore_index=True)


def test_a_two_prompt_cell_at_rate_one_is_not_ranked_above_a_large_real_gap() -> None:
    sums = _with_tiny_cell()
    table = slice_cells(sums, ATTRS, n_resamples=300, n_permutations=999, seed=0)
    cells = table.cells.set_index(table.cells["attributes"].map(lambda a: a["group"]))
    assert cells.loc["tiny", "value"] == 1.0 and cells.loc["tiny", "gap"] > cells.loc["family0-group1", "gap"]
    assert list(table.cells["attributes"].map(lambda a: a["group"])).index("tiny") > \
        list(table.cells["attributes"].map(lambda a: a["group"])).index("family0-group1")
    assert cells.loc["family0-group1", "flagged"]
    tiny = cells.loc["tiny"]
    assert tiny["too_small"] and not tiny["flagged"] and math.isnan(tiny["p_value"]) and math.isnan(tiny["q_value"])
    # asked to test it anyway, its interval still says how little 8 generations of 2 prompts tell: not [1, 1]
    loose = slice_cells(sums, ATTRS, min_units=2, n_resamples=300, n_permutations=999, seed=0)
    tiny = loose.cells[loose.cells["attributes"] == {"group": "tiny"}].iloc[0]
    assert tiny["ci_low"] < 0.75 and tiny["gap_ci_low"] < tiny["gap"] - 0.2


def test_small_cells_are_reported_too_small_and_left_out_of_the_correction() -> None:
    sums = simulated_sums(5, families=1, groups=3, templates=4, settings=2, samples=3, shared=False)
    table = slice_cells(sums, ("group", "setting"), min_units=5, **FAST)
    small = table.cells[table.cells["too_small"]]
    assert len(small) == 9 and (small["n_units"] == 4).all()  # each group holds 4 prompts, with or without setting
    assert small["p_value"].isna().all() and small["q_value"].isna().all() and not small["flagged"].any()
    tested = table.cells[~table.cells["too_small"]]
    assert list(tested["attributes"]) == [{"setting": "setting0"}, {"setting": "setting1"}] or \
        list(tested["attributes"]) == [{"setting": "setting1"}, {"setting": "setting0"}]
    assert tested["q_value"].notna().all()
    # the too-small cells come after every tested cell, and the text says what they are
    assert not table.cells["too_small"].iloc[: len(tested)].any()
    assert sum(line.endswith("too small to test") for line in table_text(table).splitlines()) == 9
    payload = table_json(table)
    assert {c["too_small"] for c in payload["cells"]} == {True, False}
    assert set(payload["cells"][0]) >= {"attributes", "n_units", "value", "ci_low", "ci_high", "gap", "gap_ci_low",
                                        "gap_ci_high", "p_value", "q_value", "flagged", "too_small"}


def test_nested_cells_are_listed_once_and_q_values_are_benjamini_hochberg() -> None:
    sums = simulated_sums(9, families=2, groups=2, templates=6, settings=1, samples=3)
    table = slice_cells(sums, ATTRS, **FAST)
    names = [tuple(sorted(a)) for a in table.cells["attributes"]]
    assert ("family", "group") not in names  # a group is nested in its family: same rows as the group's cell
    tested = table.cells[table.cells["p_value"].notna()]
    p = tested["p_value"].to_numpy()
    order = np.argsort(p)
    m = len(p)
    expected = np.minimum.accumulate((p[order] * m / np.arange(1, m + 1))[::-1])[::-1]
    assert np.allclose(np.sort(tested["q_value"].to_numpy()), np.minimum(expected, 1.0))


@pytest.mark.parametrize(("min_units", "fdr", "words"), [(0, 0.1, "--min-units"), (3, 0.0, "--fdr"),
                                                         (3, 1.0, "--fdr"), (3, float("nan"), "--fdr")])
def test_bad_options_are_refused_in_one_sentence(min_units: int, fdr: float, words: str) -> None:
    with pytest.raises(SlicesError, match=words):
        check_options(min_units, fdr)


def test_an_attribute_the_data_lacks_is_refused() -> None:
    sums = simulated_sums(1, families=1, groups=2, templates=3, settings=1, samples=2)
    with pytest.raises(SlicesError, match="no attribute 'race'"):
        slice_cells(sums, ATTRS, by=[["race"]], **FAST)
