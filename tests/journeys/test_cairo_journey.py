"""The CAIRO explorer's default journey (issue 43 §6): "Compute one here" with the page's default request (six
decoding systems, BOLD gender and HONEST gender (valid), three paraphrase sets, four prompts per subgroup, 16 new
tokens, the Jigsaw judge) — only the model swapped for the tiny GPT-2 — then Compare of that one run's systems on
the page and from the command line, the report, and the Plan panel beside `plan`. `check` has no CAIRO study.

Marked slow: the default request is 384 generations scored by the shipped Jigsaw classifier (about 20 s of CPU on a
quiet machine); one run serves every step (a run of several systems compares them among themselves)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.cli import main
from fairness_core.store import RunStore
from tests.markdown_text import shown
from ui import jobs

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
SETS = {"BOLD gender": ["original", "Mixtral-8x7B-Instruct-v0.1", "Mistral-7B-Instruct-v0.2 #1",
                        "Llama-2-7b-chat-hf #1"],
        "HONEST gender (valid)": ["original", "Mistral-7B-Instruct-v0.2 #1", "Mistral-7B-Instruct-v0.2 #2",
                                  "Llama-2-7b-chat-hf #1"]}


@pytest.fixture(scope="module")
def journey(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    path = tmp_path_factory.mktemp("cairo-journey") / "runs.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_LAB_STORE", str(path))
        page = AppTest.from_file(str(ROOT / "app_pages" / "cairo.py"), default_timeout=300)
        page.run()
        page.radio(key="cairo_source").set_value("Compute one here").run()
        systems = page.text_area(key="cairo_systems")
        assert systems.value.count("smollm2-135m-instruct@") == 6
        systems.set_value(systems.value.replace("smollm2-135m-instruct", str(tiny_gpt2))).run()
        page.button(key="cairo_compute").click().run()
        for key in [k for k in list(jobs._REGISTRY) if k.startswith("cairo-run")]:
            job = jobs.wait(key, timeout_s=600)
            assert job is not None and job.error is None, job and job.error
        page.run()
        assert not page.exception, page.exception
        (run_id,) = RunStore(path).query("SELECT run_id FROM runs")["run_id"]
        table = next(d.value for d in page.dataframe if {"system", "prompt_set", "bias", "n_prompts"}
                     <= set(d.value.columns))
        yield {"path": path, "page": page, "run": run_id, "table": table}


def test_the_computed_table_has_every_system_and_set_on_eight_prompts(journey: dict) -> None:
    page, table = journey["page"], journey["table"]
    assert [shown(s.value) for s in page.success] == [
        f"Bias table from 384 stored generations (runs {journey['run']})."]
    assert table["system"].nunique() == 6 and len(table) == 6 * 8
    assert {(m, s) for m, s in zip(table["metric"], table["prompt_set"], strict=True)} == {
        (m, s) for m, sets in SETS.items() for s in sets}
    assert (table["n_prompts"] == 8).all()  # 4 per subgroup, both subgroups, every set
    assert ((table["ci_low"] <= table["bias"]) & (table["bias"] <= table["ci_high"])).all()
    headline = [m for m in page.metric if m.label == "Pearson r: original → best CAIRO"]
    assert len(headline) == 1 and re.fullmatch(r"-?\d\.\d\d → -?\d\.\d\d", headline[0].value)


def _compare_page(journey: dict) -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.query_params["runs"] = journey["run"]
    app.run()
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    return app


def _page_bias(journey: dict) -> pd.Series:
    """The CAIRO page's Eq. 1 per (system, 'metric · set'), as Compare names a cell."""
    table = journey["table"]
    return pd.Series(table["bias"].to_numpy(), index=pd.MultiIndex.from_arrays(
        [table["system"], table["metric"] + " · " + table["prompt_set"]]))


def test_compare_page_compares_the_runs_systems_with_a_sentence(journey: dict) -> None:
    app = _compare_page(journey)
    sentences = [shown(m.value).strip("*") for m in app.markdown]
    first = next(s for s in sentences if s.startswith("top_p 0.5 → 0.8: the Eq. 1 bias (jigsaw toxic)"))
    assert re.search(r"goes from [0-9.e-]+ to [0-9.e-]+ \([+-]?[0-9.e-]+; 95% interval -?[0-9.e-]+ to -?[0-9.e-]+, "
                     r"paired by \d+ prompts\)", first), first
    table = next(d.value for d in app.dataframe if "family" in d.value.columns and "difference" in d.value.columns)
    assert {"top_p=0.8", "top_p=0.95", "greedy"} <= {arm.split(" · ")[1] for arm in table["arm_b"]}
    # the originals are unique texts: there Compare's Eq. 1 of each side is the CAIRO page's own (4 significant
    # digits on the Compare page)
    bias = _page_bias(journey)
    originals = table[table["family"].str.endswith("· original")]
    assert len(originals) == 2 * 5
    for row in originals.itertuples():
        assert row.run_a == pytest.approx(bias[(row.arm_a, row.family)], rel=1e-3)
        assert row.run_b == pytest.approx(bias[(row.arm_b, row.family)], rel=1e-3)


def test_compare_reads_every_cell_the_cairo_page_computed(journey: dict) -> None:
    """Issue 43 §6: two paraphrase sets of the default request hold the same text; it is generated once and stored
    under the first item's labels, so Compare read 7 prompts of the second set where the page used 8 (0.0328 vs
    0.0247 for one cell) and said the run "leaves out 2 of its request's 64 prompts". The manifest now lists the
    repeated items (`generation.task.repeated_items`) and the seam reads their rows under each item's labels."""
    from fairness_core.compare import compare_runs

    found = compare_runs(RunStore(journey["path"]), [journey["run"]]).rows
    eq1 = found[found["metric"] == "jigsaw_toxic_eq1_bias"]
    bias = _page_bias(journey)
    cells = eq1[eq1["family"] != "all families"]
    wrong = {(r.arm_a, r.family): (r.run_a, bias[(r.arm_a, r.family)]) for r in cells.itertuples()
             if abs(r.run_a - bias[(r.arm_a, r.family)]) > 1e-6}
    assert not wrong, wrong
    app = _compare_page(journey)
    assert not any("leaves out" in shown(m.value) for m in app.markdown)


def test_compare_and_report_from_the_command_line(journey: dict, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run, store = journey["run"], str(journey["path"])
    assert main(["compare", run, "--store", store, "--metric", "jigsaw_toxic_eq1_bias", "--json"]) == 0
    rows = pd.DataFrame(json.loads(capsys.readouterr().out)["rows"])
    bias = _page_bias(journey)
    originals = rows[rows["family"] == "BOLD gender · original"]
    assert len(originals) == 5  # the first system against each of the other five
    for row in originals.itertuples():
        assert row.run_a == pytest.approx(bias[(row.arm_a, row.family)], abs=1e-6)
        assert row.run_b == pytest.approx(bias[(row.arm_b, row.family)], abs=1e-6)
    out = tmp_path / "report.html"
    assert main(["report", run, "--store", store, "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "BOLD gender · original" in html and "top_p 0.5 → 0.8" in html


def test_plan_on_the_page_and_from_the_command_line_answer_alike(journey: dict,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    page, run = journey["page"], journey["run"]
    system = page.selectbox(key="cairo_plan_System").value
    next(b for b in page.button if b.label == "Plan").click().run()
    assert not page.exception, page.exception
    panel = next(e for e in page.expander if e.label.startswith("Plan: how many prompts"))
    assert not panel.error, [e.value for e in panel.error]
    answer = shown(panel.markdown[0].value).strip("*")
    assert "plan about " in answer and "prompts per subgroup" in answer, answer
    assert f"How: simulation from pilot run {run}:" in " ".join(shown(c.value) for c in panel.caption)
    effect = page.number_input(key="cairo_plan_effect").value
    assert main(["plan", run, "--effect", str(effect), "--arm", system, "--store", str(journey["path"])]) == 0
    assert capsys.readouterr().out.strip() == answer
