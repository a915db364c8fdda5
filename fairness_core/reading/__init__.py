"""Reading a stored run, and the run's own statistical settings: the one home below the studies that every view
of a run calls — the study pages' records, Compare and its report, `check`, the planner and `slices` — so that the
same run shows the same numbers everywhere (issue 42 §5-§6).

- `read_run(store, info, by=None, metrics=None, settings=None)` -> `RunRows`: the run's arms and its sums per (arm,
  cell, unit), its rates at the run's thresholds (`reading.rows`)
- `settings_of(store, info, thresholds=None, n_resamples=None)` -> `ReadSettings`: thresholds, resamples and seed
  (recorded beside the run by the study that read it, or given), and the design of its kind — estimator, unit,
  interval, test, α, multiplicity rule (`reading.settings`); `record_settings(store, run_ids, thresholds,
  n_resamples)` records them; `differing_thresholds` says when runs set side by side were read differently
- `design_numbers(rows)`: a decoding run's numbers as its page computes them (`reading.design`);
  `smallest_detectable(rows, arm, statistic, family, power)`: its one figure for what its test can detect
- `match_arms(a, b)` -> `Contrast`s: which arms of two runs are set side by side (`reading.arms`)
- `CellMatrix`, `poisson_weights`, `percentile_bounds`, `bootstrap_p` (`reading.intervals`); `group_statistic`,
  `family_mean` (`reading.statistics`): the paired bootstrap and the group statistics on its replicates
- `ReadError`: a run that cannot be read as asked, one sentence

This package is a service: it imports the base layer and the plug-ins, never a study, a page or another service.
"""

from fairness_core.reading.arms import MAX_ARM_PAIRS, Contrast, manifest_differences, match_arms, run_fields
from fairness_core.reading.design import (
    ALL_FAMILIES,
    TEST_COLUMNS,
    design_numbers,
    pair_null_means,
    reads_by_design,
    smallest_detectable,
)
from fairness_core.reading.intervals import (
    DEFAULT_RESAMPLES,
    LEVEL,
    CellMatrix,
    bootstrap_p,
    compare_cells,
    percentile_bounds,
    poisson_weights,
)
from fairness_core.reading.rows import (
    NEGATIVE_SENTIMENT_THRESHOLD,
    SEP,
    SUMMARY_KINDS,
    Arm,
    Coverage,
    GroupStatistic,
    ReadError,
    RunRows,
    covered_generations,
    default_keys,
    field_names,
    field_sql,
    is_cairo,
    legacy_rows,
    made_by,
    metric_label,
    read_run,
    run_filter,
    run_measures,
    setting_label,
    shared_units,
    source_metrics,
    stored_interval_estimates,
)
from fairness_core.reading.settings import (
    DEFAULTS,
    GIVEN,
    RECORDED,
    ReadSettings,
    SettingsError,
    differing_thresholds,
    record_settings,
    run_seed,
    settings_of,
)
from fairness_core.reading.statistics import family_mean, group_statistic

__all__ = [
    "ALL_FAMILIES",
    "DEFAULTS",
    "DEFAULT_RESAMPLES",
    "GIVEN",
    "LEVEL",
    "MAX_ARM_PAIRS",
    "NEGATIVE_SENTIMENT_THRESHOLD",
    "RECORDED",
    "SEP",
    "SUMMARY_KINDS",
    "TEST_COLUMNS",
    "Arm",
    "CellMatrix",
    "Contrast",
    "Coverage",
    "GroupStatistic",
    "ReadError",
    "ReadSettings",
    "RunRows",
    "SettingsError",
    "bootstrap_p",
    "compare_cells",
    "covered_generations",
    "default_keys",
    "design_numbers",
    "differing_thresholds",
    "family_mean",
    "field_names",
    "field_sql",
    "group_statistic",
    "is_cairo",
    "legacy_rows",
    "made_by",
    "manifest_differences",
    "match_arms",
    "metric_label",
    "pair_null_means",
    "percentile_bounds",
    "poisson_weights",
    "read_run",
    "reads_by_design",
    "record_settings",
    "run_fields",
    "run_filter",
    "run_measures",
    "run_seed",
    "setting_label",
    "settings_of",
    "shared_units",
    "smallest_detectable",
    "source_metrics",
    "stored_interval_estimates",
]
