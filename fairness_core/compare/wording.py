"""Comparison results in sentences for people (the Compare page's headline, the report, the CLI), and markdown
bullets from the docs as plain HTML (the report's "Deviations from the paper")."""

from __future__ import annotations

import html
import re
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.bias.disparity import ALPHA, p_text
from fairness_core.compare.numbers import format_number

ALL_FAMILIES = "all families"


def statistic_words(metric: str) -> str:
    """negative_sentiment_disparity -> "disparity in negative sentiment"; offensive_prob_eq1_bias -> "Eq. 1 bias
    (offensive prob)"; negative_sentiment_rate -> "negative sentiment rate"."""
    if metric.endswith("_disparity"):
        return f"disparity in {metric[: -len('_disparity')].replace('_', ' ')}"
    if metric.endswith("_eq1_bias"):
        return f"Eq. 1 bias ({metric[: -len('_eq1_bias')].replace('_', ' ')})"
    return metric.replace("_", " ")


def difference_sentence(row: pd.Series | dict[str, Any]) -> str:
    """One comparison row as a sentence: what changes, from what to what, by how much, how sure, how paired.

    e.g. "top_p 0.5 → 0.95: the gender disparity in negative sentiment goes from 0.4 to 0.52 (+0.12; 95% interval
    −0.05 to 0.29, paired by 8 prompts): the interval includes 0, so these runs may not differ here."
    """
    get = row.get
    family = get("family")
    where = ""
    if family == ALL_FAMILIES:
        where = " (mean over families)"
    elif family not in (None, "") and family == family:
        where = f" between {family} groups"
    elif get("attribute"):
        where = f" on {get('attribute')}"
    # a disparity is compared on the bias-corrected estimates of both sides (compare.align), so it says those
    corrected = all(_finite(get(f"run_{side}_corrected")) for side in "ab")
    first, second = ("run_a_corrected", "run_b_corrected") if corrected else ("run_a", "run_b")
    scale = max(abs(float(get(first) or 0)), abs(float(get(second) or 0)), 1.0)
    a, b = format_number(get(first), scale), format_number(get(second), scale)
    difference = float(get("difference")) if get("difference") is not None else float("nan")
    change = format_number(difference, scale)
    change = change if change.startswith("-") or change in ("0", "—") else f"+{change}"
    low, high = get("ci_low"), get("ci_high")
    if low is None or high is None or low != low or high != high:
        sure = "no interval (a side has fewer than two units)"
        verdict = ""
    else:
        sure = f"95% interval {format_number(low, scale)} to {format_number(high, scale)}"
        verdict = (": the interval includes 0, so the two may not differ here" if low <= 0 <= high else
                   ": the interval excludes 0")
        q = get("q_difference")
        if low > 0 or high < 0:  # a screen of several line-ups: the verdict follows its q (issue 42 §2)
            if _finite(q) and float(q) >= ALPHA:
                verdict += (f", but not after the false-discovery adjustment over the comparison's line-ups "
                            f"(q = {float(q):.2f}, Benjamini-Hochberg), so treat it as a lead")
            elif _finite(q):
                verdict += f" (q {p_text(float(q))}, Benjamini-Hochberg over the comparison's line-ups)"
    what = get("contrast") or f"{get('arm_a')} → {get('arm_b')}"
    statistic = ("bias-corrected " if corrected else "") + statistic_words(str(get("metric")))
    alone = ""
    if all(_finite(get(f"run_{side}_p_value")) for side in "ab"):
        alone = (f" Each alone, tested for no disparity: p {p_text(float(get('run_a_p_value')))} and "
                 f"p {p_text(float(get('run_b_p_value')))}.")
    return (f"{what}: the {statistic}{where} goes from {a} to {b} ({change}; {sure}, {get('pairing')}){verdict}."
            + alone)


def _finite(value: Any) -> bool:
    try:
        return value is not None and bool(np.isfinite(float(value)))
    except (TypeError, ValueError):
        return False


def headline(rows: pd.DataFrame, gaps: dict[str, list[str]] | None = None) -> list[str]:
    """The sentences a decoding comparison opens with: the disparity in negative sentiment (or else the first
    group statistic) per contrast, averaged over families when there are several, else for the one family.
    `gaps` (`Comparison.gaps`: per run id, what its request covers that the comparison lacks) is said in the
    sentence of each contrast that involves the run, so a partial comparison never reads as the full one."""
    if rows.empty:
        return []
    statistics = rows[rows["metric"].str.endswith(("_disparity", "_eq1_bias"))]
    if statistics.empty:
        return []
    metric = "negative_sentiment_disparity" if (statistics["metric"] == "negative_sentiment_disparity").any() else \
        str(statistics["metric"].iloc[0])
    chosen = statistics[statistics["metric"] == metric]
    overall = chosen[chosen["family"] == ALL_FAMILIES]
    chosen = overall if not overall.empty else chosen
    return [difference_sentence(row) + gap_words(gaps, row.get("run_a_id"), row.get("run_b_id"))
            for _, row in chosen.iterrows()]


def gap_words(gaps: dict[str, list[str]] | None, *run_ids: Any) -> str:
    """" Not compared: run ab12 leaves out 4 of its request's 12 prompts: …." for the runs named, else ""."""
    said = [gap for run_id in dict.fromkeys(run_ids) for gap in (gaps or {}).get(str(run_id), [])]
    return f" Not compared: {'; '.join(said)}." if said else ""


def pairing_summary(rows: pd.DataFrame, total: int | None = None) -> str:
    """How the line-ups shown paired, in the words of their `pairing` column, so a caption never contradicts a
    row: "12 of 40 aligned line-ups shown: 4 paired, 8 partly paired (only some prompts on both sides), 0
    unpaired; a unit is a prompt"."""
    if rows.empty:
        return "no aligned line-up shown"
    paired = int(rows["paired"].astype(bool).sum())
    none = int((rows["n_shared"] == 0).sum()) if "n_shared" in rows else 0
    partly = len(rows) - paired - none
    units = ", ".join(sorted(set(rows["unit"].astype(str)))) if "unit" in rows else "unit"
    shown = f"{len(rows)} of {total} aligned line-ups shown" if total is not None else f"{len(rows)} line-ups"
    return (f"{shown}: {paired} paired (the same {units}s on both sides), {partly} partly paired (some {units}s "
            f"on one side only), {none} unpaired (no {units} in common)")


_INLINE = (
    (re.compile(r"\*\*(.+?)\*\*"), r"<b>\1</b>"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<i>\1</i>"),
    (re.compile(r"\[([^\]]+)\]\([^)]+\)"), r"\1"),
)


def markdown_inline_html(text: str) -> str:
    """A docs bullet as HTML: text escaped, `code`, **bold**, *italic* and [links](…) rendered, lines joined."""
    text = " ".join(part.strip() for part in str(text).replace("\\n", " ").splitlines())
    pieces = re.split(r"(`[^`]+`)", text)
    out = []
    for piece in pieces:
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            out.append(f"<code>{html.escape(piece[1:-1])}</code>")
            continue
        escaped = html.escape(piece, quote=False)
        for pattern, replacement in _INLINE:
            escaped = pattern.sub(replacement, escaped)
        out.append(escaped)
    return "".join(out)
