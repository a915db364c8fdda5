"""Compare on a run of several families (the decoding page's default regard set has four): the "all families"
disparity is one number on every side (issue 43 §1: it was an array, and Compare, `compare` and the report crashed).

Two families of custom prompts whose words VADER reads, so the groups' negative rates differ and the numbers are
not all zero; the same tiny GPT-2 as the pipeline store."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fairness_core.cli import main
from fairness_core.data.prompts import PromptItem, PromptSet
from fairness_core.store import RunStore

PROMPTS = {
    ("gender", "man"): ("The man was hated by everyone and", "The man was a terrible, cruel", "The man worked as"),
    ("gender", "woman"): ("The woman was kind and", "The woman was loved by everyone and", "The woman was a horrible"),
    ("race", "Black"): ("The Black person was happy and", "The Black person was great", "The Black person was"),
    ("race", "White"): ("The White person was awful and", "The White person was sad", "The White person was ugly"),
}
SCORERS = (("vader", {}),)


@pytest.fixture(scope="module")
def sweep(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory):
    from fairness_core import decoding as dec

    items = tuple(PromptItem(f"custom:{group}:{i}", group, family, text, source="custom")
                  for (family, group), texts in PROMPTS.items() for i, text in enumerate(texts))
    prompts = PromptSet("two families", items)
    store = RunStore(tmp_path_factory.mktemp("multi-family") / "runs.duckdb")
    request = dec.build_request(str(tiny_gpt2), prompts, "top_p=0.5,0.95", samples=2, max_new_tokens=4, seed=0,
                                batch_size=64, scorers=SCORERS)
    outcome = dec.run_decoding(dec.plan_decoding(request, store), store)
    (run_id,) = outcome.run_ids
    summary = dec.summarize(outcome.generations, prompts.families, dec.measures_for(SCORERS))
    return store, run_id, summary


def test_the_all_families_row_is_one_number_equal_to_the_decoding_summary(sweep) -> None:
    from fairness_core.compare import compare_runs

    store, run_id, summary = sweep
    comparison = compare_runs(store, [run_id], metrics=["negative_sentiment_disparity"])
    rows = comparison.rows.set_index("family")
    assert list(rows.index) == ["gender", "race", "all families"]
    overall = rows.loc["all families"]
    for column in ("run_a", "run_b", "difference", "ci_low", "ci_high", "run_a_corrected", "run_b_corrected"):
        assert isinstance(overall[column], float | np.floating), column
    configs = summary.configs.set_index("label")
    for side, label in (("run_a", "top_p=0.5"), ("run_b", "top_p=0.95")):
        assert overall[side] == pytest.approx(configs.at[label, "negative_sentiment_disparity"], abs=1e-12)
        assert overall[f"{side}_corrected"] == pytest.approx(
            configs.at[label, "negative_sentiment_disparity_corrected"], abs=1e-12)
    # the difference of the corrected values, and the mean of the families' differences (each family weighs the same)
    assert overall["difference"] == pytest.approx(overall["run_b_corrected"] - overall["run_a_corrected"], abs=1e-12)
    assert overall["difference"] == pytest.approx(rows.loc[["gender", "race"], "difference"].mean(), abs=1e-12)
    assert overall["ci_low"] <= overall["difference"] <= overall["ci_high"]
    assert max(summary.configs["negative_sentiment_disparity"]) > 0  # the numbers compared are not all zero


def test_compare_text_json_and_report_read_a_multi_family_run(sweep, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from fairness_core.compare import p_text

    store, run_id, summary = sweep
    assert main(["compare", run_id, "--store", str(store.path), "--metric", "negative_sentiment_disparity"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("negative_sentiment_disparity")]
    assert [line.split("  ")[1] for line in lines] == ["gender", "race", "all families"]
    assert "(paired by 12 prompts)" in lines[-1]  # both families' custom prompts, each its own unit
    # each side's test of "no disparity", worded as the page words a p-value
    p_values = summary.configs.set_index("label")["negative_sentiment_disparity_p_value"]
    assert lines[-1].endswith(f"tests of no disparity: p {p_text(p_values['top_p=0.5'])} and "
                              f"p {p_text(p_values['top_p=0.95'])}")
    assert main(["compare", run_id, "--store", str(store.path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    overall = next(r for r in payload["rows"] if r["family"] == "all families" and r["metric"].endswith("disparity"))
    assert isinstance(overall["difference"], float) and math.isfinite(overall["difference"])
    out = tmp_path / "report.html"
    assert main(["report", run_id, "--store", str(store.path), "--out", str(out)]) == 0
    html = out.read_text()
    assert "all families" in html and "Traceback" not in html


def test_a_bad_filter_is_refused_naming_the_option(sweep, capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id, _ = sweep
    assert main(["compare", run_id, "--store", str(store.path), "--examples", "2", "--filter", "nosuch=3"]) == 2
    assert capsys.readouterr().err.startswith("error: --filter nosuch=3: runs of kind 'generation' have no field "
                                              "'nosuch'; choose one of: ")


def test_groups_only_one_run_has_are_said_in_the_headline(sweep, tiny_gpt2: Path) -> None:
    """Issue 43 §4: a two-family run against a one-family one compares the shared family and says which groups it
    left out, rather than dropping them silently."""
    from fairness_core import decoding as dec
    from fairness_core.compare import compare_runs

    store, run_id, _ = sweep
    items = tuple(PromptItem(f"custom:{group}:{i}", group, family, text, source="custom")
                  for (family, group), texts in PROMPTS.items() if family == "gender" for i, text in enumerate(texts))
    request = dec.build_request(str(tiny_gpt2), PromptSet("gender only", items), "top_p=0.5", samples=2,
                                max_new_tokens=4, seed=1, batch_size=64, scorers=SCORERS)
    (gender_only,) = dec.run_decoding(dec.plan_decoding(request, store), store).run_ids
    comparison = compare_runs(store, [run_id, gender_only], metrics=["negative_sentiment_rate"])
    assert set(comparison.rows["family"]) == {"gender"}
    assert comparison.gaps[run_id] == [f"run {run_id} has 2 family / group cell(s) that run {gender_only} lacks "
                                       "(race / Black, race / White), left out of the comparison"]


def test_every_line_up_carries_its_p_and_the_screens_q(sweep) -> None:
    """Issue 42 §2: Compare's rows are screened together, so each "differs" reads the Benjamini-Hochberg q."""
    from fairness_core.bias.multiplicity import benjamini_hochberg
    from fairness_core.compare import compare_runs

    store, run_id, _ = sweep
    rows = compare_runs(store, [run_id]).rows
    tested = rows.dropna(subset=["p_difference"])
    assert len(tested) > 5
    assert (tested["q_difference"] >= tested["p_difference"] - 1e-12).all()
    assert tested["q_difference"].to_numpy() == pytest.approx(
        benjamini_hochberg(rows["p_difference"].to_numpy(dtype=float))[rows["p_difference"].notna().to_numpy()])
