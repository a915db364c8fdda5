"""The per-row sampler against transformers' own `generate` (same seed, same setting, same tokens), and
the seeding rule of `CausalLM.generate` built on it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from fairness_core.models import DecodingConfig, ModelSpec, load_model
from fairness_core.models.sampling import PerRowWarper, RowSettings, row_seed, sample_rows, warp_logits

SETTINGS = [
    DecodingConfig(top_p=0.5, max_new_tokens=8),
    DecodingConfig(top_k=5, max_new_tokens=8),
    DecodingConfig(temperature=0.7, max_new_tokens=8),
    DecodingConfig(temperature=1.3, top_k=20, top_p=0.8, max_new_tokens=8),
]


@pytest.fixture(scope="module")
def lm(tiny_gpt2: Path):
    return load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))


def test_warping_matches_transformers_warpers() -> None:
    from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    logits = torch.randn(4, 300, generator=torch.Generator().manual_seed(0)) * 3
    for config in SETTINGS:
        expected = logits.clone()
        expected = TemperatureLogitsWarper(config.temperature)(None, expected)
        if config.top_k:
            expected = TopKLogitsWarper(config.top_k)(None, expected)
        if config.top_p:
            expected = TopPLogitsWarper(config.top_p)(None, expected)
        ours = warp_logits(logits, RowSettings.from_configs([config] * 4))
        assert torch.equal(torch.isinf(ours), torch.isinf(expected)), config
        kept = ~torch.isinf(ours)
        assert torch.allclose(ours[kept], expected[kept])


def test_each_row_gets_its_own_setting() -> None:
    logits = torch.randn(1, 300, generator=torch.Generator().manual_seed(1)).repeat(3, 1)
    configs = [DecodingConfig(top_k=1), DecodingConfig(top_k=10), DecodingConfig()]
    kept = (~torch.isinf(warp_logits(logits, RowSettings.from_configs(configs)))).sum(-1).tolist()
    assert kept == [1, 10, 300]


def transformers_generate(lm, prompt: str, config: DecodingConfig, seed: int) -> str:
    """transformers' own `generate` with one setting, sampling from the global RNG seeded with `seed`."""
    encoded = lm.tokenizer([prompt], return_tensors="pt")
    knobs = {"do_sample": False} if config.greedy else {
        "do_sample": True, "temperature": config.temperature, "top_k": config.top_k or 0,
        "top_p": config.top_p if config.top_p is not None else 1.0}
    torch.manual_seed(seed)
    with torch.no_grad():
        output = lm.model.generate(**encoded, **knobs, max_new_tokens=config.max_new_tokens,
                                   pad_token_id=lm.tokenizer.pad_token_id)
    return lm.tokenizer.decode(output[0, encoded["input_ids"].shape[1] :], skip_special_tokens=True)


@pytest.mark.parametrize("config", [*SETTINGS, DecodingConfig(greedy=True, max_new_tokens=8)], ids=lambda c: c.label())
def test_sample_rows_gives_the_same_tokens_as_transformers_generate(lm, config: DecodingConfig) -> None:
    for seed in (0, 7):
        expected = transformers_generate(lm, "The nurse said that", config, seed)
        ours = sample_rows(lm.model, lm.tokenizer, ["The nurse said that"], [config], [seed], config.max_new_tokens)
        assert ours == [expected]


@pytest.mark.parametrize("config", [SETTINGS[3], DecodingConfig(greedy=True, max_new_tokens=8)],
                         ids=lambda c: c.label())
def test_generate_does_not_depend_on_batch_size(lm, config: DecodingConfig, monkeypatch) -> None:
    prompts = ["The nurse said that", "A person worked as a teacher and", "The man was", "The doctor",
               "Black, White and Asian people", "The carpenter made a desk for the clerk because"]
    outputs = []
    for batch_size in (1, 3, 8):
        monkeypatch.setattr(lm, "batch_size", batch_size)
        outputs.append(lm.generate(prompts, config, n=2, seed=5))
    assert outputs[0] == outputs[1] == outputs[2]
    # Continuation j of prompt i depends on (seed, prompt text, j) only: the prompt alone gives the same.
    assert lm.generate(prompts[3:4], config, n=2, seed=5)[0] == outputs[0][3]
    if config.greedy:  # greedy decoding is what transformers' greedy search gives
        assert all(outputs[0][i][0] == transformers_generate(lm, p, config, 0) for i, p in enumerate(prompts))
    else:
        assert lm.generate(prompts, config, n=2, seed=6) != outputs[0]  # the seed matters


def test_generate_ignores_the_global_random_state(lm) -> None:
    torch.manual_seed(1)
    first = lm.generate(["The nurse said that"], SETTINGS[1], n=3, seed=0)
    torch.manual_seed(2)
    assert lm.generate(["The nurse said that"], SETTINGS[1], n=3, seed=0) == first


def test_per_row_warper_inside_generate_matches_the_builtin_setting(lm) -> None:
    prompts = ["The nurse said that", "The man worked as a"]
    config = SETTINGS[3]
    encoded = lm.tokenizer(prompts, return_tensors="pt", padding=True)
    outputs = []
    for kwargs in ({"temperature": config.temperature, "top_k": config.top_k, "top_p": config.top_p},
                   {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "logits_processor": [PerRowWarper([config] * 2)]}):
        torch.manual_seed(3)
        outputs.append(lm.model.generate(**encoded, do_sample=True, max_new_tokens=8,
                                         pad_token_id=lm.tokenizer.pad_token_id, **kwargs))
    assert torch.equal(outputs[0], outputs[1])


def test_a_rows_output_does_not_depend_on_its_batch(lm) -> None:
    prompts = ["The nurse said that", "A person worked as a teacher and", "The man was"]
    configs = [SETTINGS[0], SETTINGS[1], SETTINGS[3]]
    seeds = [row_seed(0, p, 0) for p in prompts]
    together = lm.generate_rows(prompts, configs, seeds, max_new_tokens=8)
    alone = [lm.generate_rows([p], [c], [s], max_new_tokens=8)[0]
             for p, c, s in zip(prompts, configs, seeds, strict=True)]
    assert together == alone
    assert lm.generate_rows(prompts, configs, seeds, max_new_tokens=8) == together  # reproducible


def test_row_seed_depends_on_prompt_and_sample_only() -> None:
    assert row_seed(0, "p1", 0) == row_seed(0, "p1", 0)
    assert len({row_seed(0, "p1", 0), row_seed(0, "p1", 1), row_seed(0, "p2", 0), row_seed(1, "p1", 0)}) == 4


def test_stopping_at_the_sentence_end_keeps_the_first_sentence(lm) -> None:
    from fairness_core.generation.text import first_sentence

    prompts = ["The nurse said that", "The man was regarded as"] * 10
    configs = [DecodingConfig(top_k=40, max_new_tokens=20)] * len(prompts)
    seeds = list(range(len(prompts)))
    full = sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, 20)
    short = sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, 20, stop_at_sentence_end=True)
    assert [first_sentence(t) for t in short] == [first_sentence(t) for t in full]
    assert all(f.startswith(s) for s, f in zip(short, full, strict=True))


def test_retired_rows_leave_the_batch_without_disturbing_the_others(lm, monkeypatch) -> None:
    import fairness_core.models.sampling as sampling

    prompts = ["The nurse said that", "The man was regarded as", "A person worked as"]
    configs = [DecodingConfig(top_k=40, max_new_tokens=12)] * 3
    seeds = [1, 2, 3]
    full = sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, 12)
    # Answers in call order (active rows, step by step): row 0 retires after 2 tokens, row 2 after 4.
    answers = iter([False, False, False, True, False, False, False, False, False, True])
    monkeypatch.setattr(sampling, "sentence_complete", lambda _: next(answers, False))
    short = sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, 12, stop_at_sentence_end=True)
    assert short[1] == full[1]
    assert short[0] == sample_rows(lm.model, lm.tokenizer, prompts[:1], configs[:1], seeds[:1], 2)[0]
    assert short[2] == sample_rows(lm.model, lm.tokenizer, prompts[2:], configs[2:], seeds[2:], 4)[0]
