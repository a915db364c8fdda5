"""The judge audit's request: which judge (a registry scorer or metric, the column read and its decision
threshold), which texts (templates x identity terms, an imported IPTTS / EEC file, or texts whose identity word is
swapped), and the bootstrap settings. Built and validated from plain values by `build_request`, shared by the CLI
and the page; every problem is one sentence (`AuditInputError`) before anything runs."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from fairness_core.audit.design import (
    DATA_DIR,
    AuditInputError,
    Design,
    builtin_templates,
    design_from_import,
    design_from_swaps,
    design_from_templates,
    parse_labelled_templates,
    parse_terms,
)

#: template sources: the built-in IPTTS-style set, a user's template file, an IPTTS or EEC file through the
#: template importers, or generated texts whose identity word is swapped (a text file or a stored run)
FORMATS = ("builtin", "templates", "iptts", "eec", "texts")
MAX_RESAMPLES = 20_000
#: generated texts to swap (pasted, a file, or a stored run's) are read up to this many characters: a 2.5 MB paste
#: made 2 million texts to judge and held 7 GB while the page built them (issue 35)
MAX_TEXTS_CHARS = 1_000_000
#: an audit judges at most this many texts (templates x identity terms): one sentence refuses more
MAX_AUDIT_TEXTS = 200_000
#: above this many texts to judge, the page shows the estimated time and asks for a tick before it starts
CONFIRM_AUDIT_TEXTS = 20_000


@dataclass(frozen=True)
class Judge:
    """A registry scorer or metric and how its number is read: the column, and (scorers) the threshold and the
    direction at which a text counts as flagged (toxic, negative, offensive)."""

    kind: str  # scorer | metric
    name: str
    options: tuple[tuple[str, Any], ...] = ()
    column: str = ""
    threshold: float | None = None
    op: str = ">="  # flagged when value op threshold; "<=" for VADER's negative sentiment
    signature: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def label(self) -> str:
        return f"{self.name}:{self.column}" if self.column else self.name

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "options": dict(self.options), "column": self.column,
                "threshold": self.threshold, "op": self.op, "signature": self.signature}

    def flagged(self, values: Any) -> Any:
        """1.0 where a value is flagged at the threshold, 0.0 where not, NaN where there is no value."""
        import numpy as np

        data = np.asarray(values, dtype=float)
        if self.threshold is None:
            return np.full(data.shape, np.nan)
        hit = data >= self.threshold if self.op == ">=" else data <= self.threshold
        return np.where(np.isnan(data), np.nan, hit.astype(float))

    def badness(self, values: Any) -> Any:
        """The value oriented so that larger means 'more flagged' (for the AUCs)."""
        import numpy as np

        data = np.asarray(values, dtype=float)
        return data if self.op == ">=" else -data


def build_judge(scorer: str | None = None, metric: str | None = None, column: str | None = None,
                threshold: float | None = None, options: dict[str, Any] | None = None) -> Judge:
    """A scorer or a metric of the registry, checked to run here (a missing package is one sentence)."""
    from fairness_core.models.interfaces import ModelUnavailableError

    options = dict(options or {})
    if (scorer is None) == (metric is None):
        raise AuditInputError("name exactly one judge: a scorer (--scorer) or a metric (--metric)")
    if threshold is not None and not (isinstance(threshold, int | float) and math.isfinite(threshold)):
        raise AuditInputError(f"the threshold must be a finite number (got {threshold!r})")
    if scorer is not None:
        import fairness_core.scorers  # noqa: F401  (registers the built-in scorers)
        from fairness_core.scorers import SCORERS, ScorerOptionError, scorer_from_request

        try:
            built = scorer_from_request(scorer, **options)
            built.check_available()
        except ScorerOptionError as error:
            raise AuditInputError(str(error)) from None
        except ModelUnavailableError as error:
            raise AuditInputError(f"scorer {scorer} cannot score here: {error}") from None
        if built.needs_prompts:
            raise AuditInputError(f"scorer {scorer} needs the prompts of generated texts; audit a scorer that "
                                  "reads a text alone")
        columns = built.columns
        chosen = column or next((m.column for m in SCORERS[scorer].measures if m.column in columns), columns[0])
        if chosen not in columns:
            raise AuditInputError(f"scorer {scorer} has no column {chosen!r}; its columns: {', '.join(columns)}")
        measure = next((m for m in SCORERS[scorer].measures if m.column == chosen and m.kind == "rate"), None)
        op = measure.op if measure is not None else ">="
        cut = threshold if threshold is not None else (measure.threshold if measure is not None else None)
        bounds = built.value_range(chosen)
        if threshold is not None and bounds is not None and not bounds[0] <= threshold <= bounds[1]:
            raise AuditInputError(f"the threshold {threshold:g} is outside the range of {scorer}'s column {chosen} "
                                  f"({bounds[0]:g} to {bounds[1]:g}), so it would flag every text or none; give one "
                                  f"between {bounds[0]:g} and {bounds[1]:g}")
        return Judge("scorer", scorer, tuple(sorted(options.items())), chosen,
                     None if cut is None else float(cut), op, built.signature())
    from fairness_core.metrics import METRICS, MetricOptionError, metric_from_request

    if metric not in METRICS:
        raise AuditInputError(f"unknown metric {metric!r}; known metrics: {', '.join(sorted(METRICS))}")
    try:
        built_metric = metric_from_request(metric, **options)
        built_metric.check_available()
    except MetricOptionError as error:
        raise AuditInputError(str(error)) from None
    except ModelUnavailableError as error:
        raise AuditInputError(f"metric {metric} cannot score here: {error}") from None
    if built_metric.needs_sources:
        raise AuditInputError(f"metric {metric} needs source texts; audit a metric of a candidate and a reference")
    outputs = tuple(built_metric.outputs)
    chosen = column or outputs[0]
    if chosen not in outputs:
        raise AuditInputError(f"metric {metric} has no output {chosen!r}; its outputs: {', '.join(outputs)}")
    return Judge("metric", str(metric), tuple(sorted(options.items())), chosen,
                 None if threshold is None else float(threshold), ">=", built_metric.signature())


@dataclass(frozen=True)
class AuditRequest:
    judge: Judge
    design: Design
    resamples: int = 1000
    seed: int = 0
    examples: int = 20  # texts shown per direction in the drill-down

    def record(self) -> dict[str, Any]:
        return {"judge": self.judge.record(), "design": self.design.record(), "resamples": self.resamples,
                "seed": self.seed}

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.record(), sort_keys=True, default=str).encode()).hexdigest()[:16]


def read_text_file(path: str | Path, what: str, data: bytes | None = None) -> str:
    """A UTF-8 text file (or an upload's bytes named `path`); one sentence when it cannot be read."""
    path = Path(path)
    try:
        raw = path.read_bytes() if data is None else data
    except OSError as error:
        raise AuditInputError(f"{what} {path} cannot be read ({error.strerror or type(error).__name__})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AuditInputError(f"{what} {path} is not UTF-8 text") from None


def build_request(scorer: str | None = "jigsaw-toxicity", metric: str | None = None, column: str | None = None,
                  threshold: float | None = None, options: dict[str, Any] | None = None,
                  fmt: str = "builtin", templates: str | Path | None = None, templates_data: bytes | None = None,
                  terms: str | Path | None = None, terms_data: bytes | None = None,
                  texts: Sequence[str] | None = None, texts_name: str = "texts",
                  resamples: int = 1000, seed: int = 0) -> AuditRequest:
    """Validate plain values into an audit request (nothing is scored yet).

    - `fmt` "builtin": the built-in IPTTS-style set (`data/audit/`); "templates": a file of one template per line
      with {person} (an optional label after a tab: toxic / non-toxic); "iptts" / "eec": the released files through
      the template importers; "texts": generated texts (`texts`, or a file of one per line) whose identity word is
      swapped for every other term (Dhamala et al.'s check of their classifiers, §6.3.2).
    - `terms`: a file of `group: term, term` lines (or the adaptation study's JSON); the built-in terms otherwise.
    """
    if fmt not in FORMATS:
        raise AuditInputError(f"unknown template format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if not (isinstance(resamples, int) and 0 <= resamples <= MAX_RESAMPLES):
        raise AuditInputError(f"resamples (sign flips of the max-T interval) must be a whole number between 0 and "
                              f"{MAX_RESAMPLES:,} (got {resamples!r})")
    terms_path = Path(terms) if terms is not None else DATA_DIR / "identity_terms.txt"
    term_groups = parse_terms(read_text_file(terms_path, "terms file", terms_data), terms_path.name)
    if fmt == "builtin":
        if templates is not None:
            raise AuditInputError("a templates file needs --format templates, iptts or eec")
        design = design_from_templates(builtin_templates(), term_groups, "built-in IPTTS-style templates",
                                       source="builtin")
    elif fmt == "texts":
        if texts is None:
            if templates is None:
                raise AuditInputError("the texts format needs texts: a file of one generated text per line, or a "
                                      "stored run")
            path = Path(templates)
            texts = read_text_file(path, "texts file", templates_data).splitlines()
            texts_name = path.name
        texts = list(texts)
        check_texts_size(texts, texts_name, len(term_groups_terms(term_groups)))
        design = design_from_swaps(texts, term_groups, texts_name)
    else:
        if templates is None:
            raise AuditInputError(f"the {fmt} format needs a templates file")
        path = Path(templates)
        if fmt == "templates":
            labelled = parse_labelled_templates(read_text_file(path, "templates file", templates_data), path.name)
            design = design_from_templates(labelled, term_groups, path.name)
        else:
            from fairness_core.adaptation.templates import TemplateImportError, import_templates

            try:
                imported = import_templates(fmt, path, data=templates_data)
            except TemplateImportError as error:
                raise AuditInputError(str(error)) from None
            design = design_from_import(imported, term_groups if terms is not None else None)
    n_texts = len(design.texts)
    if n_texts > MAX_AUDIT_TEXTS:
        raise AuditInputError(f"{design.name} makes {n_texts:,} texts to judge; an audit judges at most "
                              f"{MAX_AUDIT_TEXTS:,}: give fewer templates or identity terms")
    judge = build_judge(scorer if metric is None else None, metric, column, threshold, options)
    return AuditRequest(judge, design, int(resamples), int(seed))


def term_groups_terms(groups: dict[str, tuple[str, ...]]) -> list[str]:
    """Every identity term of the groups, once."""
    return list(dict.fromkeys(term for terms in groups.values() for term in terms))


def check_texts_size(texts: Sequence[str], name: str, n_terms: int) -> None:
    """Refuse, in one sentence and before any text is swapped, generated texts too large to audit: more than
    `MAX_TEXTS_CHARS` characters, or more distinct texts than `MAX_AUDIT_TEXTS` judged texts allow with every term
    swapped in."""
    characters = sum(len(str(text)) + 1 for text in texts)
    if characters > MAX_TEXTS_CHARS:
        raise AuditInputError(f"{name}: {characters:,} characters of text; an audit reads at most "
                              f"{MAX_TEXTS_CHARS:,}: give fewer texts")
    distinct = len({" ".join(str(text).split()) for text in texts} - {""})
    if distinct * max(n_terms, 1) > MAX_AUDIT_TEXTS:
        raise AuditInputError(f"{name}: {distinct:,} distinct texts, which with each of the {n_terms:,} identity "
                              f"terms swapped in make up to {distinct * n_terms:,} texts to judge; an audit judges at "
                              f"most {MAX_AUDIT_TEXTS:,}: give at most {MAX_AUDIT_TEXTS // max(n_terms, 1):,} texts or "
                              "fewer terms")


def stored_texts(store: Any, run_id: str) -> list[str]:
    """The texts of a stored generation run as its scorers read them (prompt + continuation, names redacted)."""
    from fairness_core.generation.task import load_generations

    frame = load_generations(store, [run_id])
    if frame.empty:
        raise AuditInputError(f"run {run_id} holds no generated texts (is it a generation run?)")
    column = frame["scored_text"] if "scored_text" in frame else pd.Series(dtype=str)
    return [str(t) for t in column.dropna()]
