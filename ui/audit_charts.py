"""Plotly figures for the Judge audit page (pure functions of DataFrames; no Streamlit)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.common import category_colors


def shift_chart(terms: pd.DataFrame, unit: str, counted: str = "templates", against: str = "the average identity"
                ) -> go.Figure:
    """Terms sorted by their mean score shift, with 95% intervals and a zero line; colour = group.

    `terms`: the audit's term rows (term, group, shift, ci_low, ci_high, n); `counted`: what n counts (templates,
    or answers for the identity-statement check); `against`: what the shift is measured from."""
    data = terms.dropna(subset=["shift"]).sort_values("shift")
    colors = category_colors(data["group"].drop_duplicates())
    figure = go.Figure()
    for group, part in data.groupby("group", sort=False):
        has_ci = part["ci_low"].notna()
        figure.add_trace(go.Scatter(
            x=part["shift"], y=part["term"], mode="markers", name=str(group),
            marker={"color": colors[str(group)], "size": 9},
            error_x={"type": "data", "symmetric": False, "visible": bool(has_ci.any()),
                     "array": (part["ci_high"] - part["shift"]).where(has_ci, 0).clip(lower=0),
                     "arrayminus": (part["shift"] - part["ci_low"]).where(has_ci, 0).clip(lower=0)},
            customdata=part[["group", "n"]].to_numpy(),
            hovertemplate="%{y}: %{x:+.3f} (%{customdata[0]}, %{customdata[1]} " + counted + ")<extra></extra>"))
    figure.add_vline(x=0, line_width=1, line_color="#444")
    figure.update_yaxes(categoryorder="array", categoryarray=list(data["term"]), title=None)
    figure.update_xaxes(title=f"score shift against {against} ({unit}); 0 = no shift", zeroline=False)
    figure.update_layout(height=max(320, 18 * len(data) + 90), margin={"t": 20, "b": 10},
                         legend={"title": "group"})
    return figure


#: the order-bias shares the chart shows, with the reader's words; each is 0.5 for a judge without position bias
#: except the flip share, which is 0 for a judge whose verdict never depends on the order
ORDER_BIAS_SHARES = {"flip_share": "verdict flips when the order swaps", "first_position_wins":
                     "judgments won by the first position", "x_preferred": "first system preferred (both orders)",
                     "x_balanced": "first system preferred (averaged over orders)"}


def order_bias_chart(payload: dict) -> go.Figure:
    """The order-bias check's four shares with their 95% intervals, and the 50% line (no position bias, no
    preference); `payload`: `audit.order_bias_audit(...).payload`."""
    names = list(ORDER_BIAS_SHARES)
    values = [payload[name]["value"] for name in names]
    figure = go.Figure(go.Scatter(
        x=values, y=[ORDER_BIAS_SHARES[name] for name in names], mode="markers", marker={"size": 10},
        error_x={"type": "data", "symmetric": False,
                 "array": [max(payload[n]["ci_high"] - payload[n]["value"], 0.0) for n in names],
                 "arrayminus": [max(payload[n]["value"] - payload[n]["ci_low"], 0.0) for n in names]},
        hovertemplate="%{y}: %{x:.3f}<extra></extra>", showlegend=False))
    figure.add_vline(x=0.5, line_width=1, line_dash="dot", line_color="#444")
    figure.update_xaxes(range=[-0.02, 1.02], title="share of pairs or judgments (95% interval over pairs); "
                                                     "dotted: 50%")
    figure.update_yaxes(autorange="reversed", title=None)
    figure.update_layout(height=260, margin={"t": 20, "b": 10})
    return figure
