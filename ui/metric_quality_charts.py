"""Plotly figures for the Metric quality page (pure functions of DataFrames; no Streamlit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from ui.common import NEGATIVE_COLOR, NEUTRAL_COLOR, POSITIVE_COLOR, category_colors


def _errors(frame: pd.DataFrame, value: str, low: str, high: str) -> tuple[np.ndarray, np.ndarray]:
    """Plus/minus error bar lengths; 0 where there is no interval (NaN)."""
    plus = (frame[high] - frame[value]).to_numpy(dtype=float)
    minus = (frame[value] - frame[low]).to_numpy(dtype=float)
    return np.nan_to_num(plus), np.nan_to_num(minus)


SYMBOLS = {"spearman": "Spearman ρ", "pearson": "Pearson r", "kendall": "Kendall τ"}


def agreement_bars(table: pd.DataFrame, rule: str, paper: dict[str, float] | None = None,
                   statistic: str = "spearman", resample: str = "documents") -> go.Figure:
    """One horizontal bar per metric: the statistic with people (`value`) and its 95% interval, which resamples
    `resample` (documents, systems or both)."""
    frame = table.sort_values("value", na_position="first")
    plus, minus = _errors(frame, "value", "ci_low", "ci_high")
    symbol = SYMBOLS.get(statistic, statistic)
    figure = go.Figure(go.Bar(y=frame["label"], x=frame["value"], orientation="h", marker_color=POSITIVE_COLOR,
                              error_x={"type": "data", "array": plus, "arrayminus": minus, "color": NEUTRAL_COLOR},
                              hovertemplate=f"%{{y}}: {symbol.split()[-1]} = %{{x:.3f}}<extra></extra>",
                              name="computed here"))
    # the published values as dotted lines named in the legend: labels written at the lines' tops were drawn over
    # the top bar (chrF) and over each other, where nobody could read them
    labels = list(frame["label"])
    for (name, value), dash in zip((paper or {}).items(), ("dot", "dash", "dashdot", "longdash"), strict=False):
        figure.add_scatter(x=[value, value], y=[labels[0], labels[-1]] if labels else [0, 1], mode="lines",
                           line={"dash": dash, "color": NEUTRAL_COLOR, "width": 1.5},
                           name=f"{name}: {value:.3f} (paper)",
                           hovertemplate=f"{name} (paper): {symbol.split()[-1]} = {value:.3f}<extra></extra>")
    figure.update_layout(height=max(240, 44 * len(frame) + 120 + (24 * len(paper) if paper else 0)),
                         margin={"t": 20, "b": 10}, showlegend=bool(paper),
                         legend={"orientation": "h", "y": -0.25, "x": 0},
                         xaxis_title=f"{symbol} with people ({rule} rule), 95% interval over "
                                     f"{'documents and systems' if resample == 'both' else resample}", yaxis_title="")
    return figure


def scatter(frame: pd.DataFrame, metric: str, human_label: str) -> go.Figure:
    """Metric score vs human score, one point per candidate (or per system for the system rule); colour = how
    differently the metric ranks it (metric rank − human rank)."""
    shown = frame.copy()
    hover = [c for c in ("item_id", "system", "n_items") if c in shown.columns]
    figure = px.scatter(shown, x="score", y="human", color="rank_gap", hover_data=[*hover, "rank_gap"],
                        color_continuous_scale=[(0.0, NEGATIVE_COLOR), (0.5, "#dddddd"), (1.0, POSITIVE_COLOR)],
                        range_color=(-1, 1), opacity=0.75,
                        labels={"score": metric, "human": human_label,
                                "rank_gap": "metric rank − human rank"})
    figure.update_layout(height=440, margin={"t": 20, "b": 10})
    return figure


def bias_quality(points: pd.DataFrame) -> go.Figure:
    """Sun et al.'s two axes at once: gender bias (x, lower = fairer) and agreement with people (y, higher =
    better), each with its 95% interval. The best metrics sit top-left."""
    figure = go.Figure()
    colors = category_colors(points["label"])
    # each metric named in the legend (colour and shape), not beside its dot: metrics that do not see identity
    # words (BLEU, ROUGE-1) share x = 0 and their written names were drawn over each other
    symbols = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down")
    for index, row in enumerate(points.itertuples(index=False)):
        figure.add_scatter(
            x=[row.bias], y=[row.agreement], mode="markers",
            marker={"size": 12, "color": colors[str(row.label)], "symbol": symbols[index % len(symbols)]},
            name=str(row.label), showlegend=True,
            error_x={"type": "data", "array": [np.nan_to_num(row.bias_ci_high - row.bias)],
                     "arrayminus": [np.nan_to_num(row.bias - row.bias_ci_low)]},
            error_y={"type": "data", "array": [np.nan_to_num(row.agreement_ci_high - row.agreement)],
                     "arrayminus": [np.nan_to_num(row.agreement - row.agreement_ci_low)]},
            hovertemplate=(f"{row.label}<br>gender bias %{{x:.2f}} ({row.bias_source})<br>"
                           f"Spearman with people %{{y:.3f}} ({row.rule} rule)<extra></extra>"))
    figure.update_layout(height=460, margin={"t": 20, "b": 10}, legend={"title": "metric"},
                         xaxis_title="gender bias (Eq. 2, min-max; lower = fairer), 95% interval over pairs",
                         yaxis_title="Spearman ρ with people, 95% interval (resampling unit in the table)")
    return figure
