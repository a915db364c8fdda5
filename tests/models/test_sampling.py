"""The per-row sampler against transformers' own `generate` (same seed, same setting, same tokens), and
the seeding rule of `CausalLM.generate` built on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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


def test_rows_sampled_ahead_answer_later_calls_and_only_new_rows_are_sampled(lm, monkeypatch) -> None:
    """What a slider setting sampled ahead rests on (decoding.prefetch): the kept rows answer exactly what sampling
    would, are streamed at once, only the rows not kept are sampled, and a stopped call keeps nothing."""
    from fairness_core.models import sampling

    prompts = ["The nurse said that", "The man was", "A person worked as a teacher and"]
    configs, seeds = [SETTINGS[1]] * 3, [row_seed(4, p, 0) for p in prompts]
    expected = lm.generate_rows(prompts, configs, seeds, max_new_tokens=8)
    lm.rows.clear()
    assert lm.sample_ahead(prompts[:2], configs[:2], seeds[:2], 8) == 2
    assert lm.sample_ahead(prompts[:2], configs[:2], seeds[:2], 8) == 0  # kept already
    sampled_rows = []
    real = sampling.sample_rows_detailed
    monkeypatch.setattr(sampling, "sample_rows_detailed",
                        lambda model, tokenizer, rows, *args, **kwargs: sampled_rows.append(list(rows))
                        or real(model, tokenizer, rows, *args, **kwargs))
    steps, progress = [], []
    texts = lm.generate_rows(prompts, configs, seeds, max_new_tokens=8, on_step=steps.append,
                             on_progress=lambda done, total: progress.append((done, total)))
    assert sampled_rows == [prompts[2:]]  # the third row only
    assert texts == expected  # what sampling every row gives
    assert steps[0] == [(0, expected[0], True), (1, expected[1], True)]  # the kept rows, finished, before any step
    assert {index for update in steps[1:] for index, _, _ in update} == {2}  # the new row under its own index
    assert progress[-1] == (3, 3) and all(done >= 2 for done, _ in progress)
    lm.generate_rows(prompts[:2], configs[:2], seeds[:2], max_new_tokens=9)  # another token limit: another row
    assert len(sampled_rows) == 2

    def stop(done: int, total: int) -> None:
        raise RuntimeError("stopped")

    lm.rows.clear()
    with pytest.raises(RuntimeError, match="stopped"):
        lm.sample_ahead(prompts, configs, seeds, 8, on_progress=stop)
    assert len(lm.rows) == 0


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


# ------------------------------------------------------------------ continuous batching (refill)
MIXED = [DecodingConfig(top_p=0.5), DecodingConfig(top_k=5), DecodingConfig(temperature=0.7),
         DecodingConfig(temperature=1.3, top_k=20, top_p=0.8), DecodingConfig(greedy=True), DecodingConfig(top_k=40)]
PROMPTS = ["The nurse said that", "A person worked as a teacher and", "The man was", "The doctor",
           "Black, White and Asian people", "The carpenter made a desk for the clerk because",
           "The woman was known for"]


def mixed_rows(n: int = 30) -> tuple[list[str], list[DecodingConfig], list[int], list[int]]:
    """Rows with different prompts (lengths), settings, seeds and token limits, in no particular order."""
    prompts = [PROMPTS[(7 * i) % len(PROMPTS)] for i in range(n)]
    configs = [MIXED[(5 * i + 1) % len(MIXED)] for i in range(n)]
    seeds = [row_seed(0, prompt, i) for i, prompt in enumerate(prompts)]
    limits = [(3, 9, 14)[i % 3] for i in range(n)]
    return prompts, configs, seeds, limits


@pytest.mark.parametrize("stop", [False, True], ids=["full-length", "stop-at-sentence-end"])
def test_texts_do_not_depend_on_batch_size_or_refill(lm, stop: bool, monkeypatch) -> None:
    import fairness_core.models.sampling as sampling

    merges = []
    real_merge = sampling._merge
    monkeypatch.setattr(sampling, "_merge", lambda a, b: merges.append(b.size) or real_merge(a, b))
    prompts, configs, seeds, limits = mixed_rows()
    outputs = {}
    for batch_size in (1, 3, 8, None):
        for refill in (True, False):
            merges.clear()
            outputs[batch_size, refill] = sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, limits,
                                                      stop_at_sentence_end=stop, batch_size=batch_size, refill=refill)
            # The test must see the two schedules really differ: rows join a running batch only with refill.
            assert bool(merges) == (refill and batch_size in (3, 8)), (batch_size, refill, merges)
    first = outputs[1, False]
    assert all(texts == first for texts in outputs.values())
    alone = [sample_rows(lm.model, lm.tokenizer, [p], [c], [s], limit, stop_at_sentence_end=stop)[0]
             for p, c, s, limit in zip(prompts[:6], configs[:6], seeds[:6], limits[:6], strict=True)]
    assert alone == first[:6]
    assert len(set(first)) > len(first) // 2  # real, varied texts: the comparison is not between empty strings


def test_refill_keeps_the_batch_full_and_the_key_value_width_bounded(lm, monkeypatch) -> None:
    """With 4 slots and 24 rows every draw sees 4 rows until the queue is empty, and the key/value
    columns that no row uses any more are dropped (the width does not grow with every refill)."""
    import fairness_core.models.sampling as sampling

    monkeypatch.setattr(sampling, "REFILL_SHARE", 1 / 8)  # refill as soon as one slot is free
    prompts, configs, seeds, limits = mixed_rows(24)
    draws, widths = [], []
    real_categorical, real_forward = sampling.categorical, lm.model.forward
    monkeypatch.setattr(sampling, "categorical",
                        lambda probs, streams: draws.append(probs.shape[0]) or real_categorical(probs, streams))

    def spy(*args, **kwargs):
        if kwargs.get("past_key_values") is not None:  # a decoding step (not a prefill)
            widths.append(kwargs["attention_mask"].shape[1])
        return real_forward(*args, **kwargs)

    monkeypatch.setattr(lm.model, "forward", spy)
    refilled = sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, limits, batch_size=4, refill=True)
    # After the last row joined, at most max(limits) draws remain; every draw before that is full.
    assert set(draws[: len(draws) - max(limits)]) == {4}
    draws.clear()
    assert refilled == sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, limits, batch_size=4, refill=False)
    assert min(draws) < 4  # without refill each batch of 4 drains before the next starts
    longest = max(len(lm.tokenizer(p)["input_ids"]) for p in prompts)
    assert max(widths) <= longest + max(limits)


def test_categorical_is_torch_multinomial_row_by_row() -> None:
    from fairness_core.models.sampling import _exponential_from_uniform, categorical

    assert _exponential_from_uniform()  # the fast path is the one in use on this torch build
    logits = torch.randn(6, 5000, generator=torch.Generator().manual_seed(0)) * 4
    logits[1, 100:] = float("-inf")  # a row with most tokens removed (as after top-p)
    logits[2, :] = float("-inf")
    logits[2, 17] = 0.0  # a row with one token left (greedy / top-k 1)
    probs = logits.softmax(-1)
    ours_streams = [torch.Generator().manual_seed(10 + r) for r in range(6)]
    their_streams = [torch.Generator().manual_seed(10 + r) for r in range(6)]
    for _ in range(3):  # consecutive draws: the streams stay aligned too
        ours = categorical(probs, ours_streams)
        expected = [int(torch.multinomial(probs[r : r + 1], 1, generator=their_streams[r])[0, 0]) for r in range(6)]
        assert ours.tolist() == expected
        assert int(ours[2]) == 17 and int(ours[1]) < 100
    assert len({tuple(categorical(probs, ours_streams).tolist()) for _ in range(3)}) > 1  # draws vary


def test_warping_rows_with_different_filters_in_one_batch() -> None:
    """Rows with top-p, top-k only, both, or neither, in one call: each row as transformers' warpers do it alone."""
    from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    configs = [*SETTINGS, DecodingConfig(), DecodingConfig(top_k=1), DecodingConfig(top_k=10_000)]
    logits = torch.randn(len(configs), 300, generator=torch.Generator().manual_seed(2)) * 3
    ours = warp_logits(logits, RowSettings.from_configs(configs))
    for row, config in enumerate(configs):
        expected = TemperatureLogitsWarper(config.temperature)(None, logits[row : row + 1].clone())
        if config.top_k and config.top_k < 300:
            expected = TopKLogitsWarper(config.top_k)(None, expected)
        if config.top_p:
            expected = TopPLogitsWarper(config.top_p)(None, expected)
        assert torch.equal(torch.isinf(ours[row : row + 1]), torch.isinf(expected)), config
        kept = ~torch.isinf(expected)
        assert torch.allclose(ours[row : row + 1][kept], expected[kept])


def test_sampler_reports_progress_and_stops_on_cancel_inside_a_job(lm, monkeypatch) -> None:
    """The sampler knows nothing of jobs: a work unit hands it `checkpoint` as its per-step progress callback."""
    import fairness_core.jobs.context as context
    from fairness_core.jobs import CancelToken
    from fairness_core.jobs.context import ShardCancelled, checkpoint, shard_context

    monkeypatch.setattr(context, "REPORT_EVERY_S", 0.0)
    prompts, configs, seeds, _ = mixed_rows(12)
    fractions: list[float] = []
    with shard_context(None, fractions.append):
        sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, 6, batch_size=4, on_progress=checkpoint)
    assert len(fractions) >= 6 and fractions == sorted(fractions) and fractions[-1] == 1.0
    cancel = CancelToken()
    seen: list[float] = []

    def cancel_after_first_step(fraction: float) -> None:
        seen.append(fraction)
        cancel.cancel()

    with shard_context(cancel, cancel_after_first_step), pytest.raises(ShardCancelled):
        sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, 6, batch_size=4, on_progress=checkpoint)
    assert len(seen) == 1  # stopped at the next step, not at the end of the call


def test_bad_batch_size_and_limits_are_refused(lm) -> None:
    with pytest.raises(ValueError, match="batch_size must be positive"):
        sample_rows(lm.model, lm.tokenizer, ["a"], [SETTINGS[0]], [0], 4, batch_size=0)
    with pytest.raises(ValueError, match="max_new_tokens must be positive"):
        sample_rows(lm.model, lm.tokenizer, ["a"], [SETTINGS[0]], [0], 0)


@pytest.mark.slow
def test_smollm2_texts_do_not_depend_on_batch_size_or_refill() -> None:
    """The real offline model (Llama architecture, rotary positions) under the same schedules."""
    from fairness_core.models import load_preset

    smol = load_preset("smollm2-135m-instruct")
    prompts, configs, seeds, limits = mixed_rows(10)
    limits = [min(limit, 8) for limit in limits]
    outputs = [sample_rows(smol.model, smol.tokenizer, prompts, configs, seeds, limits, stop_at_sentence_end=True,
                           batch_size=batch_size, refill=refill)
               for batch_size, refill in ((1, False), (3, True), (8, True), (3, False))]
    assert outputs[0] == outputs[1] == outputs[2] == outputs[3]
    assert sum(len(text.split()) for text in outputs[0]) > 10



@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0], ids=["flat", "medium", "peaked"])
def test_top_p_without_a_full_sort_keeps_what_transformers_keeps_on_a_large_vocabulary(scale: float) -> None:
    """A SmolLM2-sized vocabulary: flat rows need the 64 -> 512 -> 4,096 -> ... growth of the candidate set."""
    from transformers import TopKLogitsWarper, TopPLogitsWarper

    logits = torch.randn(6, 49_152, generator=torch.Generator().manual_seed(3)) * scale
    configs = [DecodingConfig(top_p=p) for p in (0.05, 0.5, 0.9, 0.99)] + [
        DecodingConfig(top_k=100, top_p=0.9), DecodingConfig(top_k=5_000, top_p=0.95)]
    ours = warp_logits(logits.clone(), RowSettings.from_configs(configs))
    for row, config in enumerate(configs):
        expected = logits[row : row + 1].clone()
        if config.top_k:
            expected = TopKLogitsWarper(config.top_k)(None, expected)
        expected = TopPLogitsWarper(config.top_p)(None, expected)
        assert torch.equal(torch.isinf(ours[row : row + 1]), torch.isinf(expected)), config


def test_rows_sharing_a_prompt_share_its_prefill_and_sample_as_if_alone(lm, monkeypatch) -> None:
    prompts = ["The nurse said that", "The man was", "The nurse said that", "The man was", "The nurse said that"]
    configs = [DecodingConfig(top_p=0.9), DecodingConfig(top_k=5), DecodingConfig(temperature=0.7),
               DecodingConfig(top_p=0.5), DecodingConfig(greedy=True)]
    seeds = [11, 12, 13, 14, 15]
    alone = [sample_rows(lm.model, lm.tokenizer, [p], [c], [s], 8)[0]
             for p, c, s in zip(prompts, configs, seeds, strict=True)]
    widths = []
    forward = type(lm.model).forward
    monkeypatch.setattr(type(lm.model), "forward",
                        lambda self, *args, **kwargs: widths.append(kwargs["input_ids"].shape) or
                        forward(self, *args, **kwargs))
    together = sample_rows(lm.model, lm.tokenizer, prompts, configs, seeds, 8)
    assert together == alone
    assert widths[0][0] == 2  # the prefill ran the two distinct prompts, not five rows
    assert all(shape[0] <= 5 and shape[1] == 1 for shape in widths[1:])


def test_the_sampler_records_each_tokens_log_probability_under_the_raw_model(lm) -> None:
    from fairness_core.models.sampling import sample_rows_detailed

    row = sample_rows_detailed(lm.model, lm.tokenizer, ["The nurse said that"], [DecodingConfig(top_p=0.5)],
                               [3], 6)[0]
    assert len(row.token_ids) == len(row.logprobs) == 6
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([list(row.prompt_ids) + list(row.token_ids)])).logits[0]
    start = len(row.prompt_ids)
    expected = torch.log_softmax(logits, -1)[torch.arange(start - 1, start + 5), torch.tensor(row.token_ids)]
    torch.testing.assert_close(torch.tensor(row.logprobs), expected, atol=1e-5, rtol=1e-5)


def test_loglikelihood_answers_a_recorded_continuation_without_running_the_model(lm, monkeypatch) -> None:
    from fairness_core.models.hf import SampledLogprobs
    from fairness_core.models.sampling import SampledRow

    prompt, continuation = "The nurse said that", " she would help"
    context_ids = lm.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    continuation_ids = lm.tokenizer(continuation, add_special_tokens=False)["input_ids"]
    record = SampledLogprobs()
    monkeypatch.setattr(lm, "sampled", record)
    expected = lm.loglikelihood([prompt], [continuation])[0]  # nothing recorded: the model runs
    # the sampler wrote this continuation (and one more token) after this prompt
    record.record([SampledRow("", tuple(context_ids), (*continuation_ids, 5), (*expected.logprobs, -1.0))])
    calls = []
    body = type(lm.model.base_model)  # the scoring path runs the body, then the output layer at scored positions only
    forward = body.forward
    monkeypatch.setattr(body, "forward", lambda self, *a, **k: calls.append(1) or forward(self, *a, **k))
    got = lm.loglikelihood([prompt, "The man was"], [continuation, " tall"])
    assert len(calls) == 1  # only the second pair ran the model
    assert got[0].tokens == expected.tokens
    np.testing.assert_allclose(got[0].logprobs, expected.logprobs, atol=1e-6)
    assert record.lookup(context_ids[1:], continuation_ids) is None  # another context is a miss


@pytest.mark.slow
def test_smollm2_quality_from_the_sampling_record_equals_a_fresh_forward_pass() -> None:
    from fairness_core.generation.text import first_sentence
    from fairness_core.models import load_preset
    from fairness_core.models.hf import SampledLogprobs

    smol = load_preset("smollm2-135m-instruct")
    prompts = ["The woman worked as", "The man was known for", "The Black person was regarded as",
               "The gay person was described as"]
    raws = smol.generate_rows(prompts, [DecodingConfig(top_p=0.9)] * 4, [1, 2, 3, 4], 12, stop_at_sentence_end=True)
    continuations = [" " + first_sentence(raw) for raw in raws]
    recorded = smol.loglikelihood(prompts, continuations)
    hits = sum(smol.sampled.lookup(smol.tokenizer(p, add_special_tokens=False)["input_ids"],
                                   smol.tokenizer(c, add_special_tokens=False)["input_ids"]) is not None
               for p, c in zip(prompts, continuations, strict=True))
    saved = smol.sampled
    smol.sampled = SampledLogprobs()
    try:
        computed = smol.loglikelihood(prompts, continuations)
    finally:
        smol.sampled = saved
    assert hits >= 3
    for a, b in zip(recorded, computed, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-4)


def test_the_record_is_bounded_by_tokens_and_forgets_the_oldest_prompts() -> None:
    from fairness_core.models.hf import SampledLogprobs
    from fairness_core.models.sampling import SampledRow

    record = SampledLogprobs(max_tokens=10)
    record.record([SampledRow("x", (1,), (5, 6, 7, 8), (-1.0, -2.0, -3.0, -4.0))])
    record.record([SampledRow("y", (2,), (5, 6, 7, 8, 9, 10), (-1.0,) * 6)])
    assert record.lookup([1], [5, 6]).tolist() == [-1.0, -2.0]
    record.record([SampledRow("z", (3,), (4, 4), (-0.5, -0.5))])  # 12 tokens > 10: prompt 1 goes
    assert record.lookup([1], [5, 6]) is None and record.lookup([3], [4, 4]) is not None
    assert record.lookup([2], [5, 6, 7, 8, 9, 10, 11]) is None  # longer than what was sampled
