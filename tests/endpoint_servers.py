"""Servers for the endpoint tests, all on 127.0.0.1 and a free port, nothing downloaded.

- `TransformersServer`: a real OpenAI-compatible server, `transformers serve` over a tiny GPT-2 folder
  whose generation config samples (so temperature / top_p / seed reach the sampler), started as a
  subprocess and stopped by its PID.
- `FakeServer`: a few lines of `http.server` speaking the same API with scripted behaviour (429s,
  delays, echo log-probs, a field it refuses) and a record of every request, headers included.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_sampling_gpt2(directory: Path) -> Path:
    """The tiny GPT-2 of tests/tiny_models.py (long positions), with a generation config that samples and a
    chat template."""
    from transformers import AutoTokenizer, GenerationConfig

    from tests.tiny_models import build_tiny_gpt2

    build_tiny_gpt2(directory, n_positions=2048)  # room for the adaptation prompt (a few hundred tokens)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)
    GenerationConfig(do_sample=True, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                     pad_token_id=tokenizer.pad_token_id).save_pretrained(directory)
    return directory


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, ask for SIGTERM when the process that started it dies, so a test
    run killed from outside (no fixture teardown) leaves no server behind."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class TransformersServer:
    """`transformers serve MODEL_DIR` on a free port; `stop()` terminates it by PID (then kills)."""

    def __init__(self, model_dir: Path, workdir: Path, extra_args: tuple[str, ...] = (),
                 fresh_home: bool = False) -> None:
        """`fresh_home`: HOME and HF_HOME point at an empty folder and no hub cache exists, as on a fresh machine
        (its /v1/models then answers HTTP 500, issue 30)."""
        self.model_dir = model_dir
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
        if fresh_home:
            home = workdir / "empty-home"
            home.mkdir(parents=True, exist_ok=True)
            for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "XDG_CACHE_HOME"):
                env.pop(name, None)
            env |= {"HOME": str(home), "HF_HOME": str(home / ".cache" / "huggingface")}
        else:
            (workdir / "hf-cache").mkdir(parents=True, exist_ok=True)  # its /v1/models scans this cache
            env["HF_HUB_CACHE"] = str(workdir / "hf-cache")
        self.log_path = workdir / "serve.log"
        self._log = self.log_path.open("wb")
        command = [str(Path(sys.executable).parent / "transformers"), "serve", str(model_dir), "--host", "127.0.0.1",
                   "--port", str(self.port), *extra_args]
        self.process = subprocess.Popen(command, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True, preexec_fn=_die_with_parent)
        self.pid = self.process.pid

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"transformers serve exited: {self.log_path.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("transformers serve did not become healthy")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        self._log.close()


# ------------------------------------------------------------------------------------------ fake
PROBE_PROMPTS = ("Hello", "Hello there")
_WORD = re.compile(r"\s*\S+")


@dataclass
class FakeBehaviour:
    model: str = "fake-model"
    accept_top_k: bool = True
    echo_logprobs: bool = True
    top_logprobs: bool = True  # with logprobs=k > 0: each token's k likeliest (`fake_top_logprobs`)
    honour_n: bool = True
    failures: dict[str, list[int]] = field(default_factory=dict)  # prompt -> statuses answered before a 200
    delay_s: float = 0.0  # per completion of a non-probe prompt
    list_prompts: bool = True  # answer a list of prompts with one choice each (as vLLM does); False: a 400


class FakeServer:
    """An OpenAI-compatible server with scripted behaviour; `requests` lists (path, headers, body)."""

    def __init__(self, behaviour: FakeBehaviour | None = None) -> None:
        self.behaviour = behaviour or FakeBehaviour()
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.in_flight = 0  # completions being answered now (non-probe), and the most at once
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                server._record(self, {})
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.behaviour.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "no such route"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server._record(self, body)
                status, payload = server._answer(self.path, body)
                self._send(status, payload)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if status == 429:
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def _record(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append((handler.path, {k.lower(): v for k, v in handler.headers.items()}, body))

    def completions(self, prompt: str | None = None) -> list[dict[str, Any]]:
        """Bodies of the completion requests (for `prompt` only, when given); a request with a list of prompts
        counts as one body per prompt."""
        with self.lock:
            bodies = [body for path, _, body in self.requests if path.endswith("/completions")
                      and "messages" not in body]
        single = [{**body, "prompt": one} for body in bodies
                  for one in (body["prompt"] if isinstance(body.get("prompt"), list) else [body.get("prompt")])]
        return [body for body in single if prompt is None or body.get("prompt") == prompt]

    def list_requests(self) -> list[dict[str, Any]]:
        """Bodies of the completion requests that carried a list of prompts."""
        with self.lock:
            return [body for path, _, body in self.requests if isinstance(body.get("prompt"), list)]

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        behaviour = self.behaviour
        known = {"model", "prompt", "max_tokens", "temperature", "top_p", "seed", "n", "stop", "logprobs", "echo",
                 "messages", "top_k", "min_p", "prompt_logprobs"}
        refused = (set(body) - known) | ({"prompt_logprobs"} & set(body))
        if not behaviour.accept_top_k:
            refused |= {"top_k", "min_p"} & set(body)
        if refused:
            return 422, {"detail": f"Unexpected fields in the request: {sorted(refused)}"}
        prompt = body.get("prompt")
        if isinstance(prompt, list):  # the completions API's list of prompts: choice index = prompt x n + j
            if not behaviour.list_prompts:
                return 400, {"error": {"message": "prompt must be a string", "type": "invalid_request_error"}}
            merged: list[dict[str, Any]] = []
            payload: dict[str, Any] = {}
            for number, one in enumerate(prompt):
                status, payload = self._answer(path, {**body, "prompt": one})
                if status != 200:
                    return status, payload
                merged += [{**choice, "index": number * len(payload["choices"]) + choice["index"]}
                           for choice in payload["choices"]]
            return 200, {**payload, "choices": merged}
        key = prompt if prompt is not None else json.dumps(body.get("messages"))
        with self.lock:
            script = behaviour.failures.get(key)
            status = script.pop(0) if script else 200
        if status != 200:
            return status, {"error": {"message": f"scripted {status}", "type": "test"}}
        if behaviour.delay_s and prompt not in PROBE_PROMPTS:
            with self.lock:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            time.sleep(behaviour.delay_s)
            with self.lock:
                self.in_flight -= 1
        settings = f"t={body.get('temperature')} p={body.get('top_p')} k={body.get('top_k')} s={body.get('seed')}"
        if path.endswith("/chat/completions"):
            last = body["messages"][-1]["content"]
            return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": behaviour.model,
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": f"Reply to {last} [{settings}]"}}],
                         "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}}
        n = int(body.get("n") or 1) if behaviour.honour_n else 1
        choices = []
        for index in range(n):
            text = f" said {settings} j={index}."
            choice: dict[str, Any] = {"index": index, "finish_reason": "length", "text": text, "logprobs": None}
            if body.get("logprobs") is not None and behaviour.echo_logprobs:
                shown = (prompt + text) if body.get("echo") else text
                tokens = _WORD.findall(shown)
                offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
                values = [round(-len(t.strip()) / 10, 3) for t in tokens]
                if body.get("echo"):
                    values[0] = None
                k = int(body.get("logprobs") or 0)
                tops = None
                if k and behaviour.top_logprobs:
                    tops = [None if value is None else fake_top_logprobs(token, k) for token, value in
                            zip(tokens, values, strict=True)]
                choice["text"] = shown
                choice["logprobs"] = {"tokens": tokens, "token_logprobs": values, "text_offset": offsets,
                                      "top_logprobs": tops}
            choices.append(choice)
        return 200, {"id": "x", "object": "text_completion", "created": 0, "model": behaviour.model,
                     "choices": choices, "usage": {"prompt_tokens": len((prompt or "").split()),
                                                   "completion_tokens": int(body.get("max_tokens") or 16),
                                                   "total_tokens": 0}}

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def expected_logprob(token: str) -> float:
    """The fake server's log-prob of one echoed token."""
    return round(-len(token.strip()) / 10, 3)


def fake_top_logprobs(token: str, k: int) -> dict[str, float]:
    """The fake server's top-k of the step that produced `token`: the token itself (`expected_logprob`), then
    k - 1 made-up tokens taking half, a quarter, ... of the probability left; the rest stays unshown."""
    own = expected_logprob(token)
    left = 1.0 - math.exp(own)
    return {token: own, **{f"<alt{j}>": math.log(left / 2**j) for j in range(1, k)}}
