"""Tables the CAIRO page and CLI show: the search output (the CLI's JSON contract), rankings, contributions."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.cairo.data import ORIGINAL, CairoDataError, check_alignment, load_metric, paraphraser_of
from fairness_core.cairo.request import BiasTable, as_float, metric_pairs
from fairness_core.cairo.search import MetricSets, PairResult, combo_vector, pooled_vector, search_pair, set_names
from fairness_core.data.quoting import typed_text_problem

Found = tuple[PairResult, MetricSets, MetricSets, list[str]]


def search_table(table: BiasTable, permutations: int = 0, heldout: bool = True, seed: int = 0,
                 pairs: list[tuple[str, str]] | None = None, combination: str = "weighted") -> list[Found]:
    """Run the search for every metric pair (or the given ones): (result, sets A, sets B, systems).
    `combination`: "weighted" (ours: prompt-weighted mean of set biases, distinct sets, all cross pairs) or
    "released" (the authors' code: Eq. 1 on pooled generations, repeats allowed, one combination for both)."""
    out = []
    for a, b in pairs or metric_pairs(table):
        sets_a, sets_b, systems = table.pair(a, b, combination)
        out.append((search_pair(a, sets_a, b, sets_b, permutations=permutations, heldout=heldout, seed=seed),
                    sets_a, sets_b, systems))
    return out


def pair_json(result: PairResult, sets_a: MetricSets, sets_b: MetricSets, systems: list[str]) -> dict[str, Any]:
    """The CLI contract for one pair (keys metric_a … by_size first), plus documented extras."""
    by_size = []
    for index, size in enumerate(result.sizes):
        row: dict[str, Any] = {
            "size": size.size, "r": as_float(size.r), "p_value": as_float(result.p_values[index]),
            "combo_a": set_names(sets_a, size.combo_a), "combo_b": set_names(sets_b, size.combo_b),
            "mean_r": as_float(size.mean_r),
            # extras
            "n_pairs": size.n_pairs, "method": size.method,
            "p_search": as_float(result.p_search[index]) if result.p_search else None,
            "heldout_r": as_float(result.heldout[index]) if result.heldout else None,
        }
        by_size.append(row)
    return {"metric_a": result.metric_a, "metric_b": result.metric_b, "n_systems": result.n_systems,
            "original_r": as_float(result.original_r), "by_size": by_size, "systems": systems}


def search_json(table: BiasTable, permutations: int = 0, heldout: bool = True, seed: int = 0,
                combination: str = "weighted") -> dict[str, Any]:
    pairs = [pair_json(*found) for found in search_table(table, permutations, heldout, seed, combination=combination)]
    return {"pairs": pairs, "notes": table.notes, "weighted": table.weighted, "combination": combination,
            "permutations": permutations, "heldout": "leave-one-system-out" if heldout else None}


def size_frame(pair: dict[str, Any]) -> pd.DataFrame:
    """One row per size for charts: CAIRO r, mean r, original r (Fig. 6), p values, held-out r."""
    rows = []
    for row in pair["by_size"]:
        rows.append({"size": row["size"], "CAIRO (best pair)": row["r"], "average over pairs": row["mean_r"],
                     "original prompts": pair["original_r"], "held-out r (LOSO)": row.get("heldout_r"),
                     "p_value": row["p_value"], "p_search": row.get("p_search"), "n_pairs": row["n_pairs"],
                     "n_systems": pair["n_systems"], "combo_a": ", ".join(row["combo_a"]),
                     "combo_b": ", ".join(row["combo_b"])})
    return pd.DataFrame(rows)


def contributions(pair: dict[str, Any]) -> pd.DataFrame:
    """Fig. 7: per size, how many sets of the best combinations (both metrics) each paraphrasing model gave."""
    rows = []
    for row in pair["by_size"]:
        counts = Counter(paraphraser_of(n) for n in [*row["combo_a"], *row["combo_b"]] if n != ORIGINAL)
        for model, count in counts.items():
            rows.append({"size": row["size"], "paraphrasing model": model, "sets": count})
    return pd.DataFrame(rows, columns=["size", "paraphrasing model", "sets"])


def system_values(table: BiasTable, pair: dict[str, Any], size: int, combination: str = "weighted") -> pd.DataFrame:
    """Per system: bias under the original sets and under the size's best combinations (Figs. 8, 10–11)."""
    sets_a, sets_b, systems = table.pair(pair["metric_a"], pair["metric_b"], combination)
    vector = pooled_vector if combination == "released" else combo_vector
    row = next(r for r in pair["by_size"] if r["size"] == size)
    index_a = [sets_a.names.index(n) for n in row["combo_a"]]
    index_b = [sets_b.names.index(n) for n in row["combo_b"]]
    return pd.DataFrame({
        "system": systems,
        "A original": vector(sets_a, (0,)), "B original": vector(sets_b, (0,)),
        "A CAIRO": vector(sets_a, index_a), "B CAIRO": vector(sets_b, index_b),
    })


def rankings(values: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, float]]:
    """Fig. 8: each system's rank (1 = most biased) per metric before/after, and Kendall τ / Spearman ρ
    between the two metrics' rankings before and after."""
    from scipy import stats

    ranks = values[["system"]].copy()
    for column in ("A original", "B original", "A CAIRO", "B CAIRO"):
        ranks[column] = values[column].rank(ascending=False, method="min").astype(int)
    agreement = {}
    for label, x, y in (("original", "A original", "B original"), ("CAIRO", "A CAIRO", "B CAIRO")):
        tau = stats.kendalltau(values[x], values[y]).statistic
        rho = stats.spearmanr(values[x], values[y]).statistic
        agreement[f"kendall_tau_{label}"] = float(tau) if np.isfinite(tau) else float("nan")
        agreement[f"spearman_rho_{label}"] = float(rho) if np.isfinite(rho) else float("nan")
    return ranks, agreement


DEMO_TABLE = "demo_bias_table.csv"
DEMO_META = "demo_run.json"


def load_demo(data_dir: Any = None) -> tuple[str, dict[str, Any]] | None:
    """The shipped bias table of a real offline `cairo run` (CSV text, its provenance), or None if absent."""
    import json
    from pathlib import Path

    from fairness_core.cairo.data import DATA_DIR

    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    table, meta = folder / DEMO_TABLE, folder / DEMO_META
    if not table.exists():
        return None
    return table.read_text(encoding="utf-8"), (json.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {})


def combination_prompts(metric_name: str, sets: list[str], indices: list[int] | None = None,
                        extra_sets: dict[str, list[str]] | None = None, limit: int = 200) -> pd.DataFrame:
    """The prompts of a combination, readable: one row per (set, prompt) with its paraphrasing model and original."""
    from fairness_core.cairo.data import METRICS, load_metric

    if metric_name not in METRICS:
        return pd.DataFrame(columns=["set", "paraphrasing model", "subgroup", "prompt", "original"])
    metric = load_metric(metric_name)
    all_sets = {**metric.sets, **(extra_sets or {})}
    chosen = indices if indices is not None else list(range(metric.n))
    rows = []
    for name in sets:
        texts = all_sets.get(name)
        if texts is None:
            continue
        for i in chosen:
            if texts[i].strip():
                rows.append({"set": name, "paraphrasing model": paraphraser_of(name), "subgroup": metric.subgroups[i],
                             "prompt": " ".join(texts[i].split()),
                             "original": " ".join(metric.sets[ORIGINAL][i].split()), "index": i})
    return pd.DataFrame(rows).head(limit) if rows else pd.DataFrame(
        columns=["set", "paraphrasing model", "subgroup", "prompt", "original", "index"])


def save_demo(bias_table: pd.DataFrame, payload: dict[str, Any], command: str, manifest: dict[str, Any],
              data_dir: Any = None, extra: dict[str, Any] | None = None) -> None:
    """Write a real run's bias table and provenance as the page's default (`data/cairo/demo_*`)."""
    import datetime
    import json
    from pathlib import Path

    from fairness_core.cairo.data import DATA_DIR

    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    bias_table.to_csv(folder / DEMO_TABLE, index=False)
    meta = {"command": command, "computed": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "manifest": manifest, "run_ids": payload.get("run_ids", []), "notes": payload.get("notes", []),
            "prompt_split": payload.get("prompt_split", []), "indices": payload.get("indices", {}),
            "search": [{k: v for k, v in pair.items() if k != "systems"} for pair in payload.get("pairs", [])]}
    meta |= extra or {}
    (folder / DEMO_META).write_text(json.dumps(meta, indent=1, default=str), encoding="utf-8")


def uncertainty_frame(pair: dict[str, Any], uncertainty: dict[str, Any]) -> pd.DataFrame:
    """One row per size: the mean r (Fig. 6's baseline) and the rank agreement of the chosen combinations, each
    with its prompt-bootstrap 95% interval (`uncertainty.pair_uncertainty`)."""
    def interval(low: float | None, high: float | None) -> str:
        return "—" if low is None or high is None else f"[{low:.2f}, {high:.2f}]"

    rows = []
    by_size = {row["size"]: row for row in uncertainty.get("by_size", [])}
    for row in pair["by_size"]:
        found = by_size.get(row["size"], {})
        rows.append({"size": row["size"], "mean r": row["mean_r"],
                     "mean r 95% CI": interval(found.get("mean_r_low"), found.get("mean_r_high")),
                     "Kendall τ (CAIRO) 95% CI": interval(found.get("kendall_tau_CAIRO_low"),
                                                          found.get("kendall_tau_CAIRO_high")),
                     "Spearman ρ (CAIRO) 95% CI": interval(found.get("spearman_rho_CAIRO_low"),
                                                           found.get("spearman_rho_CAIRO_high"))})
    return pd.DataFrame(rows)


def metric_overview(name: str) -> tuple[pd.DataFrame, list[str]]:
    """One released metric's prompt sets (usable prompts, paraphrases `DEGENERATE_RULE` dropped, whether each
    paraphrase list is aligned with the originals) and the subgroups it targets."""
    metric = load_metric(name)
    reports = {r.set_name: r for r in check_alignment(metric)}
    rows = []
    for set_name, texts in metric.sets.items():
        report = reports.get(set_name)
        rows.append({"set": set_name, "prompts": sum(bool(t.strip()) for t in texts),
                     "dropped (degenerate)": len(metric.degenerate.get(set_name, {})),
                     "aligned share": None if report is None else round(report.aligned_share, 2),
                     "shifted share": None if report is None else round(report.shifted_share, 2),
                     "aligned": "original" if report is None else ("yes" if report.ok else "NO")})
    return pd.DataFrame(rows), sorted(set(metric.subgroups))


#: a category is a short label (the longest shipped one has 21 characters)
MAX_CATEGORY_CHARS = 200


def mapping_from_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The subgroup-mapping editor's rows ({metric, subgroup, category}) as {metric: {subgroup: category}}; an
    empty category keeps the subgroup's own name. A category over 200 characters or with control characters is
    one sentence (CairoDataError) naming the row."""
    mapping: dict[str, dict[str, str]] = {}
    for row in rows:
        category = str(row["category"] or row["subgroup"])
        problem = typed_text_problem(category, f"the category of {row['metric']} / {row['subgroup']}",
                                     MAX_CATEGORY_CHARS)
        if problem:
            raise CairoDataError(f"Subgroup mapping: {problem}.")
        mapping.setdefault(row["metric"], {})[row["subgroup"]] = category
    return mapping


def table_with_intervals(table: BiasTable, csv_text: str) -> pd.DataFrame:
    """The bias table as read, with the CSV's ci_low/ci_high columns joined back when it has them."""
    import io

    shown = table.frame.copy()
    raw = pd.read_csv(io.StringIO(csv_text))
    if {"ci_low", "ci_high"} <= set(raw.columns):
        shown = shown.merge(raw[["system", "metric", "prompt_set", "ci_low", "ci_high"]],
                            on=["system", "metric", "prompt_set"], how="left")
    return shown


#: coverage of the Eq. 1 interval in simulation at the shipped design (2 subgroups × 4 prompts, Beta prompt scores,
#: true bias 0–0.4; `tests/cairo/test_bias.py`, docs/cairo.md): the fold at zero makes it conservative by design
SIMULATED_COVERAGE = (0.954, 0.986)


def interval_power(shown: pd.DataFrame) -> dict[str, Any]:
    """What the Eq. 1 intervals of a bias table can detect (issue 30): rows with an interval, rows whose interval
    excludes 0 (a subgroup gap detected), the median estimate and, over rows with two subgroups, the median
    smallest estimate that would have been detected with that row's spread.

    With two subgroups the interval is [2·max(0, |d̂| − h), 2(|d̂| + h)] for the gap d̂ = bias / 2 and its Welch
    half-width h (`bias.gap_interval`), so h = (ci_high − bias) / 2 and the row would exclude 0 only if its
    estimate exceeded 2h = ci_high − bias."""
    if not {"ci_low", "ci_high"} <= set(shown.columns):
        shown = shown.iloc[:0].assign(ci_low=[], ci_high=[])
    finite = shown.dropna(subset=["ci_low", "ci_high"])
    out: dict[str, Any] = {"n_rows": len(finite), "n_detected": int((finite["ci_low"] > 0).sum()),
                           "median_bias": float(finite["bias"].median()) if len(finite) else float("nan"),
                           "median_detectable": float("nan")}
    if len(finite) and "subgroup_scores" in finite.columns:
        two = finite[finite["subgroup_scores"].map(lambda v: isinstance(v, dict) and len(v) == 2)]
        if len(two):
            out["median_detectable"] = float((two["ci_high"] - two["bias"]).median())
    return out


def interval_power_note(power: dict[str, Any]) -> str | None:
    """One sentence for the page beside the Eq. 1 intervals: they over-cover by design, and what that costs here."""
    if not power["n_rows"]:
        return None
    low, high = SIMULATED_COVERAGE
    text = (f"The interval over-covers by design (folding at zero keeps every interval that straddles 0; "
            f"{low:.3f}–{high:.3f} coverage in simulation at 2 subgroups × 4 prompts), which guards against "
            f"false gaps but costs power: a subgroup gap is detected in {power['n_detected']} of "
            f"{power['n_rows']} rows here")
    if np.isfinite(power["median_detectable"]):
        text += (f"; with these prompts' spread an estimate had to exceed about {power['median_detectable']:.3g} "
                 f"(median over rows) to be detected, while the median estimate is {power['median_bias']:.3g}")
    return text + "."


def r_text(value: float | None) -> str:
    """An r for display: undefined when a metric's bias did not vary across systems."""
    return "undefined" if value is None or pd.isna(value) else f"{value:.2f}"
