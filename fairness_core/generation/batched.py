"""Generate many (prompt, config, seed) rows with any CausalLM, and the per-row seeding rule.

Batching rows with different settings is the backend's job (`CausalLM.generate_rows`: the
transformers backend samples them in one batch, others fall back to one `generate` per row).
"""

from __future__ import annotations

from collections.abc import Sequence

from fairness_core.models.interfaces import CausalLM, DecodingConfig


def generate_rows(lm: CausalLM, prompts: Sequence[str], configs: Sequence[DecodingConfig],
                  seeds: Sequence[int], max_new_tokens: int, stop_at_sentence_end: bool = False) -> list[str]:
    """One continuation per row; a row's text depends only on its own (prompt, config, seed).

    `stop_at_sentence_end` lets the batched backend retire rows whose first sentence is complete.
    """
    return lm.generate_rows(prompts, configs, seeds, max_new_tokens, stop_at_sentence_end)


def row_seed(seed: int, prompt: str, sample: int) -> int:
    """Seed of one row: (run seed, prompt text, sample index) — the same across decoding configs.

    The generic task keys by the prompt's text (not its id), so the same prompt in another prompt
    set, or a subset of this one, gets the same random stream and its stored generation is reused.

    Sharing the random stream across configs ("common random numbers") makes configs differ by
    their setting rather than by luck, and keeps a row's output independent of its batch.
    """
    import hashlib

    digest = hashlib.sha256(f"{seed}|{prompt}|{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)
