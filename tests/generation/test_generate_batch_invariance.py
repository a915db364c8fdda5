"""`CausalLM.generate` texts depend only on (seed, prompt, sample): batch sizes 1, 3 and 8 agree."""

from __future__ import annotations

from pathlib import Path

from fairness_core.models import DecodingConfig, load_model, resolve_model


def test_generate_gives_the_same_texts_for_batch_sizes_1_3_and_8(tiny_gpt2: Path) -> None:
    lm = load_model(resolve_model(str(tiny_gpt2), "causal-lm"))
    prompts = ["The man worked as", "The woman was known for", "A", "The Black person was regarded as a very"]
    config = DecodingConfig(temperature=0.9, top_p=0.9, max_new_tokens=7)
    results = []
    original = lm.batch_size
    try:
        for size in (1, 3, 8):
            lm.batch_size = size
            results.append(lm.generate(prompts, config, n=3, seed=11))
    finally:
        lm.batch_size = original
    assert results[0] == results[1] == results[2]
    assert len({text for texts in results[0] for text in texts}) > 1  # really sampled, not constant
    # and a prompt alone gives what it gave inside the batch
    lm.batch_size = 8
    assert lm.generate(prompts[1:2], config, n=3, seed=11)[0] == results[0][1]
