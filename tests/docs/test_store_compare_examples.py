"""The examples of docs/store.md and docs/compare.md run as written against a store the pipelines wrote.

docs/store.md's `FROM decoding` example returned no row on a store the decoding page had written (it writes
`generation` runs; issue 26): every documented query must return rows from such a store. The blocks marked
`<!-- sql example -->` run as written through the read-only SQL console (`run_sql`, what a user pastes them into;
an example with a `'RUN'` placeholder answered "0 row(s)" with no hint, issue 35); `<!-- python example -->` runs
with `store`, `RUN_A`, `RUN_B`
(decoding runs at top_p 0.5 and 0.95) and `SWEEP` bound; `<!-- cli example -->` lines run through the CLI.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.compare import run_sql
from tests.compare.pipeline_runs import PipelineRuns, copy_store

DOCS = Path(__file__).resolve().parents[2] / "docs"


def blocks(page: str, marker: str, language: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return re.findall(rf"<!-- {marker} -->\s*\n```{language}\n(.*?)\n```", text, flags=re.DOTALL)


def sql_statements(block: str) -> list[str]:
    lines = [line for line in block.splitlines() if not line.strip().startswith("--")]
    return [statement.strip() for statement in "\n".join(lines).split(";") if statement.strip()]


@pytest.fixture()
def runs(pipeline_runs: PipelineRuns, tmp_path: Path):
    return pipeline_runs, copy_store(pipeline_runs, tmp_path / "runs.duckdb")


def test_the_store_pages_queries_return_rows_from_a_store_the_pipelines_wrote(runs) -> None:
    _, store = runs
    statements = [s for block in blocks("store.md", "sql example", "sql") for s in sql_statements(block)]
    assert len(statements) == 4
    for statement in statements:
        result = run_sql(store, statement)
        assert result.rows and not result.notes, f"no row from docs/store.md's example: {statement}"
    first = run_sql(store, statements[0]).frame()
    assert sorted(set(first["top_p"])) == [0.5, 0.7, 0.95] and first["negative"].between(0, 1).all()  # the sweep


def test_the_console_says_when_a_quoted_run_id_names_no_run(runs) -> None:
    pipeline, store = runs
    result = run_sql(store, "SELECT grp, avg(value) FROM generation WHERE run_id = 'RUN' AND metric = "
                            "'vader_compound' GROUP BY ALL")
    assert not result.rows
    (note,) = result.notes
    assert note.startswith("'RUN' matches no run id in this store, so no row has it (run ids look like '")
    known = run_sql(store, f"SELECT count(*) FROM results r WHERE r.run_id IN ('{pipeline.sweep}', 'nope')")
    assert len(known.notes) == 1 and known.notes[0].startswith("'nope' matches no run id in this store")
    assert not run_sql(store, f"SELECT count(*) FROM results WHERE '{pipeline.sweep}' = run_id").notes


def test_the_compare_pages_python_example_runs(runs) -> None:
    pipeline, store = runs
    (block,) = blocks("compare.md", "python example", "python")
    namespace = {"store": store, "RUN_A": pipeline.single_05, "RUN_B": pipeline.single_095, "SWEEP": pipeline.sweep}
    exec(compile(block, str(DOCS / "compare.md"), "exec"), namespace)  # our own documentation
    assert len(namespace["moved"]) == 5


def test_the_compare_pages_command_lines_run(runs, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline, store = runs
    (block,) = blocks("compare.md", "cli example", "bash")
    names = {"RUN_A": pipeline.single_05, "RUN_B": pipeline.single_095, "SWEEP": pipeline.sweep}
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) == 3
    for line in lines:
        words = shlex.split(line)
        assert words[:3] == ["python", "-m", "fairness_core"], line
        args = [names.get(word, word) for word in words[3:]]
        assert main([*args, "--store", str(store.path)]) == 0, line
        assert capsys.readouterr().out.strip(), line


def test_the_readme_sql_example_returns_rows_from_what_the_pages_write(runs) -> None:
    """Issue 43 §5: the README's `FROM decoding` returned 0 rows for the runs the pages write (`generation`)."""
    _, store = runs
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    (query,) = re.findall(r'fairness_core sql "([^"]+)"', readme)
    result = run_sql(store, query)
    assert len(result.frame()) >= 2  # one row per top_p the pipelines sampled
