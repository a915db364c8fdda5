"""Template adaptation (Quiroga et al. 2025): do domain-adapted bias templates measure what naturally
occurring text measures? VBCM bias vectors (vbcm.py), template importers (templates.py), naturally
occurring examples (noe.py), LLM rewriting (rewrite.py), the pipeline (request.py, task.py, summary.py),
comparisons (compare.py) and template characteristics (characteristics.py).

This module is the study's one public face: the page and the adaptation commands import from here and nothing
else of the core.
"""

from fairness_core.adaptation.noe import MAX_TEXT_CHARS as MAX_CORPUS_TEXT_CHARS
from fairness_core.adaptation.noe import read_corpus
from fairness_core.adaptation.request import AdaptationInputError, AdaptationRequest, build_request
from fairness_core.adaptation.rewrite import ACCEPTED, PAPER_PROMPT, QUOTED, UNCHANGED
from fairness_core.adaptation.summary import (
    noe_counts,
    readable_comparisons,
    report_download,
    report_json,
    report_text,
    run_report,
    tables,
)
from fairness_core.adaptation.task import AdaptationResult, run_adaptation
from fairness_core.adaptation.templates import (
    TemplateImportError,
    default_identity_terms_text,
    import_templates,
    load_identity_terms,
    parse_templates_text,
    read_csv_table,
)
from fairness_core.adaptation.vbcm import (
    VBCMInputError,
    check_scores,
    paper_table_1,
    read_scores_csv,
    vbcm,
    vbcm_rows,
)

#: the BOLD domains whose Wikipedia sentences can serve as the domain corpus
BOLD_DOMAINS = ("gender", "race", "profession", "religious_ideology", "political_ideology")

__all__ = [
    "ACCEPTED",
    "BOLD_DOMAINS",
    "MAX_CORPUS_TEXT_CHARS",
    "PAPER_PROMPT",
    "QUOTED",
    "UNCHANGED",
    "AdaptationInputError",
    "AdaptationRequest",
    "AdaptationResult",
    "TemplateImportError",
    "VBCMInputError",
    "build_request",
    "check_scores",
    "default_identity_terms_text",
    "import_templates",
    "load_identity_terms",
    "noe_counts",
    "paper_table_1",
    "parse_templates_text",
    "read_corpus",
    "read_csv_table",
    "read_scores_csv",
    "readable_comparisons",
    "report_download",
    "report_json",
    "report_text",
    "run_adaptation",
    "run_report",
    "tables",
    "vbcm",
    "vbcm_rows",
]
