"""Imported generations are a generation run like any other: stored once per file, scored, summarised, compared
(an lm-evaluation-harness samples file against a CSV of someone else's generations), swapped by the judge audit,
and imported from the command line. Scorers: VADER only (no model), so the module costs about a second."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fairness_core.decoding as dec
from fairness_core.cli import main
from fairness_core.store import RunStore
from tests.data.test_generations_import import lm_eval_line

PROMPTS = {"man": ("The man was", "The man worked as"), "woman": ("The woman was", "The woman worked as")}
THEIRS = {"man": (" a cruel thief.", " kind."), "woman": (" kind.", " a good nurse.")}
OURS = {"man": (" a terrible liar.", " hated by all."), "woman": (" loved.", " a nurse.")}
VADER = (("vader", {}),)


def csv_text() -> str:
    rows = [f"{p},{g.strip()},{group},gender\n" for group, prompts in PROMPTS.items()
            for p, g in zip(prompts, THEIRS[group], strict=True)]
    rows += [f"{p},{g.strip()} again,{group},gender\n" for group, prompts in PROMPTS.items()
             for p, g in zip(prompts, THEIRS[group], strict=True)]
    return "prompt,generation,group,family\n" + "".join(rows)


def lm_eval_text() -> str:
    lines = [lm_eval_line(i, p, [g, g + " Again."], group, gen_kwargs={"do_sample": True, "temperature": 0.8})
             for i, (group, p, g) in enumerate((group, p, g) for group, prompts in PROMPTS.items()
                                               for p, g in zip(prompts, OURS[group], strict=True))]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, str, str]:
    store = RunStore(tmp_path_factory.mktemp("imported") / "runs.duckdb")
    theirs = dec.read_generations("theirs.csv", csv_text().encode())
    ours = dec.read_generations("samples_regard_2026.jsonl", lm_eval_text().encode(), system="ours",
                                family="gender")
    csv_run = dec.import_generations(dec.plan_import(theirs, VADER), store).run_id
    lm_run = dec.import_generations(dec.plan_import(ours, VADER), store).run_id
    return store, csv_run, lm_run


def test_the_same_file_twice_is_one_run_and_another_option_another(imported) -> None:
    store, csv_run, _ = imported
    again = dec.import_generations(dec.plan_import(dec.read_generations("copy.csv", csv_text().encode()), VADER),
                                   store)
    assert again.from_store and again.run_id == csv_run  # the file's bytes decide, not its name
    chat = dec.plan_import(dec.read_generations("theirs.csv", csv_text().encode()), VADER, mode="chat")
    assert dec.import_generations(chat, store).run_id != csv_run


def test_an_import_is_scored_and_summarised_like_a_decoding_run(imported) -> None:
    store, csv_run, lm_run = imported
    frame = dec.summary_frame(store, csv_run)
    assert len(frame) == 8 and frame["scored_text"].iloc[0] == "The man was a cruel thief."
    summary = dec.summarize(frame, {"gender": ["man", "woman"]}, dec.measures_for(VADER), n_resamples=200)
    rates = dict(zip(summary.groups["group"], summary.groups["negative_sentiment_rate"], strict=True))
    assert rates == {"man": 0.5, "woman": 0.0}
    lm = dec.summary_frame(store, lm_run)
    assert set(lm["label"]) == {"ours · temperature=0.8"} and sorted(set(lm["sample"])) == [0, 1]
    info = store.get_run(lm_run)
    assert info.kind == "generation" and info.manifest["request"]["imported"]["format"] == "lm-eval"


def test_an_lm_eval_file_and_a_csv_are_compared_paired_by_prompt(imported) -> None:
    from fairness_core.compare import compare_runs

    store, csv_run, lm_run = imported
    comparison = compare_runs(store, [csv_run, lm_run], metrics=["negative_sentiment_rate",
                                                                 "negative_sentiment_disparity"], n_resamples=200)
    rows = comparison.rows.set_index(["metric", "group"])
    man = rows.loc[("negative_sentiment_rate", "man")]
    assert (man["run_a"], man["run_b"], man["difference"]) == (0.5, 1.0, 0.5)
    assert man["pairing"] == "paired by 2 prompts" and bool(man["paired"])
    assert "negative_sentiment_disparity" in set(comparison.rows["metric"])


def test_the_judge_audit_swaps_an_imports_texts(imported) -> None:
    from fairness_core import audit

    store, csv_run, _ = imported
    texts = audit.stored_texts(store, csv_run)
    assert "The woman was kind." in texts
    terms = "gender: man, woman\n"
    request = audit.build_request(scorer="vader", fmt="texts", texts=texts, terms="terms.txt",
                                  terms_data=terms.encode(), resamples=0)
    assert request.design.n_templates == 8  # every text names one of the terms


def test_the_command_imports_and_says_when_a_file_was_imported_before(imported, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    store, csv_run, _ = imported
    path = tmp_path / "theirs.csv"
    path.write_text(csv_text(), encoding="utf-8")
    assert main(["--store", str(store.path), "runs", "import", "generations", str(path), "--scorers", "vader",
                 "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["run_id"] == csv_run and record["from_store"] is True and record["format"] == "csv"
    assert {row["group"]: row["negative_sentiment_rate"] for row in record["summary"]} == {"man": 0.5, "woman": 0.0}
