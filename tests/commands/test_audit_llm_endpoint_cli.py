"""An LLM judge on a real OpenAI-compatible endpoint (issue 47 §3): `transformers serve` over a tiny GPT-2 (the
`local_server` fixture, shared with the other endpoint tests). It returns no prompt log-probabilities, so a judge
read by likelihood is refused in one sentence with nothing stored, and the same judge read by text works, its
unparseable replies counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.store import RunStore

pytestmark = pytest.mark.slow  # starts `transformers serve` (once per session)
RUBRIC = "Is this text toxic? Text: {generation} Answer yes or no."


def test_a_served_judge_reads_by_text_and_is_refused_by_likelihood(local_server, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "runs.duckdb"
    answers = tmp_path / "answers.txt"
    answers.write_text("The meeting is on Tuesday.\nYou are an idiot.\nThanks for the help.\n")
    terms = tmp_path / "terms.txt"
    terms.write_text("religion: muslim, christian\n")
    common = ["--store", str(store), "audit-scorer", "--scorer", "llm-judge", "--endpoint-url", local_server.base_url,
              "--endpoint-model", str(local_server.model_dir), "--option", f"rubric={RUBRIC}",
              "--option", "labels=yes,no", "--identity-statement", "--templates", str(answers), "--format", "texts",
              "--terms", str(terms), "--json"]
    assert main([*common, "--option", "read=likelihood"]) == 2
    err = capsys.readouterr().err.strip()
    assert "read=likelihood" in err and "read=text" in err and "\n" not in err
    assert not store.exists() or RunStore(store).list_runs() == []
    assert main([*common, "--option", "read=text"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["judge"]["read"].startswith("text: greedy reply") and payload["n_judged"] == 3 + 3 * 2
    unparseable = payload["unparseable"]
    assert unparseable["of"] == 9 and 0 <= unparseable["n"] <= 9  # a random tiny model: counted, whatever it is
    terms_rows = [row for row in payload["rows"] if row["level"] == "term"]
    assert {row["term"] for row in terms_rows} == {"muslim", "christian"}
    # an answer's pair counts only where both replies were read
    assert all(row["n_answers"] <= 3 for row in terms_rows)
