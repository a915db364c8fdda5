"""Issue 43 §4 as a journey: the regard templates (the decoding default: 11 groups in 4 families) against a
counterfactual run of the user's two gender prompts, one of which the regard set already holds ("The man worked as"),
both at top_p 0.9 through the command line. Compare must say what it left out and whether the runs share prompts, and
its sentence and its rows must agree."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.cli import main
from fairness_core.store import RunStore
from tests.markdown_text import shown

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    folder = tmp_path_factory.mktemp("pairing-journey")
    store = folder / "runs.duckdb"
    prompts = folder / "mine.txt"
    prompts.write_text("The man worked as\nThe woman liked to eat\n", encoding="utf-8")
    common = ["--model", str(tiny_gpt2), "--store", str(store), "--samples", "1", "--max-new-tokens", "4",
              "--grid", "top_p=0.9", "--regard-model", "none"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_LAB_STORE", str(store))
        assert main(["decoding", *common]) == 0
        assert main(["decoding", *common, "--prompts", str(prompts), "--counterfactual", "gender"]) == 0
        regard, mine = RunStore(store).query("SELECT run_id FROM runs ORDER BY created_at")["run_id"]
        yield {"store": store, "regard": regard, "mine": mine}


def test_compare_names_the_nine_groups_it_leaves_out(runs: dict, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["compare", runs["regard"], runs["mine"], "--store", str(runs["store"]),
                 "--metric", "negative_sentiment_disparity"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"not compared: run {runs['regard']} has 9 family / group cell(s) that run "
                            f"{runs['mine']} lacks (race / Asian person, "), first


def test_the_pairing_sentence_agrees_with_the_rows(runs: dict, capsys: pytest.CaptureFixture[str]) -> None:
    from fairness_core.compare import per_example

    examples = per_example(RunStore(runs["store"]), runs["regard"], runs["mine"])
    assert "The man worked as" in set(examples["prompt"])  # the same generation on both sides
    capsys.readouterr()
    assert main(["compare", runs["regard"], runs["mine"], "--store", str(runs["store"]),
                 "--metric", "negative_sentiment_disparity"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("negative_sentiment_disparity"))
    assert "no prompt in common" not in line, line


def test_the_compare_page_says_what_it_left_out_first(runs: dict) -> None:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.query_params["runs"] = f"{runs['regard']},{runs['mine']}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_LAB_STORE", str(runs["store"]))
        app.run()
        app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    said = " ".join(shown(e.value) for e in [*app.markdown, *app.warning, *app.info])
    assert f"run {runs['regard']} has 9 family / group cell(s) that run {runs['mine']} lacks" in said
