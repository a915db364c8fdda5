"""Charts of the decoding page (Altair): every rate, disparity, diversity and quality with its 95% interval.

Colours come from a colour-blind-safe palette (Okabe-Ito); labels from data (group names) are plain
Vega text, never HTML.
"""

from __future__ import annotations

import textwrap

import altair as alt
import pandas as pd

#: Okabe & Ito (2008), colour-blind safe
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
#: one colour per group: the default prompt set has 11 groups, and Okabe-Ito has 8; the four added (Tol's indigo,
#: wine and olive, and a mid grey) stay apart from them and from each other
GROUP_PALETTE = [*PALETTE, "#332288", "#882255", "#999933", "#7F7F7F"]


def wrapped(title: str, width: int = 26) -> list[str]:
    """An axis title as lines (Vega draws a list as a multi-line title): long ones were clipped and overlapped."""
    return textwrap.wrap(title, width) or [title]


def _x(knob: str | None) -> alt.X:
    if knob:
        return alt.X("x", type="quantitative", title=knob, scale=alt.Scale(zero=False))
    return alt.X("x", type="nominal", title="setting")


def group_rates(table: pd.DataFrame, value: str, title: str, knob: str | None) -> alt.FacetChart:
    """One line per group (shaded 95% interval), one panel per family (paper Fig. 3/4)."""
    groups = sorted(table["group"].unique()) if "group" in table else []
    # the same colour means the same group in every panel; the legend shows full-strength swatches (the shaded
    # band's 18% opacity faded them)
    color = alt.Color("group:N", scale=alt.Scale(domain=groups, range=GROUP_PALETTE[: max(len(groups), 1)]),
                      legend=alt.Legend(symbolOpacity=1, columns=1, title="group"))
    base = alt.Chart(table).encode(x=_x(knob), color=color)
    band = base.mark_area(opacity=0.18).encode(y=alt.Y(f"{value}_ci_low", title=wrapped(title)), y2=f"{value}_ci_high")
    lines = base.mark_line(point=True).encode(
        y=alt.Y(value, title=wrapped(title)),
        tooltip=["label", "group", "n", alt.Tooltip(value, format=".3f"),
                 alt.Tooltip(f"{value}_ci_low", format=".3f", title="95% low"),
                 alt.Tooltip(f"{value}_ci_high", format=".3f", title="95% high")])
    return (band + lines).properties(height=230, width=300).facet(facet=alt.Facet("family:N", title=None),
                                                                   columns=2)


def disparity(frame: pd.DataFrame, value: str, title: str, knob: str | None) -> alt.LayerChart:
    """Disparity per family and its mean over families, each with 95% interval bars (paper Fig. 5)."""
    base = alt.Chart(frame).encode(x=_x(knob), color=alt.Color("family:N", scale=alt.Scale(range=PALETTE)))
    bars = base.mark_rule(strokeWidth=2, opacity=0.6).encode(y=alt.Y(f"{value}_ci_low", title=title),
                                                             y2=f"{value}_ci_high")
    lines = base.mark_line(point=True).encode(
        y=alt.Y(value, title=title),
        tooltip=["label", "family", alt.Tooltip(value, format=".3f"),
                 alt.Tooltip(f"{value}_ci_low", format=".3f", title="95% low"),
                 alt.Tooltip(f"{value}_ci_high", format=".3f", title="95% high")])
    return (bars + lines).properties(height=260)


def against(configs: pd.DataFrame, x: str, x_title: str, y: str, y_title: str) -> alt.LayerChart:
    """One point per setting with 95% interval bars on both axes (paper Fig. 1; Pareto view)."""
    base = alt.Chart(configs).encode(
        x=alt.X(x, title=x_title, scale=alt.Scale(zero=False)),
        y=alt.Y(y, title=y_title, scale=alt.Scale(zero=False)),
        color=alt.Color("marker:N", title="", scale=alt.Scale(range=PALETTE)))
    x_bars = base.mark_rule(opacity=0.6).encode(x=alt.X(f"{x}_ci_low", title=x_title), x2=f"{x}_ci_high")
    y_bars = base.mark_rule(opacity=0.6).encode(y=alt.Y(f"{y}_ci_low", title=y_title), y2=f"{y}_ci_high")
    points = base.mark_point(filled=True, size=90).encode(
        shape="marker:N",
        tooltip=["label", alt.Tooltip(x, format=".3f"), alt.Tooltip(y, format=".3f")])
    return (x_bars + y_bars + points).properties(height=260)
