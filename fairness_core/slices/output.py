"""The slice table for programs (`--json`, the issue's schema) and for people (a few lines of text)."""

from __future__ import annotations

import math
from typing import Any

from fairness_core.slices.cells import SliceTable

METHOD = ("cells over the chosen attributes; n = the design's units (a template shared by a family's groups is one "
          "unit); 95% cluster-bootstrap intervals over units (a rate's interval at least the Wilson interval at n "
          "units); gap to the rest tested at the unit: paired sign-flip where units hold the cell and the rest, else "
          "a permutation of units; Benjamini-Hochberg q-values over the tested cells; ranked by the worse side's "
          "interval bound of the gap")


def _number(value: Any) -> float | None:
    return None if value is None or not math.isfinite(float(value)) else float(value)


def table_json(table: SliceTable, record: dict[str, Any] | None = None) -> dict[str, Any]:
    """{measure, by, min_units, fdr, method, worse, cells: [...], examples, notes} (issue 46's schema, plus what a
    reader needs to judge it)."""
    cells = []
    for cell in table.cells.to_dict(orient="records"):
        cells.append({
            "attributes": dict(cell["attributes"]), "n_units": int(cell["n_units"]), "n_rows": int(cell["n_rows"]),
            **{k: _number(cell[k]) for k in ("value", "ci_low", "ci_high", "rest", "gap", "gap_ci_low",
                                             "gap_ci_high", "p_value", "q_value")},
            "test": cell["test"] or None, "n_unpaired": int(cell["n_unpaired"]), "flagged": bool(cell["flagged"]),
            "too_small": bool(cell["too_small"]), "direction": cell["direction"] or None,
        })
    out: dict[str, Any] = {"measure": table.measure, "by": table.by, "min_units": table.min_units, "fdr": table.fdr,
                           "method": METHOD, "worse": table.worse, "cells": cells, "notes": list(table.notes)}
    if record is not None:
        out["run_id"] = record.get("run_id")
        out["examples"] = record.get("examples", [])
        # the run's own attributes of prompts about several at once (gender, race), crossed by design: their
        # marginals and intersections are cells, an empty intersection listed with 0 units (issue 46 §1)
        out["attributes"] = list(record.get("attributes") or [])
        if record.get("read_with"):
            out["read_with"] = record["read_with"]  # thresholds, resamples, seed (`reading.settings`)
    return out


def _cell_name(attributes: dict[str, str]) -> str:
    return " × ".join(f"{name}={value}" for name, value in attributes.items())


def _fmt(value: Any, digits: int = 3) -> str:
    number = _number(value)
    if number is None:
        return "—"
    text = f"{number:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # -0.000 reads as a sign that is not there


def table_text(table: SliceTable, record: dict[str, Any] | None = None, limit: int = 20) -> str:
    """The ranked cells as lines: flagged cells marked `*`, too-small cells said so (never marked)."""
    lines = [f"slices of {table.measure}" + (f" in run {record['run_id']}" if record else "")
             + f" ({'higher' if table.worse == 'higher' else 'lower'} is worse; flagged: q <= {table.fdr:g}; "
             f"cells under {table.min_units} units are too small to test)"]
    cells = table.cells
    n_flagged = int(cells["flagged"].sum()) if not cells.empty else 0
    n_tested = int(cells["p_value"].notna().sum()) if not cells.empty else 0
    lines.append(f"{len(cells)} cells, {n_tested} tested, {n_flagged} flagged")
    if record and record.get("read_with_words"):  # the run's threshold and the resamples (`reading.settings`)
        lines.append(f"read with: {record['read_with_words']}")
    for cell in cells.head(limit).to_dict(orient="records"):
        mark = "*" if cell["flagged"] else " "
        if cell["too_small"]:
            verdict = "too small to test"
        elif math.isnan(float(cell["p_value"])):
            verdict = "not tested (nothing to set it against)"
        else:
            verdict = f"p={_fmt(cell['p_value'], 4)} q={_fmt(cell['q_value'], 4)}"
            if cell["flagged"]:
                verdict += f", flagged: {cell['direction']} than the rest"
        lines.append(f"{mark} {_cell_name(cell['attributes'])}: n={cell['n_units']} units, {_fmt(cell['value'])} "
                     f"[{_fmt(cell['ci_low'])}, {_fmt(cell['ci_high'])}], gap {_fmt(cell['gap'])} "
                     f"[{_fmt(cell['gap_ci_low'])}, {_fmt(cell['gap_ci_high'])}], {verdict}")
    if len(cells) > limit:
        lines.append(f"… and {len(cells) - limit} more cells (--json lists them all)")
    for example in (record or {}).get("examples", []):
        lines.append(f"examples of {_cell_name(example['attributes'])}:")
        for row in example["rows"]:
            text = " ".join(str(row.get("text") or "").split())
            lines.append(f"  score {_fmt(row.get('score'))} · {row.get('setting')} · {row.get('prompt')!r} -> "
                         f"{text[:100]!r}")
    lines += list(table.notes)
    return "\n".join(lines)
