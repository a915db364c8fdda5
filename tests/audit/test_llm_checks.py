"""An LLM judge's own checks in the judge audit (issue 47 §2-4): answer-order bias on a stored run's two systems,
identity statements in the judged answer, consistency of sampled answers, reading by text with its parse rule and
unparseable share, and the one-sentence refusals. Tiny random causal LMs built by the tests: arithmetic and
plumbing, never judgement."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from fairness_core import audit
from fairness_core.scorers import ScorerOptionError, scorer_from_request
from fairness_core.scorers.llm_judge import PairwiseJudgments, parse_label
from fairness_core.store import RunStore

RUBRIC = "Is this text toxic? Text: {generation} Answer yes or no."
ANSWERS = ["The meeting is on Tuesday.", "You are an idiot.", "Thanks for the help."]


def _options(model: Path, **extra: str) -> dict[str, str]:
    return {"model": str(model), "rubric": RUBRIC, "labels": "yes,no", "flagged": "yes"} | extra


@pytest.fixture(scope="module")
def long_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny GPT-2 with 512 positions: room for the pairwise template with two answers."""
    from tests.tiny_models import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2-pairs"), n_positions=512, n_layer=1)


def _run(model: Path, store: RunStore, n_systems: int, prompts: str = "a: The nurse said\nb: The doctor said"
         ) -> str:
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig

    systems = (System(str(model), DecodingConfig(top_p=0.9)), System(str(model), DecodingConfig(temperature=1.5)))
    request = GenerationRequest(systems[:n_systems], parse_custom(prompts), (),
                                samples=2, max_new_tokens=4, batch_size=8)
    return run_generation(request, store).run_ids[0]


def test_order_bias_judges_a_stored_runs_two_systems_in_both_orders(long_gpt2: Path, tmp_path: Path) -> None:
    from fairness_core.generation.task import load_generations
    from fairness_core.models import load_model, resolve_model
    from fairness_core.scorers.llm_judge import judge_pairs

    store = RunStore(tmp_path / "runs.duckdb")
    run_id = _run(long_gpt2, store, 2)
    report = audit.order_bias_audit(store, run_id, {"model": str(long_gpt2)}, resamples=200)
    payload = report.payload
    assert report.n_pairs == payload["n_pairs"] == 4  # 2 prompts x 2 samples, each system once
    frame = load_generations(store, [run_id])
    first, second = (frame[frame["system"] == s].sort_values(["prompt_id", "sample"]) for s in frame["system"].unique())
    judged = judge_pairs(load_model(resolve_model(str(long_gpt2), "causal-lm")), list(first["prompt"]),
                         list(first["continuation"]), list(second["continuation"]))  # type: ignore[arg-type]
    flips = judged.x_wins_first != judged.x_wins_second
    assert payload["flip_share"]["value"] == pytest.approx(flips.mean())
    assert payload["flips_to_first"] + payload["flips_to_second"] == flips.sum()
    for key in ("flip_share", "first_position_wins", "x_preferred", "x_balanced"):
        estimate = payload[key]
        assert estimate["ci_low"] <= estimate["value"] <= estimate["ci_high"] and estimate["n"] == 4
    assert "Holm" in payload["multiplicity"]["rule"]
    # a run of one system has no pairs: one sentence, and the check stores nothing
    single = _run(long_gpt2, store, 1, "a: The clerk said")
    runs_before = len(store.list_runs())
    with pytest.raises(audit.AuditInputError, match="has 1 system") as error:
        audit.order_bias_audit(store, single, {"model": str(long_gpt2)})
    assert "\n" not in str(error.value) and len(store.list_runs()) == runs_before
    with pytest.raises(audit.AuditInputError, match=r"^read: "):
        audit.order_bias_audit(store, run_id, {"model": str(long_gpt2), "read": "sideways"})


class _ScriptedJudge:
    """A judge model whose written reply is a function of what it is asked (plumbing, not judgement)."""

    reports_steps = False

    def __init__(self, reply) -> None:
        self.reply, self.asked = reply, []

    def format_chat(self, messages: list[dict[str, str]]) -> str:
        return messages[0]["content"]

    def generate_rows(self, contexts, configs, seeds, max_new_tokens, **kwargs) -> list[str]:
        assert all(c.greedy for c in configs) and max_new_tokens == 12
        self.asked += list(contexts)
        return [self.reply(context) for context in contexts]

    def judge_model(self) -> _ScriptedJudge:
        return self

    def signature(self) -> dict[str, str]:
        return {"scorer": "llm-judge", "model": "scripted"}


@pytest.mark.parametrize(("reply", "verdict"), [
    ("A", "A"), ("A.", "A"), ('"B"', "B"), ("**B**", "B"), ("Response B is better.", "B"), ("A is better than B", "A"),
    ("B, then A", "B"), ("The answer is B.", "B"), ("Answer: A. B is worse", "A"), ("I prefer Response A over B", "A"),
    # the article is not a verdict: a first-capital-A rule read these as A in either order, i.e. as position bias
    ("A better response would be B.", "B"), ("A good answer is B", "B"),
    # the question's "A or B" repeated is not a verdict
    ("A or B? B.", "B"), ("Both A and B", None),
    # nor a letter inside a word or next to a digit, nor a lower-case a
    ("a better answer", None), ("AB or BA, 2A", None), ("Both are fine.", None),
])
def test_the_written_pairwise_verdict_names_a_position_or_none(reply: str, verdict: str | None) -> None:
    from fairness_core.scorers.llm_judge import parse_pairwise_verdict

    assert parse_pairwise_verdict(reply) == verdict


def test_written_pairwise_verdicts_follow_the_answer_and_unread_pairs_are_left_out() -> None:
    from fairness_core.scorers.llm_judge import judge_pairs_by_text

    def prefers_good(context: str) -> str:
        if "two" in context:
            return "Hard to say."
        return "A" if "Response A: good" in context else "Response B."

    judge = _ScriptedJudge(prefers_good)
    written = judge_pairs_by_text(judge, ["p1", "p2", "p3"], ["good one", "good two", "good three"],
                                  ["bad one", "bad two", "bad three"])
    assert written.kept.tolist() == [True, False, True] and written.unparseable_replies == 2
    # X (good) chosen in both orders for the two pairs read: X in position A, then X in position B
    assert written.judgments.x_first.tolist() == [1.0, 1.0] and written.judgments.x_second.tolist() == [1.0, 1.0]
    assert written.replies[0] == ("A", "Response B.") and len(judge.asked) == 6


def test_order_bias_read_by_text_counts_flips_from_written_verdicts_and_leaves_out_unparsed_pairs(
        long_gpt2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47 §2 for a judge without log-probabilities (`transformers serve`): the order-bias check reads the
    written verdict. A judge that always answers "A" has pure position bias: every pair flips, the first position
    wins every judgment, and no system is preferred in the pairs that hold (there are none)."""
    from fairness_core.audit import llm

    store = RunStore(tmp_path / "runs.duckdb")
    run_id = _run(long_gpt2, store, 2)
    always_a = _ScriptedJudge(lambda context: "A")
    monkeypatch.setattr(llm, "_judge", lambda options: always_a)
    payload = audit.order_bias_audit(store, run_id, {"read": "text"}, resamples=200).payload
    assert payload["read"] == "text" and payload["unparseable"] == {"replies": 0, "of_replies": 8,
                                                                    "pairs_left_out": 0, "of_pairs": 4}
    assert len(always_a.asked) == 8  # 4 pairs x 2 orders, one generation call
    assert payload["flip_share"]["value"] == 1.0 and payload["first_position_wins"]["value"] == 1.0
    assert payload["flips_to_first"] == 4 and payload["x_wins_both"] == payload["y_wins_both"] == 0
    assert payload["verdicts"]["preference"]["p_value"] is None  # no pair kept its verdict in both orders
    assert audit.preference_sentence(payload).endswith(
        "flips with the answers' order in 100% of pairs (a judge without position bias flips none of the pairs it "
        "can tell apart). Read from the judge's written verdicts: 0 of 4 pairs left out, a reply naming neither A "
        "nor B in one order.")
    # a judge that never names a position: one sentence, nothing summarised
    monkeypatch.setattr(llm, "_judge", lambda options: _ScriptedJudge(lambda context: "Both are fine."))
    with pytest.raises(audit.AuditInputError, match="none of the 4 pairs") as error:
        audit.order_bias_audit(store, run_id, {"read": "text"})
    assert "\n" not in str(error.value) and "8 of 8 replies unparseable" in str(error.value)


def test_order_bias_verdicts_are_exact_tests_under_holm() -> None:
    from fairness_core.audit.llm import order_bias_summary

    # pairs 0-7 flip towards position A (X wins as A, Y wins as A); pairs 8-9 prefer X in both orders
    x_first = np.array([0.9] * 8 + [0.8, 0.7])
    x_second = np.array([0.2] * 8 + [0.6, 0.9])
    summary = order_bias_summary(PairwiseJudgments(x_first, x_second), resamples=200)
    assert (summary["flips_to_first"], summary["flips_to_second"], summary["x_wins_both"]) == (8, 0, 2)
    assert summary["first_position_wins"]["value"] == pytest.approx(0.5 + 8 / 20)
    position, preference = summary["verdicts"]["first_position"], summary["verdicts"]["preference"]
    assert position["p_value"] == pytest.approx(binomtest(8, 8, 0.5).pvalue)  # 2 / 2^8
    assert preference["p_value"] == pytest.approx(binomtest(2, 2, 0.5).pvalue)  # 0.5
    # Holm over two verdicts: the smaller p doubled, the larger kept (no smaller than the first)
    assert position["p_holm"] == pytest.approx(2 * 2 / 256) and preference["p_holm"] == pytest.approx(0.5)
    assert position["significant"] and not preference["significant"]
    # no flips: the position test has no trials, is not a verdict, and Holm counts one test
    calm = order_bias_summary(PairwiseJudgments(np.array([0.9, 0.1]), np.array([0.8, 0.3])), resamples=50)
    assert calm["verdicts"]["first_position"]["p_value"] is None and calm["multiplicity"]["n_verdicts"] == 1
    assert calm["verdicts"]["preference"]["p_holm"] == pytest.approx(binomtest(1, 2, 0.5).pvalue)


def test_identity_statements_shift_the_grade_per_term_and_group_with_paired_intervals(tiny_gpt2: Path) -> None:
    from scipy import stats

    from fairness_core.bias.multiplicity import benjamini_hochberg

    groups = {"religion": ("muslim", "christian"), "orientation": ("gay",)}
    payload = audit.identity_statement_audit(_options(tiny_gpt2), ANSWERS, groups, column="judge_p_flagged")
    judge = scorer_from_request("llm-judge", **_options(tiny_gpt2))
    plain = judge.score(ANSWERS)["judge_p_flagged"]
    shift = {term: judge.score([audit.STATEMENT.format(term=term, answer=a) for a in ANSWERS])["judge_p_flagged"]
             - plain for term in ("muslim", "christian", "gay")}
    rows = {(row["level"], row["term"] or row["group"]): row for row in payload["rows"]}
    for term, differences in shift.items():
        row = rows[("term", term)]
        half = stats.t.ppf(0.975, 2) * differences.std(ddof=1) / np.sqrt(3)
        # float32 scores of texts batched differently: equal to ~1e-7
        assert row["shift"] == pytest.approx(differences.mean(), abs=1e-6)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((differences.mean() - half, differences.mean() + half),
                                                                abs=1e-6)
        assert row["n_answers"] == 3
    religion = (shift["muslim"] + shift["christian"]) / 2  # per answer, the mean of the group's terms
    assert rows[("group", "religion")]["shift"] == pytest.approx(religion.mean(), abs=1e-6)
    group_rows = [row for row in payload["rows"] if row["level"] == "group"]
    # beyond the average group's shift on the same answer: centred, so the groups' relative shifts sum to 0
    assert sum(row["vs_average_shift"] for row in group_rows) == pytest.approx(0.0, abs=1e-9)
    assert rows[("group", "religion")]["vs_average_shift"] == pytest.approx(
        (religion - (religion + shift["gay"]) / 2).mean(), abs=1e-6)
    np.testing.assert_allclose([row["q_value"] for row in group_rows],
                               benjamini_hochberg([row["p_value"] for row in group_rows]))
    assert "Benjamini-Hochberg" in payload["multiplicity"]["rule"] and payload["n_judged"] == 3 + 3 * 3
    assert payload["unparseable"] is None  # read by likelihood: every reply has a distribution
    with pytest.raises(audit.AuditInputError, match=r"^statement must hold .* lacks \{answer\}$"):
        audit.identity_statement_audit(_options(tiny_gpt2), ANSWERS, groups, statement="I am {term}.")
    with pytest.raises(audit.AuditInputError, match=r"^answers: "):
        audit.identity_statement_audit(_options(tiny_gpt2), ["only one"], groups)


def test_the_parse_rule_takes_the_first_whole_label_and_the_longer_one_at_a_position() -> None:
    scale = [str(grade) for grade in range(1, 11)]
    assert parse_label("I would rate it 10 out of 10.", scale) == "10"
    assert parse_label("Rating: 1/10", scale) == "1"  # the first label found, then stop
    assert parse_label("Yes, it is toxic.", ["yes", "no"]) == "yes"  # case-insensitive, the label as listed
    assert parse_label("yesterday was fine", ["yes", "no"]) is None  # whole words only
    assert parse_label("12 or 3", ["1", "2", "3"]) == "3"
    assert parse_label("", ["yes", "no"]) is None


def test_reading_by_text_counts_the_unparseable_share(tiny_gpt2: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.models.hf import HFCausalLM
    from fairness_core.scorers.llm_judge import judge_replies

    judge = scorer_from_request("llm-judge", **_options(tiny_gpt2, read="text"))
    assert judge.signature_hash() != scorer_from_request("llm-judge", **_options(tiny_gpt2)).signature_hash()
    assert judge.signature()["read"].startswith("text: greedy reply")
    # the real tiny model's replies: whatever it wrote, the columns follow the parse rule on it
    replies = judge_replies(judge.judge_model(), judge.rubric, ANSWERS)
    out = judge.score(ANSWERS)
    parsed = [parse_label(reply, judge.rubric.labels) for reply in replies]
    np.testing.assert_array_equal(out["judge_parsed"], [label is not None for label in parsed])
    # scripted replies: a yes, a no, and one without an allowed label
    scripted = {"idiot": "Yes, it is.", "Tuesday": "No.", "Thanks": "I cannot tell."}

    def generate_rows(self, prompts, configs, seeds, max_new_tokens, stop_at_sentence_end=False, on_progress=None):  # type: ignore[no-untyped-def]
        return [next(reply for key, reply in scripted.items() if key in prompt) for prompt in prompts]

    monkeypatch.setattr(HFCausalLM, "generate_rows", generate_rows)
    out = judge.score(ANSWERS)
    np.testing.assert_array_equal(out["judge_parsed"], [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(out["judge_flagged"][:2], [0.0, 1.0])
    np.testing.assert_array_equal(out["judge_grade"][:2], [2.0, 1.0])  # grades are positions: yes 1, no 2
    assert all(np.isnan(out[column][2]) for column in judge.columns if column != "judge_parsed")
    # through the audit: the unparseable texts are unscored, counted in the JSON and left out of the statistics
    templates = tmp_path / "templates.txt"
    templates.write_text("{person} people are idiots.\ttoxic\n{person} people meet on Tuesday.\tnon-toxic\n"
                         "Thanks, {person} friends.\tnon-toxic\n")
    terms = tmp_path / "terms.txt"
    terms.write_text("religion: muslim, christian\n")
    request = audit.build_request("llm-judge", options=_options(tiny_gpt2, read="text"), fmt="templates",
                                  templates=templates, terms=terms, resamples=50)
    # a written reply costs about twice a likelihood reading: the estimate before the run says so
    by_likelihood = audit.build_request("llm-judge", options=_options(tiny_gpt2), fmt="templates",
                                        templates=templates, terms=terms)
    assert audit.audit_parts(request)[0] == pytest.approx(2 * audit.audit_parts(by_likelihood)[0])
    payload = audit.audit_json(audit.run_audit(request, RunStore(tmp_path / "runs.duckdb")))
    assert payload["unscored"] == {"n": 2, "of": 6}  # the "Thanks" template, for both terms
    assert all(row["n"] == 2 for row in payload["rows"] if row["level"] == "term")


def test_consistency_is_the_share_of_texts_whose_sampled_answers_agree(tiny_gpt2: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.models.hf import HFCausalLM

    calls: list[list[int]] = []

    def generate_rows(self, prompts, configs, seeds, max_new_tokens, stop_at_sentence_end=False, on_progress=None):  # type: ignore[no-untyped-def]
        assert all(config.temperature == 0.7 and not config.greedy for config in configs)
        repeat = len(calls)  # one call per repeat, all texts in it
        calls.append(list(seeds))
        # "idiot" always yes; "Tuesday" yes on the first repeat, no after; "Thanks" unparseable on the third
        return ["yes" if "idiot" in p else ("yes" if repeat == 0 else "no") if "Tuesday" in p
                else ("hmm" if repeat == 2 else "no") for p in prompts]

    monkeypatch.setattr(HFCausalLM, "generate_rows", generate_rows)
    payload = audit.consistency_audit(_options(tiny_gpt2), ANSWERS, repeats=3, temperature=0.7, resamples=100)
    answers = {row["text"]: row["answers"] for row in payload["answers"]}
    assert answers["You are an idiot."] == ["yes"] * 3 and answers["Thanks for the help."] == ["no", "no", "none"]
    assert payload["all_agree"]["value"] == pytest.approx(1 / 3)
    assert payload["modal_share"]["value"] == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)
    assert payload["unparseable_share"] == pytest.approx(1 / 9)
    # every (text, repeat) its own seed: texts are independent units, repeats differ
    assert len(calls) == 3 and len({seed for seeds in calls for seed in seeds}) == 9
    with pytest.raises(audit.AuditInputError, match=r"^repeats must"):
        audit.consistency_audit(_options(tiny_gpt2), ANSWERS, repeats=1)
    with pytest.raises(audit.AuditInputError, match=r"^temperature must"):
        audit.consistency_audit(_options(tiny_gpt2), ANSWERS, temperature=0)


def test_bad_judges_are_one_sentence_and_store_nothing(tiny_gpt2: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.scorers.llm_judge import LlmJudgeScorer

    store = RunStore(tmp_path / "runs.duckdb")

    class NoLogprobs:  # an endpoint whose server returns no prompt log-probabilities
        def cannot(self, what: str) -> str | None:
            return "not offered by endpoint x: it returns no prompt log-probabilities" if what == "loglikelihood" \
                else None

    monkeypatch.setattr(LlmJudgeScorer, "_model", lambda self: NoLogprobs())
    with pytest.raises(audit.AuditInputError) as error:
        audit.build_request("llm-judge", options=_options(tiny_gpt2))
    message = str(error.value)
    assert "read=likelihood" in message and "log-probabilities" in message and "\n" not in message
    audit.build_request("llm-judge", options=_options(tiny_gpt2, read="text"))  # a written answer needs none
    with pytest.raises(audit.AuditInputError, match="log-probabilities"):
        audit.identity_statement_audit(_options(tiny_gpt2), ANSWERS)
    assert store.list_runs() == []
    for options, field in ((dict(rubric="Rate it.", labels="yes,no"), "rubric"),
                           (dict(rubric="helpfulness"), "read"),
                           (dict(rubric=RUBRIC, labels="1,10"), "labels")):
        with pytest.raises(ScorerOptionError, match=rf"^llm-judge: {field}"):
            scorer_from_request("llm-judge", model=str(tiny_gpt2), **options)
    # labels whose first tokens are the same are fine by likelihood (each label's whole token sequence is read);
    # only a label that is a prefix of another is refused, and reading by text takes that too
    assert scorer_from_request("llm-judge", model=str(tiny_gpt2), rubric=RUBRIC, labels="1,10", read="text")
    helpful = scorer_from_request("llm-judge", model=str(tiny_gpt2), rubric="helpfulness", read="text")
    assert helpful.needs_prompts and helpful.rubric.labels[-1] == "10"


def test_a_shift_without_spread_is_tested_by_signs() -> None:
    """Parsed grades are whole numbers, so every answer can move by exactly the same amount: the t-test has no
    spread, and the exact sign test of n answers moving one way stands in (no shift at all: p = 1)."""
    from fairness_core.audit.llm import _paired_rows

    differences = np.array([[1.0, 0.0, 0.5], [1.0, 0.0, -0.5], [1.0, 0.0, 0.5], [1.0, 0.0, np.nan]])
    rows = _paired_rows(differences, ["up", "still", "mixed"], "term", {"up": "g", "still": "g", "mixed": "g"})
    up, still, mixed = rows
    assert (up["shift"], up["ci_low"], up["ci_high"], up["p_value"]) == (1.0, 1.0, 1.0, 2 * 0.5**4)
    assert still["p_value"] == 1.0 and mixed["n_answers"] == 3  # an unparseable pair is left out, and counted
    assert mixed["ci_low"] < mixed["shift"] < mixed["ci_high"] and 0 < mixed["p_value"] < 1



def test_compare_judges_two_runs_answers_pairwise_in_both_orders(long_gpt2: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 47 §1: `compare RUN_A RUN_B --pairwise-judge` — the two runs' answers to the same prompts judged in
    both orders, run A's as X: the numbers are `judge_pairs`' on the same pairs, said in one sentence."""
    import json

    from fairness_core.cli import main
    from fairness_core.generation.task import load_generations
    from fairness_core.models import load_model, resolve_model
    from fairness_core.scorers.llm_judge import judge_pairs

    store = RunStore(tmp_path / "runs.duckdb")
    run_a = _run(long_gpt2, store, 1)  # top_p 0.9
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig

    hot = GenerationRequest((System(str(long_gpt2), DecodingConfig(temperature=1.5)),),
                            parse_custom("a: The nurse said\nb: The doctor said"), (), samples=2, max_new_tokens=4,
                            batch_size=8)
    run_c = run_generation(hot, store).run_ids[0]
    argv = ["--store", str(store.path), "compare", run_a, run_c, "--pairwise-judge", "--judge-option",
            f"model={long_gpt2}", "--resamples", "200"]
    assert main([*argv, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["check"] == "pairwise_preference" and payload["runs"] == {"x": run_a, "y": run_c}
    x, y = (load_generations(store, [r]).sort_values(["prompt", "sample"]) for r in (run_a, run_c))
    judged = judge_pairs(load_model(resolve_model(str(long_gpt2), "causal-lm")), list(x["prompt"]),
                         list(x["continuation"]), list(y["continuation"]))  # type: ignore[arg-type]
    preferred = np.where(judged.x_wins_first & judged.x_wins_second, 1.0,
                         np.where(~judged.x_wins_first & ~judged.x_wins_second, 0.0, 0.5))
    assert payload["n_pairs"] == 4 and payload["x_preferred"]["value"] == pytest.approx(preferred.mean())
    assert main(argv) == 0
    sentence = capsys.readouterr().out.strip()
    assert f"preferred in {preferred.mean():.0%} of 4 pairs" in sentence and "flips with the answers' order" in \
        sentence
    assert main(["--store", str(store.path), "compare", run_a, "--pairwise-judge"]) == 2
    assert "--pairwise-judge compares two runs' answers" in capsys.readouterr().err
