"""The DATScore page through Streamlit's AppTest, with a tiny M2M-100 as the backbone."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

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
