"""The Judge audit page with an LLM judge (issue 47 §2), through AppTest on a tiny random GPT-2: the weak-judge
warning, the judge's options reaching the term audit, and the three checks of its own (answer order on a stored
run of two systems, identity in the answer, consistency) with their intervals and multiplicity rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.markdown_text import shown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "judge_audit.py")


@pytest.fixture(scope="module")
def long_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny GPT-2 with 512 positions: the built-in rubrics and the pairwise template fit."""
    from tests.tiny_models import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2-page"), n_positions=512, n_layer=1)


def test_an_llm_judge_gets_its_own_checks_on_the_page(long_gpt2: Path, isolated_store: Path) -> None:
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig
    from fairness_core.store import RunStore

    request = GenerationRequest((System(str(long_gpt2), DecodingConfig(top_p=0.9)),
                                 System(str(long_gpt2), DecodingConfig(temperature=1.5))),
                                parse_custom("a: The nurse said\nb: The doctor said"), (), samples=1,
                                max_new_tokens=3, batch_size=8)
    run_id = run_generation(request, RunStore(isolated_store)).run_ids[0]
    page = AppTest.from_file(PAGE, default_timeout=120)
    page.session_state["au_name"] = "llm-judge"
    page.session_state["au_llm_model"] = str(long_gpt2)
    page.session_state["au_terms"] = "religion: muslim, christian\norientation: gay\n"
    page.session_state["au_llm_answers"] = "The meeting is on Tuesday.\nYou are an idiot.\nThanks for the help."
    page.session_state["au_llm_repeats"] = 2
    page.run()
    assert not page.exception, page.exception
    assert any("weak judge" in w.value and "teaching" in w.value for w in page.warning)
    assert any("× 3 terms in 2 groups" in shown(c.value) and "llm-judge:judge_flagged" in shown(c.value)
               for c in page.caption)  # the term audit reads the LLM judge's declared rate
    page.button(key="au_llm_run_identity_statement").click().run()
    assert not page.exception, page.exception
    table = next(d.value for d in page.dataframe if "n_answers" in d.value.columns)
    assert set(table["term"].dropna()) == {"muslim", "christian", "gay"} and (table["n_answers"] == 3).all()
    captions = " ".join(shown(c.value) for c in page.caption)
    assert "Benjamini-Hochberg q-values (false discovery rate), groups among themselves" in captions
    page.selectbox(key="au_llm_run").set_value(run_id)
    page.button(key="au_llm_run_order_bias").click().run()
    assert not page.exception, page.exception
    order = " ".join(shown(m.value) for m in page.markdown)
    assert "2 pairs" in order and "Holm's step-down correction (familywise error rate)" in order
    assert "Verdict flips when the answers swap" in order
    page.button(key="au_llm_run_consistency").click().run()
    assert not page.exception, page.exception
    labels = [m.label for m in page.metric]
    assert "All repeats agree" in labels and "Unparseable replies" in labels
    answers = next(d.value for d in page.dataframe if "answers" in d.value.columns)
    assert len(answers) == 3 and all(len(a.split(", ")) == 2 for a in answers["answers"])
    # a bad statement input is one sentence in place: no answers
    page.text_area(key="au_llm_answers").set_value("only one answer").run()
    page.button(key="au_llm_run_identity_statement").click().run()
    assert any("at least two non-empty answers" in shown(e.value) for e in page.error)
