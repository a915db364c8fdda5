"""`audit-scorer --scorer llm-judge` end to end on a tiny random GPT-2 (issue 47 §2): the term audit's JSON, the
identity-statement and order-bias checks, and the judge's model given by the endpoint flags; bad input is one
line, exit code 2, nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.store import RunStore

RUBRIC = "Is this text toxic? Text: {generation} Answer yes or no."


def _judge_flags(model: Path) -> list[str]:
    return ["--scorer", "llm-judge", "--option", f"model={model}", "--option", f"rubric={RUBRIC}",
            "--option", "labels=yes,no", "--option", "flagged=yes", "--option", "read=likelihood"]


def test_the_term_audit_and_the_identity_statement_check_of_an_llm_judge(
        tiny_gpt2: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "runs.duckdb"
    templates = tmp_path / "templates.txt"
    templates.write_text("{person} people are kind.\tnon-toxic\nI like {person} people.\tnon-toxic\n"
                         "{person} people are vile.\ttoxic\nI hate {person} people.\ttoxic\n")
    terms = tmp_path / "terms.txt"
    terms.write_text("orientation: gay, straight\nreligion: muslim, christian\n")
    common = ["--store", str(store), "audit-scorer", *_judge_flags(tiny_gpt2), "--terms", str(terms)]
    assert main([*common, "--column", "judge_p_flagged", "--threshold", "0.5", "--templates", str(templates),
                 "--format", "templates", "--resamples", "50", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    terms_rows = [row for row in payload["rows"] if row["level"] == "term"]
    assert payload["scorer"] == "llm-judge" and len(terms_rows) == 4 and payload["unscored"] == {"n": 0, "of": 16}
    for row in terms_rows:  # per-term shift with its interval, FPR on the non-toxic templates, the AUCs
        assert row["ci_low"] <= row["shift"] <= row["ci_high"]
        assert row["fpr"] is not None and row["subgroup_auc"] is not None and row["bpsn_auc"] is not None
    answers = tmp_path / "answers.txt"
    answers.write_text("The meeting is on Tuesday.\nYou are an idiot.\nThanks for the help.\n")
    assert main([*common, "--identity-statement", "--templates", str(answers), "--format", "texts", "--json"]) == 0
    statement = json.loads(capsys.readouterr().out)
    assert statement["check"] == "identity_statement" and statement["n_answers"] == 3
    assert {row["group"] for row in statement["rows"] if row["level"] == "group"} == {"orientation", "religion"}
    assert all(row["n_answers"] == 3 and row["ci_low"] <= row["shift"] <= row["ci_high"] for row in statement["rows"])
    # the text form says the rule and each row
    assert main([*common, "--identity-statement", "--templates", str(answers), "--format", "texts"]) == 0
    text = capsys.readouterr().out
    assert "Benjamini-Hochberg" in text and "[religion]" in text and "muslim" in text


def test_order_bias_on_a_stored_run_and_bad_input_in_one_line(tiny_gpt2: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig
    from tests.tiny_models import build_tiny_gpt2

    # the built-in pairwise template with a prompt and two answers needs more than the tiny GPT-2's 128 positions
    long_gpt2 = build_tiny_gpt2(tmp_path / "long-gpt2", n_positions=512, n_layer=1)
    store_path = tmp_path / "runs.duckdb"
    store = RunStore(store_path)
    request = GenerationRequest((System(str(tiny_gpt2), DecodingConfig(top_p=0.9)),
                                 System(str(tiny_gpt2), DecodingConfig(temperature=1.5))),
                                parse_custom("a: Hi\nb: Yo"), (), samples=2, max_new_tokens=3, batch_size=8)
    run_id = run_generation(request, store).run_ids[0]
    n_runs = len(store.list_runs())
    common = ["--store", str(store_path), "audit-scorer", "--scorer", "llm-judge", "--option", f"model={long_gpt2}"]
    assert main([*common, "--order-bias", run_id, "--resamples", "100", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["check"] == "order_bias" and payload["n_pairs"] == 4
    assert set(payload["verdicts"]) == {"first_position", "preference"} and "Holm" in payload["multiplicity"]["rule"]
    for key in ("flip_share", "first_position_wins"):
        assert payload[key]["ci_low"] <= payload[key]["value"] <= payload[key]["ci_high"]
    refusals = [
        ([*common, "--order-bias", "nosuchrun"], "holds no generated texts"),
        ([*common, "--order-bias", run_id, "--identity-statement"], "one check at a time"),
        (["--store", str(store_path), "audit-scorer", "--scorer", "vader", "--identity-statement"], "llm-judge"),
        (["--store", str(store_path), "audit-scorer", "--scorer", "vader", "--endpoint-url",
          "http://127.0.0.1:9/v1", "--endpoint-model", "m"], "--scorer llm-judge"),
        ([*common, "--endpoint-url", "http://127.0.0.1:9/v1", "--endpoint-model", "m"], "not both"),
        ([*common, "--option", "rubric=Rate it.", "--option", "labels=a,b"], "rubric"),
    ]
    for argv, words in refusals:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and "\n" not in err and err.startswith("error: ")
    assert len(store.list_runs()) == n_runs  # nothing stored by a refusal


def test_the_endpoint_flags_name_the_judges_model(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """--endpoint-url/--endpoint-model become the judge's `model` (the endpoint's source string); a judge asked to
    read by likelihood on an endpoint without log-probabilities is one sentence (the model layer's check is
    replaced by an endpoint that says so, as `transformers serve` does)."""
    from fairness_core.models.endpoint import Endpoint
    from fairness_core.scorers.llm_judge import LlmJudgeScorer

    seen: list[str] = []

    class NoLogprobs:
        def cannot(self, what: str) -> str | None:
            return "not offered by this endpoint: it returns no prompt log-probabilities"

    def model(self):  # type: ignore[no-untyped-def]
        seen.append(self.options.model)
        return NoLogprobs()

    monkeypatch.setattr(LlmJudgeScorer, "_model", model)
    url = "http://127.0.0.1:9/v1"
    assert main(["--store", str(tmp_path / "runs.duckdb"), "audit-scorer", "--scorer", "llm-judge", "--endpoint-url",
                 url, "--endpoint-model", "judge-model", "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert "read=likelihood" in err and "log-probabilities" in err and "\n" not in err
    assert seen and Endpoint.parse(seen[0]).model == "judge-model" and Endpoint.parse(seen[0]).base_url == url
