"""Plotly figures for the Template adaptation page (pure functions of DataFrames; no Streamlit)."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

SET_ORDER = ["original", "adapted", "noe"]
SET_NAMES = {"original": "original templates", "adapted": "adapted templates", "noe": "NOEs (domain sentences)"}


def vbcm_bars(frame: pd.DataFrame, title: str = "") -> go.Figure:
    """VBCM_g per group and set with 95% bootstrap intervals over templates (App. A.2, Eq. 1)."""
    data = frame.copy()
    data["set name"] = data["set"].map(SET_NAMES).fillna(data["set"])
    data["err_plus"] = (data["ci_high"] - data["vbcm"]).clip(lower=0)
    data["err_minus"] = (data["vbcm"] - data["ci_low"]).clip(lower=0)
    figure = px.bar(data, x="group", y="vbcm", color="set name", barmode="group", error_y="err_plus",
                    error_y_minus="err_minus", title=title,
                    category_orders={"set name": [SET_NAMES[s] for s in SET_ORDER]},
                    labels={"vbcm": "VBCM (1 = group scored like the background)", "group": "group"})
    figure.update_yaxes(range=vbcm_range(float(min(data["ci_low"].min(), data["vbcm"].min()))))
    figure.update_layout(height=380, margin={"t": 50 if title else 20, "b": 10})
    return figure


def vbcm_range(low: float) -> list[float]:
    """The VBCM axis: from a little below the lowest bar or interval end to 8% of the span above 1, the highest a
    VBCM can be, so an interval's cap at 1 is drawn inside the panel (at 1.0005 it sat on the top edge)."""
    bottom = max(0.0, low - 0.01) if low == low else 0.0  # NaN (no value): the whole scale
    return [bottom, 1 + 0.08 * (1 - bottom)]


def single_vbcm_bars(vbcm: dict[str, float], ci: dict[str, tuple[float, float]] | None = None) -> go.Figure:
    """One set's VBCM vector (the score-file calculator)."""
    data = pd.DataFrame({"group": list(vbcm), "vbcm": list(vbcm.values())})
    kwargs = {}
    if ci:
        data["err_plus"] = [max(ci[g][1] - v, 0.0) for g, v in vbcm.items()]
        data["err_minus"] = [max(v - ci[g][0], 0.0) for g, v in vbcm.items()]
        kwargs = {"error_y": "err_plus", "error_y_minus": "err_minus"}
    figure = px.bar(data, x="group", y="vbcm", labels={"vbcm": "VBCM"}, **kwargs)
    figure.update_yaxes(range=vbcm_range(float(data["vbcm"].min()) if not ci else min(c[0] for c in ci.values())))
    figure.update_layout(height=320, margin={"t": 20, "b": 10})
    return figure


def comparison_bars(table: pd.DataFrame, measure: str = "mae") -> go.Figure:
    """Figs. 4–5: MAE (or r) of original vs NOEs and adapted vs NOEs, per classifier and attribute, with the
    accepted templates' originals between them: MAE grows with noise, so the adapted bar is read against the
    originals of the same templates (issue 30), not only against all originals."""
    order = ["original vs NOEs", "original (accepted templates) vs NOEs", "adapted vs NOEs"]
    data = table[table["comparison"].isin(order)].dropna(subset=[measure]).copy()
    data["err_plus"] = (data[f"{measure}_ci_high"] - data[measure]).clip(lower=0)
    data["err_minus"] = (data[measure] - data[f"{measure}_ci_low"]).clip(lower=0)
    data["where"] = data["classifier"] + " · " + data["attribute"]
    label = "MAE against the NOEs (lower = closer)" if measure == "mae" else "Pearson r with the NOEs (higher = closer)"
    figure = px.bar(data, x="where", y=measure, color="comparison", barmode="group", error_y="err_plus",
                    error_y_minus="err_minus", labels={measure: label, "where": "classifier · attribute"},
                    category_orders={"comparison": order})
    figure.update_layout(height=360, margin={"t": 20, "b": 10})
    return figure
