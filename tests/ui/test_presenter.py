"""Presenter view: a large layout toggle and the current view as a short link that follows every move."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.presenter import share_link


def test_the_share_link_is_the_address_plus_the_views_url_state() -> None:
    assert share_link("http://lab:8501/decoding", {"top_p": "0.5", "seed": "3"}) == \
        "http://lab:8501/decoding?seed=3&top_p=0.5"
    assert share_link("http://lab:8501/decoding?stale=1", {}) == "http://lab:8501/decoding"
    assert share_link(None, {"grid": "top_p=0.5,0.9"}) == "?grid=top_p%3D0.5%2C0.9"  # encoded, still one line


def _app() -> None:
    import streamlit as st

    from ui import common, presenter

    with st.sidebar:
        presenter.controls()
    params = (common.UrlParam("top_p", "top_p", common.number_in(0.05, 1.0), 0.9),)
    common.restore_from_url(params, "_restored")
    st.slider("top-p", 0.05, 1.0, 0.9, 0.05, key="top_p")
    common.sync_url(params)


def test_the_toggle_enlarges_the_layout_and_the_link_follows_a_slider_move() -> None:
    app = AppTest.from_function(_app).run()
    assert not app.exception
    assert not app.sidebar.code and not [m for m in app.markdown if "<style>" in str(m.value)]
    app.sidebar.toggle(key="presenter_view").set_value(True).run()
    assert any("font-size" in str(m.value) for m in app.sidebar.markdown)
    assert app.sidebar.code[0].value == "?"  # defaults are left out of the URL
    app.slider(key="top_p").set_value(0.5).run()
    assert app.sidebar.code[0].value.endswith("?top_p=0.5")  # this run's move, not the previous one
    app.sidebar.toggle(key="presenter_view").set_value(False).run()
    assert not app.sidebar.code
