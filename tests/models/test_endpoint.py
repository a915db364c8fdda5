"""The OpenAI-compatible endpoint backend against a scripted local server (tests/endpoint_servers.py):
configuration, capability detection, the fields sent, retries, cancel, log-probs, chat, and the key."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import DecodingConfig, ModelSpec, ModelUnavailableError, load_model
from fairness_core.models import cache as model_cache
from fairness_core.models.endpoint import (
    Endpoint,
    EndpointError,
    EndpointLM,
    configured_endpoint,
    endpoint_from_flags,
    entropy_lower_bound,
    load_endpoints,
)
from tests.endpoint_servers import FakeBehaviour, FakeServer, expected_logprob, fake_top_logprobs

KEY = "sk-test-4f1e9a77c0ffee"


@pytest.fixture()
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _fresh_models() -> Iterator[None]:
    model_cache.clear()  # each test's endpoint is probed afresh
    yield
    model_cache.clear()


# --------------------------------------------------------------------------------- configuration
def test_an_endpoint_travels_as_a_source_string_without_its_key() -> None:
    endpoint = Endpoint("http://127.0.0.1:8000/v1/", "org/My-Model", key_env="LAB_KEY", max_in_flight=3,
                        capabilities=("top_k", "seed"))
    source = endpoint.source()
    assert source.startswith("endpoint:http://127.0.0.1:8000/v1#") and "LAB_KEY" in source
    assert Endpoint.parse(source) == endpoint
    assert endpoint.host == "127.0.0.1:8000" and endpoint.label() == "org/My-Model @ 127.0.0.1:8000"
    assert ModelSpec(source, "causal-lm").display_name == "org/My-Model @ 127.0.0.1:8000"


@pytest.mark.parametrize(("url", "model", "key_env", "message"), [
    ("ftp://host/v1", "m", None, "must start with http:// or https://"),
    ("http://user:secret@host/v1", "m", None, "must not hold credentials"),
    ("http://host/v1?api_key=abc", "m", None, "must not have a query"),
    ("http://host/v1", "", None, "needs a model name"),
    ("http://host/v1", "m", KEY, "the NAME of an environment variable"),
])
def test_bad_endpoint_settings_are_one_sentence_that_never_repeats_a_secret(url: str, model: str,
                                                                          key_env: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        Endpoint(url, model, key_env)
    assert "secret" not in str(error.value) and KEY not in str(error.value) and "abc" not in str(error.value)


def test_flags_need_both_url_and_model() -> None:
    assert endpoint_from_flags(None, None) is None
    with pytest.raises(ValueError, match="needs --endpoint-model"):
        endpoint_from_flags("http://127.0.0.1:1/v1", None)
    with pytest.raises(ValueError, match="need --endpoint-url"):
        endpoint_from_flags(None, "m")


def test_endpoints_toml_names_endpoints_and_refuses_a_key_written_into_it(tmp_path: Path) -> None:
    good = tmp_path / "endpoints.toml"
    good.write_text('[endpoints.local]\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "smol"\nkey_env = "LAB_KEY"\n'
                    'max_in_flight = 4\ncapabilities = ["seed", "echo"]\n')
    local = configured_endpoint("local", good)
    assert (local.model, local.key_env, local.max_in_flight, local.capabilities) == ("smol", "LAB_KEY", 4,
                                                                                     ("echo", "seed"))
    with pytest.raises(ValueError, match=r"no endpoint named 'other' in endpoints.toml \(configured: local\)"):
        configured_endpoint("other", good)
    leaky = tmp_path / "leaky.toml"
    leaky.write_text(f'[endpoints.x]\nbase_url = "http://h/v1"\nmodel = "m"\napi_key = "{KEY}"\n')
    with pytest.raises(ValueError, match=r"leaky.toml: endpoints.x has a field 'api_key'") as error:
        load_endpoints(leaky)
    assert KEY not in str(error.value)
    bad = tmp_path / "bad.toml"
    bad.write_text('[endpoints.x]\nbase_url = "localhost:8000"\nmodel = "m"\n')
    with pytest.raises(ValueError, match=r"bad.toml: endpoints.x: the endpoint URL 'localhost:8000' must start"):
        load_endpoints(bad)
    assert load_endpoints(tmp_path / "absent.toml") == {}


# ------------------------------------------------------------------------------ capabilities
def test_capabilities_are_detected_once_and_named_in_the_manifest(fake: FakeServer) -> None:
    lm = load_model(ModelSpec(Endpoint(fake.base_url, "fake-model").source(), "causal-lm"))
    assert isinstance(lm, EndpointLM)
    assert lm.capabilities == {"seed": True, "n": True, "top_k": True, "min_p": True, "logprobs": True,
                               "echo": True, "prompt_logprobs": False}
    manifest = lm.manifest()
    assert manifest["host"] == f"127.0.0.1:{fake.port}" and manifest["model"] == "fake-model"
    assert manifest["capabilities"]["from"] == "detected"
    probes = len(fake.requests)
    load_model(ModelSpec(Endpoint(fake.base_url, "fake-model").source(), "causal-lm"))
    assert len(fake.requests) == probes  # the process cache: no second probe


def test_a_server_without_top_k_or_log_probs_says_so_in_one_sentence() -> None:
    server = FakeServer(FakeBehaviour(accept_top_k=False, echo_logprobs=False))
    try:
        lm = load_model(ModelSpec(Endpoint(server.base_url, "fake-model").source(), "causal-lm"))
        assert not lm.capabilities["top_k"] and not lm.capabilities["echo"]
        assert lm.cannot("loglikelihood").startswith("not available from this endpoint (fake-model @ 127.0.0.1:")
        with pytest.raises(EndpointError, match="does not support top_k \\(detected\\): choose top_p"):
            lm.generate(["The nurse"], DecodingConfig(top_k=5, max_new_tokens=4))
        from fairness_core.scorers import scorer_from_request

        quality = scorer_from_request("quality_logprob", model=lm_source(server))
        with pytest.raises(ModelUnavailableError, match=r"^the quality proxy is not available from this endpoint"):
            quality.check_available()
    finally:
        server.stop()


def lm_source(server: FakeServer) -> str:
    return Endpoint(server.base_url, "fake-model").source()


def test_declared_capabilities_skip_detection(fake: FakeServer) -> None:
    lm = EndpointLM(Endpoint(fake.base_url, "fake-model", capabilities=("seed",)))
    assert len(fake.completions()) == 1  # the one request that learns the served model id
    assert lm.capabilities["seed"] and not lm.capabilities["top_k"]
    assert lm.describe_capabilities()["from"] == "declared"


def test_an_unknown_model_or_a_dead_server_is_one_sentence(fake: FakeServer) -> None:
    with pytest.raises(EndpointError, match="does not serve 'other' \\(it serves: fake-model\\)"):
        EndpointLM(Endpoint(fake.base_url, "other"))
    dead = Endpoint(fake.base_url.replace(str(fake.port), str(_closed_port())), "m", max_retries=0, timeout_s=2)
    with pytest.raises(EndpointError, match="cannot list its models: connection failed"):
        EndpointLM(dead)


def _closed_port() -> int:
    from tests.endpoint_servers import free_port

    return free_port()


# ------------------------------------------------------------------------------ what is sent
def test_every_sampling_field_reaches_the_server(fake: FakeServer) -> None:
    lm = EndpointLM(Endpoint(fake.base_url, "fake-model"))
    configs = [DecodingConfig(temperature=0.7, top_p=0.9), DecodingConfig(top_k=40), DecodingConfig(greedy=True)]
    texts = lm.generate_rows(["A", "B", "C"], configs, seeds=[11, 12, 13], max_new_tokens=6)
    assert texts == [" said t=0.7 p=0.9 k=None s=11 j=0.", " said t=1.0 p=None k=40 s=12 j=0.",
                     " said t=0.0 p=None k=None s=13 j=0."]
    sent = {body["prompt"]: body for body in fake.completions() if body["prompt"] in "ABC"}
    assert sent["A"] == {"model": "fake-model", "prompt": "A", "max_tokens": 6, "temperature": 0.7, "top_p": 0.9,
                         "seed": 11}
    assert sent["B"]["top_k"] == 40 and "top_p" not in sent["B"]
    assert sent["C"]["temperature"] == 0.0
    assert lm.sent_manifest(configs[0]) == {"max_tokens": "max_new_tokens of the request", "temperature": 0.7,
                                            "top_p": 0.9, "seed": "one per row (from the run seed, prompt and sample)"}
    assert lm.usage.completion_tokens >= 18


def test_generate_gives_each_sample_its_own_seed_and_chat_uses_the_chat_route(fake: FakeServer) -> None:
    lm = EndpointLM(Endpoint(fake.base_url, "fake-model"))
    first = lm.generate(["The doctor"], DecodingConfig(top_p=0.5), n=3, seed=4)
    assert len(first[0]) == 3 and len(set(first[0])) == 3  # three seeds, three requests
    assert lm.generate(["The doctor"], DecodingConfig(top_p=0.5), n=3, seed=4) == first
    replies = lm.chat([[{"role": "user", "content": "Rewrite this."}]], DecodingConfig(greedy=True), n=1)
    assert replies[0][0].startswith("Reply to Rewrite this. [t=0.0")
    conversation = [{"role": "user", "content": "Rewrite this."}]
    ((reply, usage),) = lm.chat_with_usage([conversation], DecodingConfig(greedy=True))[0]
    assert reply == replies[0][0] and usage == {"prompt_tokens": 5, "completion_tokens": 4}  # the server's count
    chat_bodies = [body for path, _, body in fake.requests if path.endswith("/chat/completions")]
    assert chat_bodies[-1]["messages"] == [{"role": "user", "content": "Rewrite this."}]


# ------------------------------------------------------------------------------ robustness
def test_429_and_503_are_retried_with_backoff_until_the_answer_comes() -> None:
    server = FakeServer(FakeBehaviour(failures={"The nurse": [429, 503]}))
    try:
        lm = EndpointLM(Endpoint(server.base_url, "fake-model"))
        texts = lm.generate_rows(["The nurse", "The man"], [DecodingConfig()] * 2, seeds=[1, 2], max_new_tokens=3)
        assert texts[0] == " said t=1.0 p=None k=None s=1 j=0."
        assert len(server.completions("The nurse")) == 3 and len(server.completions("The man")) == 1
    finally:
        server.stop()


def test_a_request_that_keeps_failing_is_one_sentence_without_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAB_KEY", KEY)
    server = FakeServer(FakeBehaviour(failures={"The nurse": [500] * 5}))
    try:
        lm = EndpointLM(Endpoint(server.base_url, "fake-model", key_env="LAB_KEY", max_retries=1))
        with pytest.raises(EndpointError, match="refused a completion: HTTP 500") as error:
            lm.generate_rows(["The nurse"], [DecodingConfig()], seeds=[1], max_new_tokens=3)
        assert KEY not in str(error.value)
        # the key went where it belongs, the Authorization header, and nowhere in a URL or body
        assert all(headers.get("authorization") == f"Bearer {KEY}" for _, headers, _ in server.requests)
        assert not any(KEY in path or KEY in str(body) for path, _, body in server.requests)
    finally:
        server.stop()


def test_a_missing_key_variable_is_named_not_guessed(monkeypatch: pytest.MonkeyPatch, fake: FakeServer) -> None:
    monkeypatch.delenv("LAB_UNSET_KEY", raising=False)
    with pytest.raises(EndpointError, match=r"the environment variable LAB_UNSET_KEY .* is not set"):
        EndpointLM(Endpoint(fake.base_url, "fake-model", key_env="LAB_UNSET_KEY"))


def test_requests_go_out_concurrently_but_never_more_than_the_in_flight_bound() -> None:
    server = FakeServer(FakeBehaviour(delay_s=0.4))  # long enough that requests overlap on a loaded machine
    try:
        lm = EndpointLM(Endpoint(server.base_url, "fake-model", max_in_flight=3))
        prompts = [f"Prompt {i}" for i in range(12)]
        texts = lm.generate_rows(prompts, [DecodingConfig()] * 12, seeds=list(range(12)), max_new_tokens=3)
        assert texts == [f" said t=1.0 p=None k=None s={i} j=0." for i in range(12)]  # in row order
        assert 2 <= server.max_in_flight <= 3
    finally:
        server.stop()


def test_cancel_stops_sending_new_requests() -> None:
    server = FakeServer(FakeBehaviour(delay_s=0.5))
    try:
        lm = EndpointLM(Endpoint(server.base_url, "fake-model", max_in_flight=2))
        prompts = [f"Prompt {i}" for i in range(30)]

        class Cancelled(Exception):
            pass

        def progress(done: int, total: int) -> None:
            if done >= 2:
                raise Cancelled

        with pytest.raises(Cancelled):
            lm.generate_rows(prompts, [DecodingConfig()] * 30, seeds=list(range(30)), max_new_tokens=3,
                             progress=progress)
        time.sleep(1.0)  # whatever was already out finishes; nothing new may have been sent
        sent = [body for body in server.completions() if body["prompt"].startswith("Prompt")]
        # two out at once, 0.5 s each: a few more go out while the callback waits to run, never the rest
        assert 2 <= len(sent) < 15
    finally:
        server.stop()


# ------------------------------------------------------------------------------ log-probs
def test_loglikelihood_reads_the_continuation_tokens_from_echoed_prompt_logprobs(fake: FakeServer) -> None:
    lm = EndpointLM(Endpoint(fake.base_url, "fake-model"))
    scores = lm.loglikelihood(["The nurse said", "A"], [" that she would", " b"])
    assert scores[0].tokens == [" that", " she", " would"]
    np.testing.assert_allclose(scores[0].logprobs, [expected_logprob(t) for t in (" that", " she", " would")],
                               rtol=1e-12)
    assert scores[1].tokens == [" b"]
    echo = [body for body in fake.completions()
            if body.get("echo") and body["prompt"] == "The nurse said that she would"]
    assert echo and echo[0]["logprobs"] == 0


def test_the_entropy_lower_bound_from_top_k_log_probs_never_exceeds_the_entropy() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.dirichlet(np.full(200, 0.1))
        logp = np.log(np.maximum(p, 1e-300))
        entropy = float(-(p * logp).sum())
        order = np.argsort(-p)
        for k in (1, 5, 20):
            top = {str(i): float(logp[i]) for i in order[:k]}
            bound = entropy_lower_bound(top, k)
            assert bound <= entropy + 1e-9
        assert entropy_lower_bound({str(i): float(logp[i]) for i in range(200)}, 200) == pytest.approx(entropy,
                                                                                                      rel=1e-9)
    # by hand: top-2 of {0.5, 0.3, 0.2}: the 0.2 left lies on tokens no likelier than 0.3
    bound = entropy_lower_bound({"a": np.log(0.5), "b": np.log(0.3)}, 2)
    assert bound == pytest.approx(-(0.5 * np.log(0.5) + 0.3 * np.log(0.3)) - 0.2 * np.log(0.3), rel=1e-12)
    # echo's top-k may leave out the prompt's own token: it is counted once, and not as the k-th likeliest
    with_own = entropy_lower_bound({"a": np.log(0.5), "b": np.log(0.3)}, 2, own=("c", np.log(0.1)))
    assert with_own == pytest.approx(-(0.5 * np.log(0.5) + 0.3 * np.log(0.3) + 0.1 * np.log(0.1))
                                     - 0.1 * np.log(0.3), rel=1e-12)
    assert entropy_lower_bound({"a": np.log(0.5)}, 1, own=("a", np.log(0.5))) == pytest.approx(
        -0.5 * np.log(0.5) - 0.5 * np.log(0.5), rel=1e-12)


def test_loglikelihood_with_top_logprobs_gives_each_step_an_entropy_bound(fake: FakeServer) -> None:
    lm = EndpointLM(Endpoint(fake.base_url, "fake-model"))
    (scores,) = lm.loglikelihood(["The nurse said"], [" that she would"], top_logprobs=5)
    assert scores.tokens == [" that", " she", " would"]
    expected = [entropy_lower_bound(fake_top_logprobs(t, 5), 5) for t in scores.tokens]
    np.testing.assert_allclose(scores.entropies, expected, rtol=1e-12)
    p = np.exp(expected_logprob(" that"))  # the fake's step: p, then (1-p)/2, /4, /8, /16; (1-p)/16 unshown
    shown = np.array([p, *((1 - p) / 2 ** np.arange(1, 5))])
    by_hand = -(shown * np.log(shown)).sum() - (1 - p) / 16 * np.log(shown.min())
    assert scores.entropies[0] == pytest.approx(by_hand, rel=1e-9)
    asked = [body for body in fake.completions() if body.get("echo") and body["prompt"].startswith("The nurse")]
    assert asked[-1]["logprobs"] == 5


def test_prompt_log_probs_without_top_log_probs_cannot_give_entropies() -> None:
    server = FakeServer(FakeBehaviour(top_logprobs=False))
    try:
        lm = EndpointLM(Endpoint(server.base_url, "fake-model"))
        assert lm.loglikelihood(["A"], [" b"])[0].entropies is None  # plain log-probs still work
        with pytest.raises(EndpointError, match=r"without the top 5 log-probs of each token, so step entropies "
                                                r"cannot be estimated$"):
            lm.loglikelihood(["A"], [" b"], top_logprobs=5)
    finally:
        server.stop()
