"""`datscore score` through an OpenAI-compatible endpoint (the scripted server of tests/endpoint_servers.py):
the LM variant with entropies bounded from the server's top log-probs, stored and answered from the store; a
server without prompt log-probs is refused before any work, in one sentence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fairness_core.cli import main
from fairness_core.models import cache as model_cache
from fairness_core.store import RunStore
from fairness_core.translation.backbones import EndpointBackbone
from tests.endpoint_servers import FakeBehaviour, FakeServer, expected_logprob

KEY = "sk-datscore-77aa31c0de"


@pytest.fixture(autouse=True)
def _fresh_models() -> Iterator[None]:
    model_cache.clear()
    yield
    model_cache.clear()


def _flags(server: FakeServer) -> list[str]:
    return ["datscore", "score", "--data", "synthetic", "--limit-sources", "2", "--src-lang", "fr", "--tgt-lang", "en",
            "--endpoint-url", server.base_url, "--endpoint-model", "fake-model", "--endpoint-key-env", "LAB_DS_KEY",
            "--max-new-tokens", "8", "--resamples", "50", "--json"]


def _fake_step_entropy(token: str, k: int) -> float:
    """The entropy bound of one of the fake server's steps, from its made-up distribution: the token with
    p = exp(its log-prob), then k - 1 tokens with (1 - p)/2, (1 - p)/4, ...; (1 - p)/2^(k-1) unshown."""
    p = float(np.exp(expected_logprob(token)))
    shown = np.array([p, *((1 - p) / 2.0 ** np.arange(1, k))])
    return float(-(shown * np.log(shown)).sum() - (1 - p) / 2 ** (k - 1) * np.log(shown.min()))


def test_datscore_scores_through_an_endpoint_with_approximate_entropies_and_a_stored_rerun(
        isolated_store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("LAB_DS_KEY", KEY)
    server = FakeServer()
    try:
        assert main(_flags(server)) == 0
        captured = capsys.readouterr()
        first = json.loads(captured.out)
        assert first["metric"] == "DATScore-LM" and first["backbone"] == "lm" and not first["from_cache"]
        assert first["model"] == f"fake-model @ 127.0.0.1:{server.port}" and first["n_segments"] == 12
        assert any("lower bound" in note and "approximations" in note for note in first["notes"])
        assert "note: entropy weights (Eq. 4) are approximate" in captured.err
        assert len(first["scores"]) == 12 and all(v is not None for v in first["scores"].values())
        assert {row["statistic"] for row in first["meta_evaluation"]} == {"kendall_tau_like"}

        # Trans1/Trans2 came from the chat route (greedy); every direction from echo + top log-probs
        chats = [body for path, _, body in server.requests if path.endswith("/chat/completions")]
        assert chats and all(body["temperature"] == 0.0 and body["max_tokens"] == 8 for body in chats)
        scored = [body for body in server.completions() if body.get("echo") and "Translate" in body["prompt"]]
        assert len(scored) == 12 * 8 and {body["logprobs"] for body in scored} == {EndpointBackbone.TOP_LOGPROBS}

        # one direction by hand: Ref→Hypo of the first segment scores the hypothesis's words after the prompt
        store = RunStore(isolated_store)
        rows = store.rows(first["runs"]["directions"])
        one = rows[(rows["item"] == "s01-h0") & (rows["grp"] == "Ref→Hypo")].set_index("metric")["value"]
        hypo = "The train to Lyon will depart at eight o'clock tomorrow morning."
        words = [" " + w for w in hypo.split()]
        logprobs = np.array([expected_logprob(w) for w in words])
        entropies = np.array([_fake_step_entropy(w, EndpointBackbone.TOP_LOGPROBS) for w in words])
        assert one["uniform"] == pytest.approx(logprobs.mean(), rel=1e-9)
        assert one["sum"] == pytest.approx(logprobs.sum(), rel=1e-9)
        assert one["entropy"] == pytest.approx((entropies * logprobs).sum(), rel=1e-9)
        manifest = store.get_run(first["runs"]["directions"]).manifest
        assert manifest["request"]["backbone"]["entropy"].startswith("approximate: a lower bound")
        assert manifest["request"]["backbone"]["model"]["host"] == f"127.0.0.1:{server.port}"

        asked = len(server.requests)
        model_cache.clear()
        assert main(_flags(server)) == 0
        second = json.loads(capsys.readouterr().out)
        assert second["from_cache"] and second["scores"] == first["scores"]
        assert not any(body.get("echo") and "Translate" in body.get("prompt", "")
                       for _, _, body in server.requests[asked:])  # only the probes that name the model
        tables = store.query("SELECT table_name FROM information_schema.tables")["table_name"]
        dumped = "\n".join(store.query(f'SELECT * FROM "{table}"').to_csv() for table in tables)
        assert "Trans2" in dumped and KEY not in dumped  # every table as text: the key is nowhere
        assert KEY.encode() not in isolated_store.read_bytes()
    finally:
        server.stop()


def test_an_endpoint_without_prompt_log_probs_is_refused_in_one_sentence(
        isolated_store: Path, capsys: pytest.CaptureFixture) -> None:
    server = FakeServer(FakeBehaviour(echo_logprobs=False))
    try:
        flags = [f for f in _flags(server) if f not in ("--endpoint-key-env", "LAB_DS_KEY")]
        assert main(flags) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "Traceback" not in err
        assert err.endswith(f"DATScore needs per-token prompt log-probs and the endpoint fake-model @ "
                            f"127.0.0.1:{server.port} returns none (neither vLLM's prompt_logprobs nor echo + "
                            "logprobs)")
        assert not [body for path, _, body in server.requests if path.endswith("/chat/completions")]  # no work
        assert RunStore(isolated_store).list_runs() == []
    finally:
        server.stop()
