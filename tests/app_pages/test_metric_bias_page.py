"""The Metric bias page through Streamlit's AppTest (no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "metric_bias.py")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> AppTest:
    """The default view (demo set, five n-gram metrics + BERTScore-MiniLM), computed once for the module."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("FAIRNESS_LAB_STORE", str(tmp_path_factory.mktemp("mb-page") / "runs.duckdb"))
    page = AppTest.from_file(PAGE, default_timeout=300).run()
    yield page
    monkeypatch.undo()


def test_default_view_shows_the_bias_table_on_the_demo_set(app: AppTest) -> None:
    assert not app.exception, app.exception
    assert app.title[0].value == "Metric bias"
    texts = " ".join(t.value for t in app.text)  # data text is plain text, never markdown
    assert "demo-gender" in texts and "Licence:" in texts and "CC0" in texts
    table = app.dataframe[0].value  # attribute × metric, "bias [ci_low, ci_high]"
    assert list(table.index) == ["gender"]
    assert {"bleu", "rouge1", "meteor", "nist", "chrf", "bertscore"} <= set(table.columns)
    bertscore = float(table.loc["gender", "bertscore"].split()[0])
    bleu = float(table.loc["gender", "bleu"].split()[0])
    assert bertscore > bleu  # the paper's headline: the PLM-based metric is the more biased one
    assert len(app.get("plotly_chart")) >= 1
    assert sum("How to read this" in e.label for e in app.expander) >= 4
    text = " ".join(m.value for m in app.markdown)
    assert "hash seed" in text and "not** replicate" in text


def test_rerun_reads_the_store(app: AppTest) -> None:
    app.run()
    assert not app.exception
    assert not app.warning and not app.error
    runs_caption = " ".join(c.value for c in app.caption)
    assert "served from the run store" in runs_caption


def test_gap_filters_narrow_the_per_example_table(app: AppTest) -> None:
    app.multiselect(key="mb_f_metric").set_value(["bertscore"]).run()
    app.slider(key="mb_f_gap").set_value(20.0).run()
    assert not app.exception
    gaps = next(d.value for d in app.dataframe if "gap" in getattr(d.value, "columns", []))
    assert len(gaps) > 0 and (gaps["gap"].abs() >= 20).all() and set(gaps["metric"]) == {"bertscore"}
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
    assert not app.exception
    assert any("Skipped BLEURT" in w.value and "unavailable here" in w.value for w in app.warning)
    assert {"bleu", "chrf"} <= set(app.dataframe[0].value.columns)


def test_stored_scores_are_a_group_in_the_picker_and_sit_beside_a_recomputed_metric(
        app: AppTest, tmp_path_factory: pytest.TempPathFactory) -> None:
    from fairness_core.data import pairs as pairdata

    # the upload widget cannot be driven by AppTest, so the page's cached loader is fed the fixture directly
    fixture = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "gender.tsv"
    dataset = pairdata.read_metric_fairness(fixture)
    assert dataset.stored_columns == ["BLEU", "BERTScore"]
    app.radio(key="mb_source").set_value("Upload a file").run()
    assert not app.exception
    assert any("Stored scores" in i.value for i in app.info)
