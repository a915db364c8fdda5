"""The CAIRO page through Streamlit's AppTest: shipped/demo bias table, search views, a computed run, paraphrasing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "cairo.py")
OTHER = "(other Hugging Face id or local path)"


def synthetic_table(folder: Path) -> Path:
    """A bias table for the page test (test data: written by the test, not shipped)."""
    rng = np.random.default_rng(0)
    truth = rng.random(8)
    lines = ["system,metric,prompt_set,bias,n_prompts,ci_low,ci_high"]
    sets = {"BOLD gender": ["original", "Mixtral-8x7B-Instruct-v0.1", "Mistral-7B-Instruct-v0.2 #1",
                            "Llama-2-7b-chat-hf #1"],
            "HONEST gender (valid)": ["original", "Mistral-7B-Instruct-v0.2 #1", "Llama-2-7b-chat-hf #2"]}
    for s in range(8):
        for metric, names in sets.items():
            for name in names:
                value = truth[s] + rng.normal(scale=0.3)
                lines.append(f"sys{s},{metric},{name},{value:.5f},12,{value - 0.1:.5f},{value + 0.1:.5f}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "demo_bias_table.csv").write_text("\n".join(lines) + "\n")
    (folder / "demo_run.json").write_text('{"command": "cairo run (test)", "computed": "test", "manifest": {}, '
                                          '"prompt_split": [{"metric_a": "BOLD gender", "metric_b": '
                                          '"HONEST gender (valid)", "size": 1, "r_selection_half": 0.5, '
                                          '"r_heldout_half": 0.1}]}')
    return folder


@pytest.fixture()
def page(tmp_path: Path, isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    import fairness_core.cairo.data as data

    monkeypatch.setattr(data, "DATA_DIR", synthetic_table(tmp_path / "demo"))
    return AppTest.from_file(PAGE, default_timeout=120)


def test_views_on_the_demo_table(page: AppTest) -> None:
    page.run()
    assert not page.exception, page.exception
    text = " ".join(str(m.value) for m in [*page.markdown, *page.caption, *page.warning])
    assert "n = 8 systems" in " ".join(str(m.label) for m in page.metric) + text or "8 systems" in text
    assert any("weak evidence" in str(w.value) for w in page.warning)
    headings = [str(h.value) for h in page.subheader]  # the Fig. 6 chart's title is a heading below the warning
    from ui import cairo_charts, common

    title = cairo_charts.correlation_title("BOLD gender", "HONEST gender (valid)", 8)
    assert common.escape_markdown(title) in headings, headings  # metric names are data: escaped
    frames = [d.value for d in page.dataframe]
    sizes = next(f for f in frames if "CAIRO (best pair)" in f.columns)
    assert list(sizes["size"]) == [1, 2, 3] and (sizes["n_systems"] == 8).all()
    assert sizes["held-out r (LOSO)"].notna().any()
    prompts = [f for f in frames if "paraphrasing model" in f.columns and "prompt" in f.columns]
    assert len(prompts) == 2 and all(len(p) > 0 for p in prompts)
    assert any("r_heldout_half" in f.columns for f in frames)
    overview = next(d for d in page.dataframe if "aligned share" in d.value.columns)
    labels = [c.get("label") for c in json.loads(overview.proto.columns).values()]  # short: two tables side by side
    assert {"dropped", "own", "next", "aligned?"} <= set(labels), labels
    page.select_slider(key="cairo_size").set_value(1).run()
    assert not page.exception, page.exception


def test_combination_size_and_permutations_live_in_the_url(page: AppTest) -> None:
    """Issue 23: a reload or a shared link shows the same view (combination size, permutations)."""
    page.run()
    assert not page.exception, page.exception
    page.select_slider(key="cairo_size").set_value(1).run()
    page.select_slider(key="cairo_perms").set_value(19).run()
    assert not page.exception, page.exception
    assert page.query_params["size"] == "1" and page.query_params["permutations"] == "19"

    shared = AppTest.from_file(PAGE, default_timeout=120)  # a new browser session opens the link
    shared.query_params["size"] = "1"
    shared.query_params["permutations"] = "19"
    shared.run()
    assert not shared.exception, shared.exception
    assert shared.select_slider(key="cairo_size").value == 1
    assert shared.select_slider(key="cairo_perms").value == 19
    assert not shared.warning or all("Session State" not in str(w.value) for w in shared.warning)


@pytest.mark.parametrize("params", [{"size": "77"}, {"size": "abc", "permutations": "5"}])
def test_a_link_with_values_this_table_does_not_have_falls_back(page: AppTest, params: dict) -> None:
    for name, value in params.items():
        page.query_params[name] = value
    page.run()
    assert not page.exception, page.exception
    assert page.select_slider(key="cairo_size").value in (1, 2, 3)  # the best size of this table
    assert page.select_slider(key="cairo_perms").value == 99


def test_no_overlap_warning_and_editable_mapping(page: AppTest) -> None:
    page.session_state["cairo_metrics"] = ["BOLD gender", "HONEST gender (test)", "BOLD religion"]
    page.run()
    assert not page.exception, page.exception
    assert any("no common subgroup" in str(w.value) for w in page.warning)


def test_bad_uploaded_table_is_one_sentence(page: AppTest) -> None:
    page.run()
    page.radio(key="cairo_source").set_value("Compute one here").run()
    page.text_area(key="cairo_systems").set_value("gpt2@greedy; gpt2@greedy; gpt2@top_p=0.5").run()
    assert any("listed twice" in str(e.value) for e in page.error)


def test_compute_here_runs_the_pipeline_in_the_background(page: AppTest, tiny_gpt2: Path) -> None:
    page.run()
    page.radio(key="cairo_source").set_value("Compute one here").run()
    page.text_area(key="cairo_systems").set_value(f"{tiny_gpt2}@top_p=0.9; {tiny_gpt2}@top_p=0.5; {tiny_gpt2}@greedy")
    page.number_input(key="cairo_n_sets").set_value(1)
    page.number_input(key="cairo_per_subgroup").set_value(2)
    page.number_input(key="cairo_max_new").set_value(4).run()
    page.button(key="cairo_compute").click().run()
    assert not page.exception, page.exception
    from ui import jobs

    started = [key for key in list(jobs._REGISTRY) if key.startswith("cairo-run")]
    assert started
    for key in started:
        job = jobs.wait(key, timeout_s=240)
        assert job is not None and job.done and job.error is None, job and job.error
    page.run()
    assert not page.exception, page.exception
    assert any("stored generations" in str(s.value) for s in page.success), [e.value for e in page.error]
    sizes = next(d.value for d in page.dataframe if "CAIRO (best pair)" in d.value.columns)
    assert list(sizes["size"]) == [1, 2] and (sizes["n_systems"] == 3).all()


def test_paraphrasing_job_shows_provenance_and_drop_counts(page: AppTest, tiny_gpt2: Path) -> None:
    page.session_state["cairo_para_model"] = OTHER
    page.session_state["cairo_para_model_custom"] = str(tiny_gpt2)
    page.run()
    page.number_input(key="cairo_para_per").set_value(1)
    page.number_input(key="cairo_para_tokens").set_value(8).run()
    page.button(key="cairo_para_run").click().run()
    assert not page.exception, page.exception
    from ui import jobs

    for key in [k for k in list(jobs._REGISTRY) if k.startswith("cairo-paraphrase")]:
        job = jobs.wait(key, timeout_s=240)
        assert job is not None and job.error is None, job and job.error
    page.run()
    assert not page.exception, page.exception
    assert any("paraphrases kept; dropped" in str(s.value) for s in page.success)
    provenance = next(d.value for d in page.dataframe if "instruction" in d.value.columns)
    assert len(provenance) == 2 * 2  # 2 subgroups x 1 original x K=2
    assert provenance["instruction"].str.startswith("Paraphrase each of the following").all()


def test_the_shipped_run_in_both_combination_variants_with_intervals(isolated_store: Path) -> None:
    page = AppTest.from_file(PAGE, default_timeout=180)
    page.session_state["cairo_perms"] = 0
    page.run()
    assert not page.exception, page.exception
    assert any("collect_results.py" in str(m.value) for m in page.markdown)  # the deviation is stated
    # issue 30: beside the intervals, that they over-cover by design and what that costs on this table
    from tests.markdown_text import shown as read

    assert any("over-covers by design" in read(c.value) and "detected in 4 of 96 rows" in read(c.value)
               for c in page.caption)
    combination = page.radio(key="cairo_combination")
    assert combination.options == ["weighted (ours)", "released code"]

    def shown() -> tuple:
        frames = [d.value for d in page.dataframe]
        sizes = next(f for f in frames if "CAIRO (best pair)" in f.columns)
        intervals = next(f for f in frames if "mean r 95% CI" in f.columns)
        return sizes, intervals

    ours, ours_ci = shown()
    assert list(ours["size"]) == [1, 2, 3, 4, 5, 6] and ours_ci["mean r 95% CI"].str.startswith("[").all()
    combination.set_value("released code").run()
    assert not page.exception, page.exception
    released, released_ci = shown()
    assert (released["combo_a"] == released["combo_b"]).all()  # one combination for both metrics
    assert list(released["n_pairs"])[:3] == [1, 4, 10]  # multisets of the 4 sets both metrics have
    assert released["CAIRO (best pair)"].iloc[1] != pytest.approx(ours["CAIRO (best pair)"].iloc[1])
    assert released_ci["mean r 95% CI"].str.startswith("[").all()


@pytest.mark.parametrize(("content", "phrase"), [
    # one line naming a server file is CSV text like any other: nothing on the server is read (issue 23)
    (b"/etc/passwd", "lacks column(s) system, metric, prompt_set, bias"),
    (str(Path(__file__).resolve().parents[2] / "data" / "cairo" / "demo_bias_table.csv").encode(), "lacks column(s)"),
    (b"", "is empty; it needs a header line"),
    (b"\xff\xfe\x00bad", "not UTF-8 text"),
])
def test_an_upload_is_bytes_never_a_path(page: AppTest, content: bytes, phrase: str) -> None:
    from tests.markdown_text import shown

    page.run()
    page.radio(key="cairo_source").set_value("Upload a bias table").run()
    page.file_uploader(key="cairo_upload").set_value(("table.csv", content, "text/csv")).run()
    assert not page.exception, page.exception
    assert len(page.error) == 1 and phrase in shown(page.error[0].value), [e.value for e in page.error]
    assert not page.get("download_button")  # no server file offered for download


def test_a_served_app_offers_no_lexicon_path(page: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRNESS_LAB_SERVED", "1")
    page.run()
    page.radio(key="cairo_source").set_value("Compute one here").run()
    page.selectbox(key="cairo_scorer").set_value("honest").run()
    assert not page.exception, page.exception
    assert "cairo_lexicon" not in [t.key for t in page.text_input]
    assert any("visitors cannot choose a file" in c.value for c in page.caption)


def test_seeds_that_are_not_whole_numbers_are_one_sentence(page: AppTest) -> None:
    """The page said Python's "invalid literal for int() with base 10: 'a'"; now the CLI's sentence."""
    from tests.markdown_text import shown

    page.run()
    page.radio(key="cairo_source").set_value("Compute one here").run()
    page.text_input(key="cairo_seeds").set_value("0,a").run()
    assert not page.exception, page.exception
    assert [shown(e.value) for e in page.error] == [
        "seeds must be comma-separated whole numbers, e.g. 0,1,2 (got '0,a')"]
