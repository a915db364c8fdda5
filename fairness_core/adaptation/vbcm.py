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

Intervals (``vbcm_bootstrap``): a two-way percentile bootstrap over the two units the design sampled and every
perturbation shares — *templates* and *identity terms*. Each resample draws templates with replacement and,
independently, each group's terms with replacement within the group (a name list is a sample of the group's
names, and the same names fill every template, so a name's effect is shared by all templates); φ_jg and β_j are
recomputed from the drawn terms, d and the mean over the drawn templates follow. Resampling templates alone
(before issue 30) treated the names as fixed: where the template effect cancels in β_j − φ_jg (it does when a
template shifts every group alike), that interval had almost no width, and its coverage fell far below 95% with
few names per group (`tests/adaptation/test_vbcm.py`). Tables built without their perturbation scores (by hand)
resample templates only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SCORE_COLUMNS = ("template_id", "group", "term", "score")


GROUP_MEANS, ALL_SENTENCES = "group-means", "all-sentences"
BACKGROUNDS = (GROUP_MEANS, ALL_SENTENCES)


class VBCMInputError(ValueError):
    """Bad score table (missing column, no rows); the message is one sentence."""


def demographic_parity(x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray | float:
    """``DP(x, y) = 1 − |x − y|`` (Sec. 3.1; A.2.2), the comparison function d of Eq. (1)."""
    return 1.0 - np.abs(np.asarray(x, dtype=float) - np.asarray(y, dtype=float))


@dataclass
class TermScores:
    """The perturbation scores behind a table, kept so that a bootstrap can resample identity terms too."""

    groups: list[str]  # the groups whose terms are here: β_j is the background over these
    term_group: np.ndarray  # (n_terms,) index into `groups`
    terms: list[str]  # (n_terms,) the term of each column
    scores: np.ndarray  # (n_templates, n_terms) the score of template j filled with term n; NaN if not scored
    background: str = GROUP_MEANS  # the β_j rule (see `vbcm_table`)

    def identities(self) -> list[tuple[str, str]]:
        """(group, term) of each column: the identity of a term across template sets."""
        return [(self.groups[k], t) for k, t in zip(self.term_group, self.terms, strict=True)]


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
    terms: TermScores | None = None  # per-term scores (tables from `vbcm_table`), for the two-way bootstrap

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
        raise VBCMInputError(f"{source} has no column {missing[0]!r}; it needs {', '.join(SCORE_COLUMNS)}")
    out = frame[list(SCORE_COLUMNS)].copy()
    for column in ("template_id", "group", "term"):
        out[column] = out[column].astype(str)
    raw = out["score"]
    numeric = pd.to_numeric(raw, errors="coerce")
    bad = numeric.isna() & raw.notna() & (raw.astype(str).str.strip() != "") & \
        ~raw.astype(str).str.strip().str.lower().isin({"nan", "na", "none", "null"})
    if bad.any():
        position = int(np.flatnonzero(bad.to_numpy())[0])
        raise VBCMInputError(f"{source} row {position + 1}: score {str(raw.iloc[position])!r} is not a number")
    out["score"] = numeric.astype(float)
    scores = out["score"].to_numpy()
    absurd = ~np.isnan(scores) & ~((scores >= 0.0) & (scores <= 1.0))
    if absurd.any():
        position = int(np.flatnonzero(absurd)[0])
        raise VBCMInputError(f"{source} row {position + 1}: score {str(raw.iloc[position]).strip()!r} is not a "
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
    # the per-term scores behind φ_jg, for the bootstrap over identity terms (one column per (group, term))
    term_codes, keys = pd.MultiIndex.from_arrays([frame["group"], frame["term"]]).factorize()
    per_term = np.full((len(templates), len(keys)), np.nan)
    per_term[tj, term_codes] = values
    terms = TermScores(group_list, np.array([g_index[g] for g, _ in keys], dtype=int), [t for _, t in keys],
                       per_term[keep], background)
    return VBCMTable([t for t, k in zip(templates, keep, strict=True) if k], group_list, beta[keep],
                     phi[keep], counts[keep], n_skipped_nan=n_nan, n_duplicates=n_duplicates, terms=terms)


def vbcm(scores: pd.DataFrame, groups: Sequence[str] | None = None, n_resamples: int = 0, seed: int = 0,
         level: float = 0.95, background: str = GROUP_MEANS) -> VBCMResult:
    """VBCM (Eq. 1) of a score table; with ``n_resamples > 0`` also bootstrap CIs over templates and terms.
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


def resample_term_weights(keys: Sequence[tuple[str, str]], n_resamples: int, seed: int,
                          fixed: frozenset[str] = frozenset()) -> np.ndarray:
    """(n_resamples, n_terms) multiplicities of a with-replacement draw of each group's terms *within the group*
    (`keys` = (group, term) per column): every group keeps its number of terms in every resample. The terms of a
    group in `fixed` keep weight 1 (not resampled)."""
    rng = np.random.default_rng([seed, 1])  # a stream of its own: the template draw of `seed` is unchanged
    weights = np.zeros((n_resamples, len(keys)))
    rows = np.arange(n_resamples)[:, None]
    for group in dict.fromkeys(g for g, _ in keys):
        columns = np.array([n for n, (g, _) in enumerate(keys) if g == group])
        if group in fixed:
            weights[:, columns] = 1.0
            continue
        drawn = columns[rng.integers(0, columns.size, size=(n_resamples, columns.size))]
        np.add.at(weights, (rows, drawn), 1.0)
    return weights


def shared_term_weights(tables: Sequence[VBCMTable], n_resamples: int, seed: int) -> list[np.ndarray | None]:
    """One draw of identity terms for several template sets filled with the same term lists (the terms are units
    the sets share, like the templates an original and its rewrite share): each table gets the columns of its own
    terms, by (group, term). None for a table without per-term scores.

    Only *crossed* terms are resampled: a group whose every term fills two or more templates of some set (a name
    list used for every template). A group with a term that occurs in one template only (terms nested in their
    templates, e.g. an uploaded score file with other names per template) keeps its terms fixed: resampling the
    templates already redraws them, and a term drawn into a template it never filled would leave a hole."""
    keys = list(dict.fromkeys(key for table in tables if table.terms is not None for key in table.terms.identities()))
    spread: dict[tuple[str, str], int] = {}
    for table in tables:
        if table.terms is not None:
            for key, n in zip(table.terms.identities(), np.isfinite(table.terms.scores).sum(axis=0), strict=True):
                spread[key] = max(spread.get(key, 0), int(n))
    fixed = frozenset(g for g, _ in keys if any(spread[k] < 2 for k in keys if k[0] == g))
    weights = resample_term_weights(keys, n_resamples, seed, fixed)
    position = {key: n for n, key in enumerate(keys)}
    return [None if table.terms is None else weights[:, [position[key] for key in table.terms.identities()]]
            for table in tables]


def _resampled_distances(table: VBCMTable, term_weights: np.ndarray,
                         cells: int = 4_000_000) -> tuple[np.ndarray, np.ndarray]:
    """d(β*_j, φ*_jg) and whether g has a drawn term in t_j, per resample of terms: two (R, n_templates, n_groups)
    arrays. φ*_jg is the weighted mean of group g's drawn terms in template j, β*_j the table's background rule over
    all its groups; computed in chunks of resamples so memory stays ~ `cells` values."""
    assert table.terms is not None
    terms = table.terms
    scored = np.isfinite(terms.scores)
    values, present = np.where(scored, terms.scores, 0.0), scored.astype(float)
    one_hot = np.zeros((len(terms.terms), len(terms.groups)))
    one_hot[np.arange(len(terms.terms)), terms.term_group] = 1.0
    columns = [terms.groups.index(g) for g in table.groups]
    n_resamples, n_templates = term_weights.shape[0], values.shape[0]
    distance = np.full((n_resamples, n_templates, len(columns)), np.nan)
    drawn = np.zeros((n_resamples, n_templates, len(columns)), dtype=bool)
    step = max(1, cells // max(1, n_templates * len(terms.terms)))
    for start in range(0, n_resamples, step):
        w = term_weights[start:start + step][:, None, :]  # (r, 1, n_terms)
        sums, counts = (w * values[None]) @ one_hot, (w * present[None]) @ one_hot  # (r, n_templates, groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            phi = np.where(counts > 0, sums / counts, np.nan)
            if terms.background == GROUP_MEANS:
                beta = np.nansum(phi, axis=2) / (counts > 0).sum(axis=2)
            else:
                beta = sums.sum(axis=2) / counts.sum(axis=2)
        d = demographic_parity(beta[:, :, None], phi[:, :, columns])
        distance[start:start + step] = d
        drawn[start:start + step] = np.isfinite(d)
    return distance, drawn


def vbcm_from_weights(table: VBCMTable, weights: np.ndarray, term_weights: np.ndarray | None = None) -> np.ndarray:
    """VBCM_g for each row of template multiplicities (and, with `term_weights`, of term multiplicities, one row per
    resample): (n_resamples, n_groups); NaN if g is never drawn."""
    if term_weights is None or table.terms is None:
        d = np.ascontiguousarray(table.distance)  # one memory layout: the same sums whichever way a table was cut
        present = np.ascontiguousarray(table.n_perturbations > 0, dtype=float)
        numerator = weights @ np.nan_to_num(d, nan=0.0)
        denominator = weights @ present
    else:
        d, drawn = _resampled_distances(table, term_weights)
        numerator = np.einsum("rt,rtg->rg", weights, np.nan_to_num(d, nan=0.0))
        denominator = np.einsum("rt,rtg->rg", weights, drawn.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def vbcm_bootstrap(table: VBCMTable, n_resamples: int = 1000, seed: int = 0, terms: bool = True) -> np.ndarray:
    """Bootstrap draws of the VBCM vector, resampling templates with replacement and (`terms`, when the table has
    its per-term scores) each group's identity terms within the group: (n_resamples, n_groups)."""
    template_weights = resample_weights(len(table.templates), n_resamples, seed)
    term_weights = shared_term_weights([table], n_resamples, seed)[0] if terms else None
    return vbcm_from_weights(table, template_weights, term_weights)


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
