"""Comparing runs the pipelines wrote: the disparity difference with paired intervals (decoding), the study pages'
own numbers (decoding page, metric-bias page, CAIRO's Eq. 1 table), what is held fixed and what differs in words.

Every run here comes from `tests/compare/pipeline_runs.py` (the decoding study, the live batch path, metric-bias,
CAIRO, template adaptation and DATScore on tiny models), never from rows shaped by hand: the first test is the
crash a new user met (issue 26) on two decoding runs at two top-p values.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import decoding as dec
from fairness_core import metric_bias as mb
from fairness_core.compare import CompareError, compare_runs, per_example, run_estimates
from fairness_core.store import RunStore
from tests.compare.pipeline_runs import (
    MAX_NEW_TOKENS,
    SAMPLES,
    SCORERS,
    PipelineRuns,
    copy_store,
    decoding_prompts,
)


@pytest.fixture()
def runs(pipeline_runs: PipelineRuns, tmp_path: Path) -> tuple[PipelineRuns, RunStore]:
    return pipeline_runs, copy_store(pipeline_runs, tmp_path / "runs.duckdb")


def arm(pipeline: PipelineRuns, setting: str) -> str:
    """A system's label: its model (the tiny GPT-2's folder name) and its decoding setting."""
    return f"{pipeline.gpt2.name} · {setting}"


def page_summary(store: RunStore, runs: PipelineRuns, grid: str, seed: int) -> dec.DecodingSummary:
    """What the decoding page shows for a sweep (read back from the store: nothing is generated again)."""
    request = dec.build_request(str(runs.gpt2), decoding_prompts(), grid, samples=SAMPLES,
                                max_new_tokens=MAX_NEW_TOKENS, seed=seed, batch_size=64, scorers=SCORERS)
    plan = dec.plan_decoding(request, store)
    assert plan.from_store
    outcome = dec.run_decoding(plan, store)
    return dec.summarize(outcome.generations, request.prompts.families, dec.measures_for(request.scorers))


def test_two_decoding_runs_at_two_top_p_values_answer_with_the_disparity_difference(runs) -> None:
    pipeline, store = runs
    comparison = compare_runs(store, [pipeline.single_05, pipeline.single_095])  # raised KeyError: nan (issue 26)
    rows = comparison.rows
    first = rows.iloc[0]
    assert first["metric"] == "negative_sentiment_disparity" and first["family"] == "gender"
    assert (first["arm_a"], first["arm_b"]) == (arm(pipeline, "top_p=0.5"), arm(pipeline, "top_p=0.95"))
    assert comparison.contrasts[0].differs == "top_p 0.5 → 0.95"
    held = comparison.contrasts[0].held
    assert f"model {pipeline.gpt2.name}" in held and "3 sample(s) each" in held
    # the same 10 prompts on both sides: 2 templates (both groups) + 6 prompts of one group = 8 units, paired
    assert first["paired"] and first["pairing"] == "paired by 8 prompts" and first["n_units_a"] == 8
    for run_id, side in ((pipeline.single_05, "run_a"), (pipeline.single_095, "run_b")):
        grid = "top_p=0.5" if side == "run_a" else "top_p=0.95"
        page = page_summary(store, pipeline, grid, 0)
        assert first[side] == pytest.approx(page.configs["negative_sentiment_disparity"].iloc[0], rel=1e-12)
        rates = rows[rows["metric"] == "negative_sentiment_rate"].set_index("group")[side]
        assert rates.to_dict() == pytest.approx(page.groups.set_index("group")["negative_sentiment_rate"].to_dict())
        assert run_id in {r["run_id"] for r in comparison.runs}
    assert first["ci_low"] <= first["difference"] <= first["ci_high"]
    # issue 33: a disparity's difference is of the bias-corrected estimates where both sides were tested, the plug-in
    # difference beside it (the tiny model's texts, and so the rates, depend on the worker's kernels: both cases occur)
    assert math.isclose(first["difference_plug_in"], first["run_b"] - first["run_a"], abs_tol=1e-15)
    corrected = (first["run_a_corrected"], first["run_b_corrected"])
    expected = corrected[1] - corrected[0] if all(math.isfinite(c) for c in corrected) else first["difference_plug_in"]
    assert math.isclose(first["difference"], expected, abs_tol=1e-12)
    payload = comparison.as_json()
    disparity = payload["rows"][0]
    assert {"run_a", "run_b", "difference", "ci_low", "ci_high", "paired", "unit", "n_units_a",
            "n_units_b"} <= set(disparity)
    assert disparity["unit"] == "prompt" and disparity["group"] is None


def test_a_sweeps_settings_compare_among_themselves_within_one_run(runs) -> None:
    pipeline, store = runs
    comparison = compare_runs(store, [pipeline.sweep])
    assert [(c.arm_a.label, c.arm_b.label, c.differs, c.matched_by) for c in comparison.contrasts] == [
        (arm(pipeline, "top_p=0.5"), arm(pipeline, "top_p=0.7"), "top_p 0.5 → 0.7", "within one run"),
        (arm(pipeline, "top_p=0.5"), arm(pipeline, "top_p=0.95"), "top_p 0.5 → 0.95", "within one run")]
    page = page_summary(store, pipeline, "top_p=0.5,0.7,0.95", 1)
    disparities = comparison.disparities()
    assert set(disparities["metric"]) == {"negative_sentiment_disparity", "offensive_disparity"}
    shown = disparities[disparities["metric"] == "negative_sentiment_disparity"]
    by_label = page.configs.set_index("label")["negative_sentiment_disparity"]
    assert shown["run_b"].tolist() == pytest.approx([by_label["top_p=0.7"], by_label["top_p=0.95"]])
    assert shown["run_a"].tolist() == pytest.approx([by_label["top_p=0.5"]] * 2)
    assert shown["paired"].all()  # a sweep's settings share their prompts: one resample serves both sides
    estimates = run_estimates(store, store.get_run(pipeline.sweep))
    rates = estimates[estimates["metric"] == "offensive_rate"].set_index(["arm", "group"])["estimate"]
    page_rates = page.groups.assign(arm=arm(pipeline, "") + page.groups["label"]).set_index(["arm", "group"])
    assert rates.to_dict() == pytest.approx(page_rates["offensive_rate"].to_dict())


def test_a_live_move_is_set_against_each_setting_of_the_sweep_partly_paired(runs) -> None:
    pipeline, store = runs
    comparison = compare_runs(store, [pipeline.sweep, pipeline.live])
    assert [c.arm_b.label for c in comparison.contrasts] == [arm(pipeline, "top_p=0.6")] * 3
    assert {c.matched_by for c in comparison.contrasts} == {"one against each"}
    assert "4 prompts, 2 sample(s) each" in comparison.contrasts[0].differs  # the live subset, said in words
    disparity = comparison.disparities().iloc[0]
    # the live subset's 2 templates are 2 of the sweep's 8 units: shared ones weigh alike on both sides
    assert disparity["pairing"] == "partly paired: 2 prompts in common (8 and 2 in all)"
    assert not disparity["paired"] and disparity["n_shared"] == 2


def test_two_models_line_up_on_their_common_setting(runs) -> None:
    pipeline, store = runs
    (contrast,) = compare_runs(store, [pipeline.single_05, pipeline.other_model]).contrasts
    assert contrast.matched_by == "same decoding setting"
    assert contrast.differs == f"model {pipeline.gpt2.name} → tiny-gpt2-b" and "setting top_p=0.5" in contrast.held


def test_a_run_that_read_a_setting_back_from_the_store_still_covers_its_whole_request(runs) -> None:
    pipeline, store = runs
    assert set(store.query("SELECT DISTINCT system_name FROM generation WHERE run_id = ?",
                           [pipeline.reuse])["system_name"]) == {arm(pipeline, "top_p=0.8")}  # what it stored itself
    comparison = compare_runs(store, [pipeline.single_095, pipeline.reuse])
    assert comparison.contrasts[0].matched_by == "the same system"  # its top_p=0.95 arm was read back
    assert any("read 30 of its request's generations from earlier runs" in note for note in comparison.notes)
    same = comparison.rows[comparison.rows["arm_b"] == arm(pipeline, "top_p=0.95")]
    assert np.allclose(same["difference"], 0.0) and same["paired"].all()


def test_two_sweeps_meet_on_their_common_setting_and_say_what_was_left_out(runs) -> None:
    pipeline, store = runs
    comparison = compare_runs(store, [pipeline.sweep, pipeline.reuse])
    assert [(c.arm_a.label, c.arm_b.label) for c in comparison.contrasts] == [(arm(pipeline, "top_p=0.95"),) * 2]
    assert comparison.contrasts[0].differs == "seed 1 → 0"  # the same system under another seed
    left = [note for note in comparison.notes if "no counterpart" in note]
    assert left == [f"run {pipeline.sweep}: {arm(pipeline, 'top_p=0.5')}, {arm(pipeline, 'top_p=0.7')} have no "
                    "counterpart in the other run(s) (no system or setting in common), so they are not compared",
                    f"run {pipeline.reuse}: {arm(pipeline, 'top_p=0.8')} has no counterpart in the other run(s) (no "
                    "system or setting in common), so it is not compared"]


def test_metric_bias_through_compare_is_the_metric_bias_page_with_missing_scores_left_out(runs) -> None:
    pipeline, store = runs
    bleu, stored = pipeline.metric_bias["bleu"], pipeline.metric_bias["stored"]
    comparison = compare_runs(store, [bleu, stored])
    bias = comparison.rows[comparison.rows["metric"] == "bias"].set_index("attribute")
    for run_id, side in ((bleu, "run_a"), (stored, "run_b")):
        page = mb.bias_table(mb.pair_table(store, [run_id])).set_index("attribute")  # Eq. 1-2 as the page has it
        assert bias[side].to_dict() == pytest.approx(page["bias"].to_dict(), rel=1e-12)
    # the stored BLEU misses one score of a gender pair: that pair is left out of the rescaling too
    assert bias.loc["gender", "pairing"] == "partly paired: 9 pairs in common (10 and 9 in all)"
    assert any("1 pair(s) of BLEU (stored) left out" in note for note in comparison.notes)
    assert comparison.contrasts[0].matched_by == "the primary metric outputs"


def test_pair_gaps_are_rescaled_over_the_pairs_the_bias_uses(runs) -> None:
    pipeline, store = runs
    pairs = mb.pair_table(store, [pipeline.metric_bias["stored"]])
    gender = pairs[pairs["attribute"] == "gender"]
    used = gender.dropna(subset=["gap"])
    assert len(used) == 9  # one pair has a missing score
    table = mb.bias_table(pairs).set_index("attribute")
    # Eq. 2 is the mean |gap| of the pairs used, once the unit (Eq. 1) is fixed by those pairs alone
    assert used["gap"].abs().mean() == pytest.approx(table.loc["gender", "bias"], rel=1e-12)


def test_configurations_of_one_metric_are_told_apart(runs) -> None:
    pipeline, store = runs
    comparison = compare_runs(store, [pipeline.metric_bias["chrf"], pipeline.metric_bias["chrf-paper"]])
    (contrast,) = comparison.contrasts
    assert (contrast.arm_a.label, contrast.arm_b.label) == ("chrf (config default)",
                                                            "chrf (config metric-fairness-2022)")
    assert contrast.differs == "config default → metric-fairness-2022"
    examples = per_example(store, pipeline.metric_bias["chrf"], pipeline.metric_bias["chrf-paper"], limit=100)
    # raw chrF is 0-100 under the library defaults and 0-1 under the paper's configuration: never subtracted
    assert examples["raw_change"].isna().all()
    assert (examples["score1_a"] / examples["score1_b"]).median() == pytest.approx(100, rel=0.05)
    assert examples["value_a"].between(0, 100).all() and examples["value_b"].between(0, 100).all()
    assert np.allclose(examples["change"], examples["value_b"] - examples["value_a"])


def test_cairo_eq1_through_compare_is_cairos_bias_table(runs) -> None:
    from fairness_core.cairo.task import RunRequest, parse_systems, run_pipeline

    pipeline, store = runs
    model = pipeline.gpt2
    systems = parse_systems(f"{model}@top_p=0.9;{model}@top_p=0.5,temperature=0.7;{model}@greedy")
    request = RunRequest(systems=systems, n_sets=1, per_subgroup=3, max_new_tokens=4, seeds=(0,))
    table = run_pipeline(request, store).bias_table  # read back from the store
    estimates = run_estimates(store, store.get_run(pipeline.cairo))
    (eq1_metric,) = {m for m in estimates["metric"] if m.endswith("_eq1_bias")}  # the default judge's column
    eq1 = estimates[(estimates["metric"] == eq1_metric) & (estimates["family"] != "all families")]
    found = {(arm, family): value for arm, family, value in eq1[["arm", "family", "estimate"]].itertuples(index=False)}
    expected = {(row.system, f"{row.metric} · {row.prompt_set}"): row.bias for row in table.itertuples()}
    assert found == pytest.approx(expected, rel=1e-12)
    assert len(compare_runs(store, [pipeline.cairo]).contrasts) == 2  # its systems among themselves


def test_adaptation_and_datscore_runs_compare_on_their_shared_texts(runs) -> None:
    pipeline, store = runs
    adaptation = compare_runs(store, pipeline.adaptation)
    vader = adaptation.rows[adaptation.rows["classifier"] == "vader"]
    assert len(vader) == 1 and vader["paired"].all() and vader["difference"].abs().max() < 1e-12
    assert adaptation.contrasts[0].differs == "what classifiers vader → classifiers vader, offensive"
    datscore = compare_runs(store, pipeline.datscore)
    assert set(datscore.rows["direction"]) >= {"Src→Hypo", "Hypo→Ref"} and datscore.rows["paired"].all()
    # the inputs differ: what was asked of their translations runs, not those runs' manifest hashes (issue 43 §6)
    assert datscore.contrasts[0].differs == "max new tokens 4 → 6"


def test_kinds_that_share_nothing_get_one_sentence(runs) -> None:
    pipeline, store = runs
    with pytest.raises(CompareError, match=r"\(metric-bias\) is described by attribute and run .* \(generation\) by "
                                           r"family, group, so nothing lines up"):
        compare_runs(store, [pipeline.single_05, pipeline.metric_bias["bleu"]])
    with pytest.raises(CompareError, match="measured one thing"):
        compare_runs(store, [pipeline.single_05])
    comparison = compare_runs(store, [pipeline.datscore[0], pipeline.datscore_translations], by=["grp"])
    assert comparison.rows.empty and comparison.message.endswith(
        "share no metric, so there is nothing to line up: the first has entropy, entropy-mean, sum, uniform, the "
        "second translation.")


def test_grouping_by_a_typed_field_and_refusing_an_unknown_one(runs) -> None:
    pipeline, store = runs
    rows = compare_runs(store, [pipeline.single_05, pipeline.single_095], by=["family"],
                        metrics=["negative_sentiment_rate"]).rows
    assert rows["family"].tolist() == ["gender"] and rows["n_units_a"].tolist() == [8]
    with pytest.raises(CompareError, match="no field 'colour'; choose one of: item, grp, variant"):
        compare_runs(store, [pipeline.single_05, pipeline.single_095], by=["colour"])


def test_per_example_rows_pair_the_same_prompt_and_sample_under_two_settings(runs) -> None:
    pipeline, store = runs
    rows = per_example(store, pipeline.single_05, pipeline.single_095, metric="negative_sentiment_disparity",
                       limit=100)
    assert set(rows["metric"]) == {"vader_compound"}  # a disparity's examples are its scorer's
    assert len(rows) == 10 * SAMPLES and (rows["arm_b"] == arm(pipeline, "top_p=0.95")).all()
    assert (np.diff(rows["change"].abs().to_numpy()) <= 1e-15).all()
    assert all(a.startswith(p) and b.startswith(p) for a, b, p in zip(rows["text_a"], rows["text_b"],
                                                                      rows["prompt"], strict=True))
    women = per_example(store, pipeline.single_05, pipeline.single_095, filters={"group": "woman"}, limit=500)
    assert set(women["group"]) == {"woman"}
    within = per_example(store, pipeline.sweep, metric="vader_compound", limit=500)
    assert set(within["arm_b"]) == {arm(pipeline, "top_p=0.7"), arm(pipeline, "top_p=0.95")}
    assert len(within) == 2 * 10 * SAMPLES
    hated = per_example(store, pipeline.single_05, pipeline.single_095, search="HATED", limit=500)
    assert len(hated) and hated["prompt"].str.contains("hated").all()


def test_json_has_no_nan_and_names_every_run(runs) -> None:
    pipeline, store = runs
    payload = compare_runs(store, [pipeline.sweep, pipeline.live]).as_json()
    flat = [v for row in payload["rows"] for v in row.values() if isinstance(v, float)]
    assert all(math.isfinite(v) for v in flat)
    assert [run["run_id"] for run in payload["runs"]] == [pipeline.sweep, pipeline.live]
    assert payload["runs"][0]["arms"] == [arm(pipeline, f"top_p={p}") for p in ("0.5", "0.7", "0.95")]
    assert pd.DataFrame(payload["contrasts"])["matched_by"].tolist() == ["one against each"] * 3


def test_a_cairo_run_or_an_adaptation_rewrite_against_a_decoding_run_is_said_in_words(runs) -> None:
    """Kinds that share the `generation` layout but no measure: nothing is lined up, and the message names what
    each side has (CAIRO is judged by Jigsaw, the decoding run by VADER and the offensive classifier); the
    adaptation's rewrites carry no scores at all."""
    pipeline, store = runs
    comparison = compare_runs(store, [pipeline.single_05, pipeline.cairo])
    assert comparison.rows.empty and len(comparison.contrasts) == 3  # CAIRO's three systems
    assert "share no metric, so there is nothing to line up" in comparison.message
    assert "negative_sentiment_rate" in comparison.message and "jigsaw_toxic" in comparison.message
    assert "prompts test prompts" in comparison.contrasts[0].differs  # the prompt sets differ, said first
    rewrites = [r.run_id for r in store.list_runs("generation")
                if str(r.manifest["request"].get("prompts", {}).get("name", "")).startswith("adaptation")]
    assert rewrites
    rewritten = compare_runs(store, [pipeline.single_05, rewrites[0]])
    assert rewritten.rows.empty and "has no finite values to compare" in rewritten.message
