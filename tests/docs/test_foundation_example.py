"""docs/FOUNDATION.md's example of adding a metric and a scorer runs as written, so the page cannot rot.

The code blocks marked `<!-- example -->` are extracted in order and executed in one namespace (they register
a toy metric and a toy scorer and score a few strings, asserting the values they show). The registries are
restored afterwards, so the toys never leak into other tests. The registered scorer is then used in a real
generate-then-score request with the tiny GPT-2, as the page says it can be.

The block marked `<!-- page example -->` ("Adding a page") is a whole page script: it runs in Streamlit's AppTest
and must show the paper's values, and the layering test's door rule is applied to it (and to a copy that
reaches past the study's face, which must be reported).
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from fairness_core.metrics import METRICS
from fairness_core.scorers import SCORERS

FOUNDATION = Path(__file__).resolve().parents[2] / "docs" / "FOUNDATION.md"
MARKER = "<!-- example -->"
MODULE = "foundation_example"
BLOCK = re.compile(re.escape(MARKER) + r"\s*\n```python\n(.*?)\n```", re.DOTALL)


def example_blocks(text: str) -> list[str]:
    """The python code blocks right after an `<!-- example -->` line, in document order."""
    return BLOCK.findall(text)


@contextmanager
def run_examples(text: str) -> Iterator[dict]:
    """Execute the example blocks of `text` as one module (as an author's file would be); yield its namespace.

    The module and the registries are put back as they were on the way out.
    """
    metrics, scorers = dict(METRICS), dict(SCORERS)
    module = types.ModuleType(MODULE)
    sys.modules[MODULE] = module  # dataclasses look their class's module up
    try:
        for block in example_blocks(text):
            exec(compile(block, str(FOUNDATION), "exec"), module.__dict__)  # our own documentation
        yield module.__dict__
    finally:
        sys.modules.pop(MODULE, None)
        METRICS.clear()
        METRICS.update(metrics)
        SCORERS.clear()
        SCORERS.update(scorers)


@pytest.fixture()
def registered() -> Iterator[dict]:
    with run_examples(FOUNDATION.read_text(encoding="utf-8")) as namespace:
        yield namespace


def test_every_marker_is_followed_by_a_python_block() -> None:
    text = FOUNDATION.read_text(encoding="utf-8")
    assert len(example_blocks(text)) == text.count(MARKER) == 3


def test_the_example_registers_a_metric_and_a_scorer_and_scores_strings(registered: dict) -> None:
    from fairness_core.metrics import metric_names
    from fairness_core.scorers import scorer_from_request

    assert "length-ratio" in metric_names()  # what the page's picker and the CLI list
    assert registered["LengthRatio"] is METRICS["length-ratio"]
    assert registered["Shouting"] is SCORERS["shouting"]
    words = registered["metric_from_request"]("length-ratio").score(["a b c"], ["a b c d e f"])
    assert words["score"].tolist() == [0.5]
    assert scorer_from_request("shouting").signature() == {"name": "shouting", "version": "1", "options": {}}


def test_the_registries_are_restored_after_the_example(registered: dict) -> None:
    assert "shouting" in SCORERS


def test_the_toys_are_gone_again() -> None:
    assert "length-ratio" not in METRICS and "shouting" not in SCORERS


def test_a_mistake_in_the_example_would_fail(tmp_path: Path) -> None:
    """The extraction really runs the blocks: a wrong value shown in the page raises."""
    text = FOUNDATION.read_text(encoding="utf-8")
    wrong = text.replace("[13 / 21, 9 / 9]", "[13 / 21, 8 / 9]")
    assert wrong != text
    with pytest.raises(AssertionError), run_examples(wrong):
        pass
    assert "length-ratio" not in METRICS


def test_the_example_scorer_works_in_a_generate_then_score_request(registered: dict, tiny_gpt2: Path,
                                                                  store) -> None:
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig

    prompts = parse_custom("woman: The woman worked as\nman: The man worked as")
    request = GenerationRequest((System(str(tiny_gpt2), DecodingConfig(top_p=0.9)),), prompts,
                                (("shouting", {}), ("vader", {})), samples=2, max_new_tokens=6)
    outcome = run_generation(request, store)
    frame = outcome.generations
    assert len(frame) == 4 and {"shouting_share", "vader_compound"} <= set(frame.columns)
    shouting = registered["Shouting"]()
    expected = shouting.score(frame["continuation"].tolist())["shouting_share"]
    assert np.allclose(frame["shouting_share"].to_numpy(), expected, equal_nan=True)


# -- "Adding a page": the example page runs in Streamlit and goes through the study's face only ----------------
PAGE_MARKER = "<!-- page example -->"
PAGE_BLOCK = re.compile(re.escape(PAGE_MARKER) + r"\s*\n```python\n(.*?)\n```", re.DOTALL)
PAPER_VBCM = {"Spain": 0.9922, "USA": 0.9944, "France": 0.9978}  # App. A.2.2, exact arithmetic


def page_example(text: str | None = None) -> str:
    (block,) = PAGE_BLOCK.findall(FOUNDATION.read_text(encoding="utf-8") if text is None else text)
    return block


def test_the_page_example_runs_in_streamlit_and_shows_the_papers_values(tmp_path: Path) -> None:
    from streamlit.testing.v1 import AppTest

    script = tmp_path / "vbcm_page.py"
    script.write_text(page_example(), encoding="utf-8")
    app = AppTest.from_file(str(script), default_timeout=60).run()
    assert not app.exception
    table = app.dataframe[0].value
    assert dict(zip(table["group"], table["VBCM"].round(4), strict=True)) == PAPER_VBCM
    assert table["CI low"].isna().all()  # one template: nothing to resample
    app.number_input(key="vbcm_resamples").set_value(200).run()
    assert not app.exception and app.dataframe[0].value["VBCM"].round(4).tolist() == list(PAPER_VBCM.values())


def _tree_with(root: Path, page: str) -> None:
    """A tree with the real adaptation face (so its exported names are known) and the page as app_pages/vbcm.py."""
    face = Path(__file__).resolve().parents[2] / "fairness_core" / "adaptation" / "__init__.py"
    for relative, text in {"fairness_core/__init__.py": "", "fairness_core/adaptation/__init__.py": face.read_text(),
                           "fairness_core/adaptation/vbcm.py": "", "ui/__init__.py": "", "ui/common.py": "",
                           "app_pages/vbcm.py": page}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")


def test_the_page_example_imports_nothing_past_the_studys_face(tmp_path: Path) -> None:
    from tests.test_layering import door_problems

    _tree_with(tmp_path / "good", page_example())
    assert door_problems(tmp_path / "good") == []
    reaching_in = page_example().replace("from fairness_core import adaptation  # the study's one public face",
                                         "from fairness_core import adaptation\nfrom fairness_core.adaptation.vbcm "
                                         "import vbcm")
    _tree_with(tmp_path / "bad", reaching_in)
    (problem,) = door_problems(tmp_path / "bad")
    assert "imports fairness_core.adaptation.vbcm" in problem
