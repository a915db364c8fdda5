"""The Compare page through AppTest: runs chosen, lined up with (paired) intervals, examples, a report button."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from fairness_core.store import RunStore
from tests.compare.stored_runs import write_decoding_run, write_metric_bias_run
from tests.markdown_text import shown

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "app_pages/compare.py"


def _compare_page(runs: str | None = None) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=60)
    if runs:
        app.query_params["runs"] = runs
    app.run()
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def test_two_decoding_runs_are_lined_up_with_paired_intervals(isolated_store: Path) -> None:
    store = RunStore(isolated_store)
    a = write_decoding_run(store, "model-a", seed=1)
    b = write_decoding_run(store, "model-b", shift=0.1, seed=1)
    app = _compare_page(runs=f"{a},{b}")
    assert app.multiselect(key="cmp_runs").value == [a, b]
    rows = app.dataframe[0].value
    assert set(rows["metric"]) == {"negative_sentiment", "offensive_prob", "vader_compound"}
    assert rows["paired"].all() and set(rows["unit"]) == {"prompt"}
    caption = shown(app.caption[0].value)  # the page escapes the data it quotes
    assert "paired (by prompt)" in caption and caption.startswith("12 of 12 aligned")
    assert len(app.get("plotly_chart")) == 2
    examples = app.dataframe[1].value
    assert examples["change"].abs().is_monotonic_decreasing and len(examples) == 200
    assert app.get("download_button")[0].proto.label == "Download report"


def test_examples_filter_by_a_field_and_by_text(isolated_store: Path) -> None:
    store = RunStore(isolated_store)
    a = write_decoding_run(store, "model-a", seed=1)
    b = write_decoding_run(store, "model-b", shift=0.1, seed=1)
    app = _compare_page(runs=f"{a},{b}")
    app.selectbox(key="cmp_ex_field").set_value("config.top_p").run()
    app.text_input(key="cmp_ex_value").input("0.9").run()
    examples = app.dataframe[1].value
    assert set(examples["setting"]) == {"T=1.0 p=0.9"} and len(examples) == 120
    app.text_input(key="cmp_ex_search").input("thief").run()
    assert app.dataframe[1].value["text_a"].str.contains("thief").all()
    assert not app.exception


def test_runs_that_share_nothing_get_a_sentence_not_a_chart(isolated_store: Path) -> None:
    store = RunStore(isolated_store)
    a = write_decoding_run(store, "model-a", seed=1)
    b = write_metric_bias_run(store, "bleu", [0.1, 0.5], [0.3, 0.2])
    app = _compare_page(runs=f"{a},{b}")
    assert "group by fields both kinds have" in app.error[0].value.replace("\\", "")
    app.multiselect(key="cmp_by").set_value(["grp"]).run()
    assert app.info[0].value.replace("\\", "").startswith(f"Runs {a} (decoding) and {b} (metric-bias) share no")
    assert len(app.get("plotly_chart")) == 0


def test_one_run_is_not_enough(isolated_store: Path) -> None:
    write_decoding_run(RunStore(isolated_store), "model-a", seed=1)
    app = _compare_page()
    assert app.info[0].value.startswith("Comparing needs at least two stored runs")


def test_the_table_shows_four_significant_digits_and_no_float_noise(isolated_store: Path) -> None:
    store = RunStore(isolated_store)
    a = write_decoding_run(store, "model-a", seed=3, prompts=6)
    b = write_decoding_run(store, "model-b", seed=3, prompts=6)  # the same scores: every difference is 0
    app = _compare_page(runs=f"{a},{b}")
    rows = app.dataframe[0].value
    assert (rows["difference"] == 0.0).all()  # not 1.1e-16
    for value in rows["run_a"]:
        assert float(f"{value:.4g}") == value  # 4 significant digits
    assert app.dataframe[1].value["change"].eq(0.0).all()
