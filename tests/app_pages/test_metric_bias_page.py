"""The Metric bias page through Streamlit's AppTest (no browser).

The page computes in a background job (ui.jobs); AppTest runs the script in this process, so a test
waits for the job in the shared registry and reruns the script to see the results (`settle`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.metrics.registry import metric_names  # the picker offers every registered metric
from tests.markdown_text import shown
from ui import jobs

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "metric_bias.py")
RELEASE = sorted((Path(__file__).resolve().parents[1] / "data" / "fixtures" / "metric_fairness_release").glob("*.tsv"))
pytestmark = pytest.mark.slow


def settle(app: AppTest) -> AppTest:
    """Run the script, wait for every metric-bias job it started, and run it again to show the results."""
    app.run()
    for job in jobs.running("metric-bias"):
        jobs.wait(job.key, timeout_s=600)
    return app.run()


def frame_with(app: AppTest, test):
    """The first dataframe on the page whose value passes `test` (AppTest does not expose widget keys of tables)."""
    return next((d.value for d in app.dataframe if test(d.value)), None)


def bias_table(app: AppTest):
    """The main table: attribute × metric cells "bias [ci_low, ci_high]"."""
    return frame_with(app, lambda v: v.columns.name == "metric" and v.index.name == "attribute")


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory):
    monkeypatch = pytest.MonkeyPatch()
    path = tmp_path_factory.mktemp("mb-page") / "runs.duckdb"
    monkeypatch.setenv("FAIRNESS_LAB_STORE", str(path))
    yield path
    monkeypatch.undo()


@pytest.fixture(scope="module")
def app(store_path: Path) -> AppTest:
    """The default view (demo set, five n-gram metrics + BERTScore-MiniLM), computed once for the module."""
    return settle(AppTest.from_file(PAGE, default_timeout=300))


def test_default_view_shows_the_bias_table_on_the_demo_set(app: AppTest) -> None:
    assert not app.exception, app.exception
    assert app.title[0].value == "Metric bias"
    texts = " ".join(t.value for t in app.text)  # data text is plain text, never markdown
    assert "demo-gender" in texts and "Licence:" in texts and "CC0" in texts
    table = bias_table(app)  # attribute × metric, "bias [ci_low, ci_high]"
    assert list(table.index) == ["gender"]
    assert {"bleu", "rouge1", "meteor", "nist", "chrf", "bertscore"} <= set(table.columns)
    bertscore = float(table.loc["gender", "bertscore"].split()[0])
    bleu = float(table.loc["gender", "bleu"].split()[0])
    assert bertscore > bleu  # the paper's headline: the PLM-based metric is the more biased one
    low, high = (float(x) for x in table.loc["gender", "bertscore"].split("[")[1].rstrip("]").split(","))
    assert low < bertscore < high
    assert len(app.get("plotly_chart")) >= 1
    assert sum("How to read this" in e.label for e in app.expander) >= 4
    text = " ".join(m.value for m in app.markdown)
    assert "hash seed" in text and "not** replicate" in text
    captions = " ".join(c.value for c in app.caption)
    assert f"6 of {len(metric_names())} metrics selected" in captions and "Estimated time: about" in captions


def test_the_stereotype_direction_is_a_coloured_label_not_an_emoji(app: AppTest) -> None:
    stereo = frame_with(app, lambda v: "direction" in v.columns)
    directions = set(stereo["direction"])
    assert directions <= {"favours the stereotype", "favours the anti-stereotype", "no clear direction",
                          "no stereotype marks"}
    assert not any(ord(ch) > 0x2FFF for label in directions for ch in label)  # no emoji
    from ui.metric_bias_charts import PALETTE, stereo_table

    assert len(PALETTE) == len(set(PALETTE)) == 8
    import pandas as pd

    styled = stereo_table(pd.DataFrame([{"attribute": "g", "metric": "m", "stereo_diff": 3.0, "stereo_ci_low": 1.0,
                                         "stereo_ci_high": 5.0, "stereo_p_value": 0.001, "n_stereo": 10}])).to_html()
    assert "#D55E00" in styled and "favours the stereotype" in styled


def test_direction_labels_are_screened_with_q_values_beside_the_unadjusted_p(app: AppTest) -> None:
    """Issue 42 §2: the labels over attributes x metrics are one screen, so a cell is labelled by its
    Benjamini-Hochberg q (the rule stated above the table), its unadjusted p beside it. One cell at p = 0.01 among
    nine at p = 0.5 has q = 0.1: its own interval excludes 0, but it is not labelled."""
    stereo = frame_with(app, lambda v: "direction" in v.columns)
    assert {"stereo_p_value", "stereo_q_value"} <= set(stereo.columns)
    tested = stereo.dropna(subset=["stereo_q_value"])
    assert (tested["stereo_q_value"] >= tested["stereo_p_value"] - 1e-12).all()
    assert (tested["direction"].isin(["favours the stereotype", "favours the anti-stereotype"])
            == (tested["stereo_q_value"] < 0.05)).all()
    text = " ".join(m.value for m in app.markdown)
    assert "Benjamini-Hochberg q-values (false discovery rate), over the cells shown) is below 0.05" in text
    import pandas as pd

    from ui.metric_bias_charts import stereo_frame

    cells = pd.DataFrame([{"attribute": "g", "metric": f"m{i}", "stereo_diff": 3.0 if i == 0 else 0.1,
                           "stereo_ci_low": 1.0 if i == 0 else -1.0, "stereo_ci_high": 5.0,
                           "stereo_p_value": 0.01 if i == 0 else 0.5, "n_stereo": 10} for i in range(10)])
    screened = stereo_frame(cells)
    assert screened.loc[0, "stereo_q_value"] == 0.1 and screened.loc[0, "direction"] == "no clear direction"


def test_normalisation_switch_changes_the_main_table_and_keeps_intervals(app: AppTest) -> None:
    minmax = bias_table(app)
    app.radio(key="mb_norm").set_value("zscore").run()
    assert not app.exception
    zscore = bias_table(app)
    assert list(zscore.columns) == list(minmax.columns)
    assert zscore.loc["gender", "bertscore"] != minmax.loc["gender", "bertscore"]
    assert "[" in zscore.loc["gender", "bertscore"]  # still an interval
    assert any("z-score (standard deviations)" in shown(shown(c.value)) for c in app.caption)
    # the rank agreement between normalisations carries its pair-bootstrap interval
    assert any(re.search(r"zscore τ = -?[0-9.]+ \[-?[0-9.]+, -?[0-9.]+\]", shown(c.value)) for c in app.caption)
    assert app.query_params.get("norm") == ["zscore"] or app.query_params.get("norm") == "zscore"
    app.radio(key="mb_norm").set_value("minmax").run()


def test_rerun_reads_the_store(app: AppTest) -> None:
    app.run()
    assert not app.exception
    assert not app.warning and not app.error
    app.button(key="mb_run_button").click()
    settle(app)
    runs_caption = " ".join(c.value for c in app.caption)
    assert "served from the run store" in runs_caption


def test_a_changed_request_waits_for_run_and_shows_the_estimate_first(app: AppTest) -> None:
    app.multiselect(key="mb_metrics").set_value(["bleu", "chrf"]).run()
    assert not app.exception
    assert any("press **Run**" in i.value for i in app.info)
    assert bias_table(app) is None  # nothing computed or shown until Run
    assert any("Estimated time: about" in c.value and "128 pairs, 512 candidate scorings" in c.value
               for c in app.caption)
    assert not jobs.running("metric-bias")
    app.button(key="mb_run_button").click()
    settle(app)
    assert set(bias_table(app).columns) == {"bleu", "chrf"}
    assert app.query_params["metrics"] in ("bleu,chrf", ["bleu,chrf"])


def test_clearing_all_metrics_says_so(app: AppTest) -> None:
    app.multiselect(key="mb_metrics").set_value([]).run()
    assert not app.exception
    assert any("No metric is selected" in i.value for i in app.info)
    assert any(f"0 of {len(metric_names())} metrics selected" in c.value for c in app.caption)
    app.multiselect(key="mb_metrics").set_value(["bleu", "chrf"]).run()


def test_gap_filters_narrow_the_per_example_table(app: AppTest) -> None:
    app.multiselect(key="mb_metrics").set_value(["bleu", "chrf", "bertscore"]).run()
    app.button(key="mb_run_button").click()
    settle(app)
    app.multiselect(key="mb_f_metric").set_value(["bertscore"]).run()
    app.slider(key="mb_f_gap").set_value(20.0).run()
    assert not app.exception
    gaps = frame_with(app, lambda v: "gap" in v.columns and "candidate1" in v.columns)
    assert len(gaps) > 0 and (gaps["gap"].abs() >= 20).all() and set(gaps["metric"]) == {"bertscore"}
    # the words that differ beside the texts, and the largest-gap pair whole with them marked (issue 30)
    assert list(gaps.columns[:5]) == ["item", "attribute", "metric", "gap", "differs"]
    assert gaps["differs"].str.contains(" → ").all()
    first = gaps.iloc[0]
    drawn = [m.value for m in app.markdown if m.value.startswith(("**Candidate 1:**", "**Candidate 2:**"))]
    assert len(drawn) == 2 and all(":orange-background[" in line for line in drawn)
    was, now = first["differs"].split(" → ")[0], first["differs"].split(" → ")[1].split(";")[0]
    assert f":orange-background[**{was}**]" in drawn[0] and f":orange-background[**{now}**]" in drawn[1]
    # the demo set has no stored scores: said in one line, no empty comparison section (issue 30)
    assert any("This data has no stored scores" in c.value for c in app.caption)
    assert "Recomputed beside stored" not in [h.value for h in app.subheader]
    app.toggle(key="mb_align").set_value(True).run()
    assert not app.exception
    assert any("→ reference token" in t.value for t in app.text)
    assert not any("→ reference token" in m.value for m in app.markdown)


def test_an_empty_choice_keeps_the_page_usable(app: AppTest) -> None:
    app.radio(key="mb_source").set_value("Saved version").run()
    assert not app.exception
    assert any("No saved versions yet" in i.value for i in app.info)
    app.radio(key="mb_source").set_value("Demo set (templates × occupations × pronouns)").run()
    assert not app.exception and app.dataframe


def test_an_unavailable_metric_is_named_and_the_rest_still_shows(app: AppTest) -> None:
    app.multiselect(key="mb_metrics").set_value(["bleu", "chrf", "bleurt"]).run()
    app.button(key="mb_run_button").click()
    settle(app)
    assert not app.exception
    assert any("Skipped BLEURT" in w.value and "unavailable here" in w.value for w in app.warning)
    assert {"bleu", "chrf"} <= set(bias_table(app).columns)


def test_a_bad_layer_is_one_sentence_in_place(app: AppTest) -> None:
    app.multiselect(key="mb_metrics").set_value(["bertscore"]).run()
    app.number_input(key="mb_layer").set_value(40).run()
    app.button(key="mb_run_button").click()
    settle(app)
    assert not app.exception
    assert any("layer 40 does not exist" in w.value for w in app.warning)
    app.number_input(key="mb_layer").set_value(None).run()


def test_selections_come_back_from_the_url(store_path: Path) -> None:
    page = AppTest.from_file(PAGE, default_timeout=300)
    page.query_params.update({"source": "winobias", "subset": "type1-dev", "metrics": "bleu,rouge1",
                              "norm": "raw", "config": "metric-fairness-2022"})
    page.run()
    assert not page.exception
    assert page.radio(key="mb_source").value == "WinoBias gender pairs"
    assert page.multiselect(key="mb_metrics").value == ["bleu", "rouge1"]
    assert page.selectbox(key="mb_config").value == "metric-fairness-2022"
    assert page.radio(key="mb_norm").value == "raw" if any(r.key == "mb_norm" for r in page.radio) else True
    page.button(key="mb_run_button").click()
    settle(page)
    assert page.radio(key="mb_norm").value == "raw"
    assert "winobias-type1-dev" in " ".join(t.value for t in page.text)


def test_cancel_stops_the_job_and_labels_the_results_partial(store_path: Path) -> None:
    page = AppTest.from_file(PAGE, default_timeout=300)
    page.query_params.update({"source": "winobias", "metrics": "moverscore-bigram"})
    page.run()
    page.button(key="mb_run_button").click().run()
    running = jobs.running("metric-bias")
    assert running, "the Run button starts a background job"
    job = running[0]
    assert page.button(key="mb_run_button").disabled  # no second copy of the same request
    while job.running and (job.progress is None or job.progress.done < 1):
        jobs.wait(job.key, timeout_s=0.2)
    cancel = next(b for b in page.button if b.key and b.key.endswith("_cancel_button"))
    cancel.click().run()
    jobs.wait(job.key, timeout_s=60)
    assert job.done and job.cancel.cancelled
    page.run()
    assert not page.exception
    warnings = " ".join(w.value for w in page.warning)
    assert "cancelled by the user" in warnings
    assert "Partial results" in warnings and "of 396 pairs" in warnings


def test_release_files_show_their_stored_scores_and_notes(store_path: Path) -> None:
    """Issue 7 Done-when, page side: the six release-layout files (as a saved version) offer all 29 stored
    columns as metrics and show the identical-pair note."""
    from fairness_core.data import pairs as pairdata

    merged = pairdata.merge([pairdata.read_metric_fairness(p) for p in RELEASE], name="release")
    pairdata.save_version(merged, pairdata.versions_dir(store_path))
    page = AppTest.from_file(PAGE, default_timeout=300)
    page.query_params.update({"source": "saved", "metrics": ""})
    page.run()
    assert not page.exception
    assert any("1 pair(s) have identical candidates (lines 10-11); kept with gap 0" in t.value for t in page.text)
    stored = page.multiselect(key="mb_stored")
    assert len(stored.options) == 29
    stored.set_value(merged.stored_columns).run()
    page.button(key="mb_run_button").click()
    settle(page)
    table = bias_table(page)
    assert set(table.columns) == {f"{c} (stored)" for c in merged.stored_columns}
    assert list(table.index) == ["age", "gender", "physical-appearance", "race", "religion", "socioeconomic"]


def test_meteor_without_wordnet_is_skipped_with_its_fix(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 §3: a clone without the WordNet set-up step failed all six metrics; now only METEOR is skipped."""
    import fairness_core.metrics.ngram as ngram

    monkeypatch.setattr(ngram, "wordnet_installed", lambda: False)
    app.multiselect(key="mb_metrics").set_value(["bleu", "meteor", "chrf"]).run()
    app.button(key="mb_run_button").click()
    settle(app)
    assert not app.exception
    assert any("Skipped METEOR" in shown(w.value) and "make run" in shown(w.value) for w in app.warning)
    assert {"bleu", "chrf"} <= set(bias_table(app).columns) and "meteor" not in bias_table(app).columns


def widget_keys_in_page_order(node, found: list[str] | None = None) -> list[str]:
    """The keys of the page's widgets in document order (the order Tab visits them)."""
    found = [] if found is None else found
    if getattr(node, "key", None):
        found.append(node.key)
    for index in sorted(getattr(node, "children", {}) or {}):
        widget_keys_in_page_order(node.children[index], found)
    return found


def test_run_comes_right_after_the_metric_choice_in_the_tab_order(app: AppTest) -> None:
    """Issue 23: 23 Tab presses reached Run, behind the model options. It now follows the metric choice (before
    the model options) and answers Alt+Enter."""
    order = widget_keys_in_page_order(app.main)
    run = order.index("mb_run_button")
    assert order[:run] == ["mb_source", "mb_metrics", "mb_config"]
    assert run < order.index("mb_encoder")  # the model options come after
    assert app.button(key="mb_run_button").proto.shortcut == "alt+enter"
