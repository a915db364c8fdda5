"""The adaptation pipeline end to end on a small corpus: NER -> rewrites (stored, resumable) -> scores ->
VBCM and comparisons. Replies are monkeypatched where a test needs to know them; one test uses the tiny
random GPT-2 through the real chat role."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from fairness_core.adaptation.noe import Corpus
from fairness_core.adaptation.request import AdaptationInputError, build_request
from fairness_core.adaptation.rewrite import ACCEPTED, LOST, REPEATED
from fairness_core.adaptation.summary import comparisons, noe_summary, rejection_summary, report_json, vbcm_results
from fairness_core.adaptation.task import run_adaptation
from fairness_core.adaptation.templates import SLOT, IdentityTerms, parse_templates_text
from fairness_core.scorers import Scorer, register_scorer

CORPUS = Corpus("test corpus", (
    "Barack Obama served as the president of the United States.",
    "Marie Curie won two Nobel prizes for her research.",
    "The bridge was completed in 1932 after years of work.",
    "Angela Merkel met Emmanuel Macron in Paris.",
    "A metalsmith is a person who works with metals.",
    "Serena Williams is an American professional tennis player.",
    "Socialism is a political philosophy about social ownership.",
    "The museum holds a large collection of paintings.",
    "Albert Einstein developed the theory of relativity.",
    "Engineering is the use of science to design machines.",
))
TEMPLATES = parse_templates_text(
    "{person} feels happy.\nI talked to {person} yesterday.\n{person} is a horrible person.")
TERMS = IdentityTerms({
    "gender": {"female-names": ("Emma", "Olivia"), "male-names": ("Liam", "Noah"),
               "female-nouns": ("my sister",), "male-nouns": ("my brother",)},
    "nationality": {"Spain": ("María", "José"), "France": ("Chloé", "Lucas"), "Japan": ("Yui", "Haruto")},
})


@register_scorer
class VowelShare(Scorer):
    """A name-sensitive test scorer in [0, 1]: the share of vowels among the letters (VADER and the
    offensive classifier give names no score, so their VBCM vectors are constant)."""

    name, label, version = "test-vowel-share", "vowel share (test)", "1"

    @property
    def columns(self) -> tuple[str, ...]:
        return ("vowel_share",)

    def score(self, texts, prompts=None):
        letters = [[c for c in t.lower() if c.isalpha()] for t in texts]
        return {"vowel_share": np.array([sum(c in "aeiou" for c in ls) / max(len(ls), 1) for ls in letters])}


def make_request(model: str = "smollm2-135m-instruct", **options):
    defaults = dict(templates=TEMPLATES, terms=TERMS, attributes=("gender", "nationality"), corpus=CORPUS,
                    corpus_size=None, max_noes=None, model=model, n_examples=3, max_new_tokens=12,
                    classifiers=("vader", "offensive"), resamples=200, anchor_names=("Kevin", "Brian"),
                    noun_groups=("female-nouns", "male-nouns"))
    defaults.update(options)
    return build_request(**defaults)


def scripted_generate(calls: list[int]):
    """Replies by template: 'feels happy' keeps the anchor once, 'talked to' loses it, 'horrible' repeats it."""
    def fake(request, model, rows):
        calls.append(len(rows))
        replies = []
        for row in rows:
            anchor = re.search(r'include "([^"]+)" explicitly', row["prompt"]).group(1)
            sentence = re.search(r'following sentence "([^"]+)"', row["prompt"]).group(1)
            if "feels happy" in sentence:
                replies.append(f'"In 1932, {anchor} was said to be happy with the work."\nExplanation: none')
            elif "talked to" in sentence:
                replies.append("I had a conversation with someone yesterday.")
            else:
                replies.append(f"{anchor} is horrible, and {anchor} knows it.")
        return replies
    return fake


@pytest.fixture()
def scripted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr("fairness_core.generation.task._generate", scripted_generate(calls))
    monkeypatch.setattr("fairness_core.generation.task._check_causal", lambda system: {
        "source": "scripted", "task": "causal-lm", "dtype": "auto", "quantization": "none", "device": "cpu",
        "revision": None, "gguf_file": None})
    return calls


def test_rewrites_are_judged_retemplated_and_resumed_from_the_store(store, scripted) -> None:
    request = make_request()
    result = run_adaptation(request, store)
    assert result.complete
    by_template = {}
    for rewrite in result.rewrites:
        by_template.setdefault(rewrite.template_id, set()).add(rewrite.status)
    assert by_template == {"custom:1": {ACCEPTED}, "custom:2": {LOST}, "custom:3": {REPEATED}}
    summary = rejection_summary(result)
    assert summary["n_rewrites"] == 6  # 3 templates x (names, nouns)
    assert summary["rejection_rate"] == pytest.approx(4 / 6)
    accepted = [r for r in result.rewrites if r.accepted]
    for rewrite in accepted:
        assert rewrite.adapted_template == "In 1932, {person} was said to be happy with the work."
        assert rewrite.adapted_template.count(SLOT) == 1
    # Only the accepted template is in the adapted sets; every filled text holds its term exactly once.
    adapted = result.perturbations[("adapted", "gender")]
    assert {p.template_id for p in adapted} == {"custom:1"}
    assert len(adapted) == 6
    for p in adapted:
        assert len(re.findall(rf"\b{re.escape(p.term)}\b", p.text, flags=re.IGNORECASE)) == 1
    assert next(p.text for p in adapted if p.term == "my sister").startswith("In 1932, my sister was")
    # NOEs: single-person sentences only (Merkel/Macron has two people and is skipped).
    noes = noe_summary(result)
    assert noes["n_with_person"] == 5 and noes["n_multi_person_skipped"] == 1 and noes["n_used"] == 4
    assert noes["perturbations"] == {"gender": 4 * 4, "nationality": 4 * 6}
    calls_before = list(scripted)
    again = run_adaptation(request, store)
    assert again.from_cache and scripted == calls_before  # nothing regenerated, rescored or re-recognised
    assert [r.status for r in again.rewrites] == [r.status for r in result.rewrites]


def test_vbcm_and_comparisons_come_with_intervals(store, scripted) -> None:
    result = run_adaptation(make_request(classifiers=("vader", "test-vowel-share")), store)
    results = vbcm_results(result)
    original = results[("vader", "gender", "original")]
    assert set(original.vbcm) == {"female-names", "male-names", "female-nouns", "male-nouns"}
    assert original.n_templates == 3
    noe = results[("vader", "nationality", "noe")]
    assert noe.n_templates == 4 and set(noe.ci) == {"Spain", "France", "Japan"}
    for group, (low, high) in noe.ci.items():
        assert low <= noe.vbcm[group] + 1e-12 and noe.vbcm[group] <= high + 1e-12
    table = comparisons(result)
    nationality = table[(table["classifier"] == "test-vowel-share") & (table["attribute"] == "nationality")]
    assert list(nationality["comparison"]) == ["original vs NOEs", "original (accepted templates) vs NOEs",
                                               "adapted vs NOEs", "adapted vs original", "adapted − original"]
    assert nationality["n_templates"].tolist() == [3, 1, 1, 1, 1]  # one of three templates was accepted
    assert nationality["r"].notna().all()  # three groups: r is reported
    assert (nationality["mae_ci_low"] <= nationality["mae"] + 1e-12).all()
    # VADER gives names no score: every group equals its background, VBCM = 1, r undefined.
    assert set(results[("vader", "nationality", "noe")].vbcm.values()) == {1.0}
    gender = table[(table["classifier"] == "test-vowel-share") & (table["attribute"] == "gender")]
    assert gender["r"].isna().all()  # two name groups: r is not
    assert (gender["mae"] >= 0).iloc[:2].all()
    report = report_json(result)
    assert report["rewrites"]["counts"][ACCEPTED] == 2
    # Issue 18 §2.10: the rejection rate (templates resampled) and the characteristics (sentences) have CIs.
    low, high = report["rewrites"]["rejection_rate_ci"]
    assert low <= report["rewrites"]["rejection_rate"] <= high and low < high
    assert set(report["rewrites"]["rejection_rate_per_kind_ci"]) == {"names", "nouns"}
    original = next(row for row in report["characteristics"] if row["set"].startswith("original"))
    assert original["words_per_sentence_ci_low"] <= original["words_per_sentence"] \
        <= original["words_per_sentence_ci_high"]
    assert report["classifier_mappings"] == {"vader": "(compound + 1) / 2", "test-vowel-share": "as is"}
    assert 0.0 <= report["similarity"]["all"]["value"] <= 1.0


def test_tiny_model_rewrites_keep_the_identity_term_exactly_once_or_are_rejected(store, tiny_gpt2: Path) -> None:
    # The tiny GPT-2 has 128 positions: a short wording of the prompt and no examples keep it inside.
    request = make_request(model=str(tiny_gpt2), max_new_tokens=8, classifiers=("vader",), n_examples=0,
                           prompt="{n}{examples}Rewrite {sentence} with {term}.")
    result = run_adaptation(request, store)
    assert result.complete and len(result.rewrites) == 6
    for rewrite in result.rewrites:
        count = len(re.findall(rf"(?<!\w){re.escape(rewrite.anchor)}(?!\w)", rewrite.cleaned, flags=re.IGNORECASE))
        assert (rewrite.status == ACCEPTED) == (count == 1)
        if rewrite.accepted:
            assert rewrite.adapted_template.count(SLOT) == 1


def test_bad_requests_are_one_sentence() -> None:
    with pytest.raises(AdaptationInputError, match="no attribute 'age'"):
        make_request(attributes=("age",))
    with pytest.raises(AdaptationInputError, match="unknown classifier 'sentiment-x'"):
        make_request(classifiers=("sentiment-x",))
    with pytest.raises(AdaptationInputError, match="must contain"):
        make_request(prompt="Rewrite {sentence} please")


def test_without_any_accepted_rewrite_the_original_is_still_compared_with_the_noes(
        store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 18 §2.6: a run in which every rewrite is rejected has no adapted set, but the original templates
    and the NOEs can still be compared; the --json report holds null, never NaN."""
    monkeypatch.setattr("fairness_core.generation.task._generate",
                        lambda request, model, rows: ["I had a conversation with someone." for _ in rows])
    monkeypatch.setattr("fairness_core.generation.task._check_causal", lambda system: {
        "source": "scripted-all-lost", "task": "causal-lm", "dtype": "auto", "quantization": "none",
        "device": "cpu", "revision": None, "gguf_file": None})
    result = run_adaptation(make_request(classifiers=("test-vowel-share",)), store)
    assert rejection_summary(result)["counts"][ACCEPTED] == 0
    table = comparisons(result)
    assert sorted(set(table["comparison"])) == ["original vs NOEs"]
    assert sorted(table["attribute"]) == ["gender", "nationality"]
    assert (table["mae"] >= 0).all() and table["mae_ci_low"].notna().all()
    from fairness_core.cli import print_json

    print_json(report_json(result))
    text = capsys.readouterr().out
    assert "NaN" not in text and "Infinity" not in text
    report = json.loads(text)
    assert set(report["comparisons"]["test-vowel-share"]["gender"]) == {"original vs NOEs"}
    assert report["similarity"]["all"]["value"] is None  # no accepted rewrite: no similarity, null not NaN


def test_the_pages_report_download_is_strict_json_with_null_for_missing_numbers() -> None:
    import json

    import pandas as pd

    from fairness_core.adaptation import summary

    report = {"vbcm": pd.DataFrame({"group": ["a", "b"], "vbcm": [0.9, float("nan")]}), "mae": float("inf")}
    text = summary.report_download(report)
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"vbcm": [{"group": "a", "vbcm": 0.9}, {"group": "b", "vbcm": None}], "mae": None}


@register_scorer
class TextHash(Scorer):
    """A test scorer in [0, 1] that varies with the template and the name but ignores the word 'indeed': a rewrite
    that only adds 'indeed' measures exactly like its original."""

    name, label, version = "test-text-hash", "text hash (test)", "1"

    @property
    def columns(self) -> tuple[str, ...]:
        return ("hash_score",)

    def score(self, texts, prompts=None):
        import hashlib

        digests = [hashlib.md5(t.replace(" indeed", "").encode()).hexdigest() for t in texts]
        return {"hash_score": np.array([int(d[:6], 16) / 16**6 for d in digests])}


def test_a_rewrite_that_measures_like_its_original_shows_no_gain_and_no_change(
        store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30 §2 on a real run: 6 of 8 templates are rewritten by adding 'indeed' (a change the classifier does
    not see), 2 are rejected. Compared on the accepted templates, adapting changes nothing: the gain is 0 with a
    point interval, "no difference measurable" fires, and the characteristics compare each rewrite with its own
    original (+1 word exactly). Before, all 8 originals were compared with the 6 rewrites."""
    def indeed(request, model, rows):
        replies = []
        for row in rows:
            sentence = re.search(r'following sentence "([^"]+)"', row["prompt"]).group(1)
            lost = "talked to" in sentence or "went home" in sentence
            replies.append("Someone did something." if lost else sentence[:-1] + " indeed.")
        return replies

    monkeypatch.setattr("fairness_core.generation.task._generate", indeed)
    monkeypatch.setattr("fairness_core.generation.task._check_causal", lambda system: {
        "source": "scripted-indeed", "task": "causal-lm", "dtype": "auto", "quantization": "none", "device": "cpu",
        "revision": None, "gguf_file": None})
    templates = parse_templates_text("\n".join([
        "{person} feels happy.", "I talked to {person} yesterday.", "{person} is a horrible person.",
        "{person} made me feel angry.", "{person} went home.", "The conversation with {person} was funny.",
        "{person} found himself in a grim situation.", "I saw {person} in the market."]))
    result = run_adaptation(make_request(templates=templates, attributes=("nationality",),
                                         classifiers=("test-text-hash",)), store)
    table = comparisons(result).set_index("comparison")
    assert table.loc["adapted − original", "n_templates"] == 6
    assert table.loc["adapted − original", ["mae", "mae_ci_low", "mae_ci_high"]].tolist() == [0.0, 0.0, 0.0]
    assert table.loc["adapted vs original", "mae"] == 0.0
    assert table.loc["adapted vs original", "change_detected"] is False
    same = ["mae", "mae_ci_low", "mae_ci_high", "r", "r_ci_low", "r_ci_high"]
    assert table.loc["original (accepted templates) vs NOEs", same].tolist() == pytest.approx(
        table.loc["adapted vs NOEs", same].tolist(), abs=1e-12)
    from fairness_core.adaptation.summary import characteristics_frame, readable_comparisons

    _, problems = readable_comparisons(comparisons(result))
    assert len(problems) == 1 and "no difference measurable: on the 6 accepted templates" in problems[0]
    rows = characteristics_frame(result).set_index("set")
    change = rows.loc["adapted − original (same rewrites, paired)"]
    assert change["n"] == 6 and change[["words_per_sentence", "words_per_sentence_ci_low",
                                        "words_per_sentence_ci_high"]].tolist() == [1.0, 1.0, 1.0]
    accepted = rows.loc["original templates (filled), accepted ones"]
    assert accepted["words_per_sentence"] + 1 == rows.loc["adapted templates (filled)", "words_per_sentence"]
