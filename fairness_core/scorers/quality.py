"""Quality proxy: mean token log-probability of a continuation given its prompt under a scorer LM.

This is a *proxy* for the paper's human quality ratings (fluency/coherence): it rewards text the
scorer finds likely, which also favours bland, repetitive text. With the generator as its own
scorer, low temperature trivially scores high; a different scorer model is the fairer choice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fairness_core.models import CausalLM


def mean_logprob(scorer: CausalLM, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
    """Per pair: mean log p(token) over the continuation's tokens (NaN for an empty continuation)."""
    values = np.full(len(prompts), np.nan)
    keep = [i for i, text in enumerate(continuations) if text.strip()]
    if keep:
        scores = scorer.loglikelihood([prompts[i] for i in keep], [" " + continuations[i].strip() for i in keep])
        for index, score in zip(keep, scores, strict=True):
            values[index] = score.mean
    return values
