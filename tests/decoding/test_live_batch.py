"""Live requests of several sessions generated in one sampler call: each gets exactly the rows it would alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core.decoding import batch_group, build_request, parse_custom, plan_decoding, run_batched, run_decoding
from fairness_core.store import RunStore

PROMPTS = parse_custom("man: The man worked as\nwoman: The woman worked as\nman: The man was\nwoman: The woman was")
SCORERS = (("vader", {}), ("offensive", {}))


def _request(model: Path, grid: str, seed: int = 0):
    return build_request(str(model), PROMPTS, grid, samples=2, max_new_tokens=8, seed=seed, batch_size=512,
                         scorers=SCORERS)


def _texts(outcome) -> list[tuple[str, str, int, str]]:
    frame = outcome.generations.sort_values(["label", "prompt", "sample"])
    return list(zip(frame["label"], frame["prompt"], frame["sample"], frame["continuation"], strict=True))


def test_batched_sessions_get_the_same_texts_as_when_each_ran_alone(tiny_gpt2: Path, tmp_path: Path) -> None:
    alone = RunStore(tmp_path / "alone.duckdb")
    solo = {grid: _texts(run_decoding(plan_decoding(_request(tiny_gpt2, grid), alone), alone))
            for grid in ("top_p=0.5", "top_p=0.8", "top_k=5")}

    together = RunStore(tmp_path / "together.duckdb")
    plans = [plan_decoding(_request(tiny_gpt2, grid), together) for grid in solo]
    assert len({batch_group(plan) for plan in plans}) == 1
    seen: dict[int, set[str]] = {}
    outcomes = run_batched(plans, together, on_partial=lambda i, p: seen.setdefault(i, set()).add(p["system"]))
    for grid, outcome in zip(solo, outcomes, strict=True):
        assert _texts(outcome) == solo[grid]  # the same rows, word for word
        assert len(outcome.generations) == 8 and not outcome.from_cache  # computed by the shared call
    assert {i: len(systems) for i, systems in seen.items()} == {0: 1, 1: 1, 2: 1}  # each saw its own rows only


def test_requests_that_differ_beyond_their_settings_are_never_batched(tiny_gpt2: Path, store) -> None:
    first = plan_decoding(_request(tiny_gpt2, "top_p=0.5"), store)
    other_seed = plan_decoding(_request(tiny_gpt2, "top_p=0.5", seed=7), store)
    assert batch_group(first) != batch_group(other_seed)
    with pytest.raises(ValueError, match="differ only in their decoding settings"):
        run_batched([first, other_seed], store)
