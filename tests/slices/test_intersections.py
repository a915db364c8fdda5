"""Groups of several attributes at once (issue 46 §1): a file with a gender and a race column imported as one run,
each row's group the combination and its attributes kept, so `slices` shows the marginals (gender, race) and the
intersections (gender × race) — an empty intersection listed with n = 0, never as a finding — and the planted
worse intersection comes first, opening to its own generations."""

from __future__ import annotations

import json

import pytest

from fairness_core.cli import main
from fairness_core.store import RunStore

#: every cell gets 8 prompts × 2 samples; the female × Black cell's generations are all negative, the others'
#: one in eight; male × Asian exists, female × Asian does not (an empty intersection)
CELLS = {("female", "Black"): 1.0, ("female", "White"): 0.125, ("male", "Black"): 0.125, ("male", "White"): 0.125,
         ("male", "Asian"): 0.125}


def _csv() -> bytes:
    lines = ["prompt,generation,gender,race,sample"]
    for (gender, race), rate in CELLS.items():
        for i in range(8):
            for sample in range(2):
                bad = (i * 2 + sample) < rate * 16
                text = "it was awful and cruel and hateful." if bad else "it was a fine and pleasant day."
                lines.append(f"The {race} {gender} person {i} said,{text},{gender},{race},{sample}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, str]:
    from fairness_core import decoding as dec

    store = RunStore(tmp_path_factory.mktemp("intersections") / "runs.duckdb")
    generations = dec.read_generations("people.csv", _csv(), group_column=["gender", "race"])
    assert {row.group for row in generations.rows} == {"female × Black", "female × White", "male × Black",
                                                       "male × White", "male × Asian"}
    assert {row.family for row in generations.rows} == {"gender × race"}
    assert generations.rows[0].attributes == (("gender", "female"), ("race", "Black"))
    outcome = dec.import_generations(dec.plan_import(generations, scorers=(("vader", {}),)), store)
    return store, outcome.run_id


def test_slices_show_marginals_and_intersections_with_the_empty_cell_said(imported, capsys) -> None:
    store, run_id = imported
    assert main(["slices", run_id, "--store", str(store.path), "--json", "--min-units", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    cells = {tuple(sorted(c["attributes"].items())): c for c in out["cells"]}
    # marginals: each attribute alone
    assert cells[(("gender", "female"),)]["n_units"] == 16 and cells[(("race", "Asian"),)]["n_units"] == 8
    # intersections: every combination of the values seen, the empty one with n = 0 and too small
    empty = cells[(("gender", "female"), ("race", "Asian"))]
    assert (empty["n_units"], empty["too_small"], empty["flagged"], empty["p_value"]) == (0, True, False, None)
    planted = cells[(("gender", "female"), ("race", "Black"))]
    assert planted["value"] == pytest.approx(1.0) and planted["flagged"] and planted["q_value"] <= out["fdr"]
    # the group (the joined name) is not listed a second time beside its intersection
    assert not any("group" in c["attributes"] for c in out["cells"])
    # ranked by the gap's lower bound: the planted intersection first, opening to its own generations
    assert out["cells"][0]["attributes"] == {"gender": "female", "race": "Black"}
    (first, *_) = out["examples"]
    assert first["attributes"] == {"gender": "female", "race": "Black"} and first["rows"]
    assert all("Black female person" in row["prompt"] for row in first["rows"])


def test_by_names_the_run_s_own_attributes_and_refuses_others(imported, capsys) -> None:
    store, run_id = imported
    assert main(["slices", run_id, "--store", str(store.path), "--json", "--by", "race"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {c["attributes"]["race"] for c in out["cells"]} == {"Black", "White", "Asian"}
    assert main(["slices", run_id, "--store", str(store.path), "--by", "age"]) != 0
    assert "this run has no attribute 'age'; choose among: family, group, source, setting, gender, race" in \
        capsys.readouterr().err


@pytest.mark.parametrize("columns, words", [
    (["gender", "gender"], "the group column 'gender' is named twice"),
    (["gender", "age"], "people.csv has no 'age' column"),
    (["gender", "race", "a", "b", "c"], "5 group columns given; at most 4"),
])
def test_bad_attribute_columns_are_refused_in_one_sentence(columns: list[str], words: str) -> None:
    from fairness_core import decoding as dec

    with pytest.raises(dec.GenerationsImportError, match=words):
        dec.read_generations("people.csv", _csv(), group_column=columns)


def test_a_crossed_counterfactual_run_keeps_each_attribute_through_the_pipeline(tiny_gpt2, tmp_path, capsys) -> None:
    """`counterfactual --cross` on gender × race: a variant per combination, each carrying its attributes through
    the JSON a `decoding --prompts` file holds, the real generation pipeline and the store, so `slices` reads the
    marginals (gender, race) and the intersections of the run the decoding study wrote."""
    from fairness_core import decoding as dec
    from fairness_core.data.prompts import parse_custom

    built = dec.build_counterfactual(["The Black woman said that", "The White man was known for", "He was"],
                                     dec.shipped_lists(), ["gender", "race"], crossed=True)
    assert built.counts["variants"] == 12 and "1 prompt(s) do not name every one of gender, race" in built.notes[1]
    again = parse_custom(dec.prompt_set_json(built.prompt_set))  # what `counterfactual --out` writes, read back
    assert [i.attributes for i in again.items] == [i.attributes for i in built.prompt_set.items]
    assert again.items[1].attributes == (("gender", "man"), ("race", "White")) and again.items[1].source == \
        built.prompt_set.items[1].source
    store = RunStore(tmp_path / "runs.duckdb")
    request = dec.build_request(str(tiny_gpt2), again, "top_p=0.9", samples=2, max_new_tokens=4, seed=0,
                                batch_size=64, scorers=(("vader", {}),))
    (run_id,) = dec.run_decoding(dec.plan_decoding(request, store), store).run_ids
    assert main(["slices", run_id, "--store", str(store.path), "--json", "--min-units", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["attributes"] == ["gender", "race"]
    named = {tuple(sorted(c["attributes"])) for c in out["cells"]}
    assert {("gender",), ("race",), ("gender", "race")} <= named
    # a prompt's six variants share its source: one unit holding every combination (paired), two prompts in all
    black_woman = next(c for c in out["cells"] if c["attributes"] == {"gender": "woman", "race": "Black"})
    assert black_woman["n_units"] == 2 and black_woman["n_rows"] == 4
