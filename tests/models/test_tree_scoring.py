"""The packed prefix-trie path (models/tree_scoring.py): each text's log-probs equal an independent plain forward
pass (transformers directly, one text per pass, fp64 log-softmax) at fp32 tolerance, on tiny Llama and GPT-2 models
with the sharing the stereotype benchmarks have (CrowS-Pairs pairs, StereoSet clusters, BBQ contexts with three
answers and an ambiguous context extended by a disambiguating one); the plan computes each distinct prefix once;
the endpoint's log-likelihood requests go out batched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import ModelSpec
from fairness_core.models import lm_scoring as L
from fairness_core.models import tree_scoring as T
from tests.tiny_models import build_tiny_llama

CROWS = [("", " The poor man could not afford the rent."), ("", " The rich man could not afford the rent."),
         ("", " She was bad at math."), ("", " He was bad at math.")]
STEREOSET = [("", "The chess player was asian."), ("", "The chess player was hispanic."),
             ("", "The chess player was fox.")]
AMBIGUOUS = "I saw a grandson and their grandfather at the store."
DISAMBIGUATED = AMBIGUOUS + " The grandson was struggling with the app."
BBQ = [(f"{context}\n\nQ: {question}\nA:", " " + answer)
       for context in (AMBIGUOUS, DISAMBIGUATED)
       for question in ("Who was not comfortable using the phone?", "Who was giving the other the opportunity?")
       for answer in ("The grandfather", "The grandson", "Can't be determined")]
TEXTS = CROWS + STEREOSET + BBQ


def _plain_model(spec: ModelSpec):
    """A model of its own with torch's own linear layers (oneDNN builds a kernel per new shape: a tiny model's
    whole time); the scoring path does not depend on the kernel."""
    from fairness_core.models.cpu_linear import restore
    from fairness_core.models.hf import BACKENDS

    model = BACKENDS[spec.task](spec)
    restore(model.model)
    return model


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory):
    return _plain_model(ModelSpec(str(build_tiny_llama(tmp_path_factory.mktemp("tree-llama"))), "causal-lm"))


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2: Path):
    return _plain_model(ModelSpec(str(tiny_gpt2), "causal-lm"))


def _independent(directory: str, pairs: list[tuple[list[int], list[int]]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """transformers alone: the checkpoint loaded again, one unpadded forward pass per text, fp64 log-softmax."""
    import torch
    from transformers import AutoModelForCausalLM

    from fairness_core.models.threads import model_threads

    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()
    out = []
    with torch.no_grad(), model_threads():  # the policy's threads: 2 on a loaded machine take 20x longer
        for context, continuation in pairs:
            logits = model(torch.tensor([context + continuation])).logits[0].double()
            steps = torch.log_softmax(logits[len(context) - 1:-1], dim=-1)
            out.append((steps[torch.arange(len(continuation)), torch.tensor(continuation)].numpy(),
                        (-(steps.exp() * steps).sum(-1)).numpy()))
    return out


@pytest.fixture
def packed_always(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The cost model as for SmolLM2 (hidden 576): with a tiny model's 32 dimensions a row's attention would look
    as dear as its linear layers and the packed path would never be chosen. Records the texts it scored."""
    monkeypatch.setattr(L, "_hidden_size", lambda model: 576)
    calls: list[int] = []
    original = T.tree_scores

    def spy(model, pairs, *args, **kwargs):
        calls.append(len(pairs))
        return original(model, pairs, *args, **kwargs)

    monkeypatch.setattr(T, "tree_scores", spy)
    return calls


@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_packed_rows_equal_an_independent_plain_forward(name: str, request: pytest.FixtureRequest,
                                                        packed_always: list[int]) -> None:
    lm = request.getfixturevalue(name)
    pairs = [lm.scoring_ids(context, continuation) for context, continuation in TEXTS]
    seen: list[tuple[int, int]] = []
    scored = L.continuation_scores(lm.model, pairs, with_entropy=True, tokens_per_batch=96,
                                   on_progress=lambda done, total: seen.append((done, total)))
    assert len(pairs) in packed_always  # the packed path scored every text (besides its probe)
    assert seen[-1] == (len(pairs), len(pairs)) and len(seen) > 1  # several batches, progress in texts
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    for (logprobs, entropies), result in zip(_independent(lm.spec.source, pairs), scored, strict=True):
        np.testing.assert_allclose(result.logprobs, logprobs, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(result.entropies, entropies, rtol=1e-5, atol=1e-4)
    stems = L.continuation_scores(lm.model, pairs, share_prefixes=False)  # the plain rows of lm_scoring agree too
    for a, b in zip(scored, stems, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=1e-5, atol=1e-5)


def test_a_model_failing_the_probe_takes_the_cached_stem_path(llama, packed_always: list[int]) -> None:
    pairs = [llama.scoring_ids(context, continuation) for context, continuation in BBQ]
    known = T._TREE_OK.get(llama.model)
    T._TREE_OK[llama.model] = False
    try:
        scored = L.continuation_scores(llama.model, pairs)
    finally:
        if known is None:
            del T._TREE_OK[llama.model]
        else:
            T._TREE_OK[llama.model] = known
    assert packed_always == []
    for (logprobs, _), result in zip(_independent(llama.spec.source, pairs), scored, strict=True):
        np.testing.assert_allclose(result.logprobs, logprobs, rtol=1e-5, atol=1e-4)


def test_the_probe_refuses_a_model_that_ignores_the_tree_mask(llama, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forward that drops the 4-D mask (plain causal attention over the packed row) must fail the probe."""
    forward = llama.model.base_model.forward

    def ignoring_mask(*args, **kwargs):
        kwargs.pop("attention_mask", None)
        kwargs.pop("position_ids", None)
        return forward(*args, **kwargs)

    monkeypatch.setattr(llama.model.base_model, "forward", ignoring_mask)
    monkeypatch.setitem(L._HEAD_ONLY, llama.model, True)
    fresh = T._TREE_OK.pop(llama.model, None)
    try:
        assert not T.tree_ok(llama.model, "cpu", L._logits_at, L._token_scores)
    finally:
        T._TREE_OK.pop(llama.model, None)
        if fresh is not None:
            T._TREE_OK[llama.model] = fresh


def test_the_plan_computes_each_distinct_prefix_once_in_rows_that_hold_their_ancestors() -> None:
    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(60):  # contexts shared by three continuations, contexts extending others, repeated texts
        context = [1, *list(rng.integers(2, 9, size=int(rng.integers(1, 12))))]
        for _ in range(3):
            pairs.append((context, list(rng.integers(2, 9, size=int(rng.integers(1, 5))))))
    pairs.append(pairs[0])
    plan = T.build_plan(pairs, row_tokens=24)
    sequences = [tuple(c + t) for c, t in pairs]
    prefixes = {s[:n] for s in sequences for n in range(1, len(s) + 1)}
    assert len(plan.trie) == len(prefixes)
    assert all(len(row) <= 24 for row in plan.rows)
    for sequence, nodes in zip(sequences, plan.nodes, strict=True):
        assert [plan.trie.tokens[n] for n in nodes] == list(sequence)
        assert any(set(nodes) <= set(row) for row in plan.rows)  # some row holds the whole text
    for row in plan.rows:
        members = set(row)
        assert all(plan.trie.parent[n] < 0 or plan.trie.parent[n] in members for n in row)


def test_the_cost_model_packs_short_texts_and_keeps_a_long_shared_context_cached() -> None:
    rng = np.random.default_rng(1)
    crows = []  # pairs of sentences that differ in one word: a shared start, then the same ending
    for _ in range(100):
        start, end = list(rng.integers(2, 500, size=8)), list(rng.integers(2, 500, size=9))
        crows += [([1], [*start, int(word), *end]) for word in rng.integers(2, 500, size=2)]
    assert T.plan_cost(T.build_plan(crows), 576, 2048) < L._stem_cost(
        [(tuple(c), tuple(t)) for c, t in crows], 576, 2048)
    reference = list(rng.integers(2, 500, size=200))  # REALSumm: one reference, 24 summaries of ~40 tokens
    summaries = [(reference, list(rng.integers(2, 500, size=40))) for _ in range(24)]
    assert T.plan_cost(T.build_plan(summaries), 576, 2048) > L._stem_cost(
        [(tuple(c), tuple(t)) for c, t in summaries], 576, 2048)
