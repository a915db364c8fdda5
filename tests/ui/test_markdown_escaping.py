"""Every message a page renders as markdown shows data as text: it goes through `escape_markdown` (prose) or
`inline_code` (identifiers), or is written by the developer (a literal, an UPPER_CASE constant, a number with a
format spec), or is marked `# markdown: developer text` on the call's line (a note or badge the page itself wrote,
with intended markup). A typed template, an uploaded pair id or an error quoting either must never become a live
link or an image (issue 23).

The check reads the source of app.py, app_pages/ and ui/ (AST, not a regex): each call of a markdown-rendering
Streamlit element (`st.error`, `col.caption`, ...) must have a first argument built only from safe parts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([ROOT / "app.py", *(ROOT / "app_pages").glob("*.py"), *(ROOT / "ui").glob("*.py")])
#: Streamlit elements that render their text argument as markdown
MARKDOWN_ELEMENTS = {"error", "warning", "caption", "markdown", "info", "success", "toast", "write", "subheader",
                     "header", "title"}
#: receivers that are not Streamlit (their `.warning` is a log call)
NOT_STREAMLIT = {"logger", "logging", "log", "warnings", "LOGGER"}
#: helpers whose result is safe markdown
SAFE_HELPERS = {"escape_markdown", "inline_code", "interval_text", "safe_markdown", "marked_markdown"}
#: builtins that return numbers (a number renders as itself)
DEVELOPER_TEXT = "# markdown: developer text"
NUMERIC = {"len", "int", "float", "round", "sum", "min", "max", "abs"}


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def is_safe(node: ast.expr) -> bool:
    """True when `node` can only produce text a developer wrote or data already escaped."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(is_safe(part) for part in node.values)
    if isinstance(node, ast.FormattedValue):
        if node.format_spec is not None and node.conversion == -1:  # {n:,} {x:.3f}: a number, or it raises
            return True
        return is_safe(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return is_safe(node.left) and is_safe(node.right)
    if isinstance(node, ast.IfExp):
        return is_safe(node.body) and is_safe(node.orelse)
    if isinstance(node, ast.BoolOp):
        return all(is_safe(value) for value in node.values)
    if isinstance(node, ast.Name):
        return node.id.isupper()  # a module constant the developer wrote
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr.isupper()  # another module's constant (common.FOCUS_RING_CSS)
    if isinstance(node, ast.Call):
        name = _callee(node)
        if name in SAFE_HELPERS or name in NUMERIC:
            return True
        if name == "join" and isinstance(node.func, ast.Attribute) and is_safe(node.func.value) and node.args:
            items = node.args[0]
            if isinstance(items, ast.GeneratorExp | ast.ListComp):
                return is_safe(items.elt)
            return isinstance(items, ast.List | ast.Tuple) and all(is_safe(e) for e in items.elts)
    return False


def unescaped_calls(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in MARKDOWN_ELEMENTS and node.args):
            continue
        receiver = node.func.value
        if isinstance(receiver, ast.Name) and receiver.id in NOT_STREAMLIT:
            continue
        first = node.args[0]
        if node.func.attr == "write" and not isinstance(first, ast.Constant | ast.JoinedStr | ast.BinOp):
            continue  # st.write of a table or chart object: not markdown
        marked = any(DEVELOPER_TEXT in line for line in lines[node.lineno - 1:node.end_lineno])
        if not marked and not is_safe(first):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:110]}")
    return found


def test_every_markdown_message_escapes_the_data_it_quotes() -> None:
    found = [line for path in SOURCES for line in unescaped_calls(path)]
    assert not found, "unescaped data in markdown (wrap it in escape_markdown or inline_code):\n" + "\n".join(found)


@pytest.mark.parametrize(("source", "safe"), [
    ('st.error("fixed text")', True),
    ("st.error(str(error))", False),
    ("st.error(escape_markdown(str(error)))", True),
    ('st.caption(f"{n:,} rows from {common.inline_code(name)}")', True),
    ('st.caption(f"{n} rows")', False),
    ('c1.warning("Note: " + note)', False),
    ('st.info(" · ".join(common.escape_markdown(n) for n in notes))', True),
    ('logger.warning("%s", text)', True),
    ("st.markdown(note)  # markdown: developer text", True),
    ("st.markdown(common.FOCUS_RING_CSS, unsafe_allow_html=True)", True),
    ("st.markdown(row.text)", False),
])
def test_the_checker_tells_safe_from_unsafe(source: str, safe: bool, tmp_path: Path) -> None:
    page = ROOT / "tests" / "ui" / "_probe_page.py"  # must lie under ROOT for relative_to
    page.write_text(source + "\n", encoding="utf-8")
    try:
        assert (unescaped_calls(page) == []) is safe
    finally:
        page.unlink()
