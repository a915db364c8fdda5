"""The home page through Streamlit's AppTest (no browser)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_home_page_explains_the_lab_and_lists_offline_models(isolated_store: Path) -> None:
    app = AppTest.from_file(APP, default_timeout=60).run()
    assert not app.exception, app.exception
    assert app.title[0].value == "NLG Fairness Lab"
    registry = app.dataframe[0].value
    status = dict(zip(registry["key"], registry["status"], strict=True))
    assert status["smollm2-135m-instruct"] == "available"
    assert status["all-minilm-l6-v2"] == "available"
    assert status["gpt2"] in ("unavailable", "downloadable")
    sidebar_text = " ".join(str(c.value) for c in app.sidebar.caption)
    assert "CPU" in sidebar_text or "GPU" in sidebar_text


def test_home_page_is_light_on_rerun(isolated_store: Path) -> None:
    """A rerun must not load a model: the home page only reads the registry."""
    from fairness_core.models import cache

    cache.clear()
    app = AppTest.from_file(APP, default_timeout=60).run()
    app.run()
    assert not app.exception
    assert cache.loaded_keys() == []


def test_the_model_table_shows_its_why_column_in_full(isolated_store: Path) -> None:
    """Issue 23: the "why" column was cut off. It is the widest, all columns fit the page, and its rows are tall
    enough for Streamlit to wrap the text."""
    import json

    app = AppTest.from_file(APP, default_timeout=60).run()
    table = app.dataframe[0]
    assert "why" in table.value.columns
    assert table.proto.row_height > 64  # Streamlit wraps cell text only in rows taller than 4rem
    config = json.loads(table.proto.columns)
    widths = {column: config[column]["width"] for column in ("model", "task", "status", "why", "licence")}
    assert widths["why"] == max(widths.values())  # the column people read is the widest
    assert sum(widths.values()) <= 815  # and all five fit the main column at a 1280-px window, so none is cut off
    assert list(table.proto.column_order) == ["model", "task", "status", "why", "licence"]


def test_home_says_where_each_kind_of_user_starts_and_lists_every_page(isolated_store: Path) -> None:
    """Issue 30: one recommended first click per user (analyst, teacher, researcher), and the Run store listed."""
    app = AppTest.from_file(APP, default_timeout=60).run()
    assert not app.exception, app.exception
    assert "Where to start" in [h.value for h in app.subheader]
    roles = [m.value for m in app.markdown if m.value in ("**Analyst**", "**Teacher**", "**Researcher**")]
    assert roles == ["**Analyst**", "**Teacher**", "**Researcher**"]
    links = [link.proto for link in app.get("page_link")]
    by_label = {link.label: link for link in links}
    assert by_label["Decoding sliders"].page.endswith("decoding")
    assert "presenter=1" in by_label["Metric bias, presenter view"].query_string  # the teacher's opens large
    assert by_label["CAIRO explorer"].page.endswith("cairo")
    assert "Run store" in by_label  # listed with the other pages
