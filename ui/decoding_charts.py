"""Charts of the decoding page (Altair): every rate, disparity, diversity and quality with its 95% interval.

Colours come from a colour-blind-safe palette (Okabe-Ito); labels from data (group names) are plain
Vega text, never HTML.
"""

from __future__ import annotations

import math
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


def _x(knob: str | None, settings: pd.Series | None = None) -> alt.X:
    """The knob's axis: padded, so the first and last settings' points and interval bars do not sit on the panel's
    side edges, with a tick at each setting of a small grid (padding alone added ticks whose labels collided)."""
    if knob:
        values = sorted({float(v) for v in settings if v is not None}) if settings is not None else []
        axis = alt.Axis(values=values) if 0 < len(values) <= 12 else alt.Axis()
        return alt.X("x", type="quantitative", title=knob, scale=alt.Scale(zero=False, padding=16), axis=axis)
    return alt.X("x", type="nominal", title="setting")


def group_rates(table: pd.DataFrame, value: str, title: str, knob: str | None) -> alt.FacetChart:
    """One line per group (shaded 95% interval), one panel per family (paper Fig. 3/4)."""
    groups = sorted(table["group"].unique()) if "group" in table else []
    # the same colour means the same group in every panel; the legend shows full-strength swatches (the shaded
    # band's 18% opacity faded them)
    color = alt.Color("group:N", scale=alt.Scale(domain=groups, range=GROUP_PALETTE[: max(len(groups), 1)]),
                      legend=alt.Legend(symbolOpacity=1, columns=1, title="group"))
    base = alt.Chart(table).encode(x=_x(knob, table.get("x")), color=color)
    # the band's top is a step below the panel's (see `disparity`): fitted to the data, a band to 0.5 met the frame
    y_scale = alt.Scale(domain=[0, axis_top([*table[value], *table[f"{value}_ci_high"]])], nice=False)
    band = base.mark_area(opacity=0.18).encode(y=alt.Y(f"{value}_ci_low", title=wrapped(title), scale=y_scale),
                                               y2=f"{value}_ci_high")
    lines = base.mark_line(point=True).encode(
        y=alt.Y(value, title=wrapped(title), scale=y_scale),
        tooltip=["label", "group", "n", alt.Tooltip(value, format=".3f"),
                 alt.Tooltip(f"{value}_ci_low", format=".3f", title="95% low"),
                 alt.Tooltip(f"{value}_ci_high", format=".3f", title="95% high")])
    return (band + lines).properties(height=230, width=300).facet(facet=alt.Facet("family:N", title=None),
                                                                   columns=2)


def disparity(frame: pd.DataFrame, value: str, title: str, knob: str | None, interval: str = "95%"
              ) -> alt.LayerChart:
    """Disparity per family and its mean over families, each with capped interval bars (paper Fig. 5); `interval`
    names them in the tooltips ("95%", or "90% (the test's)" for the interval that inverts the permutation test,
    which the decoding page draws so that the bars and the sentences above them are one interval, issue 42 §1).

    The y axis runs from 0 (a disparity is a mean absolute difference) to a step above the highest interval end,
    so no bar ends on the panel's edge: with the scale fitted to the data, a wide interval (e.g. [0, 0.5] from
    10 prompts per group) reached the frame and looked cut off. Caps mark where each interval ends. An interval
    that is missing or not finite is not drawn, and the chart's title names those settings."""
    low, high = f"{value}_ci_low", f"{value}_ci_high"
    finite = frame[[low, high]].apply(pd.to_numeric, errors="coerce").map(math.isfinite).all(axis=1)
    with_interval, without = frame[finite], frame[~finite]
    y_scale = alt.Scale(domain=[0, axis_top([*frame[value], *with_interval[high]])], nice=False)
    color = alt.Color("family:N", scale=alt.Scale(range=PALETTE))
    x = _x(knob, frame.get("x"))
    whiskers = alt.Chart(with_interval).encode(x=x, color=color)
    bars = whiskers.mark_rule(strokeWidth=2, opacity=0.6).encode(y=alt.Y(low, title=title, scale=y_scale), y2=high)
    caps = [whiskers.mark_tick(orient="horizontal", thickness=2, size=14, opacity=0.8).encode(
        y=alt.Y(end, title=title, scale=y_scale)) for end in (low, high)]
    lines = alt.Chart(frame).encode(x=x, color=color).mark_line(point=True).encode(
        y=alt.Y(value, title=title, scale=y_scale),
        tooltip=["label", "family", alt.Tooltip(value, format=".3f"),
                 alt.Tooltip(low, format=".3f", title=f"{interval} low"),
                 alt.Tooltip(high, format=".3f", title=f"{interval} high")])
    chart = alt.layer(bars, *caps, lines).properties(height=260)
    if not without.empty:
        missing = ", ".join(f"{row.label} ({row.family})" for row in without.itertuples())
        chart = chart.properties(title=alt.Title(wrapped(f"No {interval} interval drawn (missing or not finite) for: "
                                                         f"{missing}", 110), anchor="start", fontSize=12,
                                                 fontWeight="normal"))
    return chart


def axis_top(values: list[float], step: float = 0.05) -> float:
    """The top of a [0, top] axis: the next step above the largest finite value with room to spare, so the highest
    interval bar and its cap sit inside the panel (0.5 -> 0.55; 0.3 -> 0.35; 0 -> 0.05)."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    highest = max(finite, default=0.0)
    return round(math.floor(highest * 1.08 / step + 1) * step, 10)


def against(configs: pd.DataFrame, x: str, x_title: str, y: str, y_title: str) -> alt.LayerChart:
    """One point per setting with 95% interval bars on both axes (paper Fig. 1; Pareto view)."""
    x_scale, y_scale = _scale(configs, x), _scale(configs, y)
    base = alt.Chart(configs).encode(
        x=alt.X(x, title=x_title, scale=x_scale),
        y=alt.Y(y, title=y_title, scale=y_scale),
        color=alt.Color("marker:N", title="", scale=alt.Scale(range=PALETTE)))
    x_bars = base.mark_rule(opacity=0.6).encode(x=alt.X(f"{x}_ci_low", title=x_title, scale=x_scale), x2=f"{x}_ci_high")
    y_bars = base.mark_rule(opacity=0.6).encode(y=alt.Y(f"{y}_ci_low", title=y_title, scale=y_scale), y2=f"{y}_ci_high")
    points = base.mark_point(filled=True, size=90).encode(
        shape="marker:N",
        tooltip=["label", alt.Tooltip(x, format=".3f"), alt.Tooltip(y, format=".3f")])
    return (x_bars + y_bars + points).properties(height=260)


def _scale(frame: pd.DataFrame, column: str) -> alt.Scale:
    """An axis that holds every interval bar with room to spare: fitted to the data, a bar's end sat on the panel's
    edge, as if cut off there. A share (every value and bound in [0, 1]) runs from 0 to a step above the widest bar;
    any other measure (entropy, log-probability) is padded on both sides."""
    values = pd.to_numeric(pd.concat([frame[column], frame[f"{column}_ci_low"], frame[f"{column}_ci_high"]]),
                           errors="coerce")
    finite = values[values.map(math.isfinite)]
    if not finite.empty and finite.between(0, 1).all():
        return alt.Scale(domain=[0, axis_top(list(finite))], nice=False)
    return alt.Scale(zero=False, padding=12)
