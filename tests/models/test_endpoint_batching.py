"""An endpoint's log-likelihood requests go out batched (a list of prompts, one choice each), with the same scores
as one request per text; a server that refuses a list gets one request per text (tests/endpoint_servers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from fairness_core.models import endpoint as E
from tests.endpoint_servers import FakeBehaviour, FakeServer, expected_logprob

CONTEXTS = [f"Item {n} says" for n in range(37)]
CONTINUATIONS = [f" answer number {n}" for n in range(37)]


def _servers(behaviour: FakeBehaviour) -> Iterator[FakeServer]:
    server = FakeServer(behaviour)
    yield server
    server.stop()


@pytest.fixture()
def lists() -> Iterator[FakeServer]:
    yield from _servers(FakeBehaviour())


@pytest.fixture()
def singles() -> Iterator[FakeServer]:
    yield from _servers(FakeBehaviour(list_prompts=False))


def _check(scores: list) -> None:
    assert len(scores) == len(CONTEXTS)
    for n, result in enumerate(scores):
        assert result.tokens == [" answer", " number", f" {n}"]
        np.testing.assert_allclose(result.logprobs, [expected_logprob(t) for t in result.tokens], rtol=1e-12)


def test_loglikelihood_sends_a_list_of_prompts_per_request(lists: FakeServer) -> None:
    lm = E.EndpointLM(E.Endpoint(lists.base_url, "fake-model"))
    seen: list[tuple[int, int]] = []
    scores = lm.loglikelihood(CONTEXTS, CONTINUATIONS, progress=lambda done, total: seen.append((done, total)))
    _check(scores)
    batched = lists.list_requests()
    assert len(batched) == -(-len(CONTEXTS) // E.LOGLIKELIHOOD_BATCH)  # 3 requests for 37 texts
    assert sorted(p for body in batched for p in body["prompt"]) == sorted(c + t for c, t in
                                                                            zip(CONTEXTS, CONTINUATIONS, strict=True))
    assert all(body["echo"] and body["max_tokens"] == 1 for body in batched)
    assert seen[-1] == (len(CONTEXTS), len(CONTEXTS))


def test_a_server_that_refuses_a_list_gets_one_request_per_text(singles: FakeServer) -> None:
    lm = E.EndpointLM(E.Endpoint(singles.base_url, "fake-model", max_retries=0))
    _check(lm.loglikelihood(CONTEXTS, CONTINUATIONS))
    refused = singles.list_requests()
    assert len(refused) <= E.Endpoint(singles.base_url, "m").max_in_flight  # tried once per request in flight
    single = [body for body in singles.completions() if body.get("echo") and body["prompt"] in
              {c + t for c, t in zip(CONTEXTS, CONTINUATIONS, strict=True)}]
    assert len(single) >= len(CONTEXTS)
    before = len(singles.list_requests())
    _check(lm.loglikelihood(CONTEXTS, CONTINUATIONS))  # remembered: no list tried again
    assert len(singles.list_requests()) == before
