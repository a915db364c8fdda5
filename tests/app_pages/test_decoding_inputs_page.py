"""The decoding page's inputs from the user (issue 34) through AppTest: counterfactual prompts where prompts are
chosen (pairs previewed, counts said, bad word lists one error), the import tab (an upload's bytes, scored and
stored; a bad file one error naming it), and a stored check opened on the Run store page. Live generation is off
(the tests are about the inputs), imports score with VADER only."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.store import RunStore
from tests.markdown_text import shown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "decoding.py")
APP = str(Path(__file__).resolve().parents[2] / "app.py")
OTHER = "(other Hugging Face id or local path)"
CSV = (b"prompt,generation,group\nThe man was,a cruel thief.,man\nThe man was,kind.,man\n"
       b"The woman was,kind.,woman\nThe woman was,a nurse.,woman\n")


@pytest.fixture()
def page(tiny_gpt2: Path, isolated_store: Path) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=90)
    app.session_state["dec_model"] = OTHER
    app.session_state["dec_model_custom"] = str(tiny_gpt2)
    app.session_state["dec_regard"] = ""
    app.session_state["live_auto"] = False
    return app


def _captions(app: AppTest) -> str:
    return " ".join(shown(c.value) for c in app.caption)


def test_counterfactual_prompts_are_previewed_with_their_counts(page: AppTest) -> None:
    page.session_state["dec_source"] = "Counterfactual"
    page.run()
    assert not page.exception, page.exception
    captions = _captions(page)
    assert "6 prompts over 2 groups in 1 family." in captions  # 3 of the 4 default prompts name a gender
    assert "Swap rule: Whole words" in captions and captions.count("name no word of gender") == 1  # said once
    pairs = page.dataframe[0].value
    assert list(pairs.columns) == ["attribute", "prompt", "prompt_group", "group", "variant", "words"]
    assert "She was described as" in set(pairs["variant"])
    page.multiselect(key="cf_attributes").set_value(["gender", "race"]).run()
    assert "A White person earned money by" in set(page.dataframe[0].value["variant"])


@pytest.mark.parametrize("lists, phrase", [
    ("[gender]\nman: he, him\nwoman: she\n", "Word lists: the word-lists box, attribute 'gender': the groups list "
                                             "different numbers of words"),
    ("man: he\n", "line 1: group 'man' comes before any '[attribute]' heading"),
])
def test_bad_word_lists_are_one_error_naming_the_box(page: AppTest, lists: str, phrase: str) -> None:
    page.session_state["dec_source"] = "Counterfactual"
    page.session_state["cf_lists_source"] = "My own"
    page.session_state["cf_lists"] = lists
    page.run()
    assert not page.exception, page.exception
    assert len(page.error) == 1 and phrase in shown(page.error[0].value)


def test_a_bad_prompts_upload_is_one_error_naming_the_file(page: AppTest) -> None:
    page.session_state["dec_source"] = "Counterfactual"
    page.run()
    page.file_uploader(key="cf_upload").set_value(("mine.txt", b"\x00\x01\x02", "text/plain")).run()
    assert len(page.error) == 1 and "mine.txt is a binary file" in shown(page.error[0].value)


def test_an_uploaded_file_is_imported_scored_and_stored_once(page: AppTest, isolated_store: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import fairness_core.decoding as dec

    monkeypatch.setattr(dec, "IMPORT_SCORERS", (("vader", {}),))
    page.run()
    page.file_uploader(key="imp_upload").set_value(("theirs.csv", CSV, "text/csv")).run()
    page.button(key="imp_run").click().run()
    assert not page.exception, page.exception
    assert len(page.success) == 1 and "4 generations of 1 system(s), stored" in shown(page.success[0].value)
    table = page.dataframe[-1].value
    assert dict(zip(table["group"], table["negative_sentiment_rate"], strict=True)) == {"man": 0.5, "woman": 0.0}
    runs = RunStore(isolated_store).list_runs(kind="generation")
    assert len(runs) == 1
    # the tab says the disparity in words, with the CLI's interval (1,000 resamples, not 300: issue 42 §5)
    said = [shown(m.value) for m in page.markdown if "disparity in negative sentiment between custom groups" in
            shown(m.value)]
    assert len(said) == 1 and ": no disparity detectable here (p = " in said[0], said
    from fairness_core.cli import main

    upload = isolated_store.parent / "theirs.csv"
    upload.write_bytes(CSV)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["runs", "import", "generations", str(upload), "--scorers", "vader", "--json"]) == 0
    cli = {row["group"]: row for row in json.loads(out.getvalue())["summary"]}
    for row in table.itertuples(index=False):
        for column in ("ci_low", "ci_high", "disparity", "disparity_interval_low", "disparity_interval_high"):
            theirs = cli[row.group][column]
            assert (theirs is None and math.isnan(getattr(row, column))) or \
                getattr(row, column) == pytest.approx(theirs, abs=1e-6), column
    # the table's disparity interval is the one the sentence quotes (issue 42 §1), not a percentile one beside it
    first = table.iloc[0]
    assert f"90% interval [{first.disparity_interval_low:.3f}, {first.disparity_interval_high:.3f}]" in said[0]
    assert "disparity_ci_low" not in table
    # the run as a pilot: a Plan panel below it (here one prompt per group: it says why it cannot plan), and any
    # later rerun (the panel's form, another widget) keeps the result on screen (issue 43 §5)
    assert any("plan" in e.label.lower() for e in page.expander), [e.label for e in page.expander]
    assert [shown(i.value) for i in page.info if "pilot" in shown(i.value)] == [
        f"run {runs[0].run_id} has 1 prompt(s) of man in custom: a pilot needs two or more prompts per group to say "
        "how prompts vary"]
    page.run()
    assert not page.exception, page.exception
    assert said == [shown(m.value) for m in page.markdown
                    if "disparity in negative sentiment between custom groups" in shown(m.value)]
    assert "4 generations of 1 system(s), stored" in shown(page.success[0].value)
    page.button(key="imp_run").click().run()
    assert "read from the run store" in shown(page.success[0].value) and \
        len(RunStore(isolated_store).list_runs(kind="generation")) == 1


def test_a_bad_generations_file_is_one_error_naming_it_and_nothing_is_stored(page: AppTest,
                                                                             isolated_store: Path) -> None:
    page.run()
    page.file_uploader(key="imp_upload").set_value(("theirs.csv", b"prompt,generation\na,b\n", "text/csv")).run()
    assert not page.exception, page.exception  # said on upload, before any button
    assert len(page.error) == 1 and "theirs.csv has no 'group' column" in shown(page.error[0].value)
    assert not isolated_store.exists() or RunStore(isolated_store).list_runs() == []


def test_a_stored_check_opens_with_its_criteria(isolated_store: Path, tmp_path: Path) -> None:
    from fairness_core import check

    spec = tmp_path / "gate.toml"
    spec.write_text("[audit]\nscorer = 'vader'\nresamples = 100\n[[criteria]]\nname = 'judge FPR'\n"
                    "study = 'audit'\nmeasure = 'fpr'\nvalue_at_most = 0.3\n", encoding="utf-8")
    result = check.run_check(check.load_spec(spec), RunStore(isolated_store))
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["run"] = result.check_id
    app.run()
    app.switch_page("app_pages/runs.py").run()
    assert not app.exception, app.exception
    criteria = next(frame.value for frame in app.dataframe if "verdict" in frame.value.columns)
    assert list(criteria["verdict"]) == ["PASS"] and list(criteria["criterion"]) == ["judge FPR"]
    assert any("The check passed" in shown(m.value) for m in app.markdown)


def test_an_import_with_two_group_columns_shows_marginals_and_intersections(page: AppTest, isolated_store: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 46 §1: "gender, race" as the group columns; the run's groups are the intersections and its Worst cells
    panel lists each attribute alone and every intersection (the empty one with 0 units), the planted one first."""
    from fairness_core import decoding as dec
    from tests.slices.test_intersections import _csv

    monkeypatch.setattr(dec, "IMPORT_SCORERS", (("vader", {}),))
    page.run()
    page.text_input(key="imp_group").set_value("gender, race")
    page.file_uploader(key="imp_upload").set_value(("people.csv", _csv(), "text/csv")).run()
    assert not page.error, [shown(e.value) for e in page.error]
    page.button(key="imp_run").click().run()
    assert not page.exception, page.exception
    groups = set(page.dataframe[-1].value["group"])
    assert groups == {"female × Black", "female × White", "male × Black", "male × White", "male × Asian"}
    page.number_input(key="imp_slices_min_units").set_value(3).run()
    page.button(key="imp_slices_go").click().run()
    assert not page.exception, page.exception
    cells = next(d.value for d in page.dataframe if "verdict" in d.value.columns)
    assert cells["cell"].iloc[0] == "gender=female × race=Black" and cells["verdict"].iloc[0] == "flagged (worse)"
    assert {"gender=female", "race=Asian", "gender=male × race=White"} <= set(cells["cell"])
    empty = cells[cells["cell"] == "gender=female × race=Asian"].iloc[0]
    assert (empty["units"], empty["verdict"]) == (0, "too small to test")
