"""The metric-bias page's "pairs used and excluded" line (issue 43 §5: it was a table of bare zeros)."""

from __future__ import annotations

import pandas as pd

from ui.metric_bias_charts import pairs_used_sentence, pairs_used_table


def _cells(excluded: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"attribute": ["gender", "gender", "race", "race"],
                         "metric": ["BLEU", "BERTScore", "BLEU", "BERTScore"],
                         "n_pairs": [20 - e for e in excluded], "n_excluded": excluded})


def test_no_exclusion_is_one_sentence_not_a_table_of_zeros() -> None:
    sentence = pairs_used_sentence(_cells([0, 0, 0, 0]))
    assert sentence == "Every cell used all its pairs (20 per attribute); no score was non-finite."


def test_exclusions_name_how_many_cells_and_the_table_shows_only_those() -> None:
    cells = _cells([0, 2, 0, 0])
    assert pairs_used_sentence(cells).startswith("1 of 4 cells excluded pairs whose score is not a finite number")
    table = pairs_used_table(cells[cells["n_excluded"] > 0])
    assert table.loc["gender", "BERTScore"] == "18 used, 2 excluded"
    assert pairs_used_sentence(_cells([0, 0, 1, 0]).assign(n_pairs=[20, 20, 19, 20])).startswith("1 of 4")


def test_the_bias_chart_keeps_its_legend_off_the_axis_titles() -> None:
    """Below the plot the horizontal legend covered the facets' "sensitive attribute" titles (issue 43)."""
    from ui.metric_bias_charts import bias_bars

    cells = _cells([0, 0, 0, 0]).assign(bias=[0.0, 3.0, 0.0, 2.0], ci_low=[0.0, 2.0, 0.0, 1.0],
                                        ci_high=[0.0, 4.0, 0.0, 3.0])
    figure = bias_bars(cells)
    assert figure.layout.xaxis.title.text == "sensitive attribute"
    assert figure.layout.legend.orientation == "v" and figure.layout.legend.x > 1  # beside the plot, not under it
