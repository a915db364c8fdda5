"""Presenter view: a large layout toggle and the current view as a link students can open, presenter view included."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from ui.presenter import share_link, student_address


def test_the_share_link_is_the_address_plus_the_views_url_state() -> None:
    assert share_link("http://lab:8501/decoding", {"top_p": "0.5", "seed": "3"}) == \
        "http://lab:8501/decoding?seed=3&top_p=0.5"
    assert share_link("http://lab:8501/decoding?stale=1", {}) == "http://lab:8501/decoding"
    assert share_link(None, {"grid": "top_p=0.5,0.9"}) == "?grid=top_p%3D0.5%2C0.9"  # encoded, still one line


def test_an_address_students_can_open_is_kept() -> None:
    assert student_address("http://10.0.0.5:8501/decoding") == ("http://10.0.0.5:8501/decoding", None)
    assert student_address("https://lab.school.example/decoding", lan_address="10.0.0.5") == \
        ("https://lab.school.example/decoding", None)


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "0.0.0.0"])
def test_localhost_becomes_this_machines_network_address_when_the_server_listens_on_it(host: str) -> None:
    address, note = student_address(f"http://{host}:8501/decoding", server_address="", lan_address="192.168.1.20")
    assert address == "http://192.168.1.20:8501/decoding"
    assert note is not None and "network address" in note


def test_a_server_bound_to_one_address_is_linked_at_that_address() -> None:
    assert student_address("http://localhost:8501/cairo", server_address="10.1.2.3", lan_address="192.168.1.20")[0] \
        == "http://10.1.2.3:8501/cairo"


def test_a_server_listening_only_on_localhost_says_how_to_open_it_to_the_class() -> None:
    address, note = student_address("http://localhost:8501/decoding", server_address="127.0.0.1",
                                    lan_address="192.168.1.20")
    assert address == "http://localhost:8501/decoding"  # no address students could use: said, not invented
    assert note is not None and "--server.address 0.0.0.0" in note and "FAIRNESS_LAB_PUBLIC_URL" in note
    assert student_address("http://localhost:8501/decoding", lan_address=None)[1] is not None  # no network at all


def test_a_configured_public_url_wins_and_keeps_the_page_path() -> None:
    assert student_address("http://localhost:8501/decoding", public_url="https://lab.example/fairness/") == \
        ("https://lab.example/fairness/decoding", None)
    assert student_address("http://127.0.0.1:8501/cairo", public_url="lab.example:9000") == \
        ("http://lab.example:9000/cairo", None)
    address, note = student_address("http://10.0.0.5:8501/cairo", public_url="ftp://nope")
    assert address == "http://10.0.0.5:8501/cairo" and "is not an http(s) address" in note


def _app() -> None:
    import streamlit as st

    from ui import common, presenter

    with st.sidebar:
        presenter.controls()
    params = (common.UrlParam("top_p", "top_p", common.number_in(0.05, 1.0), 0.9),)
    common.restore_from_url(params, "_restored")
    st.slider("top-p", 0.05, 1.0, 0.9, 0.05, key="top_p")
    common.sync_url(params)


def test_the_toggle_scales_the_layout_and_the_link_follows_a_slider_move() -> None:
    app = AppTest.from_function(_app).run()
    assert not app.exception
    assert not app.sidebar.code and not [m for m in app.markdown if "<style>" in str(m.value)]
    app.sidebar.toggle(key="presenter_view").set_value(True).run()
    assert any("font-size: 135%" in str(m.value) for m in app.sidebar.markdown)
    assert app.sidebar.code[0].value == "?presenter=1"  # defaults are left out; the presenter view goes with it
    assert app.query_params["presenter"] == "1"
    app.slider(key="top_p").set_value(0.5).run()
    assert app.sidebar.code[0].value.endswith("?presenter=1&top_p=0.5")  # this run's move, not the previous one
    app.sidebar.toggle(key="presenter_view").set_value(False).run()
    assert not app.sidebar.code and "presenter" not in app.query_params
    assert app.query_params["top_p"] == "0.5"


def test_a_student_opening_the_link_gets_the_presenter_view_and_the_same_setting() -> None:
    app = AppTest.from_function(_app)
    app.query_params["presenter"] = "1"
    app.query_params["top_p"] = "0.5"
    app.run()
    assert not app.exception
    assert app.sidebar.toggle(key="presenter_view").value is True
    assert app.slider(key="top_p").value == 0.5
    assert any("font-size: 135%" in str(m.value) for m in app.sidebar.markdown)


def test_a_result_table_for_a_projector_carries_each_interval_in_its_estimates_cell() -> None:
    """Issue 35 §5: the decoding table was cut at "offens" on a 1280 x 720 projector; in presenter view each rate
    and its 95% interval share one cell, numbers have two places and headers take the page's short labels."""
    import pandas as pd

    from ui.presenter import compact

    nan = float("nan")
    frame = pd.DataFrame({"group": ["man", "woman"], "n": [12, 12], "negative_sentiment_rate": [0.25, nan],
                          "ci_low": [0.1, nan], "ci_high": [0.4, nan], "offensive_rate": [0.051, 0.0]})
    shown = compact(frame, labels={"negative_sentiment_rate": "negative sentiment", "offensive_rate": "offensive"},
                    intervals={"negative_sentiment_rate": ("ci_low", "ci_high")})
    assert list(shown.columns) == ["group", "n", "negative sentiment", "offensive"]
    assert list(shown["negative sentiment"]) == ["0.25 [0.10, 0.40]", "—"]
    assert list(shown["offensive"]) == ["0.05", "0.00"] and list(shown["n"]) == ["12", "12"]
