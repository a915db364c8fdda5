"""The worst groups of a run, found honestly (issue 46 §2): every cell over a run's attributes with its n, its value
and interval, its gap to the rest with a test at the design's unit, and Benjamini-Hochberg q-values. docs/slices.md.

The public face (the `slices` command and the decoding page import from here):

- `slice_run(store, run_id, by, measure, min_units, fdr, ...)` -> (`SliceTable`, record with the top cells'
  examples): a stored generation run
- `slice_cells(sums, attributes, ...)` -> `SliceTable`: the same on per-unit sums (simulations, other readers)
- `table_json(table, record)`, `table_text(table, record)`: the `--json` schema and the lines for people
- `SlicesError`: bad input, one sentence
"""

from fairness_core.slices.cells import (
    CELL_COLUMNS,
    DEFAULT_FDR,
    DEFAULT_MIN_UNITS,
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    SlicesError,
    SliceTable,
    check_options,
    slice_cells,
    wilson,
)
from fairness_core.slices.output import METHOD, table_json, table_text
from fairness_core.slices.run import ATTRIBUTES, DEFAULT_MEASURE, parse_by, slice_run

__all__ = [
    "ATTRIBUTES",
    "CELL_COLUMNS",
    "DEFAULT_FDR",
    "DEFAULT_MEASURE",
    "DEFAULT_MIN_UNITS",
    "DEFAULT_PERMUTATIONS",
    "DEFAULT_RESAMPLES",
    "METHOD",
    "SliceTable",
    "SlicesError",
    "check_options",
    "parse_by",
    "slice_cells",
    "slice_run",
    "table_json",
    "table_text",
    "wilson",
]
