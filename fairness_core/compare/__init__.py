"""Compare stored runs: line them up on what they share, paired differences with intervals, per-example rows.

The public face of the package (pages and CLI commands import from here):

- `compare_runs(store, run_ids, by=None, metrics=None)` -> `Comparison` (`.rows`, `.disparities()`, `.contrasts`,
  `.as_json()`): one run alone compares its settings among themselves
- `per_example(store, run_a, run_b=None, metric=None, filters=None, search="")` -> DataFrame, largest change first
- `fields(store, run_id)` -> the fields a run can be grouped or filtered by
- `build_report(store, run_ids)` -> self-contained HTML text; `write_report(store, run_ids, path)`
- `run_sql(store, sql, row_limit, timeout_s)` -> `SqlResult`: one read-only SELECT over the documented views
- `display_numbers(frame)`, `format_number(value, scale)`: numbers for people (4 significant digits, float noise
  as 0); outputs for programs keep full precision
"""

from fairness_core.bias.disparity import p_text  # how a p-value is written wherever a disparity is shown
from fairness_core.compare.align import (
    NEGATIVE_SENTIMENT_THRESHOLD,
    ROWS_RULE,
    CompareError,
    Comparison,
    Contrast,
    compare_runs,
    field_names,
    run_estimates,
    unit_sums,
)
from fairness_core.compare.examples import example_json, fields, per_example
from fairness_core.compare.figures import disparity_figure, disparity_rows
from fairness_core.compare.numbers import clean_number, display_numbers, format_number, number_scale
from fairness_core.compare.report import ReportError, build_report, write_report
from fairness_core.compare.sql import (
    DEFAULT_ROW_LIMIT,
    DEFAULT_TIMEOUT_S,
    SqlError,
    SqlResult,
    documented_views,
    run_sql,
)
from fairness_core.compare.wording import difference_sentence, gap_words, headline, pairing_summary, statistic_words

__all__ = [
    "DEFAULT_ROW_LIMIT",
    "DEFAULT_TIMEOUT_S",
    "NEGATIVE_SENTIMENT_THRESHOLD",
    "ROWS_RULE",
    "CompareError",
    "Comparison",
    "Contrast",
    "ReportError",
    "SqlError",
    "SqlResult",
    "build_report",
    "clean_number",
    "compare_runs",
    "difference_sentence",
    "disparity_figure",
    "disparity_rows",
    "display_numbers",
    "documented_views",
    "example_json",
    "field_names",
    "fields",
    "format_number",
    "gap_words",
    "headline",
    "number_scale",
    "p_text",
    "pairing_summary",
    "per_example",
    "run_estimates",
    "run_sql",
    "statistic_words",
    "unit_sums",
    "write_report",
]
