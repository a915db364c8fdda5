"""Scorers of generated text behind one interface and registry (see `base.py`).

Importing this package registers the built-in scorers; `scorer_from_request(name, **options)`
builds one, `SCORERS` lists them.
"""

from fairness_core.scorers import (  # noqa: F401  (each module registers its scorer)
    classifier,
    honest,
    jigsaw,
    lexicon,
    llm_judge,
    offensive,
    quality,
    regard,
    sentiment,
    toxicity,
)
from fairness_core.scorers.base import (
    READS,
    SCORERS,
    Measure,
    Scorer,
    ScorerOptionError,
    ScorerOptions,
    register_scorer,
    scorer_from_request,
)

__all__ = [
    "READS",
    "SCORERS",
    "Measure",
    "Scorer",
    "ScorerOptionError",
    "ScorerOptions",
    "register_scorer",
    "scorer_from_request",
]
