"""Live requests of several sessions generated in one sampler call: each gets exactly the rows it would alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core.decoding import batch_group, build_request, parse_custom, plan_decoding, run_batched, run_decoding
from fairness_core.store import RunStore

PROMPTS = parse_custom("man: The man worked as\nwoman: The woman worked as\nman: The man was\nwoman: The woman was")
SCORERS = (("vader", {}), ("offensive", {}))
#: four sessions: two settings, two seeds, and one (setting, seed) pair asked by nobody (no cross product)
SESSIONS = (("top_p=0.5", 0), ("top_p=0.8", 7), ("top_k=5", 0), ("top_p=0.5", 7))


def _request(model: Path, grid: str, seed: int = 0, samples: int = 2, max_new_tokens: int = 8):
    return build_request(str(model), PROMPTS, grid, samples=samples, max_new_tokens=max_new_tokens, seed=seed,
                         batch_size=512, scorers=SCORERS)


def _texts(outcome) -> list[tuple[str, str, int, int, str]]:
    frame = outcome.generations.sort_values(["label", "prompt", "sample"])
    return list(zip(frame["label"], frame["prompt"], frame["sample"], frame["seed"], frame["continuation"],
                    strict=True))


def _scores(outcome) -> list[float]:
    frame = outcome.generations.sort_values("generation_id")
    return frame[["vader_compound", "offensive_prob"]].to_numpy().ravel().tolist()


def _manifest(store: RunStore, outcome) -> dict:
    (run_id,) = outcome.run_ids  # the request's own run
    info = store.get_run(run_id)
    assert info is not None and info.status == "complete"
    return info.manifest


def _sampler_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Rows per call of the generic task's model call (one list entry per sampler call)."""
    from fairness_core.generation import task as generation_task

    calls: list[int] = []
    real = generation_task._generate
    monkeypatch.setattr(generation_task, "_generate",
                        lambda request, model, rows: calls.append(len(rows)) or real(request, model, rows))
    return calls


def test_sessions_with_other_settings_and_seeds_get_the_same_texts_and_runs_as_alone(
        tiny_gpt2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = RunStore(tmp_path / "alone.duckdb")
    solo = [run_decoding(plan_decoding(_request(tiny_gpt2, grid, seed), alone), alone) for grid, seed in SESSIONS]

    together = RunStore(tmp_path / "together.duckdb")
    plans = [plan_decoding(_request(tiny_gpt2, grid, seed), together) for grid, seed in SESSIONS]
    assert len({batch_group(plan) for plan in plans}) == 1  # seeds and settings differ: one group all the same
    calls = _sampler_calls(monkeypatch)
    seen: dict[int, set[str]] = {}
    outcomes = run_batched(plans, together, on_partial=lambda i, p: seen.setdefault(i, set()).add(p["id"]))

    assert calls == [32]  # one sampler call: 4 sessions x 8 rows, not 2 settings x 2 seeds x ... per session
    for alone_outcome, outcome in zip(solo, outcomes, strict=True):
        assert _texts(outcome) == _texts(alone_outcome)  # the same rows, word for word
        assert len(outcome.generations) == 8 and not outcome.from_cache and outcome.status == "complete"
        # stored as its own run, with the manifest it has when it runs alone
        assert _manifest(together, outcome) == _manifest(alone, alone_outcome)
        assert _scores(outcome) == pytest.approx(_scores(alone_outcome), rel=1e-5)  # scored as alone
    assert len({run_id for outcome in outcomes for run_id in outcome.run_ids}) == 4
    stored = together.query("SELECT count(DISTINCT item) AS n FROM results WHERE metric = 'generation'")
    assert int(stored["n"].iloc[0]) == 32  # exactly the rows the sessions asked for
    # each session's cards saw its own rows' partial texts, and only those
    assert {i: ids for i, ids in seen.items()} == {i: set(o.generations["generation_id"]) for i, o in
                                                   enumerate(outcomes)}


def test_a_row_two_sessions_share_is_generated_once_and_stored_in_both_runs(
        tiny_gpt2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = RunStore(tmp_path / "store.duckdb")
    both = plan_decoding(_request(tiny_gpt2, "top_p=0.5,0.8"), store)
    one = plan_decoding(_request(tiny_gpt2, "top_p=0.8"), store)
    calls = _sampler_calls(monkeypatch)
    seen: dict[int, list[str]] = {}
    first, second = run_batched([both, one], store, on_partial=lambda i, p: seen.setdefault(i, []).append(p["id"]))
    assert calls == [16]  # the top_p=0.8 rows once
    assert set(second.generations["generation_id"]) < set(first.generations["generation_id"])
    assert set(seen[1]) == set(second.generations["generation_id"])  # the shared rows reach both sessions
    assert _texts(second) == [row for row in _texts(first) if row[0] == "top_p=0.8"]
    assert first.run_ids != second.run_ids


def test_requests_that_differ_in_what_shapes_their_rows_are_never_batched(tiny_gpt2: Path, store) -> None:
    first = plan_decoding(_request(tiny_gpt2, "top_p=0.5"), store)
    for other in (_request(tiny_gpt2, "top_p=0.5", samples=3), _request(tiny_gpt2, "top_p=0.5", max_new_tokens=6)):
        planned = plan_decoding(other, store)
        assert batch_group(first) != batch_group(planned)
        with pytest.raises(ValueError, match="one batch group"):
            run_batched([first, planned], store)


def test_a_batch_cancelled_during_its_call_stores_nothing(tiny_gpt2: Path, store) -> None:
    from fairness_core.jobs import CancelToken

    cancel = CancelToken()
    plans = [plan_decoding(_request(tiny_gpt2, grid, seed), store) for grid, seed in SESSIONS[:2]]
    cancel.cancel()  # every session left while the call ran: it stops at its next step
    outcomes = run_batched(plans, store, cancel=cancel)
    assert [outcome.status for outcome in outcomes] == ["cancelled", "cancelled"]
    assert all(outcome.generations.empty and outcome.partial for outcome in outcomes)
    assert store.list_runs() == []  # nothing half-written; asking again computes it
