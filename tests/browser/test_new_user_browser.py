"""What a new user meets, in a real browser (issue 23, "Done when": a browser test per item, with screenshots).

Each test opens the page the way a newcomer does, does the one thing the issue names and checks what the page then
shows: one sentence where the input is bad, no traceback, no server file read, no live link from typed text, the
view kept in the link. The screenshots go to test-artifacts/ under names starting with `new-user-`.
Most tests share the session's server; the METEOR one needs a server in a checkout without NLTK's WordNet.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import REPO_ROOT, serve_dashboard
from tests.browser.test_markdown_injection_browser import EVIL, assert_text_only, watch_evil

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1200)]
ERROR = "[data-testid='stAlertContentError']"
WARNING = "[data-testid='stAlertContentWarning']"
#: what a Python failure or a refused server path looks like when it leaks onto a page
LEAKS = ("Traceback", "IsADirectoryError", "FileNotFoundError", "Errno")
#: what the model loader's failed hub connection used to put on the page (issue 23)
CONNECTION_WORDS = re.compile(r"connection|max retries|resolve|urlopen|offline mode is enabled", re.IGNORECASE)


def shown_text(page) -> str:
    """The page's visible text as a reader gets it (escape_markdown's zero-width spaces taken out)."""
    return page.locator("body").inner_text().replace("\u200b", "")


def assert_no_failure_shown(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0
    text = shown_text(page)
    assert not [leak for leak in LEAKS if leak in text], [leak for leak in LEAKS if leak in text]


def one_error(page, phrase: str):
    """The page's single error box, once it says `phrase` (and there is no other error box)."""
    error = page.locator(ERROR).filter(has_text=phrase).first
    error.wait_for()
    assert page.locator(ERROR).count() == 1, page.locator(ERROR).all_inner_texts()
    return error


def snapshot(page, artifact_dir: Path, name: str, focus=None, full_page: bool = False) -> Path:
    """Screenshot `new-user-<name>.png`, with `focus` (a locator) scrolled into view first."""
    if focus is not None:
        focus.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(500)  # charts and grids draw a moment after they are attached
    path = artifact_dir / f"new-user-{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    assert path.stat().st_size > 10_000
    return path


def slider_value(page, label: str) -> str:
    """The value a (select) slider shows above its thumb."""
    slider = page.locator("[data-testid='stSlider']").filter(has_text=label)
    return slider.locator("[data-testid='stSliderThumbValue']").first.inner_text().strip()


def grid_texts(grid, cells: str) -> list[str]:
    """Texts of a data grid's cells or headers from its accessible copy, a table hidden under the canvas."""
    return [text.strip() for text in grid.locator(cells).all_text_contents()]


def open_cairo(page, url: str, query: str = "") -> None:
    page.goto(f"{url}/cairo{query}")
    page.get_by_role("heading", name="CAIRO explorer").wait_for()
    page.get_by_role("heading", name="2 · Bias of each system on each prompt set (Eq. 1)").wait_for()


def upload_bias_table(page, url: str, upload: Path) -> None:
    open_cairo(page, url)
    page.get_by_text("Upload a bias table", exact=True).click()
    page.get_by_text("Choose or compute a bias table to search.").wait_for()  # the upload view is drawn
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(upload))


def pick_typed_model(page, picker_label: str, typed: str) -> None:
    """Choose "(other Hugging Face id or local path)" in a model picker and type `typed` into its box."""
    picker = page.locator("[data-testid='stSelectbox']").filter(has_text=picker_label)
    picker.locator("input").click()
    page.keyboard.type("other Hugging Face")  # the selectbox filters its options as one types
    page.get_by_role("option", name="(other Hugging Face id or local path)").wait_for()
    page.keyboard.press("Enter")
    box = page.get_by_label("Model id or path")
    box.fill(typed)
    box.press("Enter")


# ------------------------------------------------------------------------------ 1. CAIRO upload is bytes
@pytest.mark.parametrize("named", ["shipped-table", "etc-passwd"])
def test_a_cairo_upload_naming_a_server_file_is_read_as_csv_text(streamlit_server: str, browser_page,
                                                                 artifact_dir: Path, tmp_path: Path,
                                                                 named: str) -> None:
    server_file = {"shipped-table": REPO_ROOT / "data" / "cairo" / "demo_bias_table.csv",
                   "etc-passwd": Path("/etc/passwd")}[named]
    upload = tmp_path / "table.csv"
    upload.write_text(str(server_file), encoding="utf-8")  # the whole file: one line, a server path
    page = browser_page
    upload_bias_table(page, streamlit_server, upload)
    error = one_error(page, "lacks column(s)")
    assert error.inner_text().replace("\u200b", "") == (  # the message names the uploaded file (issue 30)
        "the bias table table.csv lacks column(s) system, metric, prompt_set, bias; it needs "
        "system,metric,prompt_set,bias[,n_prompts]")
    snapshot(page, artifact_dir, f"cairo-upload-path-{named}", focus=error)
    text = shown_text(page)
    assert "top_p=0.5,temperature=0.7" not in text  # a system of the shipped table: nothing of it is shown
    assert "root:x:0:0" not in text
    assert page.get_by_role("button", name="Download the bias table (CSV)").count() == 0  # nothing offered
    assert page.get_by_role("heading", name="3 · Combination search").count() == 0  # nothing searched
    assert_no_failure_shown(page)


def test_an_empty_cairo_upload_is_one_sentence(streamlit_server: str, browser_page, artifact_dir: Path,
                                               tmp_path: Path) -> None:
    upload = tmp_path / "empty.csv"
    upload.write_bytes(b"")
    page = browser_page
    upload_bias_table(page, streamlit_server, upload)
    error = one_error(page, "is empty")
    assert error.inner_text() == ("the bias table empty.csv is empty; it needs a header line system,metric,"
                                  "prompt_set,bias[,n_prompts] and one row per system, metric and prompt set")
    snapshot(page, artifact_dir, "cairo-upload-empty", focus=error)
    assert_no_failure_shown(page)


# ------------------------------------------------------------------------------ 2. VBCM calculator
def test_vbcm_scores_of_1e308_and_minus_inf_are_refused_and_counted(streamlit_server: str, browser_page,
                                                                     artifact_dir: Path, tmp_path: Path) -> None:
    upload = tmp_path / "scores.csv"
    upload.write_text("template_id,group,term,score\nt1,A,a1,0.2\nt1,B,b1,1e308\nt2,A,a2,0.3\nt2,B,b2,-inf\n",
                      encoding="utf-8")
    page = browser_page
    page.goto(f"{streamlit_server}/template_adaptation")
    page.get_by_role("heading", name="Template adaptation").wait_for()
    page.get_by_role("tab", name="VBCM of a score file").click()  # the page opens on the study
    calculator = page.get_by_role("tabpanel", name="VBCM of a score file")
    calculator.get_by_text("prints 0.997 for France").wait_for()  # the worked example, before the upload
    calculator.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(upload))
    error = one_error(page, "is not a probability in [0, 1]")
    assert error.inner_text() == ("scores.csv row 2: score '1e308' is not a probability in [0, 1] (2 such row(s)); "
                                  "VBCM compares positive-class probabilities")
    snapshot(page, artifact_dir, "vbcm-infinite-scores", focus=error)
    text = shown_text(page)
    assert "-5e+307" not in text and "-inf" not in text and "template(s)" not in text  # no VBCM drawn from them
    assert calculator.locator("[data-testid='stDataFrame']").count() == 0
    assert_no_failure_shown(page)


# ------------------------------------------------------------------------------ 3. a typed model that is not here
def test_a_typed_model_that_is_not_on_this_machine_is_one_sentence(streamlit_server: str, browser_page,
                                                                   artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(120_000)
    page.goto(f"{streamlit_server}/decoding")
    page.get_by_role("heading", name="Decoding sliders").wait_for()
    pick_typed_model(page, "Generator (causal LM)", "zzz/not-a-model-123")
    error = one_error(page, "is not on this machine")
    assert error.inner_text() == (
        "zzz/not-a-model-123 is not on this machine (not in the local Hugging Face cache), and this machine cannot "
        "reach the hub to download it: pick a model from the list or give a local model folder.")
    page.get_by_text("Choose a generator, or type a Hugging Face id").wait_for()  # nothing loads
    snapshot(page, artifact_dir, "typed-model-not-here", focus=error)
    assert not CONNECTION_WORDS.search(shown_text(page)), CONNECTION_WORDS.search(shown_text(page))
    assert_no_failure_shown(page)


# ------------------------------------------------------------------------------ 4. home: the "why" column
def test_the_model_tables_why_column_is_whole(streamlit_server: str, browser_page, artifact_dir: Path) -> None:
    from ui.common import registry_table

    longest = max((row["why"] for row in registry_table()), key=len)
    page = browser_page
    page.goto(streamlit_server)
    page.get_by_role("heading", name="NLG Fairness Lab").wait_for()
    page.get_by_text("Models on this machine").wait_for()
    grid = page.locator("[data-testid='stDataFrame']").filter(
        has=page.locator("th[role='columnheader']", has_text="why (status reason)"))
    grid.locator("td[role='gridcell']").first.wait_for(state="attached")
    # the grid's accessible copy (a visually hidden table under the canvas) holds each cell's whole text
    cells = grid_texts(grid, "td[role='gridcell']")
    assert longest in cells, (longest, cells)
    assert not [text for text in cells if text.endswith(("…", "..."))]
    # the grid paints only the rows in the viewport: one shot of its top (header, offline models), one of its middle
    snapshot(page, artifact_dir, "home-model-table-top", focus=page.get_by_text("Models on this machine"))
    snapshot(page, artifact_dir, "home-model-table", focus=grid)


# ------------------------------------------------------------------------------ 5. the view lives in the link
def test_the_cairo_size_and_permutations_survive_a_reload(streamlit_server: str, browser_page,
                                                          artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(120_000)
    open_cairo(page, streamlit_server, "?permutations=19")
    size_label, permutations_label = "Combination size", "Permutations for the search-aware p-value"
    page.get_by_role("heading", name="Systems before and after CAIRO (Figs. 8, 10–11)").wait_for()
    assert slider_value(page, permutations_label) == "19"
    best = slider_value(page, size_label)
    assert best != "1"  # the page opens on the best size, which is a combination (2 or more sets)
    size_slider = page.locator("[data-testid='stSlider']").filter(has_text=size_label).get_by_role("slider")
    size_slider.focus()
    for _ in range(int(best) - 1):
        page.keyboard.press("ArrowLeft")
        page.wait_for_timeout(300)
    page.wait_for_url(re.compile(r"[?&]size=1(&|$)"))
    page.reload()
    page.get_by_role("heading", name="Systems before and after CAIRO (Figs. 8, 10–11)").wait_for()
    assert slider_value(page, size_label) == "1" and slider_value(page, permutations_label) == "19"
    assert re.search(r"[?&]size=1(&|$)", page.url) and "permutations=19" in page.url
    snapshot(page, artifact_dir, "cairo-size-after-reload",
             focus=page.locator("[data-testid='stSlider']").filter(has_text=size_label))
    assert_no_failure_shown(page)


def test_a_link_to_an_unknown_adaptation_run_shows_the_form(streamlit_server: str, browser_page,
                                                            artifact_dir: Path) -> None:
    page = browser_page
    page.goto(f"{streamlit_server}/template_adaptation?run=adaptation-0123456789abcdef&show=nonsense")
    page.get_by_role("heading", name="Template adaptation").wait_for()
    page.get_by_role("tab", name="Adapt to a domain").click()
    run_button = page.get_by_role("button", name="Run the comparison")  # the default: no chat model
    run_button.wait_for()
    page.get_by_text("does the templates' bias vector match the domain's?").wait_for()  # the form's plan
    assert run_button.is_enabled()
    page.wait_for_url(lambda url: "run=" not in url)  # the dead run is not kept in the link
    assert page.get_by_text("Rewrites: original, adapted and rejected").count() == 0
    assert page.locator(ERROR).count() == 0
    snapshot(page, artifact_dir, "adaptation-unknown-run-link", focus=run_button)
    assert_no_failure_shown(page)


# ------------------------------------------------------------------------------ 6. DATScore offline
def test_datscore_offline_says_the_lm_cannot_translate(streamlit_server: str, browser_page,
                                                       artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(600_000)  # SmolLM2 translates and scores on 2 shared cores
    page.goto(f"{streamlit_server}/datscore")
    page.get_by_role("heading", name="DATScore demo").wait_for()
    sources = page.locator("[data-testid='stSlider']").filter(has_text="Sources to score").get_by_role("slider")
    sources.focus()
    page.keyboard.press("ArrowLeft")  # 3 -> 2 sources: the smallest run
    page.get_by_text("Work: 96 scored directions").wait_for()
    tokens = page.get_by_label("Max tokens per augmented translation")
    tokens.fill("8")
    tokens.press("Enter")
    page.wait_for_timeout(1000)
    page.get_by_role("button", name="Score", exact=True).click()
    warning = page.locator(WARNING).filter(has_text="The small offline LM cannot translate")
    try:
        warning.wait_for()
    finally:
        snapshot(page, artifact_dir, "datscore-offline-end", full_page=True)
    text = warning.inner_text()
    assert "Trans1 and Trans2 below are not translations" in text
    assert ("Read the numbers as a demonstration of the method's arithmetic (Eqs. 1–4); with a real translation "
            "model (M2M-100 and the like, online) they become the paper's DATScore.") in text
    snapshot(page, artifact_dir, "datscore-offline-cannot-translate", focus=warning)
    assert_no_failure_shown(page)


# ------------------------------------------------------------------------------ 7. markdown typed stays text
def test_markdown_in_a_cairo_system_name_stays_text(streamlit_server: str, browser_page, artifact_dir: Path,
                                                    tmp_path: Path) -> None:
    upload = tmp_path / "table.csv"
    upload.write_text(f'system,metric,prompt_set,bias\n"{EVIL}",BOLD gender,original,high\n', encoding="utf-8")
    page = browser_page
    requested = watch_evil(page)
    upload_bias_table(page, streamlit_server, upload)
    error = one_error(page, "is not a number")
    assert error.inner_text().replace("\u200b", "") == (
        f"the bias table table.csv row 2 (system {EVIL}, metric BOLD gender, prompt_set original): "
        "bias 'high' is not a number")
    snapshot(page, artifact_dir, "markdown-cairo-system", focus=error)
    assert_text_only(page, requested)


def test_markdown_in_the_cairo_seeds_box_stays_text(streamlit_server: str, browser_page, artifact_dir: Path) -> None:
    page = browser_page
    requested = watch_evil(page)
    open_cairo(page, streamlit_server)
    page.get_by_text("Compute one here", exact=True).click()
    seeds = page.get_by_label("Seeds (paper: 0,1,2,3,4)")
    seeds.fill(EVIL)
    seeds.press("Enter")
    error = one_error(page, "evil.example")
    shown = error.inner_text().replace("\u200b", "")
    assert EVIL in shown
    assert shown == f"seeds must be comma-separated whole numbers, e.g. 0,1,2 (got '{EVIL}')"
    snapshot(page, artifact_dir, "markdown-cairo-seeds", focus=error)
    assert_text_only(page, requested)


def test_markdown_in_a_typed_adaptation_template_stays_text(streamlit_server: str, browser_page,
                                                            artifact_dir: Path) -> None:
    page = browser_page
    requested = watch_evil(page)
    page.goto(f"{streamlit_server}/template_adaptation")
    page.get_by_role("heading", name="Template adaptation").wait_for()
    page.get_by_role("tab", name="Adapt to a domain").click()
    source = page.locator("[data-testid='stSelectbox']").filter(has_text="Templates")
    source.locator("input").click()
    page.get_by_role("option", name="Typed", exact=True).click()
    box = page.get_by_label("One template per line with {person}")
    box.fill(EVIL)
    box.press("Control+Enter")  # apply the text area
    error = one_error(page, "must contain {person} exactly once")
    assert error.inner_text().replace("\u200b", "") == (
        f"template line 1 ('{EVIL}') must contain {{person}} exactly once")
    snapshot(page, artifact_dir, "markdown-adaptation-template", focus=error)
    assert_text_only(page, requested)


# ------------------------------------------------------------------------------ 8. METEOR without WordNet
@pytest.fixture(scope="module")
def server_without_wordnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dashboard served from a copy of this checkout's tracked files, i.e. a fresh clone that skipped the
    set-up step that installs WordNet (.nltk_data), with NLTK_DATA at an empty folder."""
    clone = tmp_path_factory.mktemp("clone-without-wordnet")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO_ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not copied
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    assert not (clone / ".nltk_data").exists()
    empty = tmp_path_factory.mktemp("empty-nltk-data")
    store = tmp_path_factory.mktemp("no-wordnet-store") / "runs.duckdb"
    log_path = tmp_path_factory.mktemp("no-wordnet-log") / "streamlit.log"
    with serve_dashboard(clone, store, log_path, {"NLTK_DATA": str(empty), "FAIRNESS_LAB_PREWARM": "0"}) as url:
        yield url


def test_meteor_without_wordnet_is_unavailable_with_its_fix(server_without_wordnet: str, browser_page,
                                                            artifact_dir: Path) -> None:
    page = browser_page
    page.set_default_timeout(300_000)
    page.goto(f"{server_without_wordnet}/metric_bias?metrics=bleu,meteor,chrf")
    page.get_by_role("heading", name="Metric bias").wait_for()
    page.get_by_text(re.compile(r"^3 of \d+ metrics selected")).wait_for()
    page.get_by_role("button", name=re.compile(r"^Run(\s|$)")).click()
    warning = page.locator(WARNING).filter(has_text="Skipped METEOR")
    warning.wait_for()
    text = warning.inner_text()
    assert "METEOR is unavailable here: NLTK's WordNet is not installed (fix:" in text, text
    assert "make run" in text, text
    panel = page.get_by_role("tabpanel", name="Bias table")
    grid = panel.locator("[data-testid='stDataFrame']").first
    grid.locator("th[role='columnheader']").first.wait_for(state="attached")  # drawn after the canvas
    headers = grid_texts(grid, "th[role='columnheader']")
    assert "bleu" in " ".join(headers).lower() and "chrf" in " ".join(headers).lower(), headers
    assert "meteor" not in " ".join(headers).lower(), headers
    snapshot(page, artifact_dir, "meteor-without-wordnet", focus=warning)
    snapshot(page, artifact_dir, "meteor-without-wordnet-table", focus=grid)
    assert_no_failure_shown(page)
