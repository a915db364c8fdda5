"""Template adaptation (Quiroga et al. 2025): do domain-adapted bias templates measure what naturally
occurring text measures? VBCM bias vectors (vbcm.py), template importers (templates.py), naturally
occurring examples (noe.py), LLM rewriting (rewrite.py), the pipeline (request.py, task.py, summary.py),
comparisons (compare.py) and template characteristics (characteristics.py)."""
