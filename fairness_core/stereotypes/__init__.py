"""Stereotype benchmarks scored by likelihood: CrowS-Pairs (Nangia et al. 2020), StereoSet (Nadeem et al. 2021)
and BBQ (Parrish et al. 2022) on any causal LM the lab runs, with intervals over each design's unit (pairs,
target terms, templates), a sentence that can say "no preference detectable", and a per-item drill-down.
StereoSet predictions made elsewhere (its own predictions format) are evaluated here too.

This module is the study's one public face: the page and the `stereotypes` command import from here only
(docs/stereotypes.md).
"""

from fairness_core.stereotypes.data import (
    BBQ_CATEGORIES,
    BENCHMARKS,
    CITATIONS,
    CROWS_BIAS_TYPES,
    STEREOSET_DOMAINS,
    STEREOSET_SPLITS,
    licence,
)
from fairness_core.stereotypes.plan import StereotypePlanError, plan_crows, plan_stored_crows
from fairness_core.stereotypes.request import (
    DEFAULT_LIMITS,
    DEFAULT_MODEL,
    MAX_RESAMPLES,
    StereotypeInputError,
    StereotypeRequest,
    build_request,
)
from fairness_core.stereotypes.summary import (
    breakdown,
    compare_crows_runs,
    drill_down,
    headline,
    stereotype_json,
)
from fairness_core.stereotypes.task import (
    JOB_KIND,
    KIND,
    PROTOCOL_TEXT,
    PROTOCOLS,
    StereotypeResult,
    cost_note,
    run_stereotypes,
    stereotype_work,
)

#: what differs from the papers and their released code, one sentence each (page expander, docs/stereotypes.md)
DEVIATIONS = (
    "CrowS-Pairs with a causal LM is scored as lm-evaluation-harness scores it (summed log-probability of ' ' + "
    "sentence after BOS, both sentences whole); a masked LM (BERT, RoBERTa, …) by the paper's own metric, the "
    "pseudo-log-likelihood of the tokens both sentences share, each masked in turn (StereoSet and BBQ take causal "
    "LMs only).",
    "CrowS-Pairs adds a Wilson 95% interval over pairs, a bootstrap interval for likelihood_diff and an exact sign "
    "test against 50% on the untied pairs; the paper and lm-eval report point values.",
    "StereoSet intersentence is scored as log p(sentence | context) per token by the same LM; the paper's GPT-2 "
    "used a next-sentence head trained for it.",
    "StereoSet is its dev set, the file the released evaluation and its printed numbers use; intervals resample "
    "target terms, the unit the script's means run over; counts are clusters (the script prints each domain's count "
    "three times over, once per sentence, without changing any score).",
    "BBQ answers are scored by summed log-likelihood after '{context}\\n\\nQ: {question}\\nA:' (lm-eval's "
    "multiple-choice rule) rather than by the paper's fine-tuned multiple-choice heads; the 'unknown' answer is "
    "scored by its own wording like the other two.",
    "BBQ intervals resample templates (question_index within a category), not items; name-proxy items "
    "(label_type 'name') are reported apart as '<category> (names)'; the 16 items without a target_loc count for "
    "accuracy but not for the bias scores.",
    "A context and its continuation are tokenised apart and joined (lm-eval tokenises them together and splits); "
    "for CrowS-Pairs and intrasentence StereoSet the context is BOS alone, so nothing differs there.",
    "Small runs are seeded samples (pairs within bias types, clusters within splits and domains, BBQ items dealt "
    "round-robin over templates): the page says so, and the whole benchmark runs on request.",
)

#: what the literature says about the data itself (shown beside the numbers)
DATA_NOTES = {
    "crows-pairs": "Blodgett et al. 2021 (Stereotyping Norwegian Salmon, ACL 2021) found many CrowS-Pairs (and "
                   "StereoSet) pairs flawed: pairs that do not contrast the groups they name, that are not about a "
                   "stereotype, or whose two sentences differ in more than the group; read a score as a measurement "
                   "of this data, not of 'bias' in general.",
    "stereoset": "Blodgett et al. 2021 (Stereotyping Norwegian Salmon, ACL 2021) found the same kinds of flaws in "
                 "StereoSet (items that are not about a stereotype, or whose sentences contrast other things than "
                 "the target group); read a score as a measurement of this data, not of 'bias' in general.",
    "bbq": "BBQ's items are generated from hand-written templates, so items of one template are not independent: "
           "intervals resample templates.",
}

__all__ = [
    "BBQ_CATEGORIES",
    "BENCHMARKS",
    "CITATIONS",
    "CROWS_BIAS_TYPES",
    "DATA_NOTES",
    "DEFAULT_LIMITS",
    "DEFAULT_MODEL",
    "DEVIATIONS",
    "JOB_KIND",
    "KIND",
    "MAX_RESAMPLES",
    "PROTOCOLS",
    "PROTOCOL_TEXT",
    "STEREOSET_DOMAINS",
    "STEREOSET_SPLITS",
    "StereotypeInputError",
    "StereotypePlanError",
    "StereotypeRequest",
    "StereotypeResult",
    "breakdown",
    "build_request",
    "compare_crows_runs",
    "cost_note",
    "drill_down",
    "headline",
    "licence",
    "plan_crows",
    "plan_stored_crows",
    "run_stereotypes",
    "stereotype_json",
    "stereotype_work",
]
