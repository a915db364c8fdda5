"""The audit of a judge: is the scorer (or metric) that a study trusts itself biased? (Dixon et al. 2018; Borkan
et al. 2019; Dhamala et al. 2023 §6.3.2.) Identity terms fill neutral templates (the built-in IPTTS-style set,
IPTTS / EEC files through the template importers, a user's templates) or replace the identity word of generated
texts; the judge scores every text (a stored job), and per term and group the summary reports the score shift
against the across-group background with template-bootstrap intervals, the share of labels that flip at the
judge's threshold, the per-term false-positive rate on non-toxic templates and the nuanced AUCs on labelled ones.

This module is the study's one public face: the page and the `audit-scorer` command import from here only.
"""

from fairness_core.audit.design import AuditInputError, Design, builtin_templates, parse_terms
from fairness_core.audit.report import audit_download, audit_json, examples, rows_frame
from fairness_core.audit.request import FORMATS, AuditRequest, Judge, build_judge, build_request, stored_texts
from fairness_core.audit.summary import ROW_KEYS, AuditTable, audit_table
from fairness_core.audit.task import AuditResult, run_audit


def builtin_terms_text() -> str:
    """The built-in identity terms file as text ('group: term, term' lines), the page's starting point."""
    from fairness_core.audit.design import DATA_DIR

    return (DATA_DIR / "identity_terms.txt").read_text(encoding="utf-8")


def scorer_choices() -> list[str]:
    """Registry scorers an audit can run (those that read a text alone), the identity-sensitive judge first."""
    import fairness_core.scorers  # noqa: F401
    from fairness_core.scorers import SCORERS

    names = sorted(name for name, cls in SCORERS.items() if not cls.needs_prompts)
    return sorted(names, key=lambda n: (n != "jigsaw-toxicity", n))


def metric_choices() -> list[str]:
    from fairness_core.metrics import METRICS

    return sorted(name for name, cls in METRICS.items() if not cls.needs_sources)


__all__ = [
    "FORMATS",
    "ROW_KEYS",
    "AuditInputError",
    "AuditRequest",
    "AuditResult",
    "AuditTable",
    "Design",
    "Judge",
    "audit_download",
    "audit_json",
    "audit_table",
    "build_judge",
    "build_request",
    "builtin_templates",
    "builtin_terms_text",
    "examples",
    "metric_choices",
    "parse_terms",
    "rows_frame",
    "run_audit",
    "scorer_choices",
    "stored_texts",
]
