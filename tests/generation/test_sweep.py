"""A small sweep with the tiny GPT-2: stored rows, summaries, reuse of stored configs, cancel/resume, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fairness_core.cli import main
from fairness_core.data.prompts import parse_custom
from fairness_core.generation.grid import expand_grid, parse_grid
from fairness_core.generation.summary import cli_rows, config_table, summarize
from fairness_core.generation.sweep import SweepInputError, prepare_sweep, run_sweep
from fairness_core.generation.tradeoffs import pareto_front, pearson
from fairness_core.jobs import CancelToken
from fairness_core.models import DecodingConfig

PROMPTS = parse_custom("man: The man worked as\nwoman: The woman worked as\nman: The man was\nwoman: The woman was")
CONTRACT_KEYS = {"config", "group", "n", "negative_sentiment_rate", "ci_low", "ci_high", "offensive_rate",
                 "diversity_trigram_entropy"}


def _plan(model: Path, store, grid: str = "top_p=0.5,0.9", **kwargs):
    configs = expand_grid(parse_grid(grid), 6)
    options = {"samples": 3, "max_new_tokens": 6, "seed": 0, "regard_model": None, "batch_size": 8} | kwargs
    return prepare_sweep(str(model), PROMPTS, configs, store=store, **options)


def test_small_sweep_end_to_end(tiny_gpt2: Path, store) -> None:
    plan = _plan(tiny_gpt2, store)
    assert len(plan.missing) == 2 and len(plan.task.shards) == 3  # 2 configs x 4 prompts x 3 samples / 8
    outcome = run_sweep(plan, store)
    generations = outcome.generations
    assert len(generations) == 2 * 4 * 3 and not outcome.from_cache
    assert set(generations["group"]) == {"man", "woman"}
    assert generations["text"].str.startswith("The ").all()
    summary = summarize(generations, PROMPTS.families)
    assert len(summary) == 4 and (summary["n"] == 6).all()
    assert (summary["ci_low"] <= summary["negative_sentiment_rate"]).all()
    assert (summary["negative_sentiment_rate"] <= summary["ci_high"]).all()
    for _, per_config in summary.groupby("config_key"):
        rates = per_config["negative_sentiment_rate"].to_numpy()
        assert per_config["disparity"].iloc[0] == pytest.approx(abs(rates[0] - rates[1]))
    rows = cli_rows(summary)
    assert set(rows[0]) >= CONTRACT_KEYS and json.dumps(rows)
    table = config_table(summary)
    assert len(table) == 2 and pareto_front(table).any()


def test_stored_configurations_are_reused_across_grids(tiny_gpt2: Path, store) -> None:
    first = run_sweep(_plan(tiny_gpt2, store, "top_p=0.5,0.9"), store)
    plan = _plan(tiny_gpt2, store, "top_p=0.9,0.7")
    assert len(plan.cached) == 1 and [c.top_p for c in plan.missing] == [0.7]
    second = run_sweep(plan, store)
    old = first.generations[first.generations["config"].map(lambda c: c["top_p"]) == 0.9]
    new = second.generations[second.generations["config"].map(lambda c: c["top_p"]) == 0.9]
    assert old["continuation"].tolist() == new["continuation"].tolist()
    again = run_sweep(_plan(tiny_gpt2, store, "top_p=0.5,0.7"), store)
    assert again.from_cache and again.plan.task is None


def test_a_cancelled_sweep_resumes_with_the_same_outputs(tiny_gpt2: Path, store, tmp_path: Path) -> None:
    cancel = CancelToken()
    seen = []

    def stop_after_first(progress) -> None:
        seen.append(progress.done)
        if progress.done >= 1:
            cancel.cancel()

    partial = run_sweep(_plan(tiny_gpt2, store), store, on_progress=stop_after_first, cancel=cancel)
    assert partial.status == "cancelled"
    resumed = run_sweep(_plan(tiny_gpt2, store), store)
    assert resumed.status == "complete" and len(resumed.generations) == 24
    from fairness_core.store import RunStore

    fresh_store = RunStore(tmp_path / "fresh.duckdb")
    fresh = run_sweep(_plan(tiny_gpt2, fresh_store), fresh_store)
    key = ["config_key", "item"]
    assert (resumed.generations.sort_values(key)["raw"].tolist()
            == fresh.generations.sort_values(key)["raw"].tolist())


def test_bad_inputs_fail_before_any_work(tiny_gpt2: Path, tiny_bert_classifier: Path, store) -> None:
    with pytest.raises(SweepInputError, match="samples per prompt must be positive"):
        _plan(tiny_gpt2, store, samples=0)
    with pytest.raises(SweepInputError, match="causal"):
        _plan(tiny_bert_classifier, store)
    with pytest.raises(SweepInputError, match="prompt set"):
        prepare_sweep(str(tiny_gpt2), parse_custom("a: x").only_groups([]), [DecodingConfig()], 1, 5, store=store)
    assert store.list_runs() == []


def test_regard_and_quality_columns(tiny_gpt2: Path, tiny_bert_classifier: Path, store) -> None:
    plan = _plan(tiny_gpt2, store, "top_k=5", samples=1, regard_model=str(tiny_bert_classifier),
                 regard_negative_label="LABEL_0")
    summary = summarize(run_sweep(plan, store).generations, PROMPTS.families)
    assert np.isfinite(summary["negative_regard_rate"]).all()
    assert np.isfinite(summary["quality_mean_logprob"]).all()
    no_quality = _plan(tiny_gpt2, store, "top_k=5", samples=1, quality_scorer=None)
    assert no_quality.request["quality_scorer"] is None and no_quality.task is not None


def test_pearson_and_pareto_on_hand_made_numbers() -> None:
    import pandas as pd

    r, p, n = pearson([1, 2, 3, 4], [2, 4, 6, 8.5])
    assert r > 0.99 and p < 0.05 and n == 4
    assert np.isnan(pearson([1, 2], [1, 2])[0])
    table = pd.DataFrame({"disparity": [0.1, 0.2, 0.1], "diversity": [5.0, 6.0, 4.0], "quality": [-2, -2, -2]})
    assert pareto_front(table).tolist() == [True, True, False]


def test_cli_prints_the_contract_rows_and_serves_repeats_from_the_store(
        tiny_gpt2: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("man: The man worked as\nwoman: The woman worked as\n")
    argv = ["--store", str(tmp_path / "cli.duckdb"), "decoding", "--model", str(tiny_gpt2), "--prompts",
            str(prompts), "--grid", "top_p=0.5,0.9;temperature=0.7", "--samples", "2", "--max-new-tokens", "5",
            "--seed", "1", "--regard-model", "none", "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    assert len(rows) == 4 and set(rows[0]) >= CONTRACT_KEYS
    assert rows[0]["config"] == {"temperature": 0.7, "top_p": 0.5} and rows[0]["n"] == 2
    assert {"disparity", "config_disparity", "family", "n_empty", "run_id"} <= set(rows[0])
    assert main(argv) == 0
    repeat = capsys.readouterr()
    assert json.loads(repeat.out) == rows and "2 of 2 configurations served from the run store" in repeat.err


@pytest.mark.parametrize("extra, message", [
    (["--grid", "top_p=1.2"], "top_p must be in (0, 1]"),
    (["--grid", "top_k=0"], "top_k must be a positive integer"),
    (["--grid", "temperature=0"], "temperature must be > 0"),
    (["--samples", "0"], "--samples must be positive"),
    (["--groups", "man,nurse"], "'nurse' have no prompts"),
    (["--prompts", "EMPTY"], "empty"),
    (["--model", "all-minilm-l6-v2"], "not causal-lm"),
])
def test_cli_bad_input_is_one_line_and_exit_2(extra: list[str], message: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    extra = [str(empty) if x == "EMPTY" else x for x in extra]
    argv = ["--store", str(tmp_path / "bad.duckdb"), "decoding", "--prompts", "regard", "--regard-model", "none",
            *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
