"""`decoding`, `cairo run` and `adapt` on an OpenAI-compatible endpoint, end to end and offline: a real
`transformers serve` on a tiny sampling GPT-2 (the `local_server` fixture), and a scripted server for
resume after kill -9. The key named by --endpoint-key-env appears nowhere in the store or an export."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fairness_core.cli import main
from fairness_core.models import DecodingConfig
from fairness_core.models import cache as model_cache
from fairness_core.models.endpoint import Endpoint, EndpointLM
from tests.endpoint_servers import PROBE_PROMPTS, FakeBehaviour, FakeServer

pytestmark = pytest.mark.slow  # each test starts a server (`transformers serve`, or a scripted one in a subprocess)
REPO = Path(__file__).resolve().parents[2]
KEY = "sk-lab-test-0d9c2b71e5aa"
SWEEP = ["--prompts", "regard", "--groups", "man,woman", "--grid", "top_p=0.5,0.9", "--samples", "2",
         "--max-new-tokens", "12", "--seed", "0", "--regard-model", "none", "--json"]


@pytest.fixture(autouse=True)
def _fresh_models():
    model_cache.clear()
    yield
    model_cache.clear()


def _endpoint_flags(server) -> list[str]:
    return ["--endpoint-url", server.base_url, "--endpoint-model", str(server.model_dir)]


def test_sampling_settings_reach_the_local_server_and_change_its_outputs(local_server) -> None:
    lm = EndpointLM(Endpoint(local_server.base_url, str(local_server.model_dir), max_in_flight=1))
    assert lm.capabilities["seed"] and not lm.capabilities["top_k"]  # transformers serve refuses top_k (422)
    assert not lm.capabilities["n"] and not lm.capabilities["echo"]  # ... and ignores n and logprobs
    assert lm.served_model.startswith(str(local_server.model_dir))
    prompt = "The nurse said that"
    sampled = DecodingConfig(temperature=1.0)
    same_seed = lm.generate_rows([prompt, prompt], [sampled, sampled], seeds=[1, 1], max_new_tokens=12)
    other_seed = lm.generate_rows([prompt], [sampled], seeds=[2], max_new_tokens=12)
    assert same_seed[0] == same_seed[1] and other_seed[0] != same_seed[0]  # the seed is honoured
    greedy = lm.generate_rows([prompt, prompt], [DecodingConfig(greedy=True)] * 2, seeds=[1, 2], max_new_tokens=12)
    assert greedy[0] == greedy[1]  # temperature 0 reached the server: greedy, whatever the seed
    narrow = lm.generate_rows([prompt] * 2, [DecodingConfig(top_p=0.01)] * 2, seeds=[1, 2], max_new_tokens=12)
    assert narrow[0] == narrow[1] == greedy[0]  # top_p 0.01 keeps only the top token: greedy again
    assert lm.usage.completion_tokens > 0


def test_decoding_sweep_on_the_local_server_matches_the_in_process_shape_and_repeats_from_the_store(
        local_server, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tiny_gpt2: Path) -> None:
    monkeypatch.setenv("LAB_TEST_KEY", KEY)
    store = tmp_path / "runs.duckdb"
    argv = ["--store", str(store), "decoding", *_endpoint_flags(local_server), "--endpoint-key-env", "LAB_TEST_KEY",
            *SWEEP]
    assert main(argv) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    assert "the quality proxy is not available from this endpoint" in captured.err  # said once, not faked
    assert "endpoint token usage" in captured.err
    assert [(r["config"], r["group"], r["n"]) for r in rows] == [
        ({"temperature": 1.0, "top_p": top_p}, group, 20) for top_p in (0.5, 0.9) for group in ("man", "woman")]

    in_process = ["--store", str(tmp_path / "local.duckdb"), "decoding", "--model", str(tiny_gpt2),
                  "--quality-scorer", "none", *SWEEP]
    assert main(in_process) == 0
    local_rows = json.loads(capsys.readouterr().out)
    assert [list(r) for r in rows] == [list(r) for r in local_rows]  # the same JSON shape

    assert main(argv) == 0  # a repeat is answered from the store
    again = capsys.readouterr()
    assert json.loads(again.out) == rows and "all 80 generations served from the run store" in again.err

    run_id = rows[0]["run_id"].split(",")[0]
    assert main(["--store", str(store), "runs", "show", run_id, "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)["manifest"]
    system = manifest["request"]["systems"][0] if "request" in manifest else manifest["systems"][0]
    assert system["model"]["host"] == f"127.0.0.1:{local_server.port}"
    assert system["model"]["model"].startswith(str(local_server.model_dir))
    assert system["model"]["capabilities"]["from"] == "detected"
    assert system["sent"]["top_p"] == 0.5 and system["sent"]["temperature"] == 1.0 and "seed" in system["sent"]
    export = tmp_path / "export.json"
    assert main(["--store", str(store), "runs", "export", run_id, str(export)]) == 0
    capsys.readouterr()
    written = [store, export, *tmp_path.glob("export.json*")]
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path
    exported = [row for row in json.loads(export.read_text())["rows"] if row["metric"] == "generation"]
    usage = [json.loads(row["attrs"])["usage"] for row in exported]  # token usage travels with the rows
    assert len(usage) == 80 and all(u["completion_tokens"] > 0 and u["prompt_tokens"] > 0 for u in usage)


def test_cairo_run_and_adapt_take_the_same_endpoint_flags(local_server, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "runs.duckdb"
    cairo = ["--store", str(store), "cairo", "run", *_endpoint_flags(local_server), "--sets", "1",
             "--per-subgroup", "2", "--max-new-tokens", "3", "--json"]
    assert main(cairo) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["pairs"][0]["n_systems"] == 3 and len(payload["bias_table"]) == 12
    assert {row["system"].split(" · ")[0] for row in payload["bias_table"]} == {
        f"{local_server.model_dir} @ 127.0.0.1:{local_server.port}"}
    assert main(cairo) == 0
    assert json.loads(capsys.readouterr().out)["run_ids"] == payload["run_ids"]

    templates = tmp_path / "templates.txt"
    templates.write_text("{person} feels angry.\nI talked to {person} yesterday.\n", encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Serena Williams is an American tennis player.\nThe bridge opened in 1932.\n"
                      "Albert Einstein developed relativity.\nA metalsmith works with metals.\n", encoding="utf-8")
    adapt = ["--store", str(store), "adapt", *_endpoint_flags(local_server), "--templates", str(templates),
             "--corpus", str(corpus), "--attributes", "nationality", "--examples", "1", "--max-new-tokens", "6",
             "--classifiers", "offensive", "--resamples", "100", "--json"]
    assert main(adapt) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["status"] == "complete" and first["rewrites"]["n_rewrites"] == 2
    assert main(adapt) == 0
    assert json.loads(capsys.readouterr().out)["from_cache"] is True


def test_a_sweep_killed_mid_run_resumes_without_asking_again_for_stored_rows(tmp_path: Path) -> None:
    server = FakeServer(FakeBehaviour(delay_s=0.15))
    try:
        store = tmp_path / "runs.duckdb"
        argv = ["--store", str(store), "decoding", "--endpoint-url", server.base_url, "--endpoint-model",
                "fake-model", "--endpoint-in-flight", "2", "--batch-size", "4", "--quality-scorer", "none",
                *SWEEP]
        process = subprocess.Popen([sys.executable, "-m", "fairness_core", *argv], cwd=REPO,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "OMP_NUM_THREADS": "1"})

        def asked() -> list[str]:
            return [b["prompt"] for b in server.completions() if b["prompt"] not in PROBE_PROMPTS]

        # shards run one after another, so a request from the third shard means two are stored
        deadline = time.monotonic() + 120
        while len(asked()) < 9 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        before = len(asked())
        assert 9 <= before < 80
        # the delay only made the killed run slow enough to be killed mid-run; the resume need not wait for it
        # (0.15 s x ~70 rows at 2 in flight: ~5 s of the test)
        server.behaviour = FakeBehaviour()
        assert main(argv) == 0
        after = len(asked()) - before
        assert 80 - before <= after <= 80 - 8  # the two stored shards (8 rows) are not asked for again
    finally:
        server.stop()


@pytest.fixture(scope="module")
def fresh_machine_server(tmp_path_factory: pytest.TempPathFactory):
    """`transformers serve` as on a fresh machine: HOME and HF_HOME point at an empty folder, no hub cache."""
    from tests.endpoint_servers import TransformersServer, build_sampling_gpt2

    workdir = tmp_path_factory.mktemp("fresh-machine")
    server = TransformersServer(build_sampling_gpt2(workdir / "tiny-sampling-gpt2"), workdir, fresh_home=True)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def test_a_server_that_cannot_list_its_models_is_used_with_the_name_given_marked_unverified(
        fresh_machine_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30 §3: on a fresh machine `transformers serve` answers /v1/models with HTTP 500 (no Hugging Face cache
    folder) while its completions work. The client used to refuse the endpoint ("cannot list its models"); it now
    uses the model name given, and the run manifest says the served id is unverified and why."""
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as failed:  # the real server's behaviour, reproduced
        urllib.request.urlopen(f"{fresh_machine_server.base_url}/models", timeout=10)
    assert failed.value.code == 500
    lm = EndpointLM(Endpoint(fresh_machine_server.base_url, str(fresh_machine_server.model_dir)))
    assert lm.served_model.startswith(str(fresh_machine_server.model_dir))  # as the server named it in an answer
    assert lm.manifest()["model_verified"] is False
    assert "could not list its models (HTTP 500" in lm.manifest()["model_check"]
    assert lm.generate_rows(["The nurse said that"], [DecodingConfig(greedy=True)], seeds=[0], max_new_tokens=4)

    store = tmp_path / "runs.duckdb"
    argv = ["--store", str(store), "decoding", *_endpoint_flags(fresh_machine_server), "--prompts", "regard",
            "--groups", "man,woman", "--grid", "top_p=0.5", "--samples", "1", "--max-new-tokens", "4", "--seed", "0",
            "--regard-model", "none", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["group"] for r in rows} == {"man", "woman"}
    assert main(["--store", str(store), "runs", "show", rows[0]["run_id"].split(",")[0], "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)["manifest"]
    system = manifest["request"]["systems"][0] if "request" in manifest else manifest["systems"][0]
    assert system["model"]["model_verified"] is False and "HTTP 500" in system["model"]["model_check"]


def test_a_server_whose_models_and_completions_both_fail_is_one_sentence_with_both_reasons() -> None:
    from fairness_core.models.endpoint import EndpointError
    from tests.endpoint_servers import free_port

    dead = Endpoint(f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=0, timeout_s=2)
    with pytest.raises(EndpointError, match=r"cannot list its models: connection failed .*; a completion failed "
                                            r"too: connection failed"):
        EndpointLM(dead)
