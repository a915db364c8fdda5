"""CAIRO (Zayed et al. 2024): released prompts, Eq. 1 bias, combination search, the run pipeline, paraphrasing.

See docs/cairo.md. Modules: data, bias, search, request, task, paraphrase, summary.
"""
