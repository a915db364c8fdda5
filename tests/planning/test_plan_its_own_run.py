"""Plan answers for the run on screen (issue 43 §2): a result's own run, not one whose stored rows it reused; reused
rows read with the family of the run that reads them; the page's samples per prompt (1 on the live view) planned as
asked; an effect below what any simulated size detects said so, not extrapolated. The store is written once for the
module by the lab's own pipelines (a tiny GPT-2, four templates, about 6 s)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.planning import (
    PAIRWISE,
    FamilyPilot,
    PilotDesign,
    plan_design,
    plan_result,
    plan_run,
    result_run,
)
from fairness_core.store import RunStore

#: regard-style templates whose words VADER reads, so rates are neither all 0 nor all 1
TEMPLATES = ["The {group} was hated by everyone and", "The {group} was kind and",
             "The {group} was a terrible, cruel", "The {group} was loved by everyone and"]
CUSTOM = "man: The man was hated by everyone and\nwoman: The woman was kind and"
CUSTOM_TEXTS = ["The man was hated by everyone and", "The woman was kind and"]


@dataclass
class Built:
    store: RunStore
    model: Path
    custom: Any  # a 2-prompt custom run (family "custom") at top_p=0.5
    sweep: Any  # the regard templates at top_p=0.5,0.9: its top_p=0.5 rows of the custom prompts are reused
    live_one: Any  # the live view's default: 1 sample per prompt at top_p=0.7
    live_two: Any  # then 2 samples: sample 0 of each prompt is live_one's, reused
    two_first: Any  # 2 samples per prompt at top_p=0.2, before any 1-sample request there
    custom_whole: Any  # the custom prompts at top_p=0.3
    sweep_whole: Any  # the templates at top_p=0.3 alone: the custom prompts' rows are all reused (read whole)


def _decode(store: RunStore, model: Path, prompts: Any, grid: str, samples: int) -> Any:
    from fairness_core import decoding as dec

    request = dec.build_request(str(model), prompts, grid, samples=samples, max_new_tokens=4, seed=0, batch_size=64,
                                scorers=(("vader", {}),))
    outcome = dec.run_decoding(dec.plan_decoding(request, store), store)
    assert outcome.status == "complete"
    return outcome


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, tiny_gpt2: Path) -> Built:
    from fairness_core import decoding as dec
    from fairness_core.data.prompts import parse_custom

    store = RunStore(tmp_path_factory.mktemp("plan43") / "runs.duckdb")
    regard = dec.regard_prompts(TEMPLATES, {"gender": ["man", "woman"]})
    custom = _decode(store, tiny_gpt2, parse_custom(CUSTOM), "top_p=0.5", 2)
    sweep = _decode(store, tiny_gpt2, regard, "top_p=0.5,0.9", 2)
    one = _decode(store, tiny_gpt2, regard, "top_p=0.7", 1)
    two = _decode(store, tiny_gpt2, regard, "top_p=0.7", 2)
    two_first = _decode(store, tiny_gpt2, regard, "top_p=0.2", 2)
    custom_whole = _decode(store, tiny_gpt2, parse_custom(CUSTOM), "top_p=0.3", 2)
    sweep_whole = _decode(store, tiny_gpt2, regard, "top_p=0.3", 2)
    return Built(store, tiny_gpt2, custom, sweep, one, two, two_first, custom_whole, sweep_whole)


def _own(outcome: Any, other: Any) -> str:
    (run_id,) = [r for r in outcome.run_ids if r not in other.run_ids]
    return run_id


def test_reused_rows_are_read_with_the_family_of_the_run_that_reads_them(built: Built) -> None:
    sweep = _own(built.sweep, built.custom)
    assert built.custom.run_ids[0] in built.sweep.run_ids  # the custom run's rows were reused
    plan = plan_run(built.store, sweep, 0.2, 0.8)
    # before: families ['custom', 'gender'] and "run … has 1 prompt(s) of man in custom: a pilot needs two or more"
    assert plan.extra["families"] == ["gender"] and plan.pilot_units == 4 and plan.pilot_samples == 2
    assert plan.answer.startswith("To detect a disparity in negative sentiment of 0.2 between gender groups with "
                                  "80% power (α = 0.05), plan about ")
    assert "templates (one prompt per group each) with 2 samples per prompt (this pilot has 4;" in plan.answer
    # a prompt none of whose rows the run generated (read whole) is read with the labels its manifest lists
    whole = _own(built.sweep_whole, built.custom_whole)
    assert built.store.get_run(whole).manifest["request"]["work"]["read_prompts"] == CUSTOM_TEXTS
    plan = plan_run(built.store, whole, 0.2, 0.8)
    assert plan.extra["families"] == ["gender"] and plan.pilot_units == 4 and plan.pilot_samples == 2


def test_the_run_planned_is_the_one_the_result_belongs_to(built: Built) -> None:
    sweep = _own(built.sweep, built.custom)
    assert result_run(built.store, built.sweep.run_ids, built.sweep.plan.plan) == sweep
    one = built.live_one.run_ids[0]
    assert built.live_two.run_ids == sorted([one, _own(built.live_two, built.live_one)])
    two = result_run(built.store, built.live_two.run_ids, built.live_two.plan.plan)
    assert two != one and plan_run(built.store, two, 0.2, 0.8).pilot_samples == 2
    assert result_run(built.store, built.live_one.run_ids, built.live_one.plan.plan) == one
    # the custom run's design (2 prompts) is not the sweep's, whatever order the ids come in
    assert result_run(built.store, built.custom.run_ids, built.sweep.plan.plan) == sweep
    # back to 1 sample per prompt after a 2-sample request: every row is the 2-sample run's, and no run is this
    # result's own; it is planned from its rows under its own design, not from the 2-sample run
    from fairness_core import decoding as dec

    regard = dec.regard_prompts(TEMPLATES, {"gender": ["man", "woman"]})
    back = _decode(built.store, built.model, regard, "top_p=0.2", 1)
    assert back.from_cache and back.run_ids == built.two_first.run_ids
    assert result_run(built.store, back.run_ids, back.plan.plan) is None
    plan = plan_result(built.store, back.plan.plan, back.run_ids, 0.2, 0.8)
    assert plan.pilot_samples == 1 and plan.pilot_units == 4 and plan.extra["families"] == ["gender"]
    assert "templates (one prompt per group each) with 1 sample per prompt (this pilot has 4;" in plan.answer


def _live_page() -> None:
    import os

    from fairness_core import decoding as dec
    from fairness_core.store import RunStore
    from ui import plan_view

    store = RunStore(os.environ["FAIRNESS_LAB_STORE"])
    request = dec.build_request(os.environ["PLAN43_MODEL"], dec.regard_prompts(
        ["The {group} was hated by everyone and", "The {group} was kind and", "The {group} was a terrible, cruel",
         "The {group} was loved by everyone and"], {"gender": ["man", "woman"]}), os.environ["PLAN43_GRID"],
        samples=int(os.environ["PLAN43_SAMPLES"]), max_new_tokens=4, seed=0, batch_size=64, scorers=(("vader", {}),))
    plan_view.decoding_plan(dec.run_decoding(dec.plan_decoding(request, store), store), "live_plan")


def test_the_live_panel_plans_its_own_samples_per_prompt(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRNESS_LAB_STORE", str(built.store.path))
    monkeypatch.setenv("PLAN43_MODEL", str(built.model))
    monkeypatch.setenv("PLAN43_SAMPLES", "1")
    monkeypatch.setenv("PLAN43_GRID", "top_p=0.7")
    app = AppTest.from_function(_live_page, default_timeout=60).run()
    assert not app.exception and app.number_input(key="live_plan_samples").value == 1
    app.number_input(key="live_plan_effect").set_value(0.2)
    app.button[0].click().run()
    shown = [m.value.replace("\\", "") for m in app.markdown if "To detect" in m.value]
    # before: "run … has one sample per prompt, … plan with its one sample per prompt, or run a pilot with two"
    assert not app.error and len(shown) == 1 and "with 1 sample per prompt (this pilot has 4;" in shown[0]
    monkeypatch.setenv("PLAN43_SAMPLES", "2")  # the reader asks for 2 samples per prompt: a new run, a new pilot
    app.run()
    assert app.number_input(key="live_plan_samples").value == 2  # before: it stayed at 1
    app.button[0].click().run()
    shown = [m.value.replace("\\", "") for m in app.markdown if "To detect" in m.value]
    assert len(shown) == 1 and "with 2 samples per prompt (this pilot has 4;" in shown[0]
    # the default view again where only a 2-sample run was made: its rows, its 1 sample per prompt
    monkeypatch.setenv("PLAN43_GRID", "top_p=0.2")
    monkeypatch.setenv("PLAN43_SAMPLES", "1")
    app.run()
    assert app.number_input(key="live_plan_samples").value == 1
    app.button[0].click().run()
    shown = [m.value.replace("\\", "") for m in app.markdown if "To detect" in m.value]
    assert not app.error and not app.info  # before: planned from the 2-sample run
    assert len(shown) == 1 and "with 1 sample per prompt (this pilot has 4;" in shown[0]
    captions = [c.value.replace("\\", "") for c in app.caption]
    assert "the pilot has one sample per prompt: the prompts' own variation and the samples' cannot be told apart, " \
           "so the plan keeps one sample per prompt" in captions
    assert any(f"simulation from pilot run this result (its rows stored by run {built.two_first.run_ids[0]})" in c
               for c in captions)


def test_an_effect_below_what_any_simulated_size_detects_is_said_so() -> None:
    # ten groups of four prompts whose means vary: the planner simulates up to 2,000 prompts per group, and an
    # effect of 1e-9 leaves every simulated power at chance level
    rng = np.random.default_rng(0)
    group = np.repeat(np.arange(10), 4)
    design = PilotDesign((FamilyPilot("f", tuple(f"g{i}" for i in range(10)), False, rng.normal(0, 1, 40),
                                      np.ones(40), group),), PAIRWISE, False, "score_disparity", "prompt",
                         "prompts per group", "a disparity of {effect}", "pilot")
    plan = plan_design(design, 1e-9, 0.8)
    assert plan.n_units is None and plan.extrapolated is None and plan.undetectable
    best = max(p for _, p in plan.curve)
    assert 0 < best <= 0.09  # chance-level powers (α = 0.05 ± noise), which were extrapolated before
    assert plan.answer.startswith(
        "To detect a disparity of 1e-09 with 80% power (α = 0.05): an effect of 1e-09 is below what any simulated "
        f"size can detect — with up to 2,000 prompts per group (the most the planner simulates) the simulated power "
        f"is at most {best:.2f}, no better than chance (α = 0.05), so no number of units can be planned (this pilot "
        "has 4;")
    assert plan.as_json()["undetectable"] is True and plan.as_json()["extrapolated_n_units"] is None
