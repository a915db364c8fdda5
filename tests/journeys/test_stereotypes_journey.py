"""The Stereotype benchmarks page's default journey (issue 43 §6): the default run (CrowS-Pairs, a seeded sample of
100 pairs, 1000 resamples) on a tiny GPT-2 with room for the longest pair (the shipped model takes minutes here),
then the one setting changed (50 pairs), then Compare of the two runs on the page and from the command line, and the
report. The planner and `check` have no stereotype study. Each step asserts the page's sentence and numbers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.cli import main
from fairness_core.store import RunStore
from tests.markdown_text import shown
from ui import jobs

ROOT = Path(__file__).resolve().parents[2]
HEADLINE = re.compile(r"\*\*pct_stereotype ([0-9.]+)% \(95% interval ([0-9.]+)–([0-9.]+)\) over (\d+) pairs; "
                      r"likelihood_diff (-?[0-9.]+)\*\*")


def _score(page: AppTest) -> dict:
    page.button(key="st_run").click().run()
    job = jobs.wait(page.session_state["stereotypes_job"], timeout_s=300)
    assert job is not None and job.error is None, job and job.error
    page.run()
    assert not page.exception, page.exception
    headline = next(m for m in (HEADLINE.fullmatch(shown(md.value)) for md in page.markdown) if m)
    return {"pct": float(headline.group(1)), "n": int(headline.group(4)), "info": shown(page.info[0].value),
            "table": page.dataframe[0].value.set_index("bias_type")}


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    from tests.tiny_models import build_tiny_gpt2

    model = build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2-long"), n_positions=1024)
    path = tmp_path_factory.mktemp("stereotypes-journey") / "runs.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_LAB_STORE", str(path))
        page = AppTest.from_file(str(ROOT / "app_pages" / "stereotypes.py"), default_timeout=300)
        page.run()
        assert page.number_input(key="st_limit_crows-pairs").value == 100
        page.selectbox(key="st_model").set_value("(other Hugging Face id or local path)").run()
        page.text_input(key="st_model_custom").set_value(str(model)).run()
        first = _score(page)
        page.number_input(key="st_limit_crows-pairs").set_value(50).run()
        second = _score(page)
        runs = list(RunStore(path).query("SELECT run_id FROM runs ORDER BY created_at")["run_id"])
        yield {"path": path, "runs": runs, "results": (first, second)}


def test_the_default_run_says_whether_the_model_prefers_the_stereotype(journey: dict) -> None:
    first, second = journey["results"]
    assert (first["n"], second["n"]) == (100, 50)
    for result in (first, second):
        table = result["table"]
        assert table.at["overall", "n"] == result["n"] and table.at["overall", "pct_stereotype"] == pytest.approx(
            result["pct"], abs=0.05)
        more = round(result["pct"] * result["n"] / 100)
        assert re.fullmatch(rf"(No preference detectable|.*): sent_more was more likely in {more} of {result['n']} "
                            rf"untied pairs \(exact sign test p = {table.at['overall', 'p_value']:.3g}\)\.",
                            result["info"]), result["info"]
    assert len(journey["runs"]) == 2


def test_compare_says_how_far_the_two_samples_are_paired_and_its_rows_agree(journey: dict) -> None:
    """Issue 43 §4: the pairing sentence and the rows must agree. Two seeded samples of 100 and 50 pairs share few
    pairs; the caption, the line-up's pairing and the per-example rows must all say the same number."""
    first, second = journey["runs"]
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.query_params["runs"] = f"{first},{second}"
    app.run()
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    assert any(shown(m.value).startswith(f"run {second} · ") and "size 100 items → 50 items" in shown(m.value)
               for m in app.markdown)
    table = next(d.value for d in app.dataframe if "pairing" in d.value.columns)
    assert set(table["metric"]) == {"pct_stereotype", "likelihood_diff"}  # the page's two measures, one line-up each
    (pairing,) = set(table["pairing"])
    shared = int(re.fullmatch(r"partly paired: (\d+) items in common \(100 and 50 in all\)", pairing).group(1))
    assert "2 partly paired (some items on one side only)" in " ".join(shown(c.value) for c in app.caption)
    examples = next(d.value for d in app.dataframe if "value_a" in d.value.columns)
    assert examples["item"].nunique() == shared  # both sentences of each pair in common


def test_compare_compares_the_measure_the_page_shows(journey: dict, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = journey["runs"]
    assert main(["compare", first, second, "--store", str(journey["path"]), "--json"]) == 0
    rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    a, b = journey["results"]
    assert rows["pct_stereotype"]["run_a"] == pytest.approx(a["pct"], abs=0.05)
    assert rows["pct_stereotype"]["run_b"] == pytest.approx(b["pct"], abs=0.05)
    for row, result in ((rows["likelihood_diff"]["run_a"], a), (rows["likelihood_diff"]["run_b"], b)):
        assert row == pytest.approx(result["table"].at["overall", "likelihood_diff"], abs=1e-3)
    assert rows["pct_stereotype"]["unit"] == "item" and rows["pct_stereotype"]["n_shared"] >= 1


def test_compare_and_report_from_the_command_line(journey: dict, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    first, second = journey["runs"]
    store = str(journey["path"])
    assert main(["compare", first, second, "--store", store]) == 0
    out = capsys.readouterr().out
    assert re.search(r"partly paired: \d+ items in common \(100 and 50 in all\)", out), out
    report = tmp_path / "report.html"
    assert main(["report", first, second, "--store", store, "--out", str(report)]) == 0
    html = report.read_text(encoding="utf-8")
    assert "crows-pairs (sample of 100)" in html and "crows-pairs (sample of 50)" in html
