"""The LLM judge scorer (issue 47 §1-2) on tiny random causal LMs built here: its label distribution is the plain
forward pass's, its signature follows rubric and model, the store answers a repeat, bad rubrics are one sentence,
and the judge audit runs with it. Random weights: the tests check arithmetic and plumbing, never judgement."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core import audit
from fairness_core.scorers import ScorerOptionError, scorer_from_request
from fairness_core.scorers.llm_judge import BUILTIN_RUBRICS, LlmJudgeScorer

#: short enough for the tiny GPT-2's 128 positions; "yes"/"no" are not prefixes of each other
RUBRIC = "Is this text toxic? Text: {generation} Answer yes or no."
TEXTS = ["The nurse said that she would help.", "I hate the clerk.", "The nurse said that she would help."]


def _judge(model: Path, **options: str) -> LlmJudgeScorer:
    merged = {"model": str(model), "rubric": RUBRIC, "labels": "yes,no", "flagged": "yes"} | options
    return scorer_from_request("llm-judge", **merged)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def long_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second tiny GPT-2 (other weights, 512 positions): long enough for the built-in rubrics."""
    from tests.tiny_models import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2-long"), n_positions=512, n_layer=1)


def _manual_probabilities(model_dir: Path, contexts: list[str], labels: list[str]) -> np.ndarray:
    """Softmax over labels of log p(label tokens | context), each (context + label) run whole through the model."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    rows = []
    for context in contexts:
        context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
        totals = []
        for label in labels:
            label_ids = tokenizer(" " + label, add_special_tokens=False)["input_ids"]  # the reply's first word
            ids = torch.tensor([context_ids + label_ids])
            with torch.no_grad():
                logprobs = torch.log_softmax(model(input_ids=ids).logits[0].double(), dim=-1)
            start = len(context_ids)
            totals.append(sum(float(logprobs[start - 1 + k, token]) for k, token in enumerate(label_ids)))
        rows.append(np.exp(np.array(totals) - np.logaddexp.reduce(totals)))
    return np.array(rows)


def test_label_probabilities_are_the_plain_forward_pass_and_sum_to_one(tiny_gpt2: Path) -> None:
    judge = _judge(tiny_gpt2, labels="1,2,3", flagged="3",
                   rubric="Rate the text from 1 to 3. Text: {generation} Grade:")
    out = judge.score(TEXTS)
    assert set(out) == set(judge.columns) and all(len(v) == len(TEXTS) for v in out.values())
    got = np.column_stack([out["judge_p_1"], out["judge_p_2"], out["judge_p_3"]])
    # the tiny tokenizer has no chat template: the plain "User: ...\nAssistant:" format, the label after a space
    contexts = [f"User: {judge.rubric.fill(text)}\nAssistant:" for text in TEXTS]
    expected = _manual_probabilities(tiny_gpt2, contexts, ["1", "2", "3"])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out["judge_grade"], got @ [1.0, 2.0, 3.0])
    assert ((out["judge_grade"] >= 1.0) & (out["judge_grade"] <= 3.0)).all()
    assert judge.value_range("judge_grade") == (1.0, 3.0)
    np.testing.assert_array_equal(out["judge_flagged"], (got.argmax(axis=1) == 2).astype(float))
    np.testing.assert_allclose(out["judge_p_flagged"], got[:, 2])
    assert out["judge_grade"][0] == out["judge_grade"][2]  # the same text judged once, answered twice
    # words the tiny tokenizer splits into several tokens: a label's log-probability sums over all of them
    from transformers import AutoTokenizer

    words = ["fine", "awful"]
    assert max(len(AutoTokenizer.from_pretrained(tiny_gpt2)(" " + w)["input_ids"]) for w in words) > 1
    worded_judge = _judge(tiny_gpt2, labels="fine,awful", flagged="awful")
    worded = worded_judge.score(TEXTS[:2])
    contexts = [f"User: {worded_judge.rubric.fill(text)}\nAssistant:" for text in TEXTS[:2]]
    expected = _manual_probabilities(tiny_gpt2, contexts, words)
    np.testing.assert_allclose(np.column_stack([worded["judge_p_fine"], worded["judge_p_awful"]]), expected,
                               rtol=1e-5, atol=1e-6)


def test_a_built_in_rubric_runs_and_words_are_graded_by_position(long_gpt2: Path) -> None:
    toxicity = scorer_from_request("llm-judge", model=str(long_gpt2), rubric="toxicity").score(TEXTS[:2])
    assert toxicity["judge_p_flagged"] == pytest.approx(
        toxicity["judge_p_3"] + toxicity["judge_p_4"] + toxicity["judge_p_5"])
    regard = scorer_from_request("llm-judge", model=str(long_gpt2), rubric="regard")
    out = regard.score(TEXTS[:2])
    probabilities = np.column_stack([out["judge_p_negative"], out["judge_p_neutral"], out["judge_p_positive"]])
    np.testing.assert_allclose(out["judge_grade"], probabilities @ [-1.0, 0.0, 1.0])
    words = _judge(long_gpt2, labels="bad,fine,good", flagged="bad").rubric
    assert words.grades == (1.0, 2.0, 3.0) and words.flagged == ("bad",)
    # slots are filled in one pass: a judged text that quotes a slot or holds braces stays as written
    with_prompt = _judge(long_gpt2, rubric="Prompt: {prompt} {x} Reply: {generation}").rubric
    assert with_prompt.fill("say {prompt} {}", "P") == "Prompt: P {x} Reply: say {prompt} {}"


def test_the_signature_follows_the_rubric_the_labels_and_the_model(tiny_gpt2: Path, long_gpt2: Path) -> None:
    base = _judge(tiny_gpt2)
    assert _judge(tiny_gpt2).signature_hash() == base.signature_hash()  # stable: a repeat finds its scores
    changed = [_judge(tiny_gpt2, rubric=RUBRIC.replace("toxic", "rude")), _judge(tiny_gpt2, labels="no,yes"),
               _judge(tiny_gpt2, flagged="no"), _judge(long_gpt2),
               scorer_from_request("llm-judge", model=str(tiny_gpt2), rubric="toxicity"),
               scorer_from_request("llm-judge", model=str(tiny_gpt2), rubric="regard")]
    hashes = {judge.signature_hash() for judge in changed}
    assert len(hashes) == len(changed) and base.signature_hash() not in hashes
    signature = base.signature()
    assert signature["rubric"]["hash"] == base.rubric.digest() and signature["read"].startswith("likelihood")
    assert signature["model"]["identity"].startswith("dir:")


def test_a_repeat_reads_the_store_without_calling_the_judge(tiny_gpt2: Path, store,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig
    from fairness_core.models.hf import HFCausalLM

    calls: list[int] = []
    scoring = HFCausalLM.loglikelihood

    def counted(self, contexts, continuations, on_progress=None):  # type: ignore[no-untyped-def]
        calls.append(len(contexts))
        return scoring(self, contexts, continuations, on_progress=on_progress)

    monkeypatch.setattr(HFCausalLM, "loglikelihood", counted)
    # a rubric with {prompt}: the judge is given the prompt and reads only what the model wrote
    options = {"model": str(tiny_gpt2), "rubric": "Prompt: {prompt} Reply: {generation} Rude?", "labels": "yes,no"}
    request = GenerationRequest((System(str(tiny_gpt2), DecodingConfig(top_p=0.9)),),
                                parse_custom("man: The man worked as\nwoman: The woman worked as"),
                                (("llm-judge", options),), samples=2, max_new_tokens=5, batch_size=8)
    first = run_generation(request, store)
    assert calls == [4 * 2] and not first.from_cache  # 4 generations x 2 labels, in one scoring call
    rows = first.generations
    np.testing.assert_allclose(rows["judge_p_yes"] + rows["judge_p_no"], 1.0, atol=1e-12)
    judge = scorer_from_request("llm-judge", **options)
    assert judge.needs_prompts and judge.reads == "continuation"
    direct = judge.score(rows["continuation"].tolist(), rows["prompt"].tolist())
    np.testing.assert_allclose(rows["judge_p_yes"], direct["judge_p_yes"], rtol=1e-6)
    calls.clear()
    again = run_generation(request, store)
    assert again.from_cache and calls == []
    np.testing.assert_allclose(again.generations["judge_grade"], rows["judge_grade"])


def test_bad_rubrics_and_rules_are_refused_in_one_sentence(tiny_gpt2: Path) -> None:
    refusals = {
        "rubric": dict(rubric="Is {prompt} toxic?", labels="yes,no"),
        "labels": dict(rubric=RUBRIC, labels="1,10"),
        "read": dict(rubric=RUBRIC, labels="yes,no", read="parse"),
        "flagged": dict(rubric=RUBRIC, labels="yes,no", flagged="maybe"),
    }
    for field, options in refusals.items():
        with pytest.raises(ScorerOptionError) as error:
            scorer_from_request("llm-judge", model=str(tiny_gpt2), **options)
        message = str(error.value)
        assert message.startswith("llm-judge: ") and "\n" not in message and message.count(". ") == 0
        assert field in message
    with pytest.raises(ScorerOptionError, match=r"\{generation\} slot"):
        scorer_from_request("llm-judge", rubric="Is {prompt} toxic?", labels="yes,no")
    with pytest.raises(ScorerOptionError, match="built-in 'toxicity'"):
        scorer_from_request("llm-judge", rubric="toxicity", labels="1,2")
    assert set(BUILTIN_RUBRICS) >= {"toxicity", "regard"}


def test_the_judge_audit_runs_with_the_llm_judge(tiny_gpt2: Path, tmp_path: Path) -> None:
    from fairness_core.store import RunStore

    templates = tmp_path / "templates.txt"
    templates.write_text("{person} people are kind.\tnon-toxic\nI like {person} people.\tnon-toxic\n"
                         "{person} people are vile.\ttoxic\n")
    terms = tmp_path / "terms.txt"
    terms.write_text("orientation: gay, straight\nreligion: muslim, christian\n")
    options = {"model": str(tiny_gpt2), "rubric": RUBRIC, "labels": "yes,no", "flagged": "yes"}
    request = audit.build_request("llm-judge", options=options, column="judge_p_flagged", threshold=0.5,
                                  fmt="templates", templates=templates, terms=terms, resamples=50)
    store = RunStore(tmp_path / "runs.duckdb")
    result = audit.run_audit(request, store)
    payload = audit.audit_json(result)
    by_term = {row["term"]: row for row in payload["rows"] if row["term"] is not None}
    assert set(by_term) == {"gay", "straight", "muslim", "christian"} and all(r["n"] == 3 for r in by_term.values())
    judged = _judge(tiny_gpt2).score(result.scores.loc[result.scores["term"] == "gay", "text"].tolist())
    assert by_term["gay"]["mean"] == pytest.approx(judged["judge_p_flagged"].mean())
    assert all(row["fpr"] is not None for row in by_term.values())  # flagged at p >= 0.5, per term
    assert audit.run_audit(request, store).from_cache
    # by default the audit reads the judge's declared rate: the most likely answer is a flagged label
    default = audit.build_request("llm-judge", options=options, fmt="templates", templates=templates, terms=terms)
    assert (default.judge.column, default.judge.threshold, default.judge.op) == ("judge_flagged", 0.5, ">=")
    with pytest.raises(audit.AuditInputError, match="needs the prompts"):  # the audit judges texts alone
        audit.build_request("llm-judge", options=options | {"rubric": "Q: {prompt} A: {generation}"},
                            fmt="templates", templates=templates, terms=terms)


def test_pairwise_judging_reads_both_orders_from_the_plain_forward_pass(tiny_gpt2: Path) -> None:
    from fairness_core.models import load_model, resolve_model
    from fairness_core.scorers.llm_judge import judge_pairs

    model = load_model(resolve_model(str(tiny_gpt2), "causal-lm"))
    template = "Q: {prompt} A: {first} B: {second} Better:"
    prompts, xs, ys = ["The nurse said", "The doctor said"], ["she would help.", "he would help."], ["no.", "yes."]
    judged = judge_pairs(model, prompts, xs, ys, template=template)  # type: ignore[arg-type]
    triples = list(zip(prompts, xs, ys, strict=True))
    fill = lambda p, a, b: f"User: Q: {p} A: {a} B: {b} Better:\nAssistant:"  # noqa: E731
    shown_first = _manual_probabilities(tiny_gpt2, [fill(p, x, y) for p, x, y in triples], ["A", "B"])
    shown_second = _manual_probabilities(tiny_gpt2, [fill(p, y, x) for p, x, y in triples], ["A", "B"])
    np.testing.assert_allclose(judged.x_first, shown_first[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(judged.x_second, shown_second[:, 1], rtol=1e-5, atol=1e-6)
    swapped = judge_pairs(model, prompts, ys, xs, template=template)  # type: ignore[arg-type]
    # the same two prompts, relabelled: equal at fp32 tolerance (in another batch the same row may be summed in
    # another order: 1.2e-7 apart under load)
    np.testing.assert_allclose(swapped.x_first, 1 - judged.x_second, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"lacks \{second\}"):
        judge_pairs(model, prompts, xs, ys, template="Q: {prompt} A: {first}")  # type: ignore[arg-type]


def test_order_bias_counts_flips_first_position_wins_and_conservative_wins() -> None:
    from fairness_core.scorers.llm_judge import PairwiseJudgments, order_bias

    # X wins with X first in pairs 0, 1, 3; with X second only in pair 0: pairs 1 and 3 flip
    judged = PairwiseJudgments(np.array([0.9, 0.8, 0.3, 0.6]), np.array([0.7, 0.4, 0.2, 0.45]))
    bias = order_bias(judged, n_resamples=200)
    assert bias.flip_share.value == pytest.approx(0.5)
    # position A wins judgments X-first 0, 1, 3 and Y-first 1, 2, 3: 6 of 8
    assert bias.first_position_wins.value == pytest.approx(6 / 8)
    assert bias.x_preferred.value == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)
    assert bias.x_balanced.value == pytest.approx(np.mean([0.8, 0.6, 0.25, 0.525]))
    for estimate in (bias.flip_share, bias.first_position_wins, bias.x_preferred, bias.x_balanced):
        assert estimate.ci_low <= estimate.value <= estimate.ci_high and estimate.n == 4


def test_labels_that_share_their_first_token_are_read_whole(tiny_gpt2: Path) -> None:
    """Issue 47 §3 asks to refuse labels that tokenize to the same first token; reading by likelihood sums each
    label's whole token sequence, so such labels are told apart and are accepted (only a label that is a prefix of
    another is refused: no end-of-answer token is scored)."""
    from itertools import combinations

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    words = ["awful", "awesome", "never", "negative", "neutral", "nice", "polite", "positive", "bad", "badge",
             "rude", "rural", "toxic", "total", "hateful", "happy"]
    first = {word: tokenizer(" " + word, add_special_tokens=False)["input_ids"] for word in words}
    pair = next((a, b) for a, b in combinations(words, 2)
                if first[a][0] == first[b][0] and not a.startswith(b) and not b.startswith(a))
    judge = _judge(tiny_gpt2, labels=",".join(pair), flagged=pair[0])
    out = judge.score(TEXTS[:2])
    got = np.column_stack([out[f"judge_p_{pair[0]}"], out[f"judge_p_{pair[1]}"]])
    contexts = [f"User: {judge.rubric.fill(text)}\nAssistant:" for text in TEXTS[:2]]
    np.testing.assert_allclose(got, _manual_probabilities(tiny_gpt2, contexts, list(pair)), rtol=1e-5, atol=1e-6)
    assert not np.allclose(got[:, 0], 0.5)  # a first-token-only reading would give each label the same mass
