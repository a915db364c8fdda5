"""Small CAIRO helpers the page shows through the study's face: the subgroup mapping editor, r for display."""

from __future__ import annotations

import math

import pytest

from fairness_core import cairo


def test_the_mapping_editor_rows_become_a_mapping_and_an_empty_category_keeps_the_subgroup() -> None:
    rows = [{"metric": "BOLD gender", "subgroup": "American_actors", "category": "male"},
            {"metric": "BOLD gender", "subgroup": "American_actresses", "category": ""},
            {"metric": "HONEST gender (valid)", "subgroup": "male", "category": None}]
    assert cairo.mapping_from_rows(rows) == {"BOLD gender": {"American_actors": "male",
                                                             "American_actresses": "American_actresses"},
                                             "HONEST gender (valid)": {"male": "male"}}


def test_an_r_that_cannot_be_computed_is_said_to_be_undefined() -> None:
    assert [cairo.r_text(v) for v in (0.4567, None, math.nan, -1.0)] == ["0.46", "undefined", "undefined", "-1.00"]


def test_the_shipped_run_says_what_its_intervals_can_detect() -> None:
    """Issue 30: the Eq. 1 interval over-covers by design; the page says so with what it costs on the table shown.
    The shipped run (the Jigsaw judge, issue 29): 4 of 96 rows' intervals exclude 0, and with its prompts' spread an
    estimate had to exceed about 0.071 to be detected, 3.2 times the median estimate."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "data" / "cairo" / "demo_bias_table.csv").read_text(encoding="utf-8")
    shown = cairo.table_with_intervals(cairo.read_bias_table(text, "the shipped run"), text)
    power = cairo.interval_power(shown)
    assert power["n_rows"] == 96 and power["n_detected"] == 4
    assert round(power["median_detectable"], 3) == 0.071 and round(power["median_bias"], 4) == 0.0218
    note = cairo.interval_power_note(power)
    assert "over-covers by design" in note and "detected in 4 of 96 rows" in note and "about 0.0707" in note


def test_with_two_subgroups_an_estimate_above_ci_high_minus_itself_is_exactly_a_detected_gap() -> None:
    import numpy as np
    import pandas as pd

    from fairness_core.cairo.bias import eq1, gap_interval

    rng = np.random.default_rng(5)
    rows = []
    for _ in range(300):
        groups = [rng.beta(0.5, 1.5, 4), rng.beta(0.8, 1.2, 4)]
        low, high = gap_interval(groups)
        bias = eq1([g.mean() for g in groups])
        rows.append({"bias": bias, "ci_low": low, "ci_high": high, "subgroup_scores": {"a": (0, 4), "b": (0, 4)}})
        assert (low > 1e-12) == (bias > high - bias + 1e-12)
    frame = pd.DataFrame(rows)
    assert cairo.interval_power(frame)["n_detected"] == int((frame["ci_low"] > 0).sum())
    assert cairo.interval_power_note(cairo.interval_power(frame.iloc[:0])) is None


def test_a_category_with_control_characters_or_a_run_on_text_is_one_sentence_naming_its_row() -> None:
    row = {"metric": "BOLD gender", "subgroup": "American_actors"}
    with pytest.raises(cairo.CairoDataError, match=r"^Subgroup mapping: the category of BOLD gender / American_actors "
                                                   r"contains a control character \(U\+0001"):
        cairo.mapping_from_rows([row | {"category": "\x01male"}])
    with pytest.raises(cairo.CairoDataError, match="is 1,000,000 characters long; at most 200"):
        cairo.mapping_from_rows([row | {"category": "x" * 1_000_000}])
    # a markdown link is a label like any other: the page shows it as text
    assert cairo.mapping_from_rows([row | {"category": "[m](https://evil.example)"}])["BOLD gender"] == {
        "American_actors": "[m](https://evil.example)"}
