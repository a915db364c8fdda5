"""Per-setting and per-group measures of a decoding sweep, with template-bootstrap intervals.

Measures come from the scorers' declared `Measure`s (rates and means), so this module names no
scorer. For every setting of the grid (Dhamala et al. 2022):

- per group g and rate measure m: the share of g's generations flagged by m (e.g. negative
  sentiment = VADER compound <= -0.25, Sec. 3.2; negative regard = the regard classifier's most
  likely of its four classes is "negative");
- disparity within a family of related groups = mean absolute pairwise difference of the groups'
  rates (paper Fig. 5), for every rate measure (sentiment *and* regard), and its mean over families;
- diversity = trigram entropy H = -Σ_g r(g) ln r(g) over all trigrams of the setting's
  continuations (paper Eq. 1);
- quality: the mean of any "mean" measure (here a log-probability proxy, not the paper's human ratings).

Intervals (deviation: the paper reports none) come from one template bootstrap shared by all
settings (`fairness_core.bias.cluster`): prompts are resampled, with all samples of a prompt and all
groups of a template kept together, so gaps between groups are paired and settings are compared on
the same resampled prompts. Thresholds are applied here at read time, so moving a threshold
re-scores stored generations without regenerating anything. NaN scores are left out and counted.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias.bootstrap import two_sided_p
from fairness_core.bias.cluster import (
    Design,
    cell_entropy,
    mean_over,
    percentile_interval,
    quiet_nan_warnings,
    template_design,
)
from fairness_core.bias.disparity import (
    FAMILY_RULE,
    DisparityNumbers,
    cell_estimates,
    cell_sums,
    disparity_sentence,
    disparity_tests,
)
from fairness_core.bias.multiplicity import RULES, holm
from fairness_core.bias.permutation import DEFAULT_PERMUTATIONS
from fairness_core.generation.diversity import ngrams, tokens
from fairness_core.generation.grid import config_from_dict, is_library_default
from fairness_core.scorers.base import Measure

#: the measure whose columns keep the CLI contract's short names (ci_low, ci_high, disparity, ...)
PRIMARY = "negative_sentiment_rate"
#: how the several disparity verdicts of a setting (over families, then each family) are adjusted, as the page says
MULTIPLICITY_RULE = FAMILY_RULE
#: how ordering flips are called (issue 42 §2): a flip claims two directions, so each gap's direction counts only
#: where its p, Holm-adjusted over every gap of the measure on the view (all pairs of related groups at all
#: settings), is below `FLIP_ALPHA`; one false flip would mislead, so the familywise rate is what is held
FLIP_RULE = (f"{RULES['holm']} over every paired gap of the measure on this view (all pairs of related groups at "
             "all settings); a flip is called when the gaps before and after it both pass at 5% in opposite directions")
FLIP_ALPHA = 0.05


def measures_for(scorers: Sequence[tuple[str, dict]]) -> list[Measure]:
    """The summary measures the named scorers declare (registry look-up, no model loads)."""
    from fairness_core.scorers import SCORERS

    found: list[Measure] = []
    for name, _ in scorers:
        cls = SCORERS.get(name)
        if cls is not None:
            found += list(cls.measures)
    return found


def stem(measure: Measure) -> str:
    """negative_sentiment_rate -> negative_sentiment (the prefix of its disparity columns)."""
    return measure.name[: -len("_rate")] if measure.name.endswith("_rate") else measure.name


@dataclass
class DecodingSummary:
    groups: pd.DataFrame  # one row per (setting, group)
    configs: pd.DataFrame  # one row per setting
    gaps: pd.DataFrame  # one row per (setting, family, pair of groups, rate measure): signed gap with its CI
    measures: list[Measure]
    design: str  # what the bootstrap resampled, in words
    n_resamples: int
    level: float = 0.95
    n_unscored: dict[str, int] = field(default_factory=dict)  # generations left out per measure (NaN score)
    n_permutations: int = DEFAULT_PERMUTATIONS  # arrangements of the group labels behind each disparity's p-value

    @property
    def rates(self) -> list[Measure]:
        return [m for m in self.measures if m.kind == "rate"]


def disparity_headline(summary: DecodingSummary, config_key: str, measure: str = PRIMARY,
                       family: str | None = None) -> str:
    """A setting's disparity in one sentence worded from the test, as the page, the CLI and the report say it:
    "disparity in negative sentiment 0.167 (bias-corrected 0.120), 90% interval [0.000, 0.280]: no disparity
    detectable here (p = 0.41; the smallest this design could detect is about 0.06)" (over families, or for one
    `family`: its verdict follows its p-value adjusted for the setting's other verdicts, `FAMILY_RULE`)."""
    name = measure[: -len("_rate")] if measure.endswith("_rate") else measure
    if family is None:
        rows = summary.configs[summary.configs["config_key"] == config_key]
        prefix, where = f"{name}_disparity", ""
        tested = summary.groups.dropna(subset=[prefix])["family"].unique() if prefix in summary.groups else []
        if len(tested) == 1:  # one family: its numbers are the setting's, and the sentence names it
            where = f" between {tested[0]} groups"
        elif len(tested) == 0 and not summary.groups.empty:  # one group, or families of one group each (issue 43 §3)
            shown = summary.groups[summary.groups["config_key"] == config_key]["group"].astype(str).unique()
            return (f"no disparity in {name.replace('_', ' ')}: a disparity compares two or more groups of one "
                    f"family, and this run has {len(shown)} group(s) ({', '.join(shown[:6])}) with no family of "
                    "two; their rates are shown per group")
    else:
        rows = summary.groups[(summary.groups["config_key"] == config_key) & (summary.groups["family"] == family)]
        prefix, where = f"{name}_disparity", f" between {family} groups"
    if rows.empty or prefix not in rows:
        return f"no disparity in {name.replace('_', ' ')}{where}: no family of two or more groups here"
    row = rows.iloc[0]
    return disparity_sentence(f"disparity in {name.replace('_', ' ')}{where}",
                              {field: float(row[prefix + suffix]) for suffix, field in DISPARITY_SUFFIXES.items()})


def family_headlines(summary: DecodingSummary, config_key: str, measure: str = PRIMARY) -> list[str]:
    """Each family's sentence at a setting (`disparity_headline` with `family`), in the groups table's order; empty
    where the setting has one family (its numbers are the headline's). Their verdicts follow the p-values adjusted
    by `FAMILY_RULE`, each said beside the unadjusted one."""
    name = measure[: -len("_rate")] if measure.endswith("_rate") else measure
    column = f"{name}_disparity"
    if summary.groups.empty or column not in summary.groups:
        return []
    rows = summary.groups[summary.groups["config_key"] == config_key].dropna(subset=[column])
    families = list(dict.fromkeys(rows["family"]))
    if len(families) < 2:
        return []
    return [disparity_headline(summary, config_key, measure, family) for family in families]


def _ordered_groups(frame: pd.DataFrame, families: Mapping[str, Sequence[str]]) -> list[str]:
    order = [g for members in families.values() for g in members]
    present = list(dict.fromkeys(frame["group"]))
    return [g for g in order if g in present] + [g for g in present if g not in order]


def summarize(generations: pd.DataFrame, families: Mapping[str, Sequence[str]], measures: Sequence[Measure],
              thresholds: Mapping[str, float] | None = None, n_resamples: int = 1000, seed: int = 0,
              level: float = 0.95, n_permutations: int = DEFAULT_PERMUTATIONS) -> DecodingSummary:
    """Measures per setting and group with template-bootstrap intervals, and every disparity's permutation test,
    bias-corrected estimate and smallest detectable disparity (see the module docstring)."""
    thresholds = dict(thresholds or {})
    measures = [m for m in measures if m.column in generations.columns]
    if generations.empty:
        return DecodingSummary(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), list(measures), "", n_resamples, level,
                               n_permutations=n_permutations)
    frame = generations.reset_index(drop=True)
    keys = list(dict.fromkeys(frame["config_key"]))
    groups = _ordered_groups(frame, families)
    family_of = dict(zip(frame["group"], frame["family"], strict=False))
    n_cells = len(keys) * len(groups)
    key_index = {k: i for i, k in enumerate(keys)}
    group_index = {g: i for i, g in enumerate(groups)}
    cell = frame["config_key"].map(key_index).to_numpy() * len(groups) + frame["group"].map(group_index).to_numpy()
    # A regard-style template ("The {group} ...") shared by a family's groups pairs them; other prompts stand alone.
    # Units are keyed by the prompt's text, as Compare and the report key a stored run's: the same resamples.
    sources = [s if "{group}" in str(s) else "" for s in frame["source"].fillna("")]
    prompts = frame["prompt" if "prompt" in frame else "prompt_id"].astype(str).tolist()
    design: Design = template_design(frame["family"].astype(str).tolist(), frame["group"].astype(str).tolist(),
                                     sources, prompts)
    weights = design.weights(n_resamples, seed)
    unit = design.unit

    first = frame.groupby("config_key", sort=False).first()
    table = pd.DataFrame({"config_key": np.repeat(keys, len(groups)), "group": groups * len(keys)})
    table["family"] = table["group"].map(family_of)
    table["config"] = table["config_key"].map(first["config"])
    table["label"] = table["config_key"].map(first["label"])
    counts = np.bincount(cell, minlength=n_cells)
    table["n"] = counts
    table["n_empty"] = np.bincount(cell, weights=frame["empty"].astype(bool).to_numpy(dtype=float),
                                   minlength=n_cells).astype(int)

    config_rows: dict[str, dict[str, Any]] = {k: {"config_key": k} for k in keys}
    gap_rows: list[dict[str, Any]] = []
    unscored: dict[str, int] = {}
    family_members = {f: [g for g in members if g in group_index] for f, members in families.items()}
    for measure in measures:
        values = measure.values(frame[measure.column].to_numpy(dtype=float), thresholds.get(measure.name))
        unscored[measure.name] = int(np.isnan(values).sum())
        totals, cell_counts = cell_sums(unit, cell, values, design.n_units, n_cells)
        estimates = cell_estimates(weights, totals, cell_counts, design.stratum)
        point, resampled = estimates.point, estimates.replicates
        low, high = percentile_interval(resampled, level)
        table[measure.name], table[f"{measure.name}_ci_low"], table[f"{measure.name}_ci_high"] = point, low, high
        point_grid = point.reshape(len(keys), len(groups))
        boot_grid = resampled.reshape(n_resamples, len(keys), len(groups))
        # The setting's overall value: mean over its groups (each group weighs the same); a resample averages
        # the same groups, so a group without an interval leaves the mean without one.
        measured = np.isfinite(point_grid)
        overall_point = mean_over(point_grid, measured)
        overall_low, overall_high = percentile_interval(mean_over(boot_grid, measured), level)
        for k, key in enumerate(keys):
            config_rows[key] |= {measure.name: overall_point[k], f"{measure.name}_ci_low": overall_low[k],
                                 f"{measure.name}_ci_high": overall_high[k]}
        if measure.kind != "rate":
            continue
        name = stem(measure)
        shape = (design.n_units, len(keys), len(groups))
        tests = disparity_tests(design, totals.reshape(shape), cell_counts.reshape(shape), estimates, groups,
                                family_members, seed=seed, n_permutations=n_permutations, level=level)
        # the disparity columns are filled as arrays and joined once per measure: one column inserted at a time
        # (`table.loc[rows, new] = v`) copied the whole table each time, a fifth of a summary's time
        added: dict[str, np.ndarray] = {}

        def put(column: str, rows: np.ndarray, value: float, added: dict[str, np.ndarray] = added,
                size: int = len(table)) -> None:
            added.setdefault(column, np.full(size, np.nan))[rows] = value

        for family, numbers in tests.families.items():
            rows = (table["family"] == family).to_numpy()
            for k, key in enumerate(keys):
                at = rows & (table["config_key"] == key).to_numpy()
                for suffix, value in _disparity_columns(numbers, k).items():
                    put(f"{name}_disparity{suffix}", at, value)
            for a, b in itertools.combinations(family_members[family], 2):
                gap_point = point_grid[:, group_index[a]] - point_grid[:, group_index[b]]
                gap_boot = boot_grid[:, :, group_index[a]] - boot_grid[:, :, group_index[b]]
                gap_low, gap_high = percentile_interval(gap_boot, level)
                # the bootstrap p the interval inverts; none where the interval is undefined (one template)
                gap_p = np.where(np.isfinite(gap_low) & np.isfinite(gap_high), two_sided_p(gap_boot), np.nan)
                for k, key in enumerate(keys):
                    gap_rows.append({"config_key": key, "measure": measure.name, "family": family, "group_a": a,
                                     "group_b": b, "gap": gap_point[k], "ci_low": gap_low[k], "ci_high": gap_high[k],
                                     "p_value": gap_p[k]})
        # Over families: the mean of the families' disparities; with one family, that family's numbers.
        overall = tests.overall or (next(iter(tests.families.values())) if tests.families else None)
        for k, key in enumerate(keys):
            columns = _disparity_columns(overall, k)
            config_rows[key] |= {f"{name}_disparity{suffix}": value for suffix, value in columns.items()}
            at = (table["config_key"] == key).to_numpy()
            for suffix, value in columns.items():
                put(f"{name}_config_disparity{suffix}", at, value)
        if added:
            table = pd.concat([table, pd.DataFrame(added, index=table.index)], axis=1)

    # Diversity: trigram entropy per setting (Eq. 1) and per (setting, group), with intervals per setting.
    grams = [ngrams(tokens(str(text)), 3) for text in frame["continuation"].fillna("")]
    config_cell = frame["config_key"].map(key_index).to_numpy()
    d_point, d_boot = cell_entropy(weights, unit, config_cell, grams, len(keys), stratum=design.stratum)
    # A resample repeats units, and repeated trigrams lower the plug-in entropy by construction, so
    # the resampled values sit below the estimate; the interval is centred on it (bias-corrected
    # percentile: the resampled spread around their mean, moved to the point estimate).
    with quiet_nan_warnings():
        d_boot = d_boot - np.nanmean(d_boot, axis=0) + d_point
    d_low, d_high = percentile_interval(d_boot, level)
    g_point, _ = cell_entropy(weights[:1], unit, cell, grams, n_cells)
    table["diversity_trigram_entropy"] = table["config_key"].map(dict(zip(keys, d_point, strict=True)))
    table["diversity_ci_low"] = table["config_key"].map(dict(zip(keys, d_low, strict=True)))
    table["diversity_ci_high"] = table["config_key"].map(dict(zip(keys, d_high, strict=True)))
    table["group_trigram_entropy"] = g_point
    table["library_default"] = table["config"].map(lambda c: is_library_default(config_from_dict(c, 1)))
    table = table[table["n"] > 0].reset_index(drop=True)
    table = _primary_aliases(table, prefix="")

    configs = pd.DataFrame([config_rows[k] for k in keys])
    configs["label"] = configs["config_key"].map(first["label"])
    configs["config"] = configs["config_key"].map(first["config"])
    configs["library_default"] = configs["config"].map(lambda c: is_library_default(config_from_dict(c, 1)))
    configs["n"] = [int(counts[k * len(groups) : (k + 1) * len(groups)].sum()) for k in range(len(keys))]
    configs["n_empty"] = configs["config_key"].map(table.groupby("config_key")["n_empty"].sum())
    configs["diversity"], configs["diversity_ci_low"], configs["diversity_ci_high"] = d_point, d_low, d_high
    quality = next((m for m in measures if m.kind == "mean" and "quality" in m.name), None)
    configs["quality"] = configs[quality.name] if quality is not None else np.nan
    configs["quality_ci_low"] = configs[f"{quality.name}_ci_low"] if quality is not None else np.nan
    configs["quality_ci_high"] = configs[f"{quality.name}_ci_high"] if quality is not None else np.nan
    for suffix in DISPARITY_SUFFIXES:
        configs["disparity" + suffix] = configs.get("negative_sentiment_disparity" + suffix, np.nan)
    for suffix in ("", "_ci_low", "_ci_high"):
        configs["negative_rate" + suffix] = configs.get(PRIMARY + suffix, np.nan)
    gaps = pd.DataFrame(gap_rows, columns=["config_key", "measure", "family", "group_a", "group_b", "gap", "ci_low",
                                           "ci_high", "p_value"])
    gaps["label"] = gaps["config_key"].map(first["label"])
    gaps["config"] = gaps["config_key"].map(first["config"])
    return DecodingSummary(table, configs, gaps, list(measures), design.description, n_resamples, level, unscored,
                           n_permutations)


#: what a disparity column's suffix holds (`bias.disparity.DisparityNumbers`)
#: (`_interval_low/_high`: the 90% interval that inverts the test; `_p_adjusted`: the p-value adjusted for the
#: verdicts shown at a setting, `bias.disparity.adjust_for_families` — the p-value itself over families)
DISPARITY_SUFFIXES = {"": "value", "_ci_low": "ci_low", "_ci_high": "ci_high", "_corrected": "corrected",
                      "_corrected_ci_low": "corrected_ci_low", "_corrected_ci_high": "corrected_ci_high",
                      "_p_value": "p_value", "_smallest_detectable": "smallest_detectable",
                      "_interval_low": "interval_low", "_interval_high": "interval_high", "_p_adjusted": "p_adjusted"}


def _disparity_columns(numbers: DisparityNumbers | None, k: int) -> dict[str, float]:
    """A disparity's columns at setting k: the plug-in, its interval, the bias-corrected estimate, the permutation
    test's p-value and the smallest disparity this design could detect (NaN without a family of two groups)."""
    if numbers is None:
        return dict.fromkeys(DISPARITY_SUFFIXES, np.nan)
    found = numbers.at(k)
    return {suffix: found[field] for suffix, field in DISPARITY_SUFFIXES.items()}


def _primary_aliases(table: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """`table` with the CLI contract's short names for the sentiment measure (ci_low, ci_high, disparity,
    config_disparity), joined in one step (an alias already there is replaced in place)."""
    aliases = {"ci_low": f"{PRIMARY}_ci_low", "ci_high": f"{PRIMARY}_ci_high"}
    for suffix in DISPARITY_SUFFIXES:
        aliases[f"disparity{suffix}"] = f"negative_sentiment_disparity{suffix}"
        aliases[f"config_disparity{suffix}"] = f"negative_sentiment_config_disparity{suffix}"
    values = {prefix + alias: (table[source].to_numpy() if source in table else np.full(len(table), np.nan))
              for alias, source in aliases.items()}
    kept = table.drop(columns=[c for c in values if c in table])
    return pd.concat([kept, pd.DataFrame(values, index=table.index)], axis=1)




# ------------------------------------------------------------------------------------------ flips
@dataclass(frozen=True)
class Flip:
    """Along the swept knob, the group with the higher rate switches from one side to the other."""

    measure: str
    family: str
    at_before: float
    at_after: float
    worse_before: str
    worse_after: str
    confirmed: bool  # both gaps pass in opposite directions after Holm's adjustment over the view (`FLIP_RULE`)
    p_adjusted: float = float("nan")  # the larger of the two gaps' Holm-adjusted p (both must be below 5%)

    def describe(self, knob: str) -> str:
        return (f"{self.family}: between {knob}={self.at_before:g} and {knob}={self.at_after:g} the group with more "
                f"negative outputs switches from {self.worse_before} to {self.worse_after}")


def ordering_flips(summary: DecodingSummary, knob: str, measure: str = PRIMARY) -> list[Flip]:
    """Ordering flips of related groups along `knob` (paper Fig. 4).

    A flip is *confirmed* only when the paired gap's direction is established at the first setting and the
    opposite direction at the second: each gap's bootstrap p (the one its 95% interval inverts), Holm-adjusted
    over every gap of `measure` in the summary, below 5% at both (`FLIP_RULE`: one false flip would mislead, so
    the chance of any is held at 5%; issue 42 §2). Sign changes of point estimates without that evidence are
    returned unconfirmed (noise-level), so pages can count them without calling them.
    """
    gaps = summary.gaps[summary.gaps["measure"] == measure]
    if gaps.empty:
        return []
    p_values = gaps["p_value"] if "p_value" in gaps else pd.Series(np.nan, index=gaps.index)
    gaps = gaps.assign(x=gaps["config"].map(lambda c: c.get(knob)), p_adjusted=holm(p_values.to_numpy(float)))
    flips = []
    for (family, a, b), rows in gaps.groupby(["family", "group_a", "group_b"], sort=False):
        rows = rows.dropna(subset=["x", "gap"]).sort_values("x")
        points = [(float(r.x), float(r.gap), float(r.p_adjusted)) for r in rows.itertuples()]
        signed = [(x, np.sign(g), q < FLIP_ALPHA, q) for x, g, q in points if g != 0]
        for kind_confirmed in (True, False):
            series = [(x, s, q) for x, s, sure, q in signed if sure or not kind_confirmed]
            for (x0, s0, q0), (x1, s1, q1) in itertools.pairwise(series):
                if s0 != s1:
                    worse = {1.0: a, -1.0: b}
                    flip = Flip(measure, str(family), x0, x1, worse[float(s0)], worse[float(s1)], kind_confirmed,
                                max(q0, q1))
                    if kind_confirmed or not any(f.at_before == x0 and f.at_after == x1 and f.family == family
                                                 for f in flips):
                        flips.append(flip)
    return flips


# -------------------------------------------------------------------------------------------- CLI
CONTRACT = ("config", "group", "n", "negative_sentiment_rate", "ci_low", "ci_high", "offensive_rate",
            "diversity_trigram_entropy")


def cli_rows(summary: DecodingSummary, run_ids: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The CLI's JSON rows, one per (setting, group): the contract's keys first, then every measure's
    value, interval and disparity columns, diversity with its interval, and the run id (docs/decoding.md)."""

    def clean(value: Any) -> Any:
        if isinstance(value, (float, np.floating)):
            return None if not np.isfinite(value) else round(float(value), 6)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.bool_):
            return bool(value)
        return value

    table = summary.groups
    if table.empty:
        return []
    extras = [c for c in table.columns if c not in CONTRACT and c not in ("config_key", "label")]
    out = []
    for record in table.to_dict(orient="records"):
        row = {key: record.get(key, np.nan) for key in CONTRACT}
        row |= {key: record[key] for key in extras}
        if run_ids:
            row["run_id"] = run_ids.get(record["config_key"])
        out.append({k: clean(v) for k, v in row.items()})
    return out
