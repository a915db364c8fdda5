"""Line stored runs up on what the question holds fixed, and contrast what differs, with paired intervals.

A run is read as arms (what it measured: a system = model × decoding setting × quantization; a metric output; the
run itself) with sums per (arm, cell, unit) (`fairness_core.reading`). A comparison sets arms side by side:

- two runs: their arms are matched on what they share — the same system (two runs of one system: other prompts,
  seeds or samples), else the same decoding setting (two models at one setting), else the same metric output;
  when nothing matches and one run has a single arm, that arm is set against each arm of the other (two settings
  of one model; a live move against each setting of a sweep); two runs of one arm each always meet;
- one run of several arms (a sweep): its first arm (the grid's first setting) against each of the others.

Each matched pair of arms is compared on the cells both have (metric × family × group; attribute; ...) and, for
generation runs, on the **disparity** itself (Dhamala et al. 2022: the mean absolute pairwise difference of the
groups' negative rates within a family, `<measure>_disparity`; CAIRO runs: Eq. 1, `<column>_eq1_bias`), plus its
mean over families (family "all families"). `difference` = b − a.

Intervals: one Poisson bootstrap over the union of both arms' units (`fairness_core.reading.intervals`): a unit
both arms scored (the same prompt or template, the same pair) gets the same weight on both sides, so what is hard
for both moves both estimates together (*paired*); a unit only one side has is resampled for that side alone, which
for two disjoint unit sets is the unpaired bootstrap. A disparity's replicate is computed from the same replicate's
group rates on each side, so the shared prompts are resampled once for both. `paired` is True when both arms scored
exactly the same units of the cell; `pairing` says it in words ("paired by 20 prompts", "8 of 10 prompts shared",
"unpaired: no prompt in common"). A cell with fewer than two units on a side has no interval.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias.cluster import mean_over
from fairness_core.bias.disparity import folded_correction
from fairness_core.bias.multiplicity import benjamini_hochberg
from fairness_core.reading import (
    DEFAULT_RESAMPLES,
    NEGATIVE_SENTIMENT_THRESHOLD,
    SEP,
    SUMMARY_KINDS,
    TEST_COLUMNS,
    Arm,
    CellMatrix,
    Contrast,
    ReadError,
    ReadSettings,
    RunRows,
    bootstrap_p,
    design_numbers,
    differing_thresholds,
    family_mean,
    field_names,
    field_sql,
    group_statistic,
    match_arms,
    pair_null_means,
    percentile_bounds,
    poisson_weights,
    read_run,
    run_filter,
    settings_of,
    shared_units,
    stored_interval_estimates,
)
from fairness_core.store import RunInfo, RunStore

__all__ = ["NEGATIVE_SENTIMENT_THRESHOLD", "CompareError", "Comparison", "Contrast", "compare_runs", "field_names",
           "field_sql", "get_runs", "match_arms", "run_estimates", "run_filter", "unit_sums"]

#: a comparison that cannot be made, one sentence: the seam's `ReadError` (a run that cannot be read is one too)
CompareError = ReadError

ALL_FAMILIES = "all families"
ROW_COLUMNS = ["run_a_id", "run_b_id", "arm_a", "arm_b", "contrast", "run_a", "run_a_low", "run_a_high", "run_b",
               "run_b_low", "run_b_high", "difference", "ci_low", "ci_high", "paired", "pairing", "unit",
               "n_units_a", "n_units_b", "n_shared",
               # a disparity's test on each side and the plug-in difference (`reading.design`; NaN elsewhere)
               *(f"run_{side}_{column}" for side in "ab" for column in TEST_COLUMNS), "difference_plug_in",
               # the difference's bootstrap p and its Benjamini-Hochberg q over every line-up of the comparison
               "p_difference", "q_difference"]
#: how Compare's verdicts on several line-ups are adjusted (docs/compare.md, docs/statistics.md)
ROWS_RULE = ("Benjamini-Hochberg q-values over every line-up of the comparison (false discovery rate 5%): a line-up "
             "is called different only where q < 0.05")


@dataclass
class Comparison:
    runs: list[dict[str, Any]]
    rows: pd.DataFrame
    keys: list[str]  # the cell key columns (after `metric`)
    message: str = ""  # a sentence when runs share nothing
    contrasts: list[Contrast] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was read (coverage, exclusions), in sentences
    #: per run id, what its request covers that the comparison lacks (how many, and why): the headline says it
    gaps: dict[str, list[str]] = field(default_factory=dict)
    #: per run id, what it was read with (thresholds, resamples, seed, and where they came from: `reading.settings`)
    settings: dict[str, ReadSettings] = field(default_factory=dict)

    @property
    def settings_note(self) -> str:
        """One sentence when the runs were read with different thresholds, else "" (the first of `notes` too)."""
        return differing_thresholds(self.settings)

    def as_json(self) -> dict[str, Any]:
        records = [{k: _json_value(v) for k, v in record.items()} for record in self.rows.to_dict(orient="records")]
        out: dict[str, Any] = {"runs": self.runs, "rows": records,
                               "contrasts": [c.as_json() for c in self.contrasts],
                               "settings": {run_id: s.as_json() for run_id, s in self.settings.items()}}
        if self.message:
            out["message"] = self.message
        if self.notes:
            out["notes"] = self.notes
        if self.gaps:
            out["gaps"] = [gap for gaps in self.gaps.values() for gap in gaps]
        return out

    def disparities(self) -> pd.DataFrame:
        """The rows of group statistics (disparities, Eq. 1 biases): what a decoding comparison shows first."""
        if self.rows.empty:
            return self.rows
        return self.rows[self.rows["metric"].str.endswith(("_disparity", "_eq1_bias"))].reset_index(drop=True)


def _json_value(value: Any) -> Any:
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


# -- runs --------------------------------------------------------------------------------------------------------
def get_runs(store: RunStore, run_ids: Sequence[str], minimum: int = 2) -> list[RunInfo]:
    """The runs named, in order; one sentence for a missing run or too few ids."""
    if len(run_ids) < minimum:
        raise CompareError("compare needs at least two run ids" if minimum == 2 else
                           f"compare needs at least {minimum} run id(s)")
    infos = []
    for run_id in run_ids:
        info = store.get_run(run_id) if store.path.exists() else None
        if info is None:
            raise CompareError(f"no run {run_id!r} in {store.path}")
        infos.append(info)
    return infos


# -- cells -------------------------------------------------------------------------------------------------------
def _cell_labels(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    """One text per cell (its keys joined), column-wise; a missing key (NULL) is its own value, never NaN."""
    if frame.empty:
        return pd.Series(dtype=str)
    text = [frame[key].astype("string").fillna("\u2205").astype(str) for key in keys]
    return text[0].str.cat(text[1:], sep=SEP) if len(text) > 1 else text[0]


def _pairing(n_a: int, n_b: int, shared: int, unit: str) -> str:
    units = f"{unit}s" if not unit.endswith("s") else unit
    if shared == n_a == n_b:
        return f"paired by {shared} {units if shared != 1 else unit}"
    if shared == 0:
        return f"unpaired: no {unit} in common"
    return f"partly paired: {shared} {units if shared != 1 else unit} in common ({n_a} and {n_b} in all)"


def compare_arms(a: RunRows, b: RunRows, contrast: Contrast, n_resamples: int, seed: int) -> pd.DataFrame:
    """Estimates of both arms, their difference and its interval, per shared cell and per group statistic."""
    keys = ["metric", *a.keys]
    sums_a = a.sums[a.sums["arm"] == contrast.arm_a.key]
    sums_b = b.sums[b.sums["arm"] == contrast.arm_b.key]
    if sums_a.empty or sums_b.empty:
        return pd.DataFrame()
    # units of the two runs that hold the same prompt are one unit, whatever each run called it (issue 43 §4)
    joined = shared_units(a, b)

    def units_of(frame: pd.DataFrame) -> pd.Series:
        unit = frame["unit"].astype(str)
        return unit.map(joined).fillna(unit) if joined else unit

    sums_a = sums_a.assign(cell=_cell_labels(sums_a, keys).to_numpy(), unit=units_of(sums_a))
    sums_b = sums_b.assign(cell=_cell_labels(sums_b, keys).to_numpy(), unit=units_of(sums_b))
    cells = sorted(set(sums_a["cell"]) & set(sums_b["cell"]))
    if not cells:
        return pd.DataFrame()
    sums_a, sums_b = sums_a[sums_a["cell"].isin(cells)], sums_b[sums_b["cell"].isin(cells)]
    units = pd.Index(sorted(set(sums_a["unit"]) | set(sums_b["unit"])))
    cell_index = pd.Index(cells)

    def matrix(frame: pd.DataFrame) -> CellMatrix:
        return CellMatrix.build(units.get_indexer(frame["unit"]), cell_index.get_indexer(frame["cell"]),
                                frame["total"].to_numpy(float), frame["n"].to_numpy(float), len(units), len(cells))

    weights = poisson_weights(len(units), n_resamples, np.random.default_rng(seed))
    matrix_a, matrix_b = matrix(sums_a), matrix(sums_b)
    rep_a, rep_b = matrix_a.replicates(weights), matrix_b.replicates(weights)
    est_a, est_b = matrix_a.estimates(), matrix_b.estimates()
    units_a = sums_a.groupby("cell")["unit"].agg(frozenset).reindex(cells)
    units_b = sums_b.groupby("cell")["unit"].agg(frozenset).reindex(cells)
    first = sums_a.drop_duplicates("cell").set_index("cell").loc[cells, keys].reset_index(drop=True)
    table = _rows(first, est_a, est_b, rep_a, rep_b, list(units_a), list(units_b), a.unit_name, contrast)
    derived = _statistics(a, b, first, est_a, est_b, rep_a, rep_b, list(units_a), list(units_b), contrast)
    out = pd.concat([derived, table], ignore_index=True) if not derived.empty else table
    out = _by_design(_by_design(out, a, contrast.arm_a, "run_a"), b, contrast.arm_b, "run_b")
    if "difference_plug_in" not in out:
        out["difference_plug_in"] = out["difference"]
    out["difference_plug_in"] = out["difference_plug_in"].fillna(out["difference"])
    return out


def _by_design(frame: pd.DataFrame, rows: RunRows, arm: Arm, side: str) -> pd.DataFrame:
    """A side's per-run columns as its study page computes them (`reading.design`): the design's estimate and
    interval per cell, and for a disparity its bias-corrected estimate, p-value and smallest detectable disparity."""
    for column in TEST_COLUMNS:
        if f"{side}_{column}" not in frame:
            frame[f"{side}_{column}"] = np.nan
    numbers = design_numbers(rows)
    if numbers is None or numbers.empty or not {"family", "group"} <= set(frame.columns):
        return frame
    mine = numbers[numbers["arm"] == arm.key]
    mine = mine.set_axis(pd.Index(_row_keys(mine)), axis=0)
    found = mine.reindex(pd.Index(_row_keys(frame)))
    there = found["estimate"].notna().to_numpy() | found["ci_low"].notna().to_numpy()
    for target, source in ((side, "estimate"), (f"{side}_low", "ci_low"), (f"{side}_high", "ci_high"),
                           *((f"{side}_{c}", c) for c in TEST_COLUMNS)):
        frame[target] = np.where(there, found[source].to_numpy(dtype=float), frame[target].to_numpy(dtype=float))
    return frame


def _row_keys(frame: pd.DataFrame) -> list[str]:
    return [SEP.join(str(v) if v is not None and v == v else "" for v in values)
            for values in zip(frame["metric"], frame["family"], frame["group"], strict=True)]


def _rows(first: pd.DataFrame, est_a: np.ndarray, est_b: np.ndarray, rep_a: np.ndarray, rep_b: np.ndarray,
          units_a: list[frozenset], units_b: list[frozenset], unit: str, contrast: Contrast) -> pd.DataFrame:
    n_a = np.array([len(u) for u in units_a])
    n_b = np.array([len(u) for u in units_b])
    shared = np.array([len(x & y) for x, y in zip(units_a, units_b, strict=True)])
    few_a, few_b = n_a < 2, n_b < 2  # one unit carries no spread to resample: its interval would collapse
    low_a, high_a = percentile_bounds(rep_a)
    low_b, high_b = percentile_bounds(rep_b)
    low, high = percentile_bounds(rep_b - rep_a)
    p_difference = bootstrap_p(rep_b - rep_a)
    return first.assign(
        run_a_id=contrast.arm_a.run_id, run_b_id=contrast.arm_b.run_id, arm_a=contrast.arm_a.label,
        arm_b=contrast.arm_b.label, contrast=contrast.label,
        run_a=est_a, run_a_low=np.where(few_a, np.nan, low_a), run_a_high=np.where(few_a, np.nan, high_a),
        run_b=est_b, run_b_low=np.where(few_b, np.nan, low_b), run_b_high=np.where(few_b, np.nan, high_b),
        difference=est_b - est_a, ci_low=np.where(few_a | few_b, np.nan, low),
        ci_high=np.where(few_a | few_b, np.nan, high), p_difference=np.where(few_a | few_b, np.nan, p_difference),
        paired=(shared == n_a) & (shared == n_b),
        pairing=[_pairing(int(x), int(y), int(s), unit) for x, y, s in zip(n_a, n_b, shared, strict=True)],
        unit=unit, n_units_a=n_a, n_units_b=n_b, n_shared=shared)


def _statistics(a: RunRows, b: RunRows, first: pd.DataFrame, est_a: np.ndarray, est_b: np.ndarray,
                rep_a: np.ndarray, rep_b: np.ndarray, units_a: list[frozenset], units_b: list[frozenset],
                contrast: Contrast) -> pd.DataFrame:
    """Rows of the group statistics (disparity per family and its mean over families) of both arms."""
    wanted = {s.name: s for s in a.statistics if s.name in {t.name for t in b.statistics}}
    if not wanted or "family" not in first.columns:
        return pd.DataFrame()
    records = []
    for statistic in wanted.values():
        rows = first.index[first["metric"] == statistic.metric]
        per_family: list[tuple[str, float, float, np.ndarray, np.ndarray, frozenset, frozenset]] = []
        # per family: a's corrected value and its replicates, then b's
        corrections: list[tuple[float, np.ndarray, float, np.ndarray] | None] = []
        for family in dict.fromkeys(first.loc[rows, "family"]):
            index = [i for i in rows if first.at[i, "family"] == family]
            if len(index) < 2 or family is None or family != family:
                continue
            values = []
            for est, rep, units, side, arm in ((est_a, rep_a, units_a, a, contrast.arm_a),
                                                (est_b, rep_b, units_b, b, contrast.arm_b)):
                present = np.isfinite(est[index])
                point = float(group_statistic(est[index], statistic.how, present))
                enough = all(len(units[i]) >= 2 for i in index)
                replicates = group_statistic(rep[:, index], statistic.how, present) if enough else \
                    np.full(rep.shape[0], np.nan)
                null_means = pair_null_means(side, arm.key, statistic.name, str(family))
                corrected = _corrected(est, rep, index, first, null_means, enough) if null_means else None
                values.append((point, replicates, frozenset().union(*(units[i] for i in index)), corrected))
            (pa, ra, ua, ca), (pb, rb, ub, cb) = values
            per_family.append((str(family), pa, pb, ra, rb, ua, ub))
            corrections.append((*ca, *cb) if ca is not None and cb is not None else None)
        if len(per_family) > 1:
            points_a = np.array([p[1] for p in per_family])
            points_b = np.array([p[2] for p in per_family])
            present_a, present_b = np.isfinite(points_a), np.isfinite(points_b)
            per_family.append((ALL_FAMILIES, float(family_mean(points_a, present_a)),
                               float(family_mean(points_b, present_b)),
                               family_mean(np.stack([p[3] for p in per_family], axis=-1), present_a),
                               family_mean(np.stack([p[4] for p in per_family], axis=-1), present_b),
                               frozenset().union(*(p[5] for p in per_family)),
                               frozenset().union(*(p[6] for p in per_family))))
            if all(c is not None for c in corrections):
                # the same order as each family's entry: a's corrected value, its replicates, then b's
                corrections.append((float(family_mean(np.array([c[0] for c in corrections]), present_a)),
                                    family_mean(np.stack([c[1] for c in corrections], axis=-1), present_a),
                                    float(family_mean(np.array([c[2] for c in corrections]), present_b)),
                                    family_mean(np.stack([c[3] for c in corrections], axis=-1), present_b)))
            else:
                corrections.append(None)
        for (family, pa, pb, ra, rb, ua, ub), correction in zip(per_family, corrections, strict=True):
            low_a, high_a = percentile_bounds(ra[:, None])
            low_b, high_b = percentile_bounds(rb[:, None])
            difference = pb - pa
            if correction is not None:  # the corrected estimates on both sides, and their replicates' interval
                ca, ra_corrected, cb, rb_corrected = correction
                difference = cb - ca
                resampled = (rb_corrected - ra_corrected)[:, None]
            else:
                resampled = (rb - ra)[:, None]
            low, high = percentile_bounds(resampled)
            p_difference = bootstrap_p(resampled)
            shared = len(ua & ub)
            record = {key: None for key in first.columns}
            record |= {"metric": statistic.name, "family": family, "run_a_id": contrast.arm_a.run_id,
                       "run_b_id": contrast.arm_b.run_id, "arm_a": contrast.arm_a.label, "arm_b": contrast.arm_b.label,
                       "contrast": contrast.label, "run_a": pa, "run_a_low": low_a[0], "run_a_high": high_a[0],
                       "run_b": pb, "run_b_low": low_b[0], "run_b_high": high_b[0], "difference": difference,
                       "difference_plug_in": pb - pa, "ci_low": low[0], "ci_high": high[0],
                       "p_difference": p_difference[0],
                       "paired": shared == len(ua) == len(ub),
                       "pairing": _pairing(len(ua), len(ub), shared, a.unit_name), "unit": a.unit_name,
                       "n_units_a": len(ua), "n_units_b": len(ub), "n_shared": shared}
            records.append(record)
    return pd.DataFrame(records)


def _corrected(est: np.ndarray, rep: np.ndarray, index: list[int], first: pd.DataFrame,
               null_means: dict[tuple[str, str], float], enough: bool) -> tuple[float, np.ndarray]:
    """A side's bias-corrected disparity of one family and its replicates: each pair's |Δ| (estimate, and each
    replicate's) corrected with the null mean of that side's own permutation test (`bias.disparity`), averaged over
    the pairs both of whose groups have an estimate."""
    groups = [str(first.at[i, "group"]) for i in index]
    point, replicates, present = [], [], []
    for x, y in itertools.combinations(sorted(range(len(index)), key=lambda g: groups[g]), 2):
        mean = null_means.get((groups[x], groups[y]), np.nan)
        point.append(folded_correction(np.abs(est[index[x]] - est[index[y]]), mean))
        replicates.append(folded_correction(np.abs(rep[:, index[x]] - rep[:, index[y]]), mean) if enough else
                          np.full(rep.shape[0], np.nan))
        present.append(np.isfinite(est[index[x]]) and np.isfinite(est[index[y]]))
    shown = np.array(present)
    return float(mean_over(np.array(point, dtype=float), shown)), mean_over(np.stack(replicates, axis=-1), shown)


# -- the comparison ----------------------------------------------------------------------------------------------
def _run_record(rows: RunRows) -> dict[str, Any]:
    from fairness_core.store.catalog import describe_run

    info = rows.info
    described = describe_run(info)
    return {"run_id": info.run_id, "kind": info.kind, "status": info.status, "dataset": described["dataset"],
            "version": described["version"], "what": described["what"], "model": described["model"],
            "unit": rows.unit_name, "rows": info.n_rows, "arms": [arm.label for arm in rows.arms]}


def _check_typed(store: RunStore) -> None:
    """A read-only store written before the typed views changed cannot be brought up to date: one sentence."""
    if store.path.exists() and not store.typed_views_current():
        import os

        if not os.access(store.path, os.W_OK):
            raise CompareError(f"run store {store.path} was written by an older version of the lab and is read-only "
                               "here, so its typed views cannot be brought up to date; make it writable (or copy it) "
                               "and open it again")


def unit_sums(store: RunStore, info: RunInfo, by: Sequence[str] | None = None,
              metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (arm, cell, unit) of a run: arm, metric, the cell keys, `unit`, `total` (Σ values), `n` (rows)."""
    return read_run(store, info, by, metrics).sums


def compare_runs(store: RunStore, run_ids: Sequence[str], by: Sequence[str] | None = None,
                 metrics: Sequence[str] | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0, thresholds: dict[str, float] | None = None) -> Comparison:
    """The first run against each of the others (or, for one run, its first arm against its others); differences
    are other − first. See the module docstring for what is matched and how the intervals pair.

    Each run is read with its own settings (`reading.settings_of`: the thresholds and resamples its study recorded
    beside it) unless `thresholds` are given for all; `n_resamples` and `seed` draw the differences' bootstrap. The
    comparison says what each run was read with, and first among its notes when the thresholds differ."""
    if not run_ids:
        raise CompareError("name one run of several settings or systems, or two or more runs, to compare")
    _check_typed(store)
    with store.reading():  # one connection for the look-ups and sums
        infos = get_runs(store, run_ids, minimum=1)
        summaries = [i for i in infos if i.kind in SUMMARY_KINDS]
        if summaries:
            raise CompareError(f"run {summaries[0].run_id} ({summaries[0].kind}) {SUMMARY_KINDS[summaries[0].kind]}")
        if len({i.run_id for i in infos}) < len(infos):
            raise CompareError("a run is named twice; name each run once (one run alone compares its settings "
                               "among themselves)")
        read = [read_run(store, info, by, metrics, settings_of(store, info, thresholds)) for info in infos]
    for other in read[1:]:
        if other.keys != read[0].keys:
            raise CompareError(
                f"run {other.info.run_id} ({other.info.kind}) is described by {', '.join(other.keys)} and run "
                f"{infos[0].run_id} ({infos[0].kind}) by {', '.join(read[0].keys)}, so nothing lines up; compare runs "
                "of the same kind of study, or group both by fields they share (--by on the command line)")
    contrasts = match_arms(read[0], None) if len(read) == 1 else \
        [c for other in read[1:] for c in match_arms(read[0], other)]
    unmatched = _unmatched(read, contrasts)
    by_run = {r.info.run_id: r for r in read}
    parts, silent = [], []
    for index, contrast in enumerate(contrasts):
        table = compare_arms(by_run[contrast.arm_a.run_id], by_run[contrast.arm_b.run_id], contrast, n_resamples,
                             seed + index + 1)
        (parts if not table.empty else silent).append(table if not table.empty else contrast)
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["metric", *read[0].keys,
                                                                                    *ROW_COLUMNS])
    if not rows.empty:
        rows = rows.assign(q_difference=np.nan)[["metric", *read[0].keys, *ROW_COLUMNS]]
        if metrics:  # a disparity asked for is computed from its rates, which are shown only when asked for too
            rows = rows[rows["metric"].isin(list(metrics))]
        # several line-ups on one screen: each "differs" is read from its q (issue 42 §2), the raw p beside it
        rows = rows.assign(q_difference=benjamini_hochberg(rows["p_difference"].to_numpy(dtype=float)))
    message = " ".join(dict.fromkeys(_nothing_shared(by_run[c.arm_a.run_id], by_run[c.arm_b.run_id], c)
                                     for c in silent)) if silent and rows.empty else ""
    if rows.empty and metrics and not message:
        message = f"none of the metrics asked for ({', '.join(metrics)}) is measured on both sides."
    settings = {r.info.run_id: r.settings for r in read}
    mismatch = differing_thresholds(settings)
    notes = [mismatch] * bool(mismatch) + [note for r in read for note in r.notes] + unmatched
    gaps = {r.info.run_id: list(r.gaps) for r in read if r.gaps}
    for contrast in contrasts:  # cells one side has and the other lacks: said in the headline (issue 43 §4)
        for run_id, sentence in _one_sided(by_run[contrast.arm_a.run_id], by_run[contrast.arm_b.run_id], contrast):
            if sentence not in gaps.get(run_id, []):
                gaps.setdefault(run_id, []).append(sentence)
    return Comparison([_run_record(r) for r in read], rows.reset_index(drop=True), read[0].keys, message, contrasts,
                      notes, gaps, settings)


def _one_sided(a: RunRows, b: RunRows, contrast: Contrast) -> list[tuple[str, str]]:
    """(run id, sentence) per side whose cells (family and group, attribute, ...) the other side lacks: comparing an
    11-group regard run with a 2-group counterfactual one compares 2 groups, and the headline says which were left."""
    keys = [k for k in a.keys if k in a.sums and k in b.sums]
    if not keys:
        return []

    def cells(rows: RunRows, arm: Arm) -> set[tuple[str, ...]]:
        sums = rows.sums[rows.sums["arm"] == arm.key]
        return {tuple("" if v is None or v != v else str(v) for v in values)
                for values in sums[keys].itertuples(index=False, name=None)}

    cells_a, cells_b = cells(a, contrast.arm_a), cells(b, contrast.arm_b)
    if not cells_a & cells_b:
        return []  # nothing lines up: the comparison's message says so
    out = []
    for rows, mine, theirs, other in ((a, cells_a, cells_b, b), (b, cells_b, cells_a, a)):
        left = sorted(mine - theirs)
        if not left:
            continue
        shown = ", ".join(" / ".join(v for v in cell if v) or "(none)" for cell in left[:8])
        more = f" and {len(left) - 8} more" if len(left) > 8 else ""
        what = " / ".join(keys)
        out.append((rows.info.run_id, f"run {rows.info.run_id} has {len(left)} {what} cell(s) that run "
                                      f"{other.info.run_id} lacks ({shown}{more}), left out of the comparison"))
    return out


def _unmatched(read: list[RunRows], contrasts: list[Contrast]) -> list[str]:
    """A sentence per run whose arms were not all set against another (settings only one run has)."""
    if len(read) < 2:
        return []
    used = {(c.arm_a.run_id, c.arm_a.key) for c in contrasts} | {(c.arm_b.run_id, c.arm_b.key) for c in contrasts}
    notes = []
    for rows in read:
        left = [arm.label for arm in rows.arms if (rows.info.run_id, arm.key) not in used]
        if left:
            verb = "has" if len(left) == 1 else "have"
            notes.append(f"run {rows.info.run_id}: {', '.join(left)} {verb} no counterpart in the other run(s) (no "
                         f"system or setting in common), so {'it is' if len(left) == 1 else 'they are'} not compared")
    return notes


def _nothing_shared(a: RunRows, b: RunRows, contrast: Contrast) -> str:
    """One sentence naming the key on which two arms share nothing (metric first, then the cell keys)."""
    sums_a = a.sums[a.sums["arm"] == contrast.arm_a.key]
    sums_b = b.sums[b.sums["arm"] == contrast.arm_b.key]
    start = f"{contrast.arm_a.label} (run {a.info.run_id}) and {contrast.arm_b.label} (run {b.info.run_id})"
    if sums_a.empty or sums_b.empty:
        empty = list(dict.fromkeys(f"{arm.label} (run {r.info.run_id})" for r, arm, s in (
            (a, contrast.arm_a, sums_a), (b, contrast.arm_b, sums_b)) if s.empty))
        return (f"{start} cannot be lined up: {' and '.join(empty)} {'has' if len(empty) == 1 else 'have'} no "
                "finite values to compare.")

    def listed(values: set[str]) -> str:
        names = sorted(values)
        return ", ".join(names[:6]) + (" …" if len(names) > 6 else "")

    shared_so_far = pd.Series(True, index=sums_a.index), pd.Series(True, index=sums_b.index)
    for key in ["metric", *a.keys]:
        values_a = set(sums_a.loc[shared_so_far[0], key].astype("string").fillna("\u2205"))
        values_b = set(sums_b.loc[shared_so_far[1], key].astype("string").fillna("\u2205"))
        if not values_a & values_b:
            what = "metric" if key == "metric" else key
            return (f"{start} share no {what}, so there is nothing to line up: the first has {listed(values_a)}, "
                    f"the second {listed(values_b)}.")
        shared_so_far = (shared_so_far[0] & sums_a[key].astype("string").fillna("\u2205").isin(values_b),
                         shared_so_far[1] & sums_b[key].astype("string").fillna("\u2205").isin(values_a))
    return f"{start} share no cell ({' / '.join(['metric', *a.keys])}), so there is nothing to line up."


def run_estimates(store: RunStore, info: RunInfo, by: Sequence[str] | None = None,
                  metrics: Sequence[str] | None = None, n_resamples: int | None = None,
                  seed: int = 0, thresholds: dict[str, float] | None = None) -> pd.DataFrame:
    """One run's estimate per arm and cell (and group statistic) with its 95% bootstrap interval over units; a run
    that stored its own intervals (SUMMARY_KINDS) is read as it stored them. The run is read with its own settings
    (`reading.settings_of`: thresholds and resamples recorded beside it, else the defaults) unless `thresholds` or
    `n_resamples` are given. A decoding run's numbers are its page's (`reading.design`: the design's bootstrap with
    the run's seed, whatever `seed` says), and its disparities carry their bias-corrected estimate, permutation
    p-value and smallest detectable disparity. `frame.attrs["settings"]` holds what it was read with."""
    if info.kind in SUMMARY_KINDS:
        return stored_interval_estimates(store, info)
    settings = settings_of(store, info, thresholds, n_resamples)
    n_resamples = settings.n_resamples
    read = read_run(store, info, by, metrics, settings)
    keys = ["metric", *read.keys]
    columns = ["arm", *keys, "estimate", "ci_low", "ci_high", "n_units", "unit"]
    tested = design_numbers(read) is not None
    if tested:
        columns += list(TEST_COLUMNS)
    if read.sums.empty:
        empty = pd.DataFrame(columns=columns)
        empty.attrs["settings"] = settings
        return empty
    parts = []
    for arm in read.arms:
        contrast = Contrast(arm, arm, "", "", "itself")
        table = compare_arms(read, read, contrast, n_resamples, seed)
        if table.empty:
            continue
        extra = {c: table[f"run_a_{c}"] for c in TEST_COLUMNS} if tested else {}
        parts.append(pd.DataFrame({"arm": arm.label, **{k: table[k] for k in keys}, "estimate": table["run_a"],
                                   "ci_low": table["run_a_low"], "ci_high": table["run_a_high"],
                                   "n_units": table["n_units_a"], "unit": table["unit"], **extra}))
    out = pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
    out.attrs["settings"] = settings
    return out
