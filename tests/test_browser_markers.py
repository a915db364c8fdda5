"""Every real-browser test module says so (`pytestmark` with `browser` and `slow`), so `make test-fast` — the
contributors' loop, set up without Chromium — never collects one. Three modules had no marker and ran in it."""

from __future__ import annotations

import ast
from pathlib import Path

BROWSER_TESTS = Path(__file__).with_name("browser")


def module_marks(path: Path) -> set[str]:
    """The `pytest.mark.NAME` names in a module's top-level `pytestmark` assignment."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            return {sub.attr for sub in ast.walk(node.value) if isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Attribute) and sub.value.attr == "mark"}
    return set()


def test_every_browser_test_module_is_marked_browser_and_slow() -> None:
    modules = sorted(BROWSER_TESTS.glob("test_*.py"))
    assert len(modules) >= 15
    unmarked = [path.name for path in modules if not {"browser", "slow"} <= module_marks(path)]
    assert unmarked == []


def test_the_mark_reader_sees_a_missing_marker(tmp_path: Path) -> None:
    marked, bare = tmp_path / "test_a.py", tmp_path / "test_b.py"
    marked.write_text("import pytest\npytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(9)]\n")
    bare.write_text("import pytest\n\ndef test_x():\n    pass\n")
    assert module_marks(marked) == {"browser", "slow", "timeout"} and module_marks(bare) == set()
