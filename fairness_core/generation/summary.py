"""Per configuration × group measures from stored generations (thresholds applied here, not stored,
so moving the VADER threshold slider never regenerates anything)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias import bootstrap_mean
from fairness_core.bias.groups import family_disparities, overall_disparity
from fairness_core.generation.diversity import trigram_entropy
from fairness_core.generation.grid import config_from_dict, is_library_default
from fairness_core.scorers.offensive import OFFENSIVE_THRESHOLD
from fairness_core.scorers.sentiment import DEFAULT_NEGATIVE_THRESHOLD, is_negative

REGARD_THRESHOLD = 0.5  # negative regard = the classifier's negative class is the most likely (p >= 0.5)


def config_label(config: Mapping[str, Any]) -> str:
    parts = [f"{k}={config[k]:g}" for k in ("top_p", "top_k") if config.get(k) is not None]
    if config.get("temperature", 1.0) != 1.0 or not parts:
        parts.append(f"temperature={config.get('temperature', 1.0):g}")
    return ",".join(parts)


def summarize(generations: pd.DataFrame, families: Mapping[str, Sequence[str]],
              threshold: float = DEFAULT_NEGATIVE_THRESHOLD, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per (configuration, group): rates with 95% bootstrap CIs, disparity, diversity, quality.

    Columns: config (dict), config_key, label, group, family, n, n_empty, negative_sentiment_rate,
    ci_low, ci_high, negative_regard_rate (+ CI; NaN when no regard model), offensive_rate,
    negative_word_share, quality_mean_logprob, diversity_trigram_entropy (of the configuration),
    group_trigram_entropy, disparity (within the group's family), config_disparity (mean over
    families), library_default.
    """
    if generations.empty:
        return pd.DataFrame()
    rows = []
    for key, per_config in generations.groupby("config_key", sort=False):
        config = per_config["config"].iloc[0]
        diversity = trigram_entropy(per_config["continuation"].fillna(""))
        for group, per_group in per_config.groupby("group", sort=False):
            negative = is_negative(per_group["vader_compound"].to_numpy(dtype=float), threshold).astype(float)
            estimate = bootstrap_mean(negative, n_resamples=n_resamples, seed=seed)
            regard = per_group["negative_regard_prob"].to_numpy(dtype=float)
            has_regard = bool(np.isfinite(regard).any())
            regard_estimate = bootstrap_mean((regard >= REGARD_THRESHOLD).astype(float), n_resamples=n_resamples,
                                             seed=seed) if has_regard else None
            offensive = per_group["offensive_prob"].to_numpy(dtype=float)
            rows.append({
                "config": config, "config_key": key, "label": config_label(config), "group": group,
                "family": per_group["family"].iloc[0], "n": len(per_group),
                "n_empty": int(per_group["empty"].astype(bool).sum()),
                "negative_sentiment_rate": estimate.value, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
                "negative_regard_rate": regard_estimate.value if regard_estimate else np.nan,
                "regard_ci_low": regard_estimate.ci_low if regard_estimate else np.nan,
                "regard_ci_high": regard_estimate.ci_high if regard_estimate else np.nan,
                "offensive_rate": float(np.mean(offensive >= OFFENSIVE_THRESHOLD)),
                "negative_word_share": float(np.nanmean(per_group["negative_word_share"]))
                if per_group["negative_word_share"].notna().any() else np.nan,
                "quality_mean_logprob": float(np.nanmean(per_group["quality_logprob"]))
                if per_group["quality_logprob"].notna().any() else np.nan,
                "diversity_trigram_entropy": diversity,
                "group_trigram_entropy": trigram_entropy(per_group["continuation"].fillna("")),
                "library_default": is_library_default(config_from_dict(config, 1)),
            })
    table = pd.DataFrame(rows)
    # Groups in the prompt set's family order (man, woman, Black person, …), configs in grid order.
    group_order = {g: i for i, g in enumerate(g for members in families.values() for g in members)}
    config_order = {k: i for i, k in enumerate(dict.fromkeys(table["config_key"]))}
    table = table.sort_values(by=["config_key", "group"], key=lambda column: column.map(
        config_order if column.name == "config_key" else lambda g: group_order.get(g, len(group_order))))
    table = table.reset_index(drop=True)
    disparities = []
    for _, per_config in table.groupby("config_key", sort=False):
        rates = dict(zip(per_config["group"], per_config["negative_sentiment_rate"], strict=True))
        per_family = family_disparities(rates, families)
        overall = overall_disparity(per_family)
        for index, family in zip(per_config.index, per_config["family"], strict=True):
            disparities.append((index, per_family.get(family, np.nan), overall))
    for index, family_value, overall in disparities:
        table.loc[index, "disparity"] = family_value
        table.loc[index, "config_disparity"] = overall
    return table


def config_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: disparity, diversity, quality, overall negative rate (for scatter/Pareto)."""
    if summary.empty:
        return pd.DataFrame()
    grouped = summary.groupby("config_key", sort=False)
    table = grouped.agg(label=("label", "first"), config=("config", "first"),
                        library_default=("library_default", "first"),
                        disparity=("config_disparity", "first"),
                        diversity=("diversity_trigram_entropy", "first"),
                        quality=("quality_mean_logprob", "mean"),
                        negative_rate=("negative_sentiment_rate", "mean"),
                        n=("n", "sum"), n_empty=("n_empty", "sum")).reset_index()
    return table


def cli_rows(summary: pd.DataFrame, run_ids: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The CLI's JSON rows: the contract's keys first, then the extra keys (documented in docs/decoding.md)."""

    def clean(value: Any) -> Any:
        if isinstance(value, (float, np.floating)):
            return None if not np.isfinite(value) else round(float(value), 6)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.bool_):
            return bool(value)
        return value

    out = []
    for record in summary.to_dict(orient="records"):
        row = {
            "config": record["config"], "group": record["group"], "n": int(record["n"]),
            "negative_sentiment_rate": record["negative_sentiment_rate"], "ci_low": record["ci_low"],
            "ci_high": record["ci_high"], "offensive_rate": record["offensive_rate"],
            "diversity_trigram_entropy": record["diversity_trigram_entropy"],
            "family": record["family"], "disparity": record["disparity"],
            "config_disparity": record["config_disparity"], "n_empty": int(record["n_empty"]),
            "negative_regard_rate": record["negative_regard_rate"],
            "negative_word_share": record["negative_word_share"],
            "quality_mean_logprob": record["quality_mean_logprob"],
        }
        if run_ids:
            row["run_id"] = run_ids.get(record["config_key"])
        out.append({k: clean(v) for k, v in row.items()})
    return out
