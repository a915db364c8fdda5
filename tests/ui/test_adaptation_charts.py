"""The Template adaptation page's VBCM bars: the axis holds every interval's cap inside the panel (issue 23)."""

from __future__ import annotations

import pandas as pd

from ui import adaptation_charts


def test_an_interval_ending_at_1_has_its_cap_inside_the_panel() -> None:
    frame = pd.DataFrame({"set": ["original", "noe"], "group": ["female-names", "female-names"],
                          "vbcm": [0.9995, 1.0], "ci_low": [0.999, 0.9998], "ci_high": [1.0, 1.0]})
    low, high = adaptation_charts.vbcm_bars(frame).layout.yaxis.range
    assert low == 0.989 and high > 1.0008  # was 1.0005: the caps at 1 sat on the top edge
    assert adaptation_charts.vbcm_range(0.5) == [0.49, 1 + 0.08 * 0.51]


def test_the_calculator_bars_use_the_same_axis() -> None:
    figure = adaptation_charts.single_vbcm_bars({"Spain": 0.9922, "USA": 0.9944}, {"Spain": (0.98, 1.0),
                                                                                   "USA": (0.985, 1.0)})
    assert list(figure.layout.yaxis.range) == adaptation_charts.vbcm_range(0.98)


def test_the_mae_bars_put_the_accepted_templates_originals_beside_the_adapted_set() -> None:
    """Issue 30: MAE grows with noise, so the adapted bar is drawn beside the originals of the same templates."""
    import pandas as pd

    from ui.adaptation_charts import comparison_bars

    rows = [("original vs NOEs", 0.010), ("original (accepted templates) vs NOEs", 0.014), ("adapted vs NOEs", 0.013),
            ("adapted − original", -0.001)]
    table = pd.DataFrame([{"classifier": "offensive", "attribute": "nationality", "comparison": c, "mae": v,
                           "mae_ci_low": v - 0.002, "mae_ci_high": v + 0.002} for c, v in rows])
    figure = comparison_bars(table, "mae")
    assert [trace.name for trace in figure.data] == ["original vs NOEs", "original (accepted templates) vs NOEs",
                                                     "adapted vs NOEs"]
