"""A `CausalLM` over an OpenAI-compatible HTTP API: vLLM, SGLang, TGI, Ollama, llama.cpp's server,
`transformers serve` or a hosted API (docs/endpoints.md).

An endpoint is named by a model-source string, so it travels wherever a model id does (a `System`,
a scorer option, a shard's model record, a Ray worker): ``endpoint:<base URL>#model=...&key_env=...``.
The string holds the *name* of the environment variable with the key, never the key; the key is read
from the environment when a request is sent and goes only into the Authorization header.

What the server can do (top_k, min_p, n, seed, completion log-probs, prompt log-probs) is detected
once per process with a few one-token requests, or declared (`capabilities=`), and said in one
sentence where it matters (`cannot`). Requests go out concurrently (at most `max_in_flight`), with
a timeout, and the openai client retries 408/409/429/5xx with exponential backoff (honouring
Retry-After). A `progress(done, total)` callback runs in the caller's thread at least every 0.2 s
while requests are out; when it raises (a cancelled job), nothing more is sent and the error goes up.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np

from fairness_core import config as lab_config
from fairness_core.models.interfaces import CausalLM, DecodingConfig, ModelUnavailableError, TokenScores

ENDPOINT_PREFIX = "endpoint:"
#: What detection looks for; a declared list names the ones the server supports.
CAPABILITIES = ("seed", "n", "top_k", "min_p", "logprobs", "echo", "prompt_logprobs")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_POLL_S = 0.2  # how often the caller's progress/cancel callback runs while requests are out
#: Texts per log-likelihood request: the completions API takes a list of prompts and answers one choice per prompt
#: (vLLM, llama.cpp's server and OpenAI's legacy API do), so a benchmark's 6,000 short sentences are 375 requests,
#: not 6,000 (each request's round trip and queueing paid once per 16 texts; the server batches them itself).
LOGLIKELIHOOD_BATCH = 16

T = TypeVar("T")


class EndpointError(ModelUnavailableError):
    """An endpoint could not be configured, reached or used; one sentence, never the key."""


@dataclass(frozen=True)
class Endpoint:
    """Where an OpenAI-compatible server is and how to talk to it (none of it secret)."""

    base_url: str  # http(s)://host[:port][/path], e.g. http://127.0.0.1:8000/v1
    model: str  # the model name requests carry
    key_env: str | None = None  # NAME of the environment variable holding the API key
    max_in_flight: int = 8  # concurrent requests (throughput only: not part of any result's identity)
    timeout_s: float = 120.0  # per request
    max_retries: int = 4  # on 408/409/429/5xx and connection errors, exponential backoff
    capabilities: tuple[str, ...] | None = None  # declared (skips detection); None = detect

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.strip().rstrip("/"))
        object.__setattr__(self, "model", self.model.strip())
        problem = self.problem()
        if problem:
            raise ValueError(problem)
        if self.capabilities is not None:
            object.__setattr__(self, "capabilities", tuple(sorted(set(self.capabilities))))

    def problem(self) -> str | None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return (f"the endpoint URL {self.base_url[:80]!r} must start with http:// or https:// and name a host "
                    "(e.g. http://127.0.0.1:8000/v1)")
        if parts.username or parts.password:
            return "the endpoint URL must not hold credentials: name the environment variable with the key instead"
        if parts.query or parts.fragment:
            return "the endpoint URL must not have a query (?...) or fragment (#...): keys never go into a URL"
        try:
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            return f"the endpoint URL {self.base_url[:80]!r} has a bad port"
        if not self.model or any(c in self.model for c in "#\n\r"):
            return "the endpoint needs a model name (the one the server serves; no '#' or line breaks)"
        if self.key_env is not None and not _ENV_NAME.match(self.key_env):
            # never echo the value: someone may have pasted the key itself here
            return ("the key option takes the NAME of an environment variable (letters, digits and '_', "
                    "not starting with a digit), not the key itself")
        if not 1 <= int(self.max_in_flight) <= 256:
            return f"the endpoint's in-flight limit must be between 1 and 256 (got {self.max_in_flight})"
        if not 0 < float(self.timeout_s) <= 3600:
            return f"the endpoint timeout must be between 0 and 3600 seconds (got {self.timeout_s})"
        if not 0 <= int(self.max_retries) <= 20:
            return f"the endpoint's retries must be between 0 and 20 (got {self.max_retries})"
        unknown = sorted(set(self.capabilities or ()) - set(CAPABILITIES))
        if unknown:
            return f"unknown endpoint capability {unknown[0]!r}; known: {', '.join(CAPABILITIES)}"
        return None

    @property
    def host(self) -> str:
        """host[:port], what manifests and labels show of the URL."""
        parts = urlsplit(self.base_url)
        return parts.netloc

    @property
    def path(self) -> str:
        return urlsplit(self.base_url).path or "/"

    def source(self) -> str:
        """The model-source string (no key): parsed back by `Endpoint.parse`."""
        fields: dict[str, str] = {"model": self.model}
        if self.key_env:
            fields["key_env"] = self.key_env
        if self.max_in_flight != 8:
            fields["in_flight"] = str(int(self.max_in_flight))
        if self.timeout_s != 120.0:
            fields["timeout"] = f"{float(self.timeout_s):g}"
        if self.max_retries != 4:
            fields["retries"] = str(int(self.max_retries))
        if self.capabilities is not None:
            fields["capabilities"] = ",".join(self.capabilities)
        return f"{ENDPOINT_PREFIX}{self.base_url}#{urlencode(fields)}"

    @classmethod
    def parse(cls, source: str) -> Endpoint:
        """An `endpoint:` source string back to an Endpoint (ValueError, one sentence)."""
        if not is_endpoint(source):
            raise ValueError(f"{source[:60]!r} is not an endpoint source (it starts with {ENDPOINT_PREFIX!r})")
        url, _, query = source[len(ENDPOINT_PREFIX):].partition("#")
        fields = dict(parse_qsl(query, keep_blank_values=True))
        unknown = sorted(set(fields) - {"model", "key_env", "in_flight", "timeout", "retries", "capabilities"})
        if unknown:
            raise ValueError(f"unknown endpoint field {unknown[0]!r}")
        try:
            caps = fields.get("capabilities")
            return cls(url, fields.get("model", ""), fields.get("key_env") or None,
                       max_in_flight=int(fields.get("in_flight", 8)), timeout_s=float(fields.get("timeout", 120)),
                       max_retries=int(fields.get("retries", 4)),
                       capabilities=None if caps is None else tuple(c for c in caps.split(",") if c))
        except (TypeError, ValueError) as error:
            raise ValueError(str(error).splitlines()[0]) from None

    def label(self) -> str:
        return f"{self.model} @ {self.host}"

    def api_key(self) -> str | None:
        if not self.key_env:
            return None
        value = os.environ.get(self.key_env)
        if not value:
            raise EndpointError(f"the environment variable {self.key_env} (the key for {self.host}) is not set")
        return value


def is_endpoint(source: str) -> bool:
    return isinstance(source, str) and source.startswith(ENDPOINT_PREFIX)


def model_record(model: str) -> str:
    """A model string as a request manifest records it: for an endpoint, without the throughput settings
    (in-flight, timeout, retries), which do not change results, so changing them never misses the store."""
    if not is_endpoint(model):
        return model
    from dataclasses import replace

    return replace(Endpoint.parse(model), max_in_flight=8, timeout_s=120.0, max_retries=4).source()


def endpoint_from_flags(url: str | None, model: str | None, key_env: str | None = None,
                        max_in_flight: int | None = None) -> Endpoint | None:
    """The CLI's --endpoint-url/--endpoint-model/--endpoint-key-env as an Endpoint, None when no URL."""
    if not url:
        if model or key_env:
            raise ValueError("--endpoint-model and --endpoint-key-env need --endpoint-url (or --endpoint NAME)")
        return None
    if not model:
        raise ValueError("--endpoint-url needs --endpoint-model: the model name the server serves")
    return Endpoint(url, model, key_env, max_in_flight=max_in_flight or 8)


_TOML_FIELDS = {"base_url", "model", "key_env", "max_in_flight", "timeout_s", "max_retries", "capabilities"}


def load_endpoints(path: Path | None = None) -> dict[str, Endpoint]:
    """The endpoints named in an endpoints.toml (`[endpoints.NAME]` tables with base_url, model, and
    optionally key_env, max_in_flight, timeout_s, max_retries, capabilities); {} when the file is absent.
    A bad file raises ValueError naming the file, the endpoint and the field; a key written into the
    file is refused without being repeated."""
    import tomllib

    path = lab_config.endpoints_path() if path is None else path
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"{path.name}: not a readable TOML file ({str(error).splitlines()[0][:120]})") from None
    tables = data.get("endpoints", {})
    if not isinstance(tables, dict):
        raise ValueError(f"{path.name}: [endpoints] must be a table of named endpoints ([endpoints.NAME])")
    found = {}
    for name, table in tables.items():
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
            raise ValueError(f"{path.name}: endpoint name {name[:40]!r} must be letters, digits, '_', '.', '-'")
        if not isinstance(table, dict):
            raise ValueError(f"{path.name}: endpoints.{name} must be a table")
        secret = sorted(k for k in table if "key" in k.lower() and k != "key_env")
        if secret:
            raise ValueError(f"{path.name}: endpoints.{name} has a field {secret[0]!r}; a key never goes in this "
                             "file: put it in an environment variable and name that variable in key_env")
        unknown = sorted(set(table) - _TOML_FIELDS)
        if unknown:
            raise ValueError(f"{path.name}: endpoints.{name} has an unknown field {unknown[0]!r} "
                             f"(fields: {', '.join(sorted(_TOML_FIELDS))})")
        try:
            caps = table.get("capabilities")
            found[name] = Endpoint(str(table.get("base_url", "")), str(table.get("model", "")), table.get("key_env"),
                                   max_in_flight=int(table.get("max_in_flight", 8)),
                                   timeout_s=float(table.get("timeout_s", 120.0)),
                                   max_retries=int(table.get("max_retries", 4)),
                                   capabilities=None if caps is None else tuple(str(c) for c in caps))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path.name}: endpoints.{name}: {str(error).splitlines()[0]}") from None
    return found


def configured_endpoint(name: str, path: Path | None = None) -> Endpoint:
    """The endpoint called `name` in endpoints.toml (ValueError naming the known ones)."""
    known = load_endpoints(path)
    if name not in known:
        where = (lab_config.endpoints_path() if path is None else path).name
        raise ValueError(f"no endpoint named {name[:40]!r} in {where} "
                         f"(configured: {', '.join(known) or 'none'})")
    return known[name]


# ----------------------------------------------------------------------------------------- backend
@dataclass
class Usage:
    """Tokens the server reports having read and written (its `usage` field), summed."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, usage: Mapping[str, int]) -> None:
        with self._lock:
            self.requests += 1
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.completion_tokens += int(usage.get("completion_tokens") or 0)

    def as_dict(self) -> dict[str, int]:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}


def request_seed(*parts: Any) -> int:
    """A 31-bit seed from JSON-able parts (servers differ in how wide a seed they take)."""
    digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False, default=str).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class EndpointLM(CausalLM):
    """Generation, chat and (where offered) log-likelihood through an OpenAI-compatible server."""

    remote = True
    device = "remote"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.name = endpoint.label()
        self.cache_key = ("causal-lm", "endpoint", endpoint.source())
        self.usage = Usage()
        self._client: Any = None
        self.served_model = endpoint.model
        self.model_unverified: str | None = None
        self.capabilities: dict[str, bool] = {}
        self.capabilities_from = "declared" if endpoint.capabilities is not None else "detected"
        #: whether the server answers a list of prompts with one choice each (None: not tried yet)
        self._list_prompts: bool | None = None
        self._connect()

    # ------------------------------------------------------------------------- connection, probing
    def _connect(self) -> None:
        try:
            import openai
        except ImportError as error:
            raise EndpointError(f"endpoint {self.endpoint.host} needs the openai package ({error})") from None
        self._openai = openai
        self._client = openai.OpenAI(base_url=self.endpoint.base_url, api_key=self.endpoint.api_key() or "none",
                                     timeout=float(self.endpoint.timeout_s), max_retries=int(self.endpoint.max_retries))
        listing_failed = None
        try:
            # one retry at most: a listing that fails is not a reason to wait through the full backoff
            served = [entry.id for entry in self._client.with_options(max_retries=1).models.list()]
        except Exception as error:  # any failure of the listing is said; then the completions decide
            # `transformers serve` on a fresh machine answers /v1/models with HTTP 500 (no Hugging Face cache
            # folder to scan) while its completions work: the listing is a check, not a requirement.
            served, listing_failed = [], self._reason(error)
        if served and self.endpoint.model not in served:
            raise EndpointError(f"endpoint {self.endpoint.host} does not serve {self.endpoint.model!r} "
                                f"(it serves: {', '.join(served[:5])})")
        try:
            first = self._completion({"prompt": "Hello", "max_tokens": 1, "temperature": 0})
        except EndpointError as error:
            if listing_failed is None:
                raise
            raise EndpointError(f"endpoint {self.endpoint.host} cannot list its models: {listing_failed}; a "
                                f"completion failed too: {str(error).split(': ', 1)[-1]}") from None
        # Servers that list nothing (transformers serve) name the model they used in each answer.
        self.served_model = self.endpoint.model if self.endpoint.model in served else (
            getattr(first, "model", None) or self.endpoint.model)
        #: None when /v1/models confirmed the model (or listed nothing); else why the id is unverified
        self.model_unverified = None if listing_failed is None else (
            f"the server could not list its models ({listing_failed}), so the model name given was used "
            "unchecked; completions answered")
        if self.endpoint.capabilities is not None:
            self.capabilities = {c: c in self.endpoint.capabilities for c in CAPABILITIES}
        else:
            self.capabilities = self._detect()

    def _detect(self) -> dict[str, bool]:
        """One-token probes: a field the server refuses (4xx) or ignores is a capability it lacks."""
        found: dict[str, bool] = {}
        base = {"prompt": "Hello there", "max_tokens": 1, "temperature": 1.0}
        found["seed"] = self._accepts({**base, "seed": 1}) is not None
        answer = self._accepts({**base, "n": 2})
        found["n"] = answer is not None and len(answer.choices) == 2
        found["top_k"] = self._accepts({**base, "extra_body": {"top_k": 5}}) is not None
        found["min_p"] = self._accepts({**base, "extra_body": {"min_p": 0.05}}) is not None
        answer = self._accepts({**base, "logprobs": 1})
        found["logprobs"] = answer is not None and bool(_token_logprobs(answer.choices[0]))
        answer = self._accepts({**base, "logprobs": 1, "echo": True})
        found["echo"] = answer is not None and _echo_covers_prompt(answer.choices[0], base["prompt"])
        answer = self._accepts({**base, "extra_body": {"prompt_logprobs": 0}})
        found["prompt_logprobs"] = answer is not None and bool(_prompt_logprobs(answer.choices[0]))
        return found

    def _accepts(self, body: dict[str, Any]) -> Any:
        try:
            return self._completion(body)
        except EndpointError:
            return None

    def _reason(self, error: Exception) -> str:
        """One line about a failed request, with the key (if any) masked."""
        status = getattr(error, "status_code", None)
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        text = re.sub(r"^Error code: \d+( - )?", "", text) or "no detail given"  # the status is said once, below
        if isinstance(error, self._openai.APITimeoutError):
            text = f"no answer within {self.endpoint.timeout_s:g} s"
        elif isinstance(error, self._openai.APIConnectionError):
            text = "connection failed (is the server running?)"
        text = redact_key(text[:300], self.endpoint)
        return f"HTTP {status}: {text}" if status else text

    def _completion(self, body: dict[str, Any]) -> Any:
        try:
            response = self._client.completions.create(model=self.endpoint.model, **body)
        except self._openai.OpenAIError as error:
            raise EndpointError(f"endpoint {self.endpoint.host} refused a completion: {self._reason(error)}") from None
        self._count(response)
        return response

    def _chat_completion(self, body: dict[str, Any]) -> Any:
        try:
            response = self._client.chat.completions.create(model=self.endpoint.model, **body)
        except self._openai.OpenAIError as error:
            raise EndpointError(f"endpoint {self.endpoint.host} refused a chat completion: "
                                f"{self._reason(error)}") from None
        self._count(response)
        return response

    def _count(self, response: Any) -> None:
        usage = getattr(response, "usage", None)
        self.usage.add({"prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                        "completion_tokens": getattr(usage, "completion_tokens", 0) or 0})

    # -------------------------------------------------------------------------- what can it do
    def cannot(self, what: str) -> str | None:
        """One sentence on why this endpoint cannot do `what` (a capability or "loglikelihood"), else None."""
        if what == "loglikelihood":
            if self.capabilities.get("echo") or self.capabilities.get("prompt_logprobs"):
                return None
            return (f"not available from this endpoint ({self.name}): it returns no prompt log-probs "
                    "(vLLM's prompt_logprobs or echo + logprobs)")
        if what in CAPABILITIES and not self.capabilities.get(what):
            how = "declared" if self.capabilities_from == "declared" else "detected"
            return f"this endpoint ({self.name}) does not support {what} ({how})"
        return None

    def describe_capabilities(self) -> dict[str, Any]:
        return {"from": self.capabilities_from, **{c: bool(self.capabilities.get(c)) for c in CAPABILITIES}}

    def manifest(self) -> dict[str, Any]:
        """What a run manifest records of the endpoint: host, path, model as served, capabilities; and, when the
        server could not list its models, `model_verified: false` with the reason (the id was not checked)."""
        out = {"task": "causal-lm", "api": "openai-compatible", "host": self.endpoint.host,
               "path": self.endpoint.path, "model": self.served_model, "capabilities": self.describe_capabilities()}
        if self.model_unverified is not None:
            out |= {"model_verified": False, "model_check": self.model_unverified}
        return out

    def sampling_fields(self, decoding: DecodingConfig, max_new_tokens: int | None = None,
                        seed: int | None = None, stop: Sequence[str] | None = None) -> dict[str, Any]:
        """The body fields a completion with this decoding sends (raises EndpointError for a knob the
        server lacks: a setting is never silently dropped)."""
        body: dict[str, Any] = {"max_tokens": int(max_new_tokens or decoding.max_new_tokens)}
        extra: dict[str, Any] = {}
        if decoding.greedy:
            body["temperature"] = 0.0
        else:
            body["temperature"] = float(decoding.temperature)
            if decoding.top_p is not None:
                body["top_p"] = float(decoding.top_p)
            if decoding.top_k is not None:
                reason = self.cannot("top_k")
                if reason:
                    raise EndpointError(f"{reason}: choose top_p or temperature for it")
                extra["top_k"] = int(decoding.top_k)
        if seed is not None and self.capabilities.get("seed"):
            body["seed"] = int(seed)
        if stop:
            body["stop"] = list(stop)
        if extra:
            body["extra_body"] = extra
        return body

    def sent_manifest(self, decoding: DecodingConfig) -> dict[str, Any]:
        """Every sampling field sent for `decoding` (max_tokens and seed vary per request, so named)."""
        body = self.sampling_fields(decoding, max_new_tokens=1, seed=0)
        body["max_tokens"] = "max_new_tokens of the request"
        if "seed" in body:
            body["seed"] = "one per row (from the run seed, prompt and sample)"
        return body

    # ------------------------------------------------------------------------------ concurrency
    def _run_all(self, calls: Sequence[Callable[[], T]], progress: Callable[[int, int], None] | None = None,
                 on_done: Callable[[int, T], None] | None = None) -> list[T]:
        """Run `calls` with at most max_in_flight at a time; results in call order.

        `progress(done, total)` and `on_done(index, result)` run in this thread; when either raises,
        calls not yet sent are dropped (within one poll, 0.2 s) and the exception propagates.
        """
        total = len(calls)
        results: list[Any] = [None] * total
        if not total:
            return []
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(int(self.endpoint.max_in_flight), total),
                                                     thread_name_prefix="endpoint")
        pending: dict[concurrent.futures.Future, int] = {}
        try:
            pending = {pool.submit(call): index for index, call in enumerate(calls)}
            done_count = 0
            while pending:
                finished, _ = concurrent.futures.wait(list(pending), timeout=_POLL_S,
                                                      return_when=concurrent.futures.FIRST_COMPLETED)
                for future in finished:
                    index = pending.pop(future)
                    results[index] = future.result()  # a failed request (after retries) fails the call
                    done_count += 1
                    if on_done is not None:
                        on_done(index, results[index])
                if progress is not None:
                    progress(done_count, total)
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
        return results

    # ----------------------------------------------------------------------------- generation
    def _one_completion(self, prompt: str, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        response = self._completion({"prompt": prompt, **body})
        usage = getattr(response, "usage", None)
        return response.choices[0].text or "", {
            "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
            "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0)}

    def generate(self, prompts: Sequence[str], decoding: DecodingConfig | Sequence[DecodingConfig], n: int = 1,
                 seed: int = 0, stop: Sequence[str] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> list[list[str]]:
        """`n` continuations per prompt. With a server that honours seeds, one request per sample (its seed
        from (seed, prompt, j)); with one that takes `n` but no seed, one request with n choices."""
        configs = [decoding] * len(prompts) if isinstance(decoding, DecodingConfig) else list(decoding)
        if self.capabilities.get("n") and not self.capabilities.get("seed") and n > 1:
            def batch(prompt: str, config: DecodingConfig) -> Callable[[], list[str]]:
                body = {**self.sampling_fields(config, stop=stop), "n": n}
                return lambda: [c.text or "" for c in sorted(self._completion({"prompt": prompt, **body}).choices,
                                                             key=lambda c: c.index)]
            return self._run_all([batch(p, c) for p, c in zip(prompts, configs, strict=True)], progress)
        calls = []
        for prompt, config in zip(prompts, configs, strict=True):
            for j in range(n):
                body = self.sampling_fields(config, seed=request_seed(seed, prompt, j), stop=stop)
                calls.append(lambda prompt=prompt, body=body: self._one_completion(prompt, body)[0])
        texts = self._run_all(calls, progress)
        return [texts[i * n : (i + 1) * n] for i in range(len(prompts))]

    def generate_rows_with_usage(
        self, prompts: Sequence[str], configs: Sequence[DecodingConfig], seeds: Sequence[int], max_new_tokens: int,
        on_step: Callable[[list[tuple[int, str, bool]]], None] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[tuple[str, dict[str, int]]]:
        """One continuation per row (seed = the row's seed) with the tokens the server counted for it.
        `on_step` sees each row once, when its answer arrives (row, text, True)."""
        bodies = [self.sampling_fields(config, max_new_tokens=max_new_tokens, seed=int(seed) & 0x7FFFFFFF)
                  for config, seed in zip(configs, seeds, strict=True)]
        calls = [lambda prompt=prompt, body=body: self._one_completion(prompt, body)
                 for prompt, body in zip(prompts, bodies, strict=True)]
        report = None if on_step is None else (lambda index, result: on_step([(index, result[0], True)]))
        return self._run_all(calls, progress, report)

    def generate_rows(self, prompts: Sequence[str], configs: Sequence[DecodingConfig], seeds: Sequence[int],
                      max_new_tokens: int, stop_at_sentence_end: bool = False,
                      on_step: Callable[[list[tuple[int, str, bool]]], None] | None = None,
                      progress: Callable[[int, int], None] | None = None) -> list[str]:
        # The server generates max_new_tokens; the first sentence is cut here, as for in-process rows.
        return [text for text, _ in self.generate_rows_with_usage(prompts, configs, seeds, max_new_tokens,
                                                                  on_step=on_step, progress=progress)]

    def chat_with_usage(self, conversations: Sequence[Sequence[Mapping[str, str]]],
                        decoding: DecodingConfig | Sequence[DecodingConfig], n: int = 1, seed: int = 0,
                        progress: Callable[[int, int], None] | None = None,
                        ) -> list[list[tuple[str, dict[str, int]]]]:
        """`n` (reply, tokens counted) per conversation through /v1/chat/completions (the server applies its
        chat template); reply j's seed comes from (seed, conversation, j)."""
        configs = [decoding] * len(conversations) if isinstance(decoding, DecodingConfig) else list(decoding)
        calls = []
        for messages, config in zip(conversations, configs, strict=True):
            self.format_chat(messages)  # validates roles and contents (one sentence)
            plain = [{"role": m["role"], "content": m["content"]} for m in messages]
            for j in range(n):
                body = self.sampling_fields(config, seed=request_seed(seed, plain, j))
                calls.append(lambda plain=plain, body=body: self._one_chat(plain, body))
        answers = self._run_all(calls, progress)
        return [answers[i * n : (i + 1) * n] for i in range(len(conversations))]

    def _one_chat(self, messages: list[dict[str, str]], body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        response = self._chat_completion({"messages": messages, **body})
        usage = getattr(response, "usage", None)
        return response.choices[0].message.content or "", {
            "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
            "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0)}

    def chat(self, conversations: Sequence[Sequence[Mapping[str, str]]],
             decoding: DecodingConfig | Sequence[DecodingConfig], n: int = 1, seed: int = 0,
             progress: Callable[[int, int], None] | None = None) -> list[list[str]]:
        """`n` replies per conversation through /v1/chat/completions (the server applies its chat template)."""
        return [[text for text, _ in replies]
                for replies in self.chat_with_usage(conversations, decoding, n=n, seed=seed, progress=progress)]

    # --------------------------------------------------------------------------- log-likelihood
    def loglikelihood(self, contexts: Sequence[str], continuations: Sequence[str],
                      progress: Callable[[int, int], None] | None = None,
                      top_logprobs: int = 0) -> list[TokenScores]:
        """Log-probs of the continuation's tokens from the server's prompt log-probs (echo + logprobs,
        or vLLM's prompt_logprobs); tokens are the server's, split where the context ends.

        With `top_logprobs=k`, the server is asked for each prompt token's k most likely tokens too, and
        `entropies` holds `entropy_lower_bound` of each step: an approximation of the full distribution's
        entropy (a server returns at most its top k, never the whole vocabulary)."""
        reason = self.cannot("loglikelihood")
        if reason:
            raise EndpointError(reason)
        use_echo = bool(self.capabilities.get("echo"))
        k = int(top_logprobs)
        body: dict[str, Any] = ({"max_tokens": 1, "temperature": 0.0, "echo": True, "logprobs": k} if use_echo else
                                {"max_tokens": 1, "temperature": 0.0, "extra_body": {"prompt_logprobs": k}})

        def score(context: str, continuation: str, choice: Any = None) -> TokenScores:
            text = context + continuation
            if choice is None:
                choice = self._completion({"prompt": text, **body}).choices[0]
            if use_echo:
                tokens, values, offsets = _echo_tokens(choice)
                tops = _echo_top_logprobs(choice, len(tokens)) if k else []
            else:
                entries = _prompt_logprobs(choice)
                tokens, values, offsets = _prompt_logprob_tokens(entries, text)
                tops = [_entry_logprobs(entry) for entry in entries] if k else []
            keep = [i for i, start in enumerate(offsets) if len(context) <= start < len(text)]
            entropies = None
            if k:
                if any(not tops[i] for i in keep):
                    raise EndpointError(f"endpoint {self.endpoint.host} returned prompt log-probs without the top "
                                        f"{k} log-probs of each token, so step entropies cannot be estimated")
                # echo's top log-probs are keyed by token text and may leave out the prompt's own token;
                # vLLM's prompt_logprobs entries are keyed by token id and always hold it
                entropies = np.array([entropy_lower_bound(tops[i], k, (tokens[i], values[i]) if use_echo else None)
                                      for i in keep], dtype=np.float64)
            return TokenScores([tokens[i] for i in keep],
                               np.array([np.nan if values[i] is None else values[i] for i in keep], dtype=np.float64),
                               entropies)

        def batch(texts: list[tuple[str, str]]) -> list[TokenScores]:
            """One request for several texts (one choice per prompt, matched by its index); a server that refuses
            a list of prompts, or answers it with other choices, gets one request per text from then on."""
            if len(texts) > 1 and self._list_prompts is not False:
                try:
                    choices = self._completion({"prompt": [c + t for c, t in texts], **body}).choices
                    by_index = {int(getattr(choice, "index", -1)): choice for choice in choices}
                    if sorted(by_index) == list(range(len(texts))):
                        self._list_prompts = True
                        return [score(c, t, by_index[i]) for i, (c, t) in enumerate(texts)]
                except EndpointError:
                    if self._list_prompts:  # lists worked before: this is the server failing, not the format
                        raise
                self._list_prompts = False
            return [score(c, t) for c, t in texts]

        pairs = list(zip(contexts, continuations, strict=True))
        size = LOGLIKELIHOOD_BATCH if self._list_prompts is not False else 1
        groups = [pairs[start:start + size] for start in range(0, len(pairs), size)]
        done = [0]

        def on_done(_: int, result: list[TokenScores]) -> None:
            done[0] += len(result)

        # progress in texts, called every poll as before (it may raise: a job's Cancel stops within 0.2 s)
        in_texts = None if progress is None else (lambda _calls, _total: progress(done[0], len(pairs)))
        calls = [lambda group=group: batch(group) for group in groups]
        return [scores for group in self._run_all(calls, in_texts, on_done=on_done) for scores in group]


def entropy_lower_bound(top: Mapping[str, float], k: int, own: tuple[str, float | None] | None = None) -> float:
    """A lower bound (nats) of a step's entropy from what a server returns: `top` maps tokens to log-probs (its
    top k, sometimes with the prompt's own token added), `own` is the prompt's token and log-prob (counted
    when `top` does not hold it).

    The tokens known contribute -p log p exactly; the probability they leave, r = 1 - sum p, lies on tokens no
    likelier than the k-th likeliest (p_k), so it contributes at least r * (-log p_k). The bound is tight when
    the top k carry almost all the mass and falls short when the distribution is flat."""
    known = {token: float(v) for token, v in top.items() if v is not None and np.isfinite(v)}
    if not known:
        return float("nan")
    ranked = sorted(known.values(), reverse=True)
    p_k = float(np.exp(ranked[min(int(k), len(ranked)) - 1]))
    if own is not None and own[1] is not None and own[0] not in known and np.isfinite(own[1]):
        known[own[0]] = float(own[1])  # the prompt's own token, ranked below the top k
    logp = np.asarray(list(known.values()), dtype=np.float64)
    p = np.exp(logp)
    rest = max(0.0, 1.0 - float(p.sum()))
    return float(-(p * logp).sum()) + (rest * -float(np.log(p_k)) if rest > 0 else 0.0)


def redact_key(text: str, endpoint: Endpoint) -> str:
    """`text` with the endpoint's key (if it is set) replaced: error messages never carry it."""
    value = os.environ.get(endpoint.key_env or "") if endpoint.key_env else None
    return text.replace(value, "[key]") if value else text


# ---------------------------------------------------------------------------- response parsing
def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value


def _token_logprobs(choice: Any) -> list[Any]:
    logprobs = _field(choice, "logprobs")
    return list(_field(logprobs, "token_logprobs") or []) if logprobs is not None else []


def _echo_tokens(choice: Any) -> tuple[list[str], list[float | None], list[int]]:
    logprobs = _field(choice, "logprobs")
    tokens = list(_field(logprobs, "tokens") or [])
    values = list(_field(logprobs, "token_logprobs") or [])
    offsets = list(_field(logprobs, "text_offset") or [])
    if not (len(tokens) == len(values) == len(offsets)) or not tokens:
        raise EndpointError("the endpoint's echo log-probs have no tokens/token_logprobs/text_offset to align")
    return tokens, values, [int(o) for o in offsets]


def _echo_covers_prompt(choice: Any, prompt: str) -> bool:
    try:
        _, values, offsets = _echo_tokens(choice)
    except EndpointError:
        return False
    return (choice.text or "").startswith(prompt) and offsets[0] == 0 and any(v is not None for v in values[1:])


def _prompt_logprobs(choice: Any) -> list[Any]:
    return list(_field(choice, "prompt_logprobs") or [])


def _echo_top_logprobs(choice: Any, n_tokens: int) -> list[dict[str, float]]:
    """Per echoed token, its top log-probs (token -> log-prob); {} where the server gave none."""
    logprobs = _field(choice, "logprobs")
    tops = list(_field(logprobs, "top_logprobs") or [])
    out = [{str(k): float(v) for k, v in dict(entry).items()} if entry else {} for entry in tops]
    return (out + [{}] * n_tokens)[:n_tokens]


def _entry_logprobs(entry: Any) -> dict[str, float]:
    """vLLM's prompt_logprobs entry (token id -> {logprob, rank, decoded_token}) as token id -> log-prob."""
    if not entry:
        return {}
    return {str(token_id): float(_field(info, "logprob")) for token_id, info in dict(entry).items()}


def _prompt_logprob_tokens(entries: Sequence[Any], text: str) -> tuple[list[str], list[float | None], list[int]]:
    """vLLM's prompt_logprobs (per prompt token: None or {token_id: {logprob, decoded_token, rank}}; with
    prompt_logprobs=0 only the prompt's own token) as tokens, values and character offsets. Offsets are
    laid from the end of the text backwards: the first token has no entry (None), so its length is unknown."""
    tokens: list[str] = []
    values: list[float | None] = []
    for entry in entries:
        own = next(iter(entry.values())) if entry else None
        tokens.append(str(_field(own, "decoded_token") or "") if own is not None else "")
        values.append(None if own is None else float(_field(own, "logprob")))
    offsets, end = [0] * len(tokens), len(text)
    for i in range(len(tokens) - 1, -1, -1):
        end -= len(tokens[i]) if values[i] is not None else 0
        offsets[i] = max(end, 0) if values[i] is not None else 0
    return tokens, values, offsets


# ------------------------------------------------------------------------------- a local server
def sampling_folder(source: Path, target: Path) -> Path:
    """A model folder for `transformers serve` that samples: `source`'s files linked into `target`, with a
    generation_config.json that sets do_sample (without it, transformers serve decodes greedily and ignores
    temperature and top_p). Rebuilt when present, so it follows `source`."""
    import shutil

    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.is_file() and path.name != "generation_config.json":
            (target / path.name).symlink_to(path.resolve())
    settings = {}
    if (source / "generation_config.json").is_file():
        settings = json.loads((source / "generation_config.json").read_text(encoding="utf-8"))
    settings["do_sample"] = True
    (target / "generation_config.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return target


def endpoint_client(source: str, key: tuple[str, ...]) -> EndpointLM:
    """The process-wide client of the endpoint `source` (what `load_model` returns for its spec; `key` is the
    spec's cache key), built on first use."""
    from fairness_core.models.memo import cached

    return cached(key, lambda: EndpointLM(Endpoint.parse(source)))
