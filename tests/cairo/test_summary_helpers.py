"""Small CAIRO helpers the page shows through the study's face: the subgroup mapping editor, r for display."""

from __future__ import annotations

import math

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
