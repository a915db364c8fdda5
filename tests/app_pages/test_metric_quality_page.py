"""The Metric quality page through Streamlit's AppTest: REALSumm with fast metrics, the drill-down, the paired
difference, the bias–quality chart, and uploads (bytes, never paths)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core import metric_quality
from tests.markdown_text import shown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "metric_quality.py")


@pytest.fixture()
def page(isolated_store: Path) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.session_state["mq_metrics"] = ["bleu", "chrf"]
    app.session_state["mq_resamples"] = 200
    return app


def click_run(page: AppTest, key: str = "mq_run") -> None:
    """Press Run; on a busy machine the estimate can pass the confirm threshold, which asks for a tick first."""
    if any(box.key == f"{key}_confirm" for box in page.checkbox):
        page.checkbox(key=f"{key}_confirm").check().run()
    page.button(key=key).click().run()


def run_to_results(page: AppTest) -> AppTest:
    from ui import jobs

    page.run()
    assert not page.exception, page.exception
    click_run(page)
    running = jobs.running("metric-quality-")
    if running:
        assert jobs.wait(running[0].key, timeout_s=240).error is None
    page.run()
    assert not page.exception, page.exception
    return page


def agreement_frame(page: AppTest):
    return next(d.value for d in page.dataframe if "spearman" in d.value.columns)


def test_realsumm_agreement_with_intervals_and_the_papers_reference(page: AppTest) -> None:
    run_to_results(page)
    table = agreement_frame(page)
    assert list(table["label"]) == ["BLEU", "chrF", "BARTScore-BART-base (stored)",
                                    "BARTScore-BART-base+adapter (stored)"]
    judgments = metric_quality.load_judgments("realsumm")
    stored = table.set_index("label").loc["BARTScore-BART-base (stored)"]
    expected = metric_quality.correlate(judgments, "BARTScore-BART-base (stored)", n_resamples=200)
    assert stored["spearman"] == pytest.approx(expected.spearman) and stored["ci_low"] == pytest.approx(expected.ci_low)
    assert (table["ci_low"] < table["spearman"]).all() and (table["spearman"] < table["ci_high"]).all()
    assert set(table["rule"]) == {"pooled"} and set(table["n_documents"]) == {100}
    captions = " ".join(shown(c.value) for c in page.caption)
    assert "Metric-Fairness (MIT licence" in captions and "BERTScore, BERT-base 0.465" in captions
    assert any(m.label.startswith("ρ(B) − ρ(A)") for m in page.metric)
    assert "Download report" in [b.proto.label for b in page.get("download_button")]
    # a reload reads the stored runs: no Run button, no job
    page.run()
    assert not page.exception, page.exception
    assert all(b.key != "mq_run" for b in page.button) and not page.get("progress")


def test_the_drilldown_lists_summaries_ranked_most_differently(page: AppTest) -> None:
    run_to_results(page)
    drill = next(d.value for d in page.dataframe if "rank_gap" in d.value.columns)
    assert len(drill) == 20 and drill["rank_gap"].abs().is_monotonic_decreasing
    texts = " ".join(t.value for t in page.text)
    assert texts.startswith("Candidate (") and "Reference:" in texts
    page.radio(key="mq_rule").set_value("system").run()
    assert not page.exception, page.exception
    click_run(page)
    from ui import jobs

    for job in jobs.running("metric-quality-"):
        jobs.wait(job.key, timeout_s=240)
    page.run()
    drill = next(d.value for d in page.dataframe if "rank_gap" in d.value.columns)
    assert "n_items" in drill.columns and len(drill) == 20  # 24 systems, the 20 most different
    # the system rule's interval resamples documents and systems, and says what it generalises over
    assert set(agreement_frame(page)["resample"]) == {"both"}
    captions = " ".join(shown(c.value) for c in page.caption)
    assert "resamples the 100 documents and the 24 systems: it generalises to other documents and other" in captions


def test_the_bias_quality_chart_places_each_metric(page: AppTest) -> None:
    from ui import jobs

    page.session_state["mq_metrics"] = ["bleu"]
    run_to_results(page)
    click_run(page, "mq_bias_run")
    for job in jobs.running("metric-quality-bias-"):
        assert jobs.wait(job.key, timeout_s=240).error is None
    page.run()
    assert not page.exception, page.exception
    points = next(d.value for d in page.dataframe if "agreement" in d.value.columns)
    assert list(points["label"]) == ["BLEU"]
    row = points.iloc[0]
    assert row["bias_ci_low"] <= row["bias"] <= row["bias_ci_high"]
    assert row["agreement_ci_low"] <= row["agreement"] <= row["agreement_ci_high"]
    captions = " ".join(shown(c.value) for c in page.caption)
    assert "no gender-bias run of this stored column" in captions


@pytest.mark.parametrize(("content", "phrase"), [
    (b"/etc/passwd", "missing columns"),
    (str(Path(__file__).resolve().parents[2] / "data" / "realsumm" / "realsumm_summaries.jsonl.gz").encode(),
     "missing columns"),
    (b"item_id,system,candidate,reference,human\nd1,A,x,r,0.5\nd1,B,y,r,oops\n", "line 3: field 'human' is not a"),
    (b"\xff\xfe\x00bad", "not UTF-8 text"),
])
def test_an_upload_is_bytes_never_a_path(page: AppTest, content: bytes, phrase: str) -> None:
    page.run()
    page.radio(key="mq_source").set_value("Upload judgments (CSV, TSV or JSONL)").run()
    page.file_uploader(key="mq_upload").set_value(("mine.csv", content, "text/csv")).run()
    assert not page.exception, page.exception
    assert len(page.error) == 1 and phrase in shown(page.error[0].value), [e.value for e in page.error]


def test_an_uploaded_table_is_scored(page: AppTest) -> None:
    rows = "".join(f"d{i},s{k},the cat sat {'on the mat ' * k},the cat sat on the mat,{k + 0.2 * i}\n"
                   for i in range(4) for k in range(3))
    page.run()
    page.radio(key="mq_source").set_value("Upload judgments (CSV, TSV or JSONL)").run()
    page.file_uploader(key="mq_upload").set_value(
        ("mine.csv", ("item_id,system,candidate,reference,human\n" + rows).encode(), "text/csv")).run()
    assert not page.exception and not page.error
    click_run(page)
    from ui import jobs

    for job in jobs.running("metric-quality-"):
        jobs.wait(job.key, timeout_s=240)
    page.run()
    table = agreement_frame(page)
    assert list(table["label"]) == ["BLEU", "chrF"] and set(table["n"]) == {12}
    assert "licence: user-supplied" in " ".join(shown(c.value) for c in page.caption)


def test_a_result_just_computed_says_so_and_another_visit_says_it_was_read_back(page: AppTest) -> None:
    """Issue 35 §3: the page read its fresh result back from the store and labelled it "served from the run store
    (no recomputation)"."""
    run_to_results(page)
    said = [shown(c.value) for c in page.caption if shown(c.value).startswith("Run ")]
    assert said and "computed now and stored" in said[0], said
    other = AppTest.from_file(PAGE, default_timeout=120)  # another browser session: the same request, stored
    other.session_state["mq_metrics"] = ["bleu", "chrf"]
    other.session_state["mq_resamples"] = 200
    other.run()
    assert not other.exception, other.exception
    said = [shown(c.value) for c in other.caption if shown(c.value).startswith("Run ")]
    assert said and "served from the run store (no recomputation)" in said[0], said
