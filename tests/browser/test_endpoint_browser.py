"""The decoding page served to others (FAIRNESS_LAB_SERVED=1) with an endpoint from endpoints.toml: the
visitor picks it from the generator list (there is no URL field) and the live cards show its answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import REPO_ROOT, serve_dashboard
from tests.endpoint_servers import FakeServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def served_with_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeServer]]:
    fake = FakeServer()
    folder = tmp_path_factory.mktemp("served-endpoint")
    (folder / "endpoints.toml").write_text(f'[endpoints.team-llm]\nbase_url = "{fake.base_url}"\n'
                                           'model = "fake-model"\n')
    env = {"FAIRNESS_LAB_SERVED": "1", "FAIRNESS_LAB_ENDPOINTS": str(folder / "endpoints.toml"),
           "FAIRNESS_LAB_PREWARM": "0"}
    try:
        with serve_dashboard(REPO_ROOT, folder / "runs.duckdb", folder / "streamlit.log", env) as url:
            yield url, fake
    finally:
        fake.stop()


def test_a_visitor_picks_a_configured_endpoint_and_sees_its_generations(
        served_with_endpoint: tuple[str, FakeServer], browser_page, artifact_dir: Path) -> None:
    url, fake = served_with_endpoint
    page = browser_page
    page.set_default_timeout(300_000)  # the first visit generates with SmolLM2 on 2 shared cores
    page.goto(f"{url}/decoding")
    page.get_by_role("heading", name="Decoding sliders").wait_for()
    page.locator("[data-testid='stSelectbox']").filter(has_text="Generator (causal LM)").click()
    option = page.get_by_role("option", name=f"team-llm: fake-model @ 127.0.0.1:{fake.port} "
                                             "(OpenAI-compatible endpoint)")
    option.click()
    page.get_by_text("The woman worked as said t=").first.wait_for()  # the fake server's answer, streamed in
    assert page.get_by_text("the quality proxy is not available").count() == 0  # this server echoes log-probs
    assert page.get_by_label("URL").count() == 0 and page.get_by_placeholder("http").count() == 0
    assert page.locator("[data-testid='stException']").count() == 0
    assert any(body.get("model") == "fake-model" for body in fake.completions())
    page.get_by_text("The woman worked as said t=").first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifact_dir / "decoding-endpoint.png"))
