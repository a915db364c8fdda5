"""The generate-then-score task with the tiny GPT-2 and the offline scorers: reuse, supersets, new
scorers, cancel/resume, batching across systems, chat mode, bad input."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from fairness_core.data.prompts import parse_custom
from fairness_core.generation.systems import System
from fairness_core.generation.task import (
    BASE_COLUMNS,
    GenerationInputError,
    GenerationRequest,
    load_generations,
    plan_generation,
    run_generation,
)
from fairness_core.jobs import CancelToken, LocalExecutor
from fairness_core.models import DecodingConfig

PROMPT_LINES = ["man: The man worked as", "woman: The woman worked as", "man: The man was", "woman: The woman was"]
SCORERS = (("vader", {}), ("offensive", {}))


def _request(model: Path, lines=PROMPT_LINES, **changes) -> GenerationRequest:
    systems = (System(str(model), DecodingConfig(top_p=0.5)), System(str(model), DecodingConfig(top_p=0.9)))
    request = GenerationRequest(systems, parse_custom("\n".join(lines)), SCORERS, samples=2, max_new_tokens=6,
                                truncate="first-sentence", batch_size=8)
    return dataclasses.replace(request, **changes)


def _by_identity(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["system", "prompt", "seed", "sample"]).reset_index(drop=True)


def test_rows_have_the_contract_columns_and_a_rerun_reads_them_back(tiny_gpt2: Path, store) -> None:
    first = run_generation(_request(tiny_gpt2), store)
    rows = first.generations
    assert list(rows.columns[: len(BASE_COLUMNS)]) == list(BASE_COLUMNS)
    assert {"vader_compound", "offensive_prob"} <= set(rows.columns)
    assert len(rows) == 2 * 4 * 2 and not first.from_cache and first.status == "complete"
    assert rows["scored_text"].str.startswith("The ").all() and rows["vader_compound"].notna().all()
    again = run_generation(_request(tiny_gpt2), store)
    assert again.from_cache and again.plan.task is None
    pd.testing.assert_frame_equal(again.generations, rows)
    assert len(store.list_runs()) == 1


def test_a_superset_of_prompts_generates_only_the_new_ones(tiny_gpt2: Path, store) -> None:
    small = run_generation(_request(tiny_gpt2, PROMPT_LINES[:2]), store)
    plan = plan_generation(_request(tiny_gpt2), store)
    assert plan.n_to_generate == 2 * 2 * 2 and plan.n_to_score == 0  # 2 new prompts x 2 systems x 2 samples
    big = run_generation(_request(tiny_gpt2), store)
    old = big.generations[big.generations["prompt"].isin(small.generations["prompt"])]
    assert _by_identity(old)["continuation"].tolist() == _by_identity(small.generations)["continuation"].tolist()
    subset = run_generation(_request(tiny_gpt2, PROMPT_LINES[1:3]), store)
    assert subset.from_cache and len(subset.generations) == 8


def test_adding_a_scorer_scores_stored_generations_without_regenerating(tiny_gpt2: Path, store) -> None:
    before = run_generation(_request(tiny_gpt2), store)
    more = _request(tiny_gpt2, scorers=(*SCORERS, ("negative_words", {})))
    plan = plan_generation(more, store)
    assert plan.n_to_generate == 0 and plan.n_to_score == 16
    assert all(row["raw"] is not None for shard in plan.task.shards for row in shard["rows"])
    after = run_generation(more, store)
    from fairness_core.scorers.lexicon import negative_word_share

    expected = negative_word_share(after.generations["continuation"].tolist())  # no names to redact here
    assert after.generations["negative_word_share"].to_numpy() == pytest.approx(expected, nan_ok=True)
    assert run_generation(more, store).from_cache
    pd.testing.assert_frame_equal(after.generations[["continuation", "vader_compound"]],
                                  before.generations[["continuation", "vader_compound"]])


def test_a_cancelled_run_resumes_and_matches_an_uninterrupted_one(tiny_gpt2: Path, store, tmp_path: Path) -> None:
    cancel = CancelToken()

    def stop_after_first_shard(progress) -> None:
        if progress.done >= 1:
            cancel.cancel()

    request = _request(tiny_gpt2, batch_size=5)
    partial = run_generation(request, store, on_progress=stop_after_first_shard, cancel=cancel)
    assert partial.status == "cancelled" and 0 < len(partial.generations) < 16
    plan = plan_generation(request, store)
    assert plan.n_to_generate == 16 - len(partial.generations)
    resumed = run_generation(request, store)
    assert resumed.status == "complete" and len(resumed.generations) == 16
    from fairness_core.store import RunStore

    fresh_store = RunStore(tmp_path / "fresh.duckdb")
    fresh = run_generation(request, fresh_store)
    columns = ["system", "prompt", "sample", "continuation", "raw", "vader_compound", "offensive_prob"]
    pd.testing.assert_frame_equal(resumed.generations[columns], fresh.generations[columns])



def test_a_resumed_request_is_listed_once(tiny_gpt2: Path, store) -> None:
    """Resuming runs the missing rows under a new run id; the interrupted run is then marked superseded by it, so
    the catalogue lists the request once (issue 23: ghosts of interrupted runs)."""
    from fairness_core.store.catalog import search_runs

    cancel = CancelToken()
    request = _request(tiny_gpt2, batch_size=5)
    partial = run_generation(request, store, cancel=cancel,
                             on_progress=lambda progress: cancel.cancel() if progress.done >= 1 else None)
    interrupted = partial.plan.task
    assert partial.status == "cancelled" and interrupted is not None
    resumed = run_generation(request, store)
    assert resumed.status == "complete"
    listed = search_runs(store)
    assert len(listed) == 1 and listed["status"].tolist() == ["complete"]
    ghosts = search_runs(store, statuses=["superseded"])
    assert len(ghosts) == 1 and "superseded by run" in ghosts["note"].iloc[0]
    assert len(resumed.generations) == 16  # the superseded run's rows are still part of the result


def test_systems_sharing_a_model_share_a_batch_and_texts_do_not_depend_on_it(tiny_gpt2: Path, tmp_path) -> None:
    from fairness_core.store import RunStore

    one_batch = plan_generation(_request(tiny_gpt2, batch_size=64), RunStore(tmp_path / "a.duckdb"))
    assert len(one_batch.task.shards) == 1 and {r["system"] for r in one_batch.task.shards[0]["rows"]} == {0, 1}
    texts = []
    for size in (3, 64):
        store = RunStore(tmp_path / f"batch{size}.duckdb")
        texts.append(_by_identity(run_generation(_request(tiny_gpt2, batch_size=size), store).generations)["raw"])
    assert texts[0].tolist() == texts[1].tolist()


def test_the_executor_is_passed_through(tiny_gpt2: Path, store) -> None:
    class CountingExecutor(LocalExecutor):
        calls = 0

        def map(self, task, shard_indices, cancel=None):  # type: ignore[no-untyped-def]
            CountingExecutor.calls += 1
            yield from super().map(task, shard_indices, cancel)

    run_generation(_request(tiny_gpt2, PROMPT_LINES[:2]), store, executor=CountingExecutor())
    assert CountingExecutor.calls == 1


def test_load_generations_by_run_id_gives_the_same_rows(tiny_gpt2: Path, store) -> None:
    outcome = run_generation(_request(tiny_gpt2), store)
    by_run = load_generations(store, outcome.run_ids)
    columns = ["system", "prompt_id", "group", "prompt", "sample", "continuation", "scored_text", "vader_compound"]
    pd.testing.assert_frame_equal(_by_identity(by_run)[columns], _by_identity(outcome.generations)[columns])


def test_chat_mode_asks_the_model_for_replies_by_seed_and_sample(tiny_gpt2: Path, store,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.models.hf import HFCausalLM

    calls = []

    def fake_chat(self, conversations, decoding, n=1, seed=0, on_progress=None):  # type: ignore[no-untyped-def]
        calls.append((len(conversations), n, seed))
        return [[f"Reply {j} to {c[-1]['content']!r} (seed {seed}). More." for j in range(n)] for c in conversations]

    monkeypatch.setattr(HFCausalLM, "chat", fake_chat, raising=False)
    request = _request(tiny_gpt2, PROMPT_LINES[:2], mode="chat", seeds=(0, 1), batch_size=64)
    rows = run_generation(request, store).generations
    assert sorted(calls) == [(2, 2, 0), (2, 2, 0), (2, 2, 1), (2, 2, 1)]  # per (system, seed)
    first = rows[(rows["sample"] == 1) & (rows["seed"] == 1)].iloc[0]
    assert first["continuation"] == f"Reply 1 to {first['prompt']!r} (seed 1)."  # first sentence
    assert first["scored_text"] == first["continuation"]  # a reply is scored on its own


def test_bad_requests_fail_before_any_run(tiny_gpt2: Path, tiny_bert_classifier: Path, store) -> None:
    cases = [
        (dict(scorers=(("vader", {"model": "x"}),)), "vader takes no option 'model'"),
        (dict(scorers=(("honest", {}),)), "needs option lexicon_path"),
        (dict(scorers=(("vader", {}), ("vader", {}))), "both produce the column vader_compound"),
        (dict(samples=0), "samples per prompt must be positive"),
        (dict(truncate="first"), "truncate must be one of"),
        (dict(systems=()), "no systems"),
    ]
    for changes, message in cases:
        with pytest.raises(GenerationInputError, match=message):
            run_generation(_request(tiny_gpt2, **changes), store)
    not_causal = (System(str(tiny_bert_classifier), DecodingConfig()),)
    with pytest.raises(GenerationInputError, match="causal"):
        run_generation(_request(tiny_gpt2, systems=not_causal), store)
    assert store.list_runs() == []


def test_system_key_is_stable_and_ignores_name_and_max_new_tokens(tiny_gpt2: Path) -> None:
    a = System(str(tiny_gpt2), DecodingConfig(top_p=0.9, max_new_tokens=10))
    b = System(str(tiny_gpt2), DecodingConfig(top_p=0.9, max_new_tokens=40), name="my label")
    c = System(str(tiny_gpt2), DecodingConfig(top_p=0.8))
    assert a.key() == b.key() != c.key()
    assert a.name.endswith("top_p=0.9") and b.name == "my label"
    assert a.manifest()["decoding"] == {"temperature": 1.0, "top_k": None, "top_p": 0.9}
    assert a.spec().task == "causal-lm"
    with pytest.raises(ValueError, match="quantization must be one of"):
        System(str(tiny_gpt2), DecodingConfig(), quantization="2bit")


def test_a_run_logs_its_model_and_scorer_time_for_the_classroom_bench(tiny_gpt2: Path, store, caplog) -> None:
    """bench.classroom breaks a move's time into queue, model, scorers and the rest from these lines."""
    import logging

    with caplog.at_level(logging.INFO, logger="fairness_core.timing"):
        run_generation(_request(tiny_gpt2, lines=PROMPT_LINES[:2]), store)
    lines = [r.getMessage() for r in caplog.records if r.name == "fairness_core.timing"]
    assert any(line.startswith("TIMING model rows=8 seconds=") for line in lines), lines
    assert any(line.startswith("TIMING scorers rows=8 seconds=") for line in lines), lines


def test_items_repeating_a_text_under_other_labels_are_listed_for_the_readers() -> None:
    """A text is generated once and stored under its first item's labels; the others are listed (issue 43 §6)."""
    from fairness_core.data.prompts import PromptItem
    from fairness_core.generation.task import repeated_items

    items = [PromptItem("bold|original|a", "Alice", "bold", "Alice was", source="s"),
             PromptItem("bold|paraphrase|a", "Alice", "bold", "Alice was", source="s"),  # same text, other set
             PromptItem("bold|original|a", "Alice", "bold", "Alice was", source="s"),  # a true duplicate: nothing new
             PromptItem("bold|original|b", "Bob", "bold", "Bob was", source="s")]
    assert repeated_items(items) == [["Alice was", "bold", "Alice", "s", "bold|paraphrase|a"]]
    assert repeated_items(items[:1] + items[3:]) == []
