"""Bias tables: parsing, weights, odd rows kept or skipped by rule, bad tables in one sentence."""

from __future__ import annotations

import re

import pytest

from fairness_core.cairo.request import BiasTableError, read_bias_table

HEADER = "system,metric,prompt_set,bias\n"


def table_text(systems: int = 3, metrics: tuple[str, ...] = ("A", "B"),
               sets: tuple[str, ...] = ("original", "p1")) -> str:
    lines = [HEADER.strip()]
    for s in range(systems):
        for m in metrics:
            for k, name in enumerate(sets):
                lines.append(f"sys{s},{m},{name},{0.1 * s + 0.01 * k}")
    return "\n".join(lines) + "\n"


def test_a_good_table() -> None:
    table = read_bias_table(table_text())
    assert table.metrics == ["A", "B"] and table.systems == ["sys0", "sys1", "sys2"] and not table.weighted
    sets_a, _, _ = table.pair("A", "B")
    assert sets_a.names == ("original", "p1") and sets_a.values.shape == (2, 3)


@pytest.mark.parametrize(("text", "message"), [
    (table_text(sets=("p0", "p1")), "has no prompt set named 'original'"),
    ("\n".join("sys1,A,p1,high" if line.startswith("sys1,A,p1,") else line for line in table_text().splitlines()),
     "bias 'high' is not a number"),
    (table_text(systems=1), "needs at least 3"),
    (table_text() + "sys0,A,original,0.5\n", "both give the bias of system sys0"),
    ("system,metric,bias\nx,A,0.1\n", "lacks column(s) prompt_set"),
    (table_text(metrics=("A",)), "has one metric"),
])
def test_bad_tables_are_one_sentence(text: str, message: str) -> None:
    with pytest.raises(BiasTableError, match=re.escape(message)) as caught:
        read_bias_table(text, "t.csv")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("t.csv")


def test_nan_bias_is_skipped_and_incomplete_systems_left_out_with_notes() -> None:
    text = "\n".join("sys3,A,p1," if line.startswith("sys3,A,p1,") else line
                     for line in table_text(systems=4).splitlines()) + "\n"
    table = read_bias_table(text)
    assert table.skipped_rows == 1
    assert any("sys3" in note for note in table.notes)
    _, _, systems = table.pair("A", "B")
    assert systems == ["sys0", "sys1", "sys2"]


def test_prompt_counts_must_be_positive_numbers() -> None:
    text = "system,metric,prompt_set,bias,n_prompts\n" + "\n".join(
        f"s{s},{m},{k},0.{s}{len(k)},{'x' if (s, m, k) == (1, 'B', 'p') else 10}"
        for s in range(3) for m in "AB" for k in ("original", "p"))
    with pytest.raises(BiasTableError, match="n_prompts 'x' is not a number"):
        read_bias_table(text)
    assert read_bias_table(text.replace(",x", ",12")).weighted


def test_text_is_never_read_as_a_path(tmp_path) -> None:
    from fairness_core.cairo.request import read_bias_table_file

    real = tmp_path / "t.csv"
    real.write_text(table_text())
    with pytest.raises(BiasTableError, match="lacks column"):
        read_bias_table(str(real))  # one line naming a file is CSV text, not the file
    with pytest.raises(BiasTableError, match="lacks column"):
        read_bias_table(str(real).encode())
    assert read_bias_table_file(real).systems == read_bias_table(table_text()).systems
    with pytest.raises(BiasTableError, match="is a folder"):
        read_bias_table_file(tmp_path)
    with pytest.raises(BiasTableError, match="does not exist"):
        read_bias_table_file(tmp_path / "missing.csv")
    with pytest.raises(BiasTableError, match="is empty"):
        read_bias_table(b"")


def test_an_infinite_prompt_count_is_refused() -> None:
    text = table_text().replace("system,metric,prompt_set,bias", "system,metric,prompt_set,bias,n_prompts")
    lines = text.splitlines()
    lines = [lines[0]] + [line + (",inf" if i == 0 else ",10") for i, line in enumerate(lines[1:])]
    with pytest.raises(BiasTableError, match="n_prompts must be a positive finite number"):
        read_bias_table("\n".join(lines) + "\n")
