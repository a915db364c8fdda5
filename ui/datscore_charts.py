"""Plotly figures for the DATScore page (pure functions of DataFrames; no Streamlit)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go


def direction_bars(view: pd.DataFrame, label: str, weighted_mean: float | None = None) -> go.Figure:
    """One segment: a bar per direction (its Eq. 1 score), its corpus weight (Eq. 3) written on the bar; a dashed line
    at `weighted_mean` (DATScore ÷ Σ weights, where the segment sits among its directions) when given."""
    frame = view.copy()
    frame["weight_text"] = frame["weight"].map(lambda w: f"w={w:.2f}")
    figure = px.bar(frame, x="direction", y="score", color="weight", text="weight_text",
                    color_continuous_scale="RdBu", color_continuous_midpoint=0.0,
                    labels={"score": f"direction score ({label})", "weight": "weight (Eq. 3)"})
    figure.update_traces(textposition="outside", cliponaxis=False)
    if weighted_mean is not None and math.isfinite(weighted_mean):
        figure.add_hline(y=weighted_mean, line_dash="dash", annotation_text=f"weighted mean {weighted_mean:.3f}",
                         annotation_position="top left")  # (bottom right sat on the last bar)
    figure.update_layout(height=360, margin={"t": 30, "b": 10})
    return figure


def token_chart(tokens: pd.DataFrame) -> go.Figure:
    """Hypothesis tokens: log-probability (bars) and entropy weight w_t (Eq. 4, line) per position."""
    figure = go.Figure()
    figure.add_bar(x=tokens["position"], y=tokens["logprob"], name="log P(y_t | X, y_<t)",
                   hovertext=tokens["token"])
    figure.add_scatter(x=tokens["position"], y=tokens["entropy"], name="entropy weight w_t (Eq. 4)",
                       mode="lines+markers", yaxis="y2", hovertext=tokens["token"])
    figure.update_layout(height=320, margin={"t": 30, "b": 10},
                         xaxis={"tickmode": "array", "tickvals": list(tokens["position"]),
                                "ticktext": list(tokens["token"]), "title": "hypothesis token"},
                         yaxis={"title": "log-probability"},
                         yaxis2={"title": "entropy (nats)", "overlaying": "y", "side": "right"},
                         legend={"orientation": "h", "y": 1.15})
    return figure


def weights_bars(table: pd.DataFrame) -> go.Figure:
    figure = px.bar(table, x="direction", y="weight", labels={"weight": "one-vs-rest weight (Eq. 3)"})
    figure.update_layout(height=300, margin={"t": 20, "b": 10})
    return figure


def correlation_heatmap(corr: pd.DataFrame) -> go.Figure:
    figure = px.imshow(corr, zmin=-1, zmax=1, color_continuous_scale="RdBu", text_auto=".2f",
                       labels={"color": "Pearson r"})
    figure.update_layout(height=420, margin={"t": 20, "b": 10})
    return figure


def ablation_bars(rows: pd.DataFrame, reference: float | None, title: str) -> go.Figure:
    """Fig. 2 style: one horizontal bar per variant with its 95% CI; the dashed line is the full DATScore."""
    frame = rows.copy()
    frame["plus"] = frame["ci_high"] - frame["value"]
    frame["minus"] = frame["value"] - frame["ci_low"]
    figure = px.bar(frame, y="variant", x="value", orientation="h", error_x="plus", error_x_minus="minus",
                    labels={"value": title, "variant": ""})
    if reference is not None:
        figure.add_vline(x=reference, line_dash="dash", annotation_text="all 8 directions")
    figure.update_layout(height=max(240, 34 * len(frame) + 80), margin={"t": 30, "b": 10})
    return figure
