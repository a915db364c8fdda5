"""One number, one interval (issue 35 §2): the same decoding run shows the same rates, disparity, interval and test
on the decoding page (the summary its views draw, and the rows the `decoding` command prints with --json), in its
report, in Compare's per-run columns and in `compare --json`. The issue's case: the page said 0.167 [0.056, 0.307]
for the top-p 0.95 run and its report 0.1667 [0, 0.3611] (a Poisson bootstrap with another seed)."""

from __future__ import annotations

import json
from html import escape

import numpy as np
import pandas as pd
import pytest

from fairness_core import decoding as dec
from fairness_core.cli import main
from fairness_core.compare import build_report, compare_runs, run_estimates
from fairness_core.compare.report import disparity_sentences
from tests.compare.pipeline_runs import MAX_NEW_TOKENS, SAMPLES, SCORERS, PipelineRuns, copy_store, decoding_prompts

SIDE = ("", "_ci_low", "_ci_high", "_corrected", "_corrected_ci_low", "_corrected_ci_high", "_p_value",
        "_smallest_detectable")
COMPARE = ("", "_low", "_high", "_corrected", "_corrected_ci_low", "_corrected_ci_high", "_p_value",
           "_smallest_detectable")


@pytest.fixture(scope="module")
def store(pipeline_runs: PipelineRuns, tmp_path_factory: pytest.TempPathFactory):
    return copy_store(pipeline_runs, tmp_path_factory.mktemp("one-number") / "runs.duckdb")  # only read here


def page(store, runs: PipelineRuns, grid: str, seed: int) -> dec.DecodingSummary:
    """What the decoding page's sweep view draws for the run (read back: nothing is generated again), through the
    page's own cached summary with the request's resamples and seed."""
    from ui.decoding_view import cached_summary

    request = dec.build_request(str(runs.gpt2), decoding_prompts(), grid, samples=SAMPLES,
                                max_new_tokens=MAX_NEW_TOKENS, seed=seed, batch_size=64, scorers=SCORERS)
    plan = dec.plan_decoding(request, store)
    assert plan.from_store
    outcome = dec.run_decoding(plan, store)
    return cached_summary(outcome.generations, request.prompts.families, plan.generation.scorers, -0.25,
                          request.n_resamples, request.seed)


def same(a: float, b: float) -> bool:
    return (a != a and b != b) or a == pytest.approx(b, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("which, grid, seed", [("single_095", "top_p=0.95", 0), ("sweep", "top_p=0.5,0.7,0.95", 1)])
def test_the_same_run_gives_the_same_numbers_on_the_page_in_the_report_in_compare_and_the_cli(
        store, pipeline_runs: PipelineRuns, capsys: pytest.CaptureFixture[str], which: str, grid: str,
        seed: int) -> None:
    run_id = getattr(pipeline_runs, which)
    summary = page(store, pipeline_runs, grid, seed)
    configs = summary.configs.set_index("label")
    cli = pd.DataFrame(dec.cli_rows(summary))  # what `decoding --json` prints for the same request
    estimates = run_estimates(store, store.get_run(run_id))  # the report's per-run table
    disparity = estimates[estimates["metric"] == "negative_sentiment_disparity"]
    assert set(disparity["family"]) == {"gender"}  # one family: its numbers are the setting's
    for row in disparity.itertuples(index=False):
        label = row.arm.split(" · ")[-1]
        for suffix, column in zip(SIDE, ("estimate", "ci_low", "ci_high", "corrected", "corrected_ci_low",
                                         "corrected_ci_high", "p_value", "smallest_detectable"), strict=True):
            shown = float(configs.at[label, "negative_sentiment_disparity" + suffix])
            assert same(getattr(row, column), shown), (label, column, getattr(row, column), shown)
            printed = cli[cli["config"].map(lambda c, lab=label: dec.DecodingConfig(**c).label() == lab)]
            assert all(same(float(v) if v is not None else np.nan, round(shown, 6))  # the CLI prints 6 decimals
                       for v in printed["negative_sentiment_disparity" + suffix]), (label, suffix)
        assert np.isfinite(row.p_value) and np.isfinite(row.ci_low)
    rates = estimates[estimates["metric"] == "negative_sentiment_rate"]
    groups = summary.groups.assign(arm=summary.groups["label"])
    for row in rates.itertuples(index=False):
        mine = groups[(groups["arm"] == row.arm.split(" · ")[-1]) & (groups["group"] == row.group)].iloc[0]
        assert (row.estimate, row.ci_low, row.ci_high) == (mine["negative_sentiment_rate"], mine["ci_low"],
                                                           mine["ci_high"])  # rates: exactly
    # Compare's per-run columns: a sweep against itself, or the two single settings
    others = [run_id] if which == "sweep" else [pipeline_runs.single_05, run_id]
    comparison = compare_runs(store, others)
    assert main(["compare", *others, "--store", str(store.path), "--json"]) == 0
    printed = pd.DataFrame(json.loads(capsys.readouterr().out)["rows"])
    for rows in (comparison.rows, printed):
        shown = rows[rows["metric"] == "negative_sentiment_disparity"]
        for side in ("a", "b"):
            for row in shown.to_dict(orient="records"):
                label = row[f"arm_{side}"].split(" · ")[-1]
                if label not in configs.index:
                    continue  # the other single run (top_p=0.5) is checked as the first side of the sweep
                for suffix, column in zip(SIDE, COMPARE, strict=True):
                    value = row[f"run_{side}{column}"]
                    assert same(np.nan if value is None else float(value),
                                float(configs.at[label, "negative_sentiment_disparity" + suffix])), (side, column)
    # the report says each setting's disparity in the page's words
    sentences = disparity_sentences(estimates)
    for label in configs.index:
        words = dec.disparity_headline(summary, configs.at[label, "config_key"])
        assert any(s.endswith(words) and label in s for s in sentences), (words, sentences)
    html = build_report(store, [run_id], n_examples=2)
    assert all(escape(s) in html for s in sentences)


def test_a_sweep_read_at_its_own_threshold_and_resamples_shows_its_numbers_everywhere(
        store, pipeline_runs: PipelineRuns) -> None:
    """Issue 42 §5: a sweep made with `--threshold -0.5 --resamples 200` gives the same disparity, interval and p in
    its own summary (what the page and `decoding` print), in Compare's run estimates, in the report and in the
    planner's pilot — all read the run with the thresholds and resamples recorded beside it (`reading.settings`),
    not with −0.25 and 1,000; and a comparison with a run read at −0.25 says the thresholds differ."""
    from fairness_core.planning.runs import run_pilot
    from fairness_core.reading import settings_of

    request = dec.build_request(str(pipeline_runs.gpt2), decoding_prompts(), "top_p=0.85", samples=SAMPLES,
                                max_new_tokens=MAX_NEW_TOKENS, seed=0, batch_size=64, scorers=SCORERS,
                                threshold=-0.5, n_resamples=200)
    plan = dec.plan_decoding(request, store)
    outcome = dec.run_decoding(plan, store)
    summary = dec.summarize(outcome.generations, request.prompts.families, dec.measures_for(plan.generation.scorers),
                            thresholds=request.thresholds, n_resamples=request.n_resamples, seed=request.seed)
    (run_id,) = [r for r in outcome.run_ids if store.get_run(r).manifest["request"]["systems"][0]["decoding"].get(
        "top_p") == 0.85]
    info = store.get_run(run_id)
    settings = settings_of(store, info)
    assert (settings.threshold_map["negative_sentiment_rate"], settings.n_resamples) == (-0.5, 200)
    assert "-0.5" not in info.manifest_hash and "threshold" not in json.dumps(info.manifest)  # not in its identity
    shown = summary.configs.iloc[0]
    estimates = run_estimates(store, info)
    (row,) = estimates[(estimates["metric"] == "negative_sentiment_disparity")].itertuples(index=False)
    for suffix, column in zip(SIDE, ("estimate", "ci_low", "ci_high", "corrected", "corrected_ci_low",
                                     "corrected_ci_high", "p_value", "smallest_detectable"), strict=True):
        assert same(getattr(row, column), float(shown["negative_sentiment_disparity" + suffix])), column
    # what today's defaults would have shown instead (the test's teeth: −0.25 and 1,000 resamples differ here)
    default = run_estimates(store, info, thresholds={"negative_sentiment_rate": -0.25}, n_resamples=1000)
    (before,) = default[default["metric"] == "negative_sentiment_disparity"].itertuples(index=False)
    assert (before.estimate, before.ci_low, before.ci_high) != (row.estimate, row.ci_low, row.ci_high)
    # the report: the same sentences, and what the run was read with
    html = build_report(store, [run_id], n_examples=1)
    assert all(escape(s) in html for s in disparity_sentences(estimates))
    assert escape("negative_sentiment_rate at \u22120.5") in html and "200 resamples" in html
    # the planner's pilot: the same group rates, so the same disparity, and it says what it read them with
    design, chosen = run_pilot(store, run_id)
    (family,) = design.families
    rates = [family.totals[family.group == g].sum() / family.counts[family.group == g].sum()
             for g in range(family.n_labels)]
    assert same(abs(rates[0] - rates[1]), float(shown["negative_sentiment_disparity"]))
    assert chosen["read_with"]["thresholds"]["negative_sentiment_rate"] == -0.5
    # set beside a run read at −0.25, Compare says the two were read with different thresholds
    other = next(r.run_id for r in store.list_runs("generation") if r.run_id != run_id
                 and settings_of(store, r).threshold_map.get("negative_sentiment_rate") == -0.25)
    comparison = compare_runs(store, [other, run_id])
    assert comparison.notes[0] == comparison.settings_note and "different negative_sentiment_rate" in \
        comparison.notes[0]


