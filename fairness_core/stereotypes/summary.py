"""What the page and the CLI show of a stereotype run: the `--json` payload, the headline and breakdown tables with
their intervals, the per-item drill-down (sorted by the likelihood gap), and two stored CrowS-Pairs runs compared
pair by pair."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.stereotypes import data as D
from fairness_core.stereotypes.task import PROTOCOLS, StereotypeResult


def stereotype_json(result: StereotypeResult) -> dict[str, Any]:
    """The `--json` contract. crows-pairs: `overall` and `by_bias_type` -> {n, pct_stereotype (a share),
    likelihood_diff, their intervals, p_value, ...}; stereoset: `intrasentence`/`intersentence` -> domain ->
    {lms, ss, icat, count, intervals}, and `overall`; bbq: `by_category` -> group -> {ambig, disambig} ->
    {accuracy, bias, intervals, ...} and `overall`."""
    request = result.request
    payload: dict[str, Any] = {
        "benchmark": request.benchmark, "status": result.status, "run_id": result.run_id,
        "from_cache": result.from_cache, "model": request.model,
        "predictions": request.predictions_name or None, "selection": request.selection(),
        "protocol": PROTOCOLS[request.benchmark], "resamples": request.resamples,
        "licence": D.licence(request.benchmark), "citation": D.CITATIONS[request.benchmark],
    }
    payload.update(result.summary)
    return payload


def _interval(row: dict[str, Any], name: str, scale: float = 1.0) -> tuple[float, float]:
    return row.get(f"{name}_ci_low", math.nan) * scale, row.get(f"{name}_ci_high", math.nan) * scale


def headline(result: StereotypeResult) -> tuple[str, str]:
    """(the headline number with its interval, the test sentence) of a complete run."""
    summary, benchmark = result.summary, result.request.benchmark
    if benchmark == "crows-pairs":
        overall = summary["overall"]
        low, high = _interval(overall, "pct_stereotype", 100)
        return (f"pct_stereotype {100 * overall['pct_stereotype']:.1f}% (95% interval {low:.1f}–{high:.1f}) over "
                f"{overall['n']} pairs; likelihood_diff {overall['likelihood_diff']:.3f}", overall["verdict"])
    if benchmark == "stereoset":
        overall = summary["overall"]
        parts = [f"{name.upper()} {overall[name]:.1f} ({_interval(overall, name)[0]:.1f}–"
                 f"{_interval(overall, name)[1]:.1f})" for name in ("lms", "ss", "icat") if f"{name}_ci_low" in overall]
        text = "; ".join(parts) or f"LMS {overall['lms']:.1f}, SS {overall['ss']:.1f}, ICAT {overall['icat']:.1f}"
        return (f"{text} over {overall['count']} clusters, {overall['n_terms']} target terms",
                overall.get("verdict", ""))
    overall = summary["overall"]
    parts, verdicts = [], []
    for condition, name in (("ambig", "s_AMB"), ("disambig", "s_DIS")):
        if condition in overall:
            cell = overall[condition]
            parts.append(f"{name} {cell['bias']:+.3f} ({cell['bias_ci_low']:+.3f}–{cell['bias_ci_high']:+.3f}), "
                         f"accuracy {cell['accuracy']:.2f} on {cell['n']} {condition} items")
            verdicts.append(cell["verdict"])
    return "; ".join(parts), " ".join(verdicts)


def breakdown(result: StereotypeResult) -> pd.DataFrame:
    """One row per bias type / split and domain / category and condition, with intervals."""
    summary, benchmark = result.summary, result.request.benchmark
    rows = []
    if benchmark == "crows-pairs":
        for name, stat in [("overall", summary["overall"]), *summary["by_bias_type"].items()]:
            rows.append({"bias_type": name, "n": stat["n"], "pct_stereotype": 100 * stat["pct_stereotype"],
                         "low": 100 * stat["pct_stereotype_ci_low"], "high": 100 * stat["pct_stereotype_ci_high"],
                         "likelihood_diff": stat["likelihood_diff"], "ties": stat["n_ties"],
                         "p_value": stat["p_value"]})
    elif benchmark == "stereoset":
        for split in D.STEREOSET_SPLITS:
            for domain, stat in summary.get(split, {}).items():
                rows.append({"split": split, "domain": domain, "clusters": stat["count"], "terms": stat["n_terms"],
                             **{k: stat.get(k, math.nan) for k in ("lms", "lms_ci_low", "lms_ci_high", "ss",
                                                                   "ss_ci_low", "ss_ci_high", "icat",
                                                                   "icat_ci_low", "icat_ci_high")}})
    else:
        for group, cells in [*summary["by_category"].items(), ("overall", summary["overall"])]:
            for condition, cell in cells.items():
                rows.append({"category": group, "condition": condition, "items": cell["n"],
                             "templates": cell["n_templates"], "accuracy": cell["accuracy"],
                             "bias": cell["bias"], "bias_low": cell["bias_ci_low"], "bias_high": cell["bias_ci_high"]})
    return pd.DataFrame(rows)


def drill_down(result: StereotypeResult) -> pd.DataFrame:
    """Items sorted by how strongly the model separates them: CrowS-Pairs by |gap| (largest first), StereoSet by
    |stereotype − anti-stereotype|, BBQ by the margin of the predicted answer over the runner-up."""
    frame = result.items.copy()
    if frame.empty:
        return frame
    if result.request.benchmark == "crows-pairs":
        frame["gap"] = frame["diff"].abs()
    elif result.request.benchmark == "stereoset":
        frame["gap"] = (frame["stereotype"] - frame["anti-stereotype"]).abs()
    else:
        ordered = np.sort(frame[["logprob0", "logprob1", "logprob2"]].to_numpy(dtype=float), axis=1)
        frame["gap"] = ordered[:, 2] - ordered[:, 1]
    return frame.sort_values("gap", ascending=False, kind="stable").reset_index(drop=True)


def stored_crows_gaps(store: Any, run_id: str) -> pd.Series:
    """A stored CrowS-Pairs run's gaps d = log p(sent_more) − log p(sent_less), by pair id."""
    rows = store.rows(run_id)
    table = rows.pivot_table(index="item", columns="variant", values="value", aggfunc="first")
    if not {"more", "less"} <= set(table.columns):
        raise ValueError(f"run {run_id} is not a CrowS-Pairs run of the stereotype study")
    return (table["more"] - table["less"]).dropna()


def compare_crows_runs(store: Any, run_a: str, run_b: str, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Two stored CrowS-Pairs runs (two models) side by side on the pairs both scored, paired (`stats.crows_paired`)."""
    from fairness_core.stereotypes.stats import crows_paired

    a, b = stored_crows_gaps(store, run_a), stored_crows_gaps(store, run_b)
    shared = a.index.intersection(b.index)
    if not len(shared):
        raise ValueError(f"runs {run_a} and {run_b} share no pair")
    return {"run_a": run_a, "run_b": run_b, "shared_pairs": len(shared),
            **crows_paired(a.loc[shared].to_numpy(), b.loc[shared].to_numpy(), resamples, seed)}
