"""The audit of a judge: is the scorer (or metric) that a study trusts itself biased? (Dixon et al. 2018; Borkan
et al. 2019; Dhamala et al. 2023 §6.3.2.) Identity terms fill neutral templates (the built-in IPTTS-style set,
IPTTS / EEC files through the template importers, a user's templates) or replace the identity word of generated
texts; the judge scores every text (a stored job), and per term and group the summary reports the score shift
against the across-group background with intervals over the templates' clusters, the share of labels that flip at the
judge's threshold, the per-term false-positive rate on non-toxic templates and the nuanced AUCs on labelled ones.

This module is the study's one public face: the page and the `audit-scorer` command import from here only.
"""

from fairness_core.audit.design import AuditInputError, Design, builtin_templates, parse_terms
from fairness_core.audit.llm import (
    BUILTIN_ANSWERS,
    DEFAULT_JUDGE_MODEL,
    STATEMENT,
    OrderBiasReport,
    consistency_audit,
    identity_statement_audit,
    order_bias_audit,
    pairwise_preference,
    preference_sentence,
    statement_terms,
)
from fairness_core.audit.plan import plan_audit, plan_stored_audit
from fairness_core.audit.report import audit_download, audit_json, examples, rows_frame
from fairness_core.audit.request import (
    CONFIRM_AUDIT_TEXTS,
    FORMATS,
    MAX_AUDIT_TEXTS,
    MAX_TEXTS_CHARS,
    AuditRequest,
    Judge,
    build_judge,
    build_request,
    stored_texts,
)
from fairness_core.audit.summary import ROW_KEYS, AuditTable, audit_table
from fairness_core.audit.task import JOB_KIND, AuditResult, audit_parts, audit_work, run_audit

#: what differs from the papers, one sentence each (the page's expander; docs/audit.md "Deviations from the paper")
DEVIATIONS = (
    "Texts: Dixon et al.'s released 77k bias-madlibs file is not available offline, so the built-in set is 43 "
    "templates written by the project after their patterns (3 plain, 4 × 5 non-toxic, 4 × 5 toxic), filled with "
    "their 50 identity adjectives grouped by the project into six groups (2,150 texts); their file can be uploaded.",
    "Shift: each term is compared with the across-group background of its template (VBCM's β, Quiroga et al. 2025 "
    "§3.1) rather than with the overall mean, so a group with more terms does not pull the reference.",
    "Intervals: every statistic carries a 95% interval over the design's clusters (a delete-a-cluster jackknife "
    "with t, over the built-in set's 11 patterns or an IPTTS file's templates), each term's shift a test with "
    "Benjamini-Hochberg q-values over the terms, the largest shift a max-T interval, and FPED a permutation test "
    "of 'every term alike'; Dixon et al. and Borkan et al. report point values.",
    "Swapped texts: Dhamala et al.'s Table 3 edits generated texts by shuffling word positions (a quality check); "
    "here the identity word is swapped (a counterfactual check of the judge), and their shuffle is not implemented.",
)


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
    "BUILTIN_ANSWERS",
    "CONFIRM_AUDIT_TEXTS",
    "DEFAULT_JUDGE_MODEL",
    "DEVIATIONS",
    "FORMATS",
    "JOB_KIND",
    "MAX_AUDIT_TEXTS",
    "MAX_TEXTS_CHARS",
    "ROW_KEYS",
    "STATEMENT",
    "AuditInputError",
    "AuditRequest",
    "AuditResult",
    "AuditTable",
    "Design",
    "Judge",
    "OrderBiasReport",
    "audit_download",
    "audit_json",
    "audit_parts",
    "audit_table",
    "audit_work",
    "build_judge",
    "build_request",
    "builtin_templates",
    "builtin_terms_text",
    "consistency_audit",
    "examples",
    "identity_statement_audit",
    "metric_choices",
    "order_bias_audit",
    "pairwise_preference",
    "parse_terms",
    "plan_audit",
    "plan_stored_audit",
    "preference_sentence",
    "rows_frame",
    "run_audit",
    "scorer_choices",
    "statement_terms",
    "stored_texts",
]
