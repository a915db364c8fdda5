"""The model picker's free-text box: a value that cannot name a model gets one sentence in place, no traceback,
and the picker returns "" (as with nothing typed); real ids and model folders pass through unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

OTHER = "(other Hugging Face id or local path)"


def _page() -> None:
    import streamlit as st

    from ui import common

    chosen = common.model_picker("causal-lm", "Generator", key="gen")
    st.text(f"chosen: {chosen!r}")
    st.caption("the rest of the page")


def _pick(value: str) -> AppTest:
    app = AppTest.from_function(_page, default_timeout=60)
    app.session_state["gen"] = OTHER
    app.run()
    app.text_input(key="gen_custom").input(value).run()
    assert not app.exception, app.exception
    assert app.caption[-1].value == "the rest of the page"
    return app


BAD = [
    ("<script>alert(1)</script>", "is not a Hugging Face model id"),
    ("/etc/passwd", "is a file but not a model"),
    ("/etc", "is a folder without a model in it"),
    ("/dev/null", "is not a regular file or folder"),
    ("../../no/such/model", "does not exist on this machine"),
    ("md:x", "is not a Hugging Face model id"),
    ("a" * 300, "is not a Hugging Face model id"),
    ("owner/../../etc", "does not exist on this machine"),
    ("[x](http://example.invalid)", "does not exist on this machine"),
]


@pytest.mark.parametrize(("value", "phrase"), BAD, ids=[value[:30] for value, _ in BAD])
def test_a_value_that_cannot_name_a_model_gets_one_sentence(value: str, phrase: str) -> None:
    app = _pick(value)
    (error,) = app.error
    assert phrase in error.value and error.value.startswith("`")  # the typed text as literal code, never markup
    assert app.text[0].value == "chosen: ''"


def test_hub_ids_and_model_folders_pass_through(tiny_gpt2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.models import spec

    monkeypatch.setattr(spec, "hub_cached_revision", lambda repo_id: "0123456789ab")  # as if in the local cache
    for value in ("gpt2", "openai-community/gpt2", str(tiny_gpt2)):
        app = _pick(value)
        assert not app.error
        assert app.text[0].value == f"chosen: {value!r}"


def test_an_id_not_on_this_machine_is_one_sentence_offline() -> None:
    """Issue 23: `zzz/not-a-model-123` got a grey caption quoting a failed connection after a minute of retries.
    The tests run offline (HF_HUB_OFFLINE=1), so this is the offline sentence; nothing is loaded."""
    app = _pick("zzz/not-a-model-123")
    (error,) = app.error
    assert error.value == ("`zzz/not-a-model-123` is not on this machine (not in the local Hugging Face cache), and "
                           "this machine cannot reach the hub to download it: pick a model from the list or give a "
                           "local model folder.")
    assert app.text[0].value == "chosen: ''"


def test_an_id_the_hub_does_not_have_is_one_sentence_online(monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core.models import presets
    from ui import common

    monkeypatch.setattr(presets, "hub_reachable", lambda: True)  # as online; the hub's answer is given below
    monkeypatch.setattr(common, "_hub_has", lambda repo_id: repo_id != "zzz/not-a-model-123")
    assert common.model_presence_problem("zzz/not-a-model-123") == (
        "`zzz/not-a-model-123` is not on the Hugging Face hub (no model with that id): check the spelling.")
    assert common.model_presence_problem("openai-community/gpt2") is None  # the hub has it: it downloads
