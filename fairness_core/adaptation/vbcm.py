"""Vector Background Comparison Metric (VBCM; Czarnowska et al. 2021, as used by Quiroga et al. 2025, App. A.2).

Input: one score per perturbation, i.e. rows ``(template_id, group, term, score)``: template ``t_j``
evaluated with identity term ``term`` of group ``G_i`` got ``score`` from the classifier under test.

- ``β_j`` (the background of template j, Sec. 3.1 "average across groups", App. A.2.1/A.2.2): the mean
  over the groups present in template j of their group means φ_jg, so a group with a longer term list does
  not weigh more (``background="group-means"``, the default). The worked example (A.2.2, three countries
  with three names each) cannot tell the two apart: there ``β = 1/9 Σ score`` either way. The older rule,
  the mean over *all* filled-in sentences of template j (``background="all-sentences"``), is kept as a
  stated option; it weights each group by its number of terms.
- ``φ_jg = φ(S'^g_j)`` (Eq. 1's scoring function): the mean score of group g's perturbations of template j
  (φ = "positive output probability", Sec. 3.1).
- ``d(x, y) = DP(x, y) = 1 − |x − y|`` (demographic parity, Sec. 3.1 and A.2.2).
- ``VBCM_g = 1/|S'| Σ_j d(β_j, φ_jg)`` (Eq. 1): the mean over templates of the per-template distance.

Stated rules for odd rows (the paper has none):
- a row whose score is NaN/missing is skipped and counted (``n_skipped_nan``);
- a score that is infinite or outside [0, 1] is refused with its row (φ is a probability, Sec. 3.1);
- a repeated perturbation (same template_id, group and term) counts once: later repeats are dropped and
  counted (``n_duplicates``), so a row pasted three times does not weigh three times;
- a template in which group g has no perturbation contributes nothing to VBCM_g (the mean runs over the
  templates where g occurs); the number of templates behind each VBCM_g is reported (``n_templates_per_group``).

Intervals (``vbcm_bootstrap``): percentile bootstrap over *templates* — the sampled unit. A resampled
template brings all of its perturbations (its β_j and every φ_jg stay together); nothing is re-derived
inside the resample except the means over the drawn templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.data.quoting import quoted

SCORE_COLUMNS = ("template_id", "group", "term", "score")


GROUP_MEANS, ALL_SENTENCES = "group-means", "all-sentences"
BACKGROUNDS = (GROUP_MEANS, ALL_SENTENCES)


class VBCMInputError(ValueError):
    """Bad score table (missing column, no rows); the message is one sentence."""


def demographic_parity(x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray | float:
    """``DP(x, y) = 1 − |x − y|`` (Sec. 3.1; A.2.2), the comparison function d of Eq. (1)."""
    return 1.0 - np.abs(np.asarray(x, dtype=float) - np.asarray(y, dtype=float))


@dataclass
class VBCMTable:
    """Per-template quantities of Eq. (1): β_j, φ_jg and d(β_j, φ_jg) (NaN where g is absent from t_j)."""

    templates: list[str]
    groups: list[str]
    background: np.ndarray  # (n_templates,) β_j
    phi: np.ndarray  # (n_templates, n_groups) φ_jg
    n_perturbations: np.ndarray  # (n_templates, n_groups) counts
    n_skipped_nan: int = 0
    n_duplicates: int = 0  # repeated (template_id, group, term) rows dropped

    @property
    def distance(self) -> np.ndarray:
        """``d(β_j, φ_jg)`` per template and group (NaN where the group has no perturbation)."""
        return demographic_parity(self.background[:, None], self.phi)

    def frame(self) -> pd.DataFrame:
        """Long table: template_id, group, n, background β_j, φ_jg, d(β_j, φ_jg)."""
        d = self.distance
        rows = []
        for j, template in enumerate(self.templates):
            for k, group in enumerate(self.groups):
                if self.n_perturbations[j, k] == 0:
                    continue
                rows.append({"template_id": template, "group": group, "n": int(self.n_perturbations[j, k]),
                             "background": float(self.background[j]), "phi": float(self.phi[j, k]),
                             "d": float(d[j, k])})
        return pd.DataFrame(rows, columns=["template_id", "group", "n", "background", "phi", "d"])


@dataclass
class VBCMResult:
    """The bias vector of one template set and what it was computed from."""

    vbcm: dict[str, float]  # Eq. (1), per group
    background: float  # mean over templates of β_j
    n_templates: int
    n_templates_per_group: dict[str, int]
    n_skipped_nan: int
    table: VBCMTable
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)  # 95% bootstrap over templates

    @property
    def n_duplicates(self) -> int:
        """Repeated perturbation rows that were dropped (each perturbation counts once)."""
        return self.table.n_duplicates

    def as_json(self) -> dict[str, Any]:
        """The CLI contract: ``{"background", "vbcm": {group: value}, "n_templates"}``."""
        return {"background": self.background, "vbcm": dict(self.vbcm), "n_templates": self.n_templates}


def check_scores(frame: pd.DataFrame, source: str = "the score table") -> pd.DataFrame:
    """Columns present and typed; raises VBCMInputError naming `source` and the column."""
    missing = [c for c in SCORE_COLUMNS if c not in frame.columns]
    if missing:
        raise VBCMInputError(f"{source} has no column {quoted(missing[0])}; it needs {', '.join(SCORE_COLUMNS)}")
    out = frame[list(SCORE_COLUMNS)].copy()
    for column in ("template_id", "group", "term"):
        out[column] = out[column].astype(str)
    raw = out["score"]
    numeric = pd.to_numeric(raw, errors="coerce")
    bad = numeric.isna() & raw.notna() & (raw.astype(str).str.strip() != "") & \
        ~raw.astype(str).str.strip().str.lower().isin({"nan", "na", "none", "null"})
    if bad.any():
        position = int(np.flatnonzero(bad.to_numpy())[0])
        raise VBCMInputError(f"{source} row {position + 1}: score {quoted(raw.iloc[position])} is not a number")
    out["score"] = numeric.astype(float)
    if len(out) and out["score"].isna().all():  # named here, where the file's name is known
        raise VBCMInputError(f"{source} has no scored rows (every score is empty); it needs "
                             f"{', '.join(SCORE_COLUMNS)} with a probability in [0, 1] as the score")
    scores = out["score"].to_numpy()
    absurd = ~np.isnan(scores) & ~((scores >= 0.0) & (scores <= 1.0))
    if absurd.any():
        position = int(np.flatnonzero(absurd)[0])
        raise VBCMInputError(f"{source} row {position + 1}: score {quoted(str(raw.iloc[position]).strip())} is not a "
                             f"probability in [0, 1] ({int(absurd.sum())} such row(s)); VBCM compares positive-class "
                             "probabilities")
    repeated = out.duplicated(subset=["template_id", "group", "term"], keep="first")
    n_duplicates = int(repeated.sum())
    if n_duplicates:
        out = out[~repeated.to_numpy()].reset_index(drop=True)
    out.attrs["n_duplicates"] = n_duplicates + int(frame.attrs.get("n_duplicates", 0))  # checked twice: add up
    return out


def vbcm_table(scores: pd.DataFrame, groups: Sequence[str] | None = None,
               background: str = GROUP_MEANS) -> VBCMTable:
    """β_j, φ_jg and counts from a score table (rows with a NaN score are skipped and counted).

    `background`: "group-means" (Sec. 3.1: β_j = mean over present groups of φ_jg) or "all-sentences" (mean
    over every filled-in sentence of t_j, each group weighted by its number of terms; not the paper's rule).
    """
    if background not in BACKGROUNDS:
        raise VBCMInputError(f"background must be one of {', '.join(BACKGROUNDS)} (got {background!r})")
    frame = check_scores(scores)
    n_duplicates = int(frame.attrs.get("n_duplicates", 0))
    n_nan = int(frame["score"].isna().sum())
    frame = frame[frame["score"].notna()]
    if frame.empty:
        raise VBCMInputError("the score table has no scored rows")
    templates = list(dict.fromkeys(frame["template_id"]))
    group_list = list(groups) if groups is not None else list(dict.fromkeys(frame["group"]))
    t_index = {t: j for j, t in enumerate(templates)}
    g_index = {g: k for k, g in enumerate(group_list)}
    frame = frame[frame["group"].isin(g_index)]
    tj = frame["template_id"].map(t_index).to_numpy()
    gk = frame["group"].map(g_index).to_numpy()
    values = frame["score"].to_numpy(dtype=float)
    sums = np.zeros((len(templates), len(group_list)))
    counts = np.zeros((len(templates), len(group_list)), dtype=int)
    np.add.at(sums, (tj, gk), values)
    np.add.at(counts, (tj, gk), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        if background == GROUP_MEANS:
            # β_j: the average across groups (Sec. 3.1) of the group means present in t_j.
            beta = np.nansum(phi, axis=1) / (counts > 0).sum(axis=1)
        else:
            # β_j: the mean of all perturbations of t_j (each group weighted by its number of terms).
            beta = sums.sum(axis=1) / counts.sum(axis=1)
    keep = counts.sum(axis=1) > 0
    return VBCMTable([t for t, k in zip(templates, keep, strict=True) if k], group_list, beta[keep],
                     phi[keep], counts[keep], n_skipped_nan=n_nan, n_duplicates=n_duplicates)


def vbcm(scores: pd.DataFrame, groups: Sequence[str] | None = None, n_resamples: int = 0, seed: int = 0,
         level: float = 0.95, background: str = GROUP_MEANS) -> VBCMResult:
    """VBCM (Eq. 1) of a score table; with ``n_resamples > 0`` also bootstrap CIs over templates.
    `background` chooses β_j (see `vbcm_table`; default the paper's average across groups)."""
    table = vbcm_table(scores, groups, background)
    d = table.distance
    present = table.n_perturbations > 0
    values = {}
    per_group = {}
    for k, group in enumerate(table.groups):
        column = d[present[:, k], k]
        per_group[group] = int(column.size)
        values[group] = float(column.mean()) if column.size else float("nan")
    result = VBCMResult(values, float(np.mean(table.background)), len(table.templates), per_group,
                        table.n_skipped_nan, table)
    if n_resamples > 0 and len(table.templates) >= 2:  # one template: nothing to resample, no interval
        draws = vbcm_bootstrap(table, n_resamples=n_resamples, seed=seed)
        result.ci = percentile_ci(draws, table.groups, level)
    return result


def resample_weights(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n_units) multiplicities of a with-replacement draw of `n_units` units."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_units, size=(n_resamples, n_units))
    weights = np.zeros((n_resamples, n_units))
    np.add.at(weights, (np.arange(n_resamples)[:, None], draws), 1.0)
    return weights


def vbcm_from_weights(table: VBCMTable, weights: np.ndarray) -> np.ndarray:
    """VBCM_g for each row of template multiplicities: (n_resamples, n_groups); NaN if g is never drawn."""
    d = table.distance
    present = (table.n_perturbations > 0).astype(float)
    numerator = weights @ np.nan_to_num(d, nan=0.0)
    denominator = weights @ present
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def vbcm_bootstrap(table: VBCMTable, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap draws of the VBCM vector, resampling templates with replacement: (n_resamples, n_groups)."""
    return vbcm_from_weights(table, resample_weights(len(table.templates), n_resamples, seed))


def percentile_ci(draws: np.ndarray, groups: Sequence[str], level: float = 0.95) -> dict[str, tuple[float, float]]:
    alpha = (1 - level) / 2
    out = {}
    for k, group in enumerate(groups):
        column = draws[:, k]
        column = column[np.isfinite(column)]
        out[group] = (float(np.quantile(column, alpha)), float(np.quantile(column, 1 - alpha))) if column.size \
            else (float("nan"), float("nan"))
    return out


def read_scores_csv(path: str) -> pd.DataFrame:
    """A ``template_id,group,term,score`` CSV (BOM, CRLF and quoting tolerated); errors name the file."""
    from fairness_core.adaptation.templates import read_csv_table

    frame = read_csv_table(Path(path))
    return check_scores(frame, source=str(path))


def paper_table_1() -> pd.DataFrame:
    """The paper's worked example (App. A.2.2, Table 1): one template, three countries, three names each, as a
    score table `template_id, group, term, score`. Exact VBCM: Spain 0.9922, USA 0.9944, France 0.9978."""
    names = {"Spain": {"María": 0.20, "José": 0.25, "Carmen": 0.17}, "USA": {"Emily": 0.18, "John": 0.21,
             "Michael": 0.19}, "France": {"Chloé": 0.19, "Lucas": 0.22, "Emma": 0.18}}
    return pd.DataFrame([("I like {person}.", country, name, score) for country, terms in names.items()
                         for name, score in terms.items()], columns=list(SCORE_COLUMNS))


def vbcm_rows(result: VBCMResult) -> pd.DataFrame:
    """One row per group: VBCM, its 95% interval (None without resamples) and the templates it rests on."""
    return pd.DataFrame([{"group": g, "VBCM": v, "CI low": result.ci.get(g, (None, None))[0],
                          "CI high": result.ci.get(g, (None, None))[1], "templates": result.n_templates_per_group[g]}
                         for g, v in result.vbcm.items()])
