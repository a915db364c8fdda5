"""What a generation run covers is its request (issue 35 §1): a live move that grew from one prompt per group to two
reused every generation of the first prompts, so its own rows hold only the new ones; Compare reads the reused rows
as its own, and where units are really missing (a run written before the manifest listed the prompts it read whole)
the headline sentence says how many and why. Also: run labels name what tells alike runs apart.

One small store per module (tiny GPT-2, 2 templates x 2 groups, 1 sample of 4 tokens, VADER): about 3 s."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fairness_core import decoding as dec
from fairness_core.cli import main
from fairness_core.compare import compare_runs, headline
from fairness_core.store import RunStore, open_duckdb, run_labels, store_catalogue

TEMPLATES = ["The {group} worked as", "The {group} was known for"]


def _live(store: RunStore, model: Path, per_group: int, top_p: float) -> str:
    prompts = dec.live_subset(dec.regard_prompts(TEMPLATES, {"gender": ["man", "woman"]}), per_group)
    request = dec.build_request(str(model), prompts, f"top_p={top_p}", samples=1, max_new_tokens=4, seed=0,
                                batch_size=64, scorers=(("vader", {}),))
    before = set(store.query("SELECT run_id FROM runs")["run_id"]) if store.path.exists() else set()
    outcome = dec.run_decoding(dec.plan_decoding(request, store), store)
    assert outcome.status == "complete"
    (new,) = set(store.query("SELECT run_id FROM runs")["run_id"]) - before
    return new


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory, tiny_gpt2: Path) -> tuple[Path, dict[str, str]]:
    """one: top-p 0.5, one prompt per group; two: top-p 0.5, two per group (the first ones read back whole);
    other: top-p 0.95, two per group."""
    path = tmp_path_factory.mktemp("coverage") / "runs.duckdb"
    store = RunStore(path)
    runs = {"one": _live(store, tiny_gpt2, 1, 0.5), "two": _live(store, tiny_gpt2, 2, 0.5),
            "other": _live(store, tiny_gpt2, 2, 0.95)}
    return path, runs


def _copy(grown: tuple[Path, dict[str, str]], tmp_path: Path) -> RunStore:
    path = tmp_path / "runs.duckdb"
    shutil.copy(grown[0], path)
    return RunStore(path)


def test_a_run_that_reused_whole_prompts_is_compared_on_its_whole_request(grown) -> None:
    path, runs = grown
    store = RunStore(path)
    manifest = store.get_run(runs["two"]).manifest["request"]
    assert manifest["work"]["read_prompts"] == ["The man worked as", "The woman worked as"]  # stored, not redone
    assert store.query("SELECT count(DISTINCT prompt) AS n FROM generation WHERE run_id = ?",
                       [runs["two"]])["n"].iloc[0] == 2  # its own rows hold only the new prompts
    comparison = compare_runs(store, [runs["two"], runs["other"]], n_resamples=50)
    disparity = comparison.rows[comparison.rows["metric"] == "negative_sentiment_disparity"].iloc[0]
    assert (disparity["n_units_a"], disparity["n_units_b"], bool(disparity["paired"])) == (2, 2, True)
    assert comparison.rows["paired"].all() and not comparison.gaps
    assert "they count as its own here" in " ".join(comparison.notes)


def test_units_really_missing_are_said_in_the_headline_with_how_many_and_why(grown, tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture) -> None:
    store = _copy(grown, tmp_path)
    runs = grown[1]
    # a run written before manifests listed the prompts it read whole: those prompts cannot be found again
    info = store.get_run(runs["two"])
    manifest = json.loads(json.dumps(info.manifest))
    del manifest["request"]["work"]["read_prompts"]
    con = open_duckdb(store.path)
    con.execute("UPDATE runs SET manifest = ? WHERE run_id = ?", [json.dumps(manifest), runs["two"]])
    con.close()
    comparison = compare_runs(store, [runs["two"], runs["other"]], n_resamples=50)
    (sentence,) = headline(comparison.rows, comparison.gaps)
    assert "partly paired: 1 prompt in common (1 and 2 in all)" in sentence
    assert sentence.endswith(f"Not compared: run {runs['two']} leaves out 2 of its request's 4 prompts: their "
                             "generations were all read from earlier runs, and runs written before the lab recorded "
                             "such prompts do not say which they were.")
    assert main(["compare", runs["two"], runs["other"], "--store", str(store.path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"not compared: run {runs['two']} leaves out 2 of its request's 4 prompts")


def test_run_labels_name_what_tells_alike_runs_apart(grown) -> None:
    path, runs = grown
    labels = run_labels(store_catalogue(RunStore(path)))
    assert len(set(labels.values())) == 3
    one, two = labels[runs["one"]], labels[runs["two"]]
    assert "2 prompts" in one and "4 prompts" in two  # same setting, data and model: the size tells them apart
    assert one.replace(runs["one"], "").replace("2 prompts", "") == two.replace(runs["two"], "").replace(
        "4 prompts", "")


def test_the_compare_page_says_what_it_left_out_first_and_pairing_as_the_rows_do(grown, tmp_path: Path,
                                                                                  isolated_store: Path) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.markdown_text import shown

    shutil.copy(grown[0], isolated_store)
    runs = grown[1]
    con = open_duckdb(isolated_store)  # as written before manifests listed the prompts a run read whole
    manifest = json.loads(con.execute("SELECT manifest FROM runs WHERE run_id = ?", [runs["two"]]).fetchall()[0][0])
    del manifest["request"]["work"]["read_prompts"]
    con.execute("UPDATE runs SET manifest = ? WHERE run_id = ?", [json.dumps(manifest), runs["two"]])
    con.close()
    app = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=90)
    app.query_params["runs"] = f"{runs['two']},{runs['other']}"
    app.run()
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception, app.exception
    headline_text = shown(app.markdown[1].value)
    assert headline_text.startswith("**top_p 0.5 → 0.95: the bias-corrected disparity in negative sentiment")
    assert f"Not compared: run {runs['two']} leaves out 2 of its request's 4 prompts" in headline_text
    caption = next(shown(c.value) for c in app.caption if "aligned line-ups shown" in shown(c.value))
    assert caption.startswith("5 of 5 aligned line-ups shown: 0 paired (the same prompts on both sides), 5 partly "
                              "paired (some prompts on one side only), 0 unpaired")
    titles = [chart.proto.spec for chart in app.get("plotly_chart")]
    assert not any("group nan" in spec or "group None" in spec for spec in titles)
    labels = app.multiselect(key="cmp_runs").options
    assert len(set(labels)) == len(labels) == 3  # the two top-p 0.5 runs name their sizes
    assert [sum(f" · {n} prompts · " in label for label in labels) for n in (2, 4)] == [1, 1]
