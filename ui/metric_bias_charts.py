"""Plotly figures for the Metric bias page (pure functions of DataFrames; no Streamlit)."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from fairness_core.metrics import METRICS

FAMILY_LABEL = {"n-gram": "n-gram-based", "matching": "PLM-based", "generation": "PLM-based",
                "regression": "PLM-based", "translation": "PLM-based", "stored": "stored scores"}


def base_metric(metric: str) -> str:
    return metric.split(".")[0]


def family_of(metric: str) -> str:
    """The registered metric's family; a name no metric has is a stored score column."""
    info = METRICS.get(base_metric(metric))
    return info.family if info else "stored"


def bias_bars(table: pd.DataFrame) -> go.Figure:
    """Paper Fig. 2: bias per attribute and metric, n-gram and PLM-based metrics side by side."""
    frame = table.copy()
    frame["paradigm"] = frame["metric"].map(lambda m: FAMILY_LABEL[family_of(m)])
    frame["err_plus"] = frame["ci_high"] - frame["bias"]
    frame["err_minus"] = frame["bias"] - frame["ci_low"]
    figure = px.bar(frame, x="attribute", y="bias", color="metric", barmode="group", facet_col="paradigm",
                    error_y="err_plus", error_y_minus="err_minus",
                    labels={"bias": "bias (0-100 scale)", "attribute": "sensitive attribute"},
                    category_orders={"paradigm": ["n-gram-based", "PLM-based", "stored scores"]})
    figure.update_yaxes(matches=None, showticklabels=True)  # the paper also uses separate y ranges
    figure.update_layout(height=380, margin={"t": 40, "b": 10})
    return figure


def normalisation_ranks(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Rank of each metric (1 = most biased) per normalisation, averaged over attributes."""
    columns = {}
    for name, table in tables.items():
        primary = table[~table["metric"].str.contains(".", regex=False)]
        ranks = primary.groupby("attribute")["bias"].rank(ascending=False, method="min")
        columns[f"rank ({name})"] = ranks.groupby(primary["metric"]).mean()
    return pd.DataFrame(columns).sort_values(f"rank ({next(iter(tables))})")


def prf_bars(table: pd.DataFrame) -> go.Figure | None:
    """Paper Fig. 5: precision vs recall vs F bias for metrics that have all three."""
    frame = table[table["metric"].map(lambda m: METRICS.get(base_metric(m)) is not None
                                      and len(METRICS[base_metric(m)].outputs) > 1)].copy()
    if frame.empty:
        return None
    frame["output"] = frame["metric"].map(lambda m: m.split(".")[1] if "." in m else "F")
    frame["metric family"] = frame["metric"].map(base_metric)
    figure = px.bar(frame, x="metric family", y="bias", color="output", barmode="group", facet_col="attribute",
                    category_orders={"output": ["P", "R", "F"]},
                    labels={"bias": "bias (0-100 scale)", "output": "variant"})
    figure.update_layout(height=340, margin={"t": 40, "b": 10})
    return figure


def size_scatter(frame: pd.DataFrame) -> go.Figure:
    """Paper Fig. 4: bias against backbone size, one line per metric family."""
    figure = px.line(frame.sort_values("params_m"), x="params_m", y="bias", color="metric", markers=True,
                     hover_data=["model"], log_x=True,
                     labels={"params_m": "backbone parameters (millions, log scale)", "bias": "bias (0-100)"})
    figure.update_layout(height=340, margin={"t": 20, "b": 10})
    return figure


def gap_histogram(pairs: pd.DataFrame) -> go.Figure:
    figure = px.histogram(pairs, x="gap", color="metric", nbins=40, barmode="overlay", opacity=0.6,
                          labels={"gap": "rescaled gap Ŝ1 − Ŝ2 (candidate 1 minus candidate 2)"})
    figure.update_layout(height=260, margin={"t": 10, "b": 10})
    return figure
