"""The visible glitches of issue 35 §6 in the metric-quality and mitigation charts, checked on the figures the
pages draw (pure functions of small frames built here)."""

from __future__ import annotations

import pandas as pd

from ui.metric_quality_charts import agreement_bars, bias_quality
from ui.mitigation_charts import loss_curve


def test_the_papers_reference_lines_are_named_in_the_legend_not_over_the_bars() -> None:
    """Their labels were written at the lines' tops, over the chrF bar and over each other."""
    table = pd.DataFrame({"label": ["BLEU", "ROUGE-1", "chrF"], "value": [0.3, 0.4, 0.5],
                          "ci_low": [0.2, 0.3, 0.4], "ci_high": [0.4, 0.5, 0.6]})
    paper = {"BERTScore, BERT-base": 0.465, "BARTScore, BART-base": 0.468}
    figure = agreement_bars(table, "pooled", paper)
    assert not figure.layout.annotations
    lines = [trace for trace in figure.data if trace.type == "scatter"]
    assert [trace.name for trace in lines] == ["BERTScore, BERT-base: 0.465 (paper)",
                                               "BARTScore, BART-base: 0.468 (paper)"]
    assert len({trace.line.dash for trace in lines}) == 2 and figure.layout.showlegend
    assert not agreement_bars(table, "pooled").layout.showlegend  # no reference lines: no legend


def test_metrics_at_the_same_point_are_told_apart_by_the_legend_not_written_over_each_other() -> None:
    """BLEU and ROUGE-1 both sit at bias 0 (they do not see identity words); their labels overlapped there."""
    points = pd.DataFrame({"label": ["BLEU", "ROUGE-1", "BERTScore"], "bias": [0.0, 0.0, 3.1],
                           "bias_ci_low": [0.0, 0.0, 2.0], "bias_ci_high": [0.0, 0.0, 4.0],
                           "agreement": [0.41, 0.42, 0.5], "agreement_ci_low": [0.3, 0.3, 0.4],
                           "agreement_ci_high": [0.5, 0.5, 0.6], "bias_source": "WinoBias", "rule": "pooled"})
    figure = bias_quality(points)
    assert [trace.mode for trace in figure.data] == ["markers"] * 3  # no text drawn on the plot
    assert all(trace.showlegend for trace in figure.data)
    assert len({trace.marker.symbol for trace in figure.data}) == 3


def test_the_loss_axis_reads_powers_of_ten_not_si_prefixes() -> None:
    """The log axis read "1f … 1μ" (plotly's SI prefixes) for 1e-15 … 1e-6."""
    curve = pd.DataFrame({"step": [1, 2, 3], "loss_debias": [1e-3, 1e-9, 1e-15], "loss_kd": [1e-4, 1e-6, 1e-8]})
    axis = loss_curve(curve).layout.yaxis
    assert axis.type == "log" and axis.exponentformat == "power"
    assert "log scale" in axis.title.text
