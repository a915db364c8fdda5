"""The DATScore page's default journey (issue 43 §6): the default request (the synthetic fr→en corpus, 3 sources,
32 tokens per augmented translation) on the tiny M2M-100 (the shipped backbone is a hub model), then the one setting
changed (16 tokens), then Compare of the two direction runs on the page and from the command line, and the report.
The planner and `check` have no DATScore study. Each step asserts numbers against the page's and the store's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.cli import main
from fairness_core.store import RunStore
from tests.markdown_text import shown
from ui import jobs

ROOT = Path(__file__).resolve().parents[2]


def _score(page: AppTest) -> None:
    page.button(key="ds_run").click().run()
    job = jobs.wait(page.session_state["datscore_job"], timeout_s=300)
    assert job is not None and job.error is None, job and job.error
    page.run()
    assert not page.exception, page.exception


@pytest.fixture(scope="module")
def journey(tiny_m2m100: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    path = tmp_path_factory.mktemp("datscore-journey") / "runs.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_LAB_STORE", str(path))
        page = AppTest.from_file(str(ROOT / "app_pages" / "datscore.py"), default_timeout=300)
        page.session_state["ds_backbone"] = "other"
        page.session_state["ds_model_custom"] = str(tiny_m2m100)
        page.run()
        assert page.slider(key="ds_n_sources").value == 3 and page.number_input(key="ds_max_new").value == 32
        _score(page)
        captions = [shown(c.value) for c in page.caption]
        headline = [(m.label, m.value) for m in page.metric]
        tokens = next(d.value for d in page.dataframe if {"logprob", "entropy"} <= set(d.value.columns))
        segment, direction = page.selectbox(key="ds_segment").value, page.selectbox(key="ds_tokens_dir").value
        page.number_input(key="ds_max_new").set_value(16).run()
        _score(page)
        runs = list(RunStore(path).query("SELECT run_id FROM runs WHERE kind = 'datscore-directions' "
                                         "ORDER BY created_at")["run_id"])
        yield {"path": path, "runs": runs, "captions": captions, "headline": headline, "tokens": tokens,
               "segment": segment, "direction": direction}


def _stored(journey: dict, sql: str, params: list) -> list:
    return RunStore(journey["path"]).query(sql, params).to_numpy().ravel().tolist()


def test_the_default_view_scores_18_segments_and_its_token_table_is_the_stored_score(journey: dict) -> None:
    assert ("18 segments; Trans1 = Src → en, Trans2 = Ref → es (Section 4.1). Work: 144 scored directions and 6 "
            "translations." in journey["captions"])
    labels = [label for label, _ in journey["headline"]]
    assert labels[0].endswith(" per token") and labels[1] == "Rank in this corpus (1 = highest)"
    # Eq. 4: the direction's score is the sum over its tokens of log-probability × entropy, as the table lists them
    tokens, first = journey["tokens"], journey["runs"][0]
    (stored,) = _stored(journey, "SELECT value FROM results WHERE run_id = ? AND item = ? AND grp = ? AND "
                        "metric = 'entropy'", [first, journey["segment"], journey["direction"]])
    assert (tokens["logprob"] * tokens["entropy"]).sum() == pytest.approx(stored, rel=1e-5)
    assert len(journey["runs"]) == 2


def _means(journey: dict, run: str) -> dict[tuple[str, str], float]:
    frame = RunStore(journey["path"]).query("SELECT metric, grp, avg(value) AS mean FROM results WHERE run_id = ? "
                                            "GROUP BY ALL", [run])
    return {(r.metric, r.grp): r.mean for r in frame.itertuples()}


def _compare_page(journey: dict) -> AppTest:
    first, second = journey["runs"]
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.query_params["runs"] = f"{first},{second}"
    app.run()
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    return app


def test_compare_page_lines_up_every_direction_paired_by_segment(journey: dict) -> None:
    app = _compare_page(journey)
    first, second = journey["runs"]
    assert any(shown(m.value).startswith(f"run {second} · ") and " — both: data synthetic fr→en" in shown(m.value)
               for m in app.markdown)
    table = next(d.value for d in app.dataframe if "direction" in d.value.columns and "difference" in d.value.columns)
    assert set(table["pairing"]) == {"paired by 18 segments"}
    a, b = _means(journey, first), _means(journey, second)
    for row in table.itertuples():  # 4 significant digits on the page
        assert row.run_a == pytest.approx(a[(row.metric, row.direction)], rel=1e-3)
        assert row.run_b == pytest.approx(b[(row.metric, row.direction)], rel=1e-3)
    # shorter augmented translations change only the directions that read Trans1 or Trans2
    fixed = table[table["direction"].isin(["Src→Hypo", "Hypo→Src", "Ref→Hypo", "Hypo→Ref"])]
    # (to fp32 rounding: the scoring's thread count follows the machine's load, models/threads.py, so a sum over
    # tokens may come out in another order on the second run)
    scale = fixed[["run_a", "run_b"]].abs().max(axis=1)
    assert len(fixed) and (fixed["difference"].abs() <= 1e-6 * scale).all(), fixed["difference"]


def test_compare_names_the_setting_that_changed(journey: dict) -> None:
    app = _compare_page(journey)
    sentence = next(shown(m.value) for m in app.markdown if " — both: data synthetic" in shown(m.value))
    assert "sha256" not in sentence and "32 → 16" in sentence, sentence


def test_per_example_lists_each_segment_and_direction_once(journey: dict) -> None:
    from fairness_core.compare import per_example

    first, second = journey["runs"]
    examples = per_example(RunStore(journey["path"]), first, second)
    assert not examples.duplicated(["item", "grp", "metric"]).any()


def test_compare_and_report_from_the_command_line(journey: dict, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    first, second = journey["runs"]
    store = str(journey["path"])
    assert main(["compare", first, second, "--store", store, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    a, b = _means(journey, first), _means(journey, second)
    assert len(rows) == len(a) == 32  # 8 directions × 4 token aggregations
    for row in rows:
        assert row["run_a"] == pytest.approx(a[(row["metric"], row["direction"])], abs=1e-9)
        assert row["difference"] == pytest.approx(b[(row["metric"], row["direction"])]
                                                  - a[(row["metric"], row["direction"])], abs=1e-9)
    out = tmp_path / "report.html"
    assert main(["report", first, second, "--store", store, "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "paired by 18 segments" in html and "Hypo→Trans1" in html
