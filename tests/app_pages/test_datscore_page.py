"""The DATScore page through Streamlit's AppTest, with a tiny M2M-100 as the backbone."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.markdown_text import shown

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "datscore.py")


@pytest.fixture()
def page(tiny_m2m100: Path, isolated_store: Path) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.session_state["ds_backbone"] = "other"
    app.session_state["ds_model_custom"] = str(tiny_m2m100)
    app.session_state["ds_n_sources"] = 2
    app.session_state["ds_max_new"] = 8
    return app


def weights_frame(app: AppTest):
    return next(d.value for d in app.dataframe if "share" in d.value.columns)


def test_score_runs_in_the_background_then_both_views_show(page: AppTest) -> None:
    page.run()
    assert not page.exception, page.exception
    page.button(key="ds_run").click().run()
    assert not page.exception, page.exception
    from ui import jobs

    job = jobs.wait(page.session_state["datscore_job"], timeout_s=240)
    assert job.error is None, job.error
    page.run()
    assert not page.exception, page.exception
    headers = [h.value for h in page.subheader]
    assert "Direction weights (Eq. 3)" in headers and "Correlation between directions" in headers
    assert any(h.startswith("Meta-evaluation: Kendall τ-like (Eq. 5) — synthetic") for h in headers), headers
    # the headline has a scale (issue 30): per token, its rank, and a sentence saying what the sum adds up
    labels = [m.label for m in page.metric]
    # issue 35 §6: it leads with the per-token figure and the rank, not the bare sum ("-1089.671")
    assert labels[0].endswith(" per token") and labels[1] == "Rank in this corpus (1 = highest)", labels
    assert labels[2].endswith(" of this segment (Eq. 2 sum)"), labels
    assert page.metric[2].value.startswith("\u2212")  # a log-probability sum, with a minus sign (issue 43 §5)
    assert any(shown(c.value).startswith("Eq. 2 adds the 8 direction scores") for c in page.caption)
    texts = " ".join(t.value for t in page.text)
    assert "Trans1:" in texts and "Trans2:" in texts and "Hypo:" in texts
    weights = weights_frame(page)
    assert list(weights["direction"]) == ["Src→Hypo", "Hypo→Src", "Ref→Hypo", "Hypo→Ref", "Trans1→Hypo",
                                          "Hypo→Trans1", "Trans2→Hypo", "Hypo→Trans2"]
    # Table 6 (issue 18): one change per row, each with its paired difference from the full DATScore
    table6 = next(d.value for d in page.dataframe if "difference_ci_low" in d.value.columns)
    assert table6["variant"].iloc[0].startswith("full DATScore") and table6["difference"].iloc[0] == 0
    assert table6["changes"].iloc[1:].str.len().gt(0).all()
    assert "Eq. 3 CI low" in weights.columns and "Eq. 3 CI high" in weights.columns
    assert not any("could be noise" in m.value for m in page.markdown)
    # the clipped option (not the default) never has a negative weight
    page.radio(key="ds_avg").set_value("one-vs-rest, negatives clipped to 0").run()
    assert not page.exception, page.exception
    assert (weights_frame(page)["weight"] >= 0).all()
    # re-weighting is instant: served from the store, no job
    page.radio(key="ds_avg").set_value("uniform").run()
    assert not page.exception, page.exception
    assert weights_frame(page)["weight"].round(6).tolist() == [0.125] * 8
    # this session computed it: read back from the store, it is still "computed now", never "served" (issue 23)
    assert any("computed now and stored" in c.value for c in page.caption)
    assert not any("served from the run store" in c.value for c in page.caption)
    later = AppTest.from_file(PAGE, default_timeout=120)  # another visitor, same request: served from the store
    for key in ("ds_backbone", "ds_model_custom", "ds_n_sources", "ds_max_new"):
        later.session_state[key] = page.session_state[key]
    later.run()
    assert not later.exception, later.exception
    assert any("served from the run store" in c.value for c in later.caption)


def test_bad_direction_score_upload_is_one_sentence(page: AppTest) -> None:
    page.session_state["ds_source"] = "Upload direction scores (no model)"
    page.run()
    assert not page.exception, page.exception
    # AppTest cannot drive st.file_uploader; the page's reader is the same function the CLI tests cover.
    assert any("Upload a CSV of direction scores" in i.value for i in page.info)


def test_configured_endpoints_are_backbones_and_one_without_log_probs_says_why(
        tmp_path: Path, isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.models import cache as model_cache
    from fairness_core.models.endpoint import Endpoint
    from tests.endpoint_servers import FakeBehaviour, FakeServer
    from ui import jobs

    able, mute = FakeServer(), FakeServer(FakeBehaviour(echo_logprobs=False))
    try:
        config = tmp_path / "endpoints.toml"
        config.write_text(f'[endpoints.able]\nbase_url = "{able.base_url}"\nmodel = "fake-model"\n'
                          f'[endpoints.mute]\nbase_url = "{mute.base_url}"\nmodel = "fake-model"\n')
        monkeypatch.setenv("FAIRNESS_LAB_ENDPOINTS", str(config))
        monkeypatch.setenv("FAIRNESS_LAB_SERVED", "1")
        model_cache.clear()
        app = AppTest.from_file(PAGE, default_timeout=120)
        app.session_state["ds_n_sources"] = 2
        app.session_state["ds_backbone"] = Endpoint(mute.base_url, "fake-model").source()
        app.run()
        assert not app.exception, app.exception
        picker = app.selectbox(key="ds_backbone")
        assert f"able: fake-model @ 127.0.0.1:{able.port} (OpenAI-compatible endpoint)" in picker.options
        warnings = " ".join(shown(w.value) for w in app.warning)  # the page escapes the data it quotes
        assert "DATScore needs per-token prompt log-probs and the endpoint fake-model @ " \
               f"127.0.0.1:{mute.port} returns none" in warnings
        assert app.button(key="ds_run").disabled

        picker.set_value(Endpoint(able.base_url, "fake-model").source()).run()
        assert not app.exception, app.exception
        assert not app.button(key="ds_run").disabled
        app.button(key="ds_run").click().run()
        job = jobs.wait(app.session_state["datscore_job"], timeout_s=120)
        assert job.error is None, job.error
        app.run()
        assert not app.exception, app.exception
        notes = " ".join(shown(i.value) for i in app.info)
        assert "Entropy weights (Eq. 4) are approximate: a lower bound" in notes
        assert f"fake-model @ 127.0.0.1:{able.port} translates with a chat prompt" in " ".join(
            shown(w.value) for w in app.warning)
        assert len(weights_frame(app)) == 8

        app.selectbox(key="ds_backbone").set_value("other").run()
        app.text_input(key="ds_model_custom").set_value(f"endpoint:{able.base_url}#model=fake-model").run()
        assert any("never typed here" in shown(e.value) for e in app.error)  # no visitor-typed URL
    finally:
        able.stop()
        mute.stop()
        model_cache.clear()
