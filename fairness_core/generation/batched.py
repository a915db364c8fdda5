"""Generate many (prompt, config, seed) rows with any CausalLM, and the per-row seeding rule.

Batching rows with different settings is the backend's job (`CausalLM.generate_rows`: the
transformers backend samples them in one batch, others fall back to one `generate` per row).
"""

from __future__ import annotations

from collections.abc import Sequence

from fairness_core.models.interfaces import CausalLM, DecodingConfig
from fairness_core.models.sampling import row_seed

__all__ = ["generate_rows", "row_seed"]


def generate_rows(lm: CausalLM, prompts: Sequence[str], configs: Sequence[DecodingConfig],
                  seeds: Sequence[int], max_new_tokens: int, stop_at_sentence_end: bool = False) -> list[str]:
    """One continuation per row; a row's text depends only on its own (prompt, config, seed).

    `stop_at_sentence_end` lets the batched backend retire rows whose first sentence is complete.
    """
    return lm.generate_rows(prompts, configs, seeds, max_new_tokens, stop_at_sentence_end)
