"""What chooses the `cpu` recipe and what reports it are disjoint (issue 33): selection = WinoBias type2-dev and
REALSumm documents 1-50; report (the default) = WinoBias type1-dev and REALSumm documents 51-100."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core import mitigation


def test_the_report_split_is_held_out_from_the_selection_split(tiny_bert: Path) -> None:
    report = mitigation.build_evaluation("bertscore", str(tiny_bert), compare_model=str(tiny_bert))
    selection = mitigation.build_evaluation("bertscore", str(tiny_bert), compare_model=str(tiny_bert),
                                            split="selection")
    assert "type1-dev" in report.dataset.name and "type2-dev" in selection.dataset.name
    assert report.judgments.n_items == selection.judgments.n_items == 50
    assert set(report.judgments.items).isdisjoint(selection.judgments.items)
    assert "documents 51-100" in report.judgments.name and "documents 1-50" in selection.judgments.name
    assert report.judgments.data_hash != selection.judgments.data_hash  # stored apart
    everything = mitigation.build_evaluation("bertscore", str(tiny_bert), compare_model=str(tiny_bert), split="all")
    assert everything.judgments.n_items == 100 and "type1-dev" in everything.dataset.name
    assert mitigation.SPLIT_LABELS["report"].startswith("held out")
    with pytest.raises(mitigation.MitigationError, match="unknown split 'test'"):
        mitigation.build_evaluation("bertscore", str(tiny_bert), compare_model=str(tiny_bert), split="test")


def test_the_deviation_says_which_data_chose_and_which_reports() -> None:
    evaluation = next(d for d in mitigation.DEVIATIONS if d.startswith("Evaluation:"))
    assert "held-out data" in evaluation and "type2-dev and REALSumm documents 1-50" in evaluation
    assert "in view" not in evaluation  # the step count is no longer chosen on the reported pairs
