"""Scoring on a tiny GPT-2 built by the test: each stored score equals an independent plain forward pass of the
protocol (BOS + " " + sentence; the BBQ prompt + " " + answer) at fp32 tolerance, and a rerun is read back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core import stereotypes
from fairness_core.store import RunStore


@pytest.fixture(scope="module")
def reference(tiny_gpt2_long: Path):
    """An independent implementation of the protocols: transformers directly, one forward pass per text."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_long)
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_long, dtype=torch.float32).eval()

    def logprobs(context: str, continuation: str) -> np.ndarray:
        start = tokenizer(context, add_special_tokens=False)["input_ids"] if context else [tokenizer.bos_token_id]
        rest = tokenizer(continuation, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([start + rest])).logits[0].double()
        steps = torch.log_softmax(logits[len(start) - 1:-1], dim=-1)
        return steps[torch.arange(len(rest)), torch.tensor(rest)].numpy()

    return logprobs


def test_crows_pairs_sums_match_a_plain_forward_pass(tiny_gpt2_long: Path, store: RunStore, reference) -> None:
    request = stereotypes.build_request("crows-pairs", model=str(tiny_gpt2_long), limit=4, resamples=100)
    result = stereotypes.run_stereotypes(request, store)
    assert result.complete and not result.from_cache and len(result.items) == 4
    for row in result.items.itertuples():
        assert row.logprob_more == pytest.approx(reference("", " " + row.sent_more).sum(), abs=1e-4)
        assert row.logprob_less == pytest.approx(reference("", " " + row.sent_less).sum(), abs=1e-4)
    diff = result.items["logprob_more"] - result.items["logprob_less"]
    assert result.summary["overall"]["pct_stereotype"] == pytest.approx(float((diff > 0).mean()))
    again = stereotypes.run_stereotypes(request, store)
    assert again.from_cache and again.run_id == result.run_id and again.summary == result.summary
    assert result.manifest["kind"] == stereotypes.KIND and result.manifest["request"]["benchmark"] == "crows-pairs"
    paired = stereotypes.compare_crows_runs(store, result.run_id, result.run_id, resamples=50)
    assert paired["shared_pairs"] == 4 and paired["pct_stereotype_diff"] == 0.0 and paired["only_a_more"] == 0


def test_stereoset_and_bbq_follow_their_protocols(tiny_gpt2_long: Path, store: RunStore, reference) -> None:
    result = stereotypes.run_stereotypes(stereotypes.build_request("stereoset", model=str(tiny_gpt2_long), limit=2,
                                                                   resamples=50), store)
    assert sorted(result.items["split"]) == ["intersentence"] * 2 + ["intrasentence"] * 2
    for row in result.items.to_dict("records"):
        for label in ("stereotype", "anti-stereotype", "unrelated"):
            sentence = row[f"{label}_sentence"]
            expected = (reference("", sentence) if row["split"] == "intrasentence"
                        else reference(row["context"], " " + sentence)).mean()  # mean token log-prob
            assert row[label] == pytest.approx(expected, abs=1e-5)
    assert set(result.summary) == {"intrasentence", "intersentence", "overall"}

    request = stereotypes.build_request("bbq", model=str(tiny_gpt2_long), limit=3, resamples=50)
    bbq = stereotypes.run_stereotypes(request, store)
    for row in bbq.items.to_dict("records"):
        prompt = f"{row['context']}\n\nQ: {row['question']}\nA:"
        expected = [reference(prompt, " " + row[f"ans{k}"]).sum() for k in range(3)]
        assert [row[f"logprob{k}"] for k in range(3)] == pytest.approx(expected, abs=1e-4)
        assert row["pred"] == int(np.argmax(expected))
    drill = stereotypes.drill_down(bbq)
    assert drill["gap"].is_monotonic_decreasing


def test_a_model_that_cannot_load_is_one_sentence_and_nothing_is_stored(tmp_path: Path, store: RunStore) -> None:
    request = stereotypes.build_request("crows-pairs", model=str(tmp_path / "no-such-model"), limit=2)
    with pytest.raises(stereotypes.StereotypeInputError, match="--model"):
        stereotypes.run_stereotypes(request, store)
    assert store.list_runs() == []


def test_a_text_past_the_models_window_is_one_sentence(tiny_gpt2: Path, store: RunStore) -> None:
    request = stereotypes.build_request("bbq", model=str(tiny_gpt2), limit=2)  # the shared GPT-2 has 128 positions
    with pytest.raises(stereotypes.StereotypeInputError, match="takes 128 tokens, but item"):
        stereotypes.run_stereotypes(request, store)
    assert store.list_runs() == []


def test_a_masked_lm_scores_crows_pairs_by_the_papers_pseudo_log_likelihood(tmp_path: Path, store: RunStore) -> None:
    """Issue 44: a masked LM (here a tiny BERT the test builds, with the sampled pairs' words in its vocabulary) is
    scored as Nangia et al. score one — the tokens both sentences share, each masked in turn — equal to a plain
    one-mask-at-a-time loop written here; the group words are never scored; another benchmark is refused."""
    import difflib

    import torch
    from transformers import AutoTokenizer, BertForMaskedLM

    from tests.tiny_models import build_tiny_bert

    request = stereotypes.build_request("crows-pairs", model="placeholder", limit=4, resamples=100)
    words = tuple(s for pair in request.items for s in (pair.sent_more, pair.sent_less))
    model_dir = build_tiny_bert(tmp_path / "tiny-mlm", masked_lm=True, extra_words=words)
    request = stereotypes.build_request("crows-pairs", model=str(model_dir), limit=4, resamples=100)
    result = stereotypes.run_stereotypes(request, store)
    assert result.complete and len(result.items) == 4
    assert result.manifest["request"]["protocol"]["score"].startswith("pseudo-log-likelihood")

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = BertForMaskedLM.from_pretrained(model_dir).eval()

    def pll(ids: list[int], shared: list[int]) -> float:
        total = 0.0
        for position in shared:
            masked = list(ids)
            masked[position] = tokenizer.mask_token_id
            with torch.no_grad():
                logits = model(torch.tensor([masked])).logits[0, position].double()
            total += float(torch.log_softmax(logits, -1)[ids[position]])
        return total

    for row in result.items.itertuples():
        more, less = (tokenizer(s)["input_ids"] for s in (row.sent_more, row.sent_less))
        blocks = [op for op in difflib.SequenceMatcher(None, more, less).get_opcodes() if op[0] == "equal"]
        shared_more = [i for op in blocks for i in range(op[1], op[2])][1:-1]
        shared_less = [i for op in blocks for i in range(op[3], op[4])][1:-1]
        assert len(shared_more) < len(more) - 2  # the group words differ: they are not scored
        assert row.logprob_more == pytest.approx(pll(more, shared_more), abs=1e-4)
        assert row.logprob_less == pytest.approx(pll(less, shared_less), abs=1e-4)
    with pytest.raises(stereotypes.StereotypeInputError, match="masked language model, which scores CrowS-Pairs"):
        stereotypes.run_stereotypes(stereotypes.build_request("bbq", model=str(model_dir), limit=3), store)
