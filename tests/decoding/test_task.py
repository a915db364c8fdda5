"""A decoding sweep through the generic task with the tiny GPT-2: reuse, cancel (partial label),
regard through the registry, the CLI contract, and requests refused before any work."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fairness_core.cli import main
from fairness_core.data.prompts import parse_custom, regard_prompts
from fairness_core.decoding.request import LimitError, RequestError, build_request, check_model_source
from fairness_core.decoding.summary import measures_for, summarize
from fairness_core.decoding.task import plan_decoding, run_decoding
from fairness_core.jobs import CancelToken

PROMPTS = parse_custom("man: The man worked as\nwoman: The woman worked as\nman: The man was\nwoman: The woman was")
SCORERS = (("vader", {}), ("offensive", {}), ("negative_words", {}))
CONTRACT_KEYS = {"config", "group", "n", "negative_sentiment_rate", "ci_low", "ci_high", "offensive_rate",
                 "diversity_trigram_entropy"}


def _request(model: Path, grid: str = "top_p=0.5,0.9", **kwargs):
    options = {"samples": 3, "max_new_tokens": 6, "seed": 0, "batch_size": 8, "scorers": SCORERS} | kwargs
    return build_request(str(model), kwargs.pop("prompts", PROMPTS), grid, **options)


def test_a_sweep_is_systems_over_one_model_and_reuses_stored_settings(tiny_gpt2: Path, store) -> None:
    plan = plan_decoding(_request(tiny_gpt2), store)
    assert len(plan.generation.systems) == 2 and plan.plan.n_to_generate == 2 * 4 * 3
    first = run_decoding(plan, store)
    assert len(first.generations) == 24 and first.status == "complete" and not first.partial
    assert list(dict.fromkeys(first.generations["label"])) == ["top_p=0.5", "top_p=0.9"]
    again = plan_decoding(_request(tiny_gpt2, "top_p=0.9,0.7"), store)
    assert again.plan.n_to_generate == 12  # top_p=0.9 is read back, only 0.7 is new
    second = run_decoding(again, store)
    old = first.generations[first.generations["label"] == "top_p=0.9"].sort_values(["prompt", "sample"])
    new = second.generations[second.generations["label"] == "top_p=0.9"].sort_values(["prompt", "sample"])
    assert old["continuation"].tolist() == new["continuation"].tolist()
    assert plan_decoding(_request(tiny_gpt2, "top_p=0.5,0.7"), store).from_store


def test_a_cancelled_sweep_is_labelled_partial_and_resumes(tiny_gpt2: Path, store) -> None:
    cancel = CancelToken()

    def stop(progress) -> None:
        if progress.done >= 1:
            cancel.cancel()

    partial = run_decoding(plan_decoding(_request(tiny_gpt2), store), store, on_progress=stop, cancel=cancel)
    assert partial.status == "cancelled" and partial.partial
    assert partial.partial_label() == f"partial: {len(partial.generations)} of 24 generations"
    resumed = run_decoding(plan_decoding(_request(tiny_gpt2), store), store)
    assert resumed.partial_label() == "" and len(resumed.generations) == 24


def test_regard_comes_from_the_registry_and_an_unavailable_scorer_is_a_note(
        tiny_gpt2: Path, tiny_bert_classifier: Path, store) -> None:
    scorers = (*SCORERS, ("regard", {"model": str(tiny_bert_classifier), "negative_label": "LABEL_0"}),
               ("regard", {"model": "no-such-owner/no-such-regard-model"}))
    plan = plan_decoding(_request(tiny_gpt2, "top_k=5", samples=1, scorers=scorers[:-1]), store)
    outcome = run_decoding(plan, store)
    summary = summarize(outcome.generations, PROMPTS.families, measures_for(plan.generation.scorers))
    assert np.isfinite(summary.groups["negative_regard_rate"]).all()
    assert "negative_regard_disparity" in summary.groups
    noted = plan_decoding(_request(tiny_gpt2, "top_k=5", samples=1, scorers=(*SCORERS, scorers[-1])), store)
    assert len(noted.notes) == 1 and "unavailable" in noted.notes[0]


def test_requests_are_refused_before_any_work(tiny_gpt2: Path, store, tmp_path: Path) -> None:
    with pytest.raises(RequestError, match="samples per prompt must be a positive"):
        _request(tiny_gpt2, samples=0)
    with pytest.raises(RequestError, match="finite"):
        _request(tiny_gpt2, "temperature=nan")
    with pytest.raises(RequestError, match="between -1 and 1"):
        _request(tiny_gpt2, threshold=float("nan"))
    with pytest.raises(LimitError, match="10,000 decoding configurations is above the limit of 500"):
        _request(tiny_gpt2, "top_p=" + ",".join(f"{0.0001 * i:.4f}" for i in range(1, 101))
                 + ";top_k=" + ",".join(str(i) for i in range(1, 101)))
    with pytest.raises(LimitError, match="samples per prompt is above the limit"):
        _request(tiny_gpt2, samples=10**9)
    with pytest.raises(LimitError, match="max new tokens is above the limit"):
        _request(tiny_gpt2, max_new_tokens=10**9)
    big = regard_prompts()
    with pytest.raises(LimitError, match="confirm to run it anyway"):
        build_request(str(tiny_gpt2), big, "top_p=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9", samples=100)
    assert build_request(str(tiny_gpt2), big, "top_p=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9", samples=100,
                         confirmed=True).n_generations == 9 * 110 * 100
    for bad, phrase in (("/etc/passwd", "is a file, not a model folder"), ("<script>", "neither a preset"),
                        (str(tmp_path), "holds no config.json"), ("/no/such/model", "does not exist"),
                        ("../no-such-model-folder-here", "does not exist")):
        with pytest.raises(RequestError, match=phrase):
            check_model_source(bad)
    assert check_model_source("openai-community/gpt2") == "openai-community/gpt2"
    assert not store.path.exists()


def test_cli_prints_contract_rows_and_serves_repeats_from_the_store(
        tiny_gpt2: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("man: The man worked as\nwoman: The woman worked as\n")
    argv = ["--store", str(tmp_path / "cli.duckdb"), "decoding", "--model", str(tiny_gpt2), "--prompts",
            str(prompts), "--grid", "top_p=0.5,0.9;temperature=0.7", "--samples", "2", "--max-new-tokens", "5",
            "--seed", "1", "--regard-model", "none", "--resamples", "200", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 4 and set(rows[0]) >= CONTRACT_KEYS
    assert rows[0]["config"] == {"temperature": 0.7, "top_p": 0.5} and rows[0]["n"] == 2
    assert {"disparity", "config_disparity", "family", "n_empty", "run_id", "diversity_ci_low",
            "quality_mean_logprob"} <= set(rows[0])
    assert main(argv) == 0
    repeat = capsys.readouterr()
    assert json.loads(repeat.out) == rows and "all 8 generations served from the run store" in repeat.err


def test_a_caller_sees_each_generation_being_written_before_it_is_stored(tiny_gpt2: Path, store) -> None:
    seen: list[dict] = []
    outcome = run_decoding(plan_decoding(_request(tiny_gpt2, "top_p=0.9", samples=1), store), store,
                           on_partial=seen.append)
    stored = dict(zip(outcome.generations["generation_id"], outcome.generations["continuation"], strict=True))
    assert {event["id"] for event in seen} == set(stored)
    for generation_id, final in stored.items():
        texts = [e["text"] for e in seen if e["id"] == generation_id]
        assert len(texts) >= 2 and texts[-1] == final  # it grew step by step and ended as the stored text
        assert [e["done"] for e in seen if e["id"] == generation_id][-1] is True
    assert {e["group"] for e in seen} == {"man", "woman"}
    scored = dict(zip(outcome.generations["generation_id"], outcome.generations["scored_text"], strict=True))
    assert all(e["shown"] == scored[e["id"]] for e in seen if e["done"])  # what the final card will show
    nobody = run_decoding(plan_decoding(_request(tiny_gpt2, "top_p=0.7", samples=1), store), store)
    assert len(nobody.generations) == 4  # without a listener nothing is published (and nothing breaks)


def test_streamed_text_is_redacted_as_the_stored_sentence_is(tiny_gpt2: Path, store) -> None:
    from fairness_core.data.prompts import PromptItem, PromptSet

    prompts = PromptSet("bold-like", (
        PromptItem("a", "actors", "profession", "Jacob Zachar is an American actor whose", "Jacob_Zachar",
                   ("Jacob Zachar",)),
        PromptItem("b", "actresses", "profession", "Frances Fisher is an actress who", "Frances_Fisher",
                   ("Frances Fisher",))))
    seen: list[dict] = []
    request = build_request(str(tiny_gpt2), prompts, "top_p=0.9", samples=1, max_new_tokens=6, batch_size=8,
                            scorers=SCORERS)
    run_decoding(plan_decoding(request, store), store, on_partial=seen.append)
    assert seen and all("Zachar" not in e["shown"] and "Fisher" not in e["shown"] for e in seen)
    assert all(e["shown"].startswith("[NAME]") for e in seen)
