"""Compare stored runs: line them up on what they share, paired differences with intervals, per-example rows.

The public face of the package (pages and CLI commands import from here):

- `compare_runs(store, run_ids, by=None, metrics=None)` -> `Comparison` (`.rows`, `.as_json()`)
- `per_example(store, run_a, run_b, metric=None, filters=None, search="")` -> DataFrame, largest change first
- `fields(store, run_id)` -> the fields a run can be grouped or filtered by
"""

from fairness_core.compare.align import (
    NEGATIVE_SENTIMENT_THRESHOLD,
    CompareError,
    Comparison,
    compare_runs,
    field_names,
    unit_sums,
)
from fairness_core.compare.examples import example_json, fields, per_example

__all__ = [
    "NEGATIVE_SENTIMENT_THRESHOLD",
    "CompareError",
    "Comparison",
    "compare_runs",
    "example_json",
    "field_names",
    "fields",
    "per_example",
    "unit_sums",
]
