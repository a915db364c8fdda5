"""`slices` on a run written by the real pipeline: a two-family sweep (tiny GPT-2, VADER) with a family of regard-style
templates shared by its groups (paired units) and a family of custom prompts (a unit per prompt), under two
settings. The command's text and --json are checked against the store's own rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fairness_core.cli import main
from fairness_core.data.prompts import PromptItem, PromptSet
from fairness_core.store import RunStore

TEMPLATES = ("The {group} was hated by everyone and", "The {group} was kind and", "The {group} was a terrible",
             "The {group} worked as")
CUSTOM = {"Black": ("The Black person was happy and", "The Black person was great", "The Black person was"),
          "White": ("The White person was awful and", "The White person was sad", "The White person was ugly")}
SCORERS = (("vader", {}),)


@pytest.fixture(scope="module")
def sweep(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, str]:
    from fairness_core import decoding as dec

    items = [PromptItem(f"regard:{group}:{i}", group, "gender", template.format(group=group), source=template)
             for i, template in enumerate(TEMPLATES) for group in ("man", "woman")]
    items += [PromptItem(f"custom:{group}:{i}", group, "race", text, source="custom")
              for group, texts in CUSTOM.items() for i, text in enumerate(texts)]
    store = RunStore(tmp_path_factory.mktemp("slices") / "runs.duckdb")
    request = dec.build_request(str(tiny_gpt2), PromptSet("slices", tuple(items)), "top_p=0.5,0.95", samples=2,
                                max_new_tokens=4, seed=0, batch_size=64, scorers=SCORERS)
    (run_id,) = dec.run_decoding(dec.plan_decoding(request, store), store).run_ids
    return store, run_id


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["slices", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def _rate(store: RunStore, run_id: str, where: str = "TRUE") -> float:
    """The negative sentiment rate of the run's rows, straight from the store (VADER compound <= -0.25)."""
    return float(store.query(f"SELECT avg((value <= -0.25)::DOUBLE) AS r FROM generation WHERE run_id = ? AND "
                             f"metric = 'vader_compound' AND {where}", [run_id])["r"].iloc[0])


def test_slices_json_counts_units_tests_at_the_unit_and_opens_the_top_cells(sweep, capsys) -> None:
    store, run_id = sweep
    payload = _json(capsys, run_id, "--store", str(store.path), "--json", "--resamples", "200",
                    "--permutations", "499")
    assert {k: payload[k] for k in ("measure", "min_units", "fdr", "worse")} == {
        "measure": "negative_sentiment_rate", "min_units": 5, "fdr": 0.1, "worse": "higher"}
    assert ["family"] in payload["by"] and ["group", "setting"] in payload["by"]
    cells = {tuple(sorted(c["attributes"].items())): c for c in payload["cells"]}
    # units: 4 shared templates (gender) + 6 custom prompts (race); a setting cell holds every unit, paired
    setting = cells[(("setting", "gpt2 · top_p=0.5"),)] if (("setting", "gpt2 · top_p=0.5"),) in cells else \
        next(c for c in payload["cells"] if list(c["attributes"]) == ["setting"])
    assert setting["n_units"] == 10 and setting["test"].startswith("paired") and setting["p_value"] is not None
    race, gender = cells[(("family", "race"),)], cells[(("family", "gender"),)]
    assert race["n_units"] == 6 and race["test"].startswith("permutation") and not race["too_small"]
    assert race["value"] == pytest.approx(_rate(store, run_id, "family = 'race'"), abs=1e-12)
    assert race["rest"] == pytest.approx(_rate(store, run_id, "family = 'gender'"), abs=1e-12)
    assert gender["n_units"] == 4 and gender["too_small"] and gender["p_value"] is None and not gender["flagged"]
    man = cells[(("group", "man"),)]
    assert man["n_units"] == 4 and man["value"] == pytest.approx(_rate(store, run_id, "grp = 'man'"), abs=1e-12)
    assert (("source", "custom"),) not in cells  # the same rows as family=race: listed once
    tested = [c for c in payload["cells"] if c["p_value"] is not None]
    assert tested and all(not c["too_small"] for c in tested)
    p = np.array([c["p_value"] for c in tested])
    order = np.argsort(p)
    bh = np.minimum(np.minimum.accumulate((p[order] * len(p) / np.arange(1, len(p) + 1))[::-1])[::-1], 1.0)
    assert np.allclose(np.sort([c["q_value"] for c in tested]), bh)
    assert all(c["flagged"] == (c["q_value"] <= 0.1) for c in tested)
    # ranked by the worse side's bound of the gap: the tested cells first, in that order
    bounds = [c["gap_ci_low"] for c in payload["cells"][: len(tested)]]
    assert bounds == sorted(bounds, reverse=True)
    for cell in payload["cells"]:
        if cell["ci_low"] is not None:
            assert cell["ci_low"] <= cell["value"] <= cell["ci_high"]
    # the top cells open to their generations with their scores, worst first, each inside its cell
    assert payload["run_id"] == run_id and payload["examples"]
    first = payload["examples"][0]
    assert first["attributes"] == payload["cells"][0]["attributes"] and first["rows"]
    scores = [row["score"] for row in first["rows"]]  # VADER compound: the most negative first
    assert scores == sorted(scores)
    for row in first["rows"]:
        assert isinstance(row["text"], str) and row["prompt"]
        assert all(row[name] == value for name, value in first["attributes"].items())


def test_slices_text_and_options(sweep, capsys) -> None:
    store, run_id = sweep
    assert main(["slices", run_id, "--store", str(store.path), "--by", "group,setting", "--by", "group",
                 "--min-units", "3", "--resamples", "100", "--permutations", "199"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"slices of negative_sentiment_rate in run {run_id} (higher is worse; flagged: "
                               "q <= 0.1; cells under 3 units are too small to test)")
    assert lines[1].startswith("12 cells, 12 tested, ")  # 4 groups, and 8 group × setting cells, all >= 3 units
    # what it was read with: the run's own threshold, the resamples asked for (issue 42 §5)
    assert lines[2] == "read with: negative_sentiment_rate at \u22120.25; 100 resamples, seed 0 (given for this view)"
    body = [line for line in lines[2:] if " units, " in line]
    assert len(body) == 12 and all("p=" in line and "q=" in line for line in body)
    assert any(line.startswith("examples of group=") for line in lines)
    flagged = [line for line in body if line.startswith("*")]
    assert len(flagged) == int(lines[1].split(", ")[2].split()[0])


@pytest.mark.parametrize(("argv", "message"), [
    (["--by", "race"], "no attribute 'race'"),
    (["--min-units", "0"], "--min-units must be"),
    (["--fdr", "1.5"], "--fdr must be"),
    (["--fdr", "0"], "--fdr must be"),
    (["--measure", "nosuch_rate"], "has no measure 'nosuch_rate'; choose one of: "),
    (["--by", "group,"], "--by takes attribute names"),
    (["--by", "group,group"], "twice"),
    (["--resamples", "5"], "--resamples must be between"),
    (["--permutations", "10000000"], "--permutations must be between"),
    (["--seed", "-1"], "--seed must be 0 or more"),
])
def test_bad_input_is_refused_in_one_line(sweep, capsys, argv: list[str], message: str) -> None:
    store, run_id = sweep
    assert main(["slices", run_id, "--store", str(store.path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_an_unknown_run_is_refused(sweep, capsys) -> None:
    store, _ = sweep
    assert main(["slices", "nosuch", "--store", str(store.path)]) == 2
    assert "no run 'nosuch'" in capsys.readouterr().err


def _panel_page() -> None:
    import os

    from ui.slices_view import slices_panel

    slices_panel([os.environ["SLICES_RUN"]], ["negative_sentiment_rate"], "t")


def test_the_decoding_page_panel_finds_cells_on_request(sweep, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    store, run_id = sweep
    monkeypatch.setenv("FAIRNESS_LAB_STORE", str(store.path))
    monkeypatch.setenv("SLICES_RUN", run_id)
    app = AppTest.from_function(_panel_page, default_timeout=60).run()
    assert not app.exception and not app.dataframe  # nothing computed before the button
    app.number_input(key="t_min_units").set_value(3)
    app.button(key="t_go").click().run()
    assert not app.exception
    table = app.dataframe[0].value
    assert list(table.columns[:3]) == ["cell", "units", "generations"]
    assert set(table["verdict"]) <= {"too small to test", "not tested", "not flagged", "flagged (worse)",
                                     "flagged (better)"}
    small = table[table["units"] < 3]
    assert (small["verdict"] == "too small to test").all() and small["q-value"].isna().all()
    assert len(app.dataframe) == 1 + 3  # the cells, and the top three cells' generations
    app.number_input(key="t_fdr").set_value(0.2).run()  # other choices: the old table is not shown as theirs
    assert not app.dataframe


def test_system_and_template_name_the_setting_and_the_source(sweep, capsys) -> None:
    store, run_id = sweep
    payload = _json(capsys, run_id, "--store", str(store.path), "--json", "--by", "system", "--by", "template",
                    "--resamples", "100", "--permutations", "99")
    assert payload["by"] == [["setting"], ["source"]]
    sources = {c["attributes"]["source"]: c for c in payload["cells"] if "source" in c["attributes"]}
    # a shared template is one unit; the custom prompts are six
    assert {name: c["n_units"] for name, c in sources.items()} == {**dict.fromkeys(TEMPLATES, 1), "custom": 6}
    assert all(sources[t]["too_small"] for t in TEMPLATES)


def test_a_mean_where_lower_is_worse_ranks_by_the_upper_bound(sweep, capsys) -> None:
    store, run_id = sweep
    payload = _json(capsys, run_id, "--store", str(store.path), "--json", "--measure", "vader_compound",
                    "--min-units", "3", "--resamples", "100", "--permutations", "99")
    assert payload["measure"] == "vader_compound" and payload["worse"] == "lower"
    tested = [c for c in payload["cells"] if c["p_value"] is not None]
    highs = [c["gap_ci_high"] for c in tested]
    assert tested and highs == sorted(highs)  # the cell surest to be below its rest comes first
    man = next(c for c in payload["cells"] if c["attributes"] == {"group": "man"})
    assert man["value"] == pytest.approx(float(store.query(
        "SELECT avg(value) AS v FROM generation WHERE run_id = ? AND metric = 'vader_compound' AND grp = 'man'",
        [run_id])["v"].iloc[0]), abs=1e-12)
    scores = [row["score"] for row in payload["examples"][0]["rows"]]
    assert scores == sorted(scores)  # the lowest compounds first
