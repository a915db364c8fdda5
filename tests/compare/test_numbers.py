"""Numbers for people: 4 significant digits and float noise as 0 in the report and on the page; JSON keeps all."""

from __future__ import annotations

import math
import re

import pandas as pd

from fairness_core.compare import build_report, compare_runs, display_numbers, format_number
from tests.compare.pipeline_runs import copy_store


def test_format_number_keeps_four_significant_digits_and_shows_noise_as_zero() -> None:
    assert format_number(0.123456) == "0.1235"
    assert format_number(-1.124e-16) == "0"
    assert format_number(-1.124e-16, scale=0.5) == "0"  # a scale below 1 is measured as 1
    assert format_number(3.2e-9) == "3.2e-09"  # small but far above noise: shown
    assert format_number(2e-10) == "2e-10"
    assert format_number(2e-10, scale=1e4) == "0"  # noise next to numbers of ten thousand
    assert format_number(12345.678) == "1.235e+04"
    assert format_number(float("nan")) == format_number(None) == format_number(float("inf")) == "—"
    assert format_number(-0.0) == "0"


def test_display_numbers_rounds_float_columns_against_the_frame_scale() -> None:
    frame = pd.DataFrame({"metric": ["a", "b"], "estimate": [0.123456, 0.5], "difference": [-1.124e-16, 0.0123456],
                          "n": [3, 4]})
    shown = display_numbers(frame)
    assert shown["estimate"].tolist() == [0.1235, 0.5]
    assert shown["difference"].tolist() == [0.0, 0.01235]
    assert shown["n"].tolist() == [3, 4] and shown["metric"].tolist() == ["a", "b"]
    assert frame["difference"].iloc[0] == -1.124e-16  # the input is untouched


def test_the_report_prints_no_float_noise_but_json_keeps_full_precision(pipeline_runs, tmp_path) -> None:
    # the reuse run read its top_p=0.95 setting back from single_095's rows: the same scores, summed in another
    # order, so every difference of that setting is 0 or float noise around it
    store = copy_store(pipeline_runs, tmp_path / "runs.duckdb")
    a, b = pipeline_runs.single_095, pipeline_runs.reuse
    rows = compare_runs(store, [a, b], n_resamples=50).rows
    same = rows[rows["arm_b"].str.endswith("top_p=0.95")]
    assert len(same) and (same["difference"].abs() < 1e-12).all()
    text = build_report(store, [a, b], n_resamples=50)
    cells = re.findall(r"<td>([^<]*)</td>", text)
    assert not [cell for cell in cells if re.fullmatch(r"-?[\d.]+e-1\d", cell)]  # no -1.1e-16 anywhere
    assert all(len(cell.lstrip("-").replace(".", "").lstrip("0")) <= 4 for cell in cells
               if re.fullmatch(r"-?\d+\.\d+", cell))  # at most 4 significant digits
    assert "<td>0</td>" in text  # the differences read 0
    records = compare_runs(store, [a, b], n_resamples=50).as_json()["rows"]
    estimates = [r["run_a"] for r in records if isinstance(r["run_a"], float) and math.isfinite(r["run_a"])]
    assert any(len(repr(abs(e)).replace(".", "").lstrip("0")) > 6 for e in estimates)  # JSON: every digit
