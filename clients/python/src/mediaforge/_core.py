"""The one request path of the client, sync and async: headers, the envelope, errors, retries.

Retry policy (automatic, exponential backoff with jitter, Retry-After honoured):
- 429 is retried for every call: the rate limiter answers before the request is processed.
- 5xx (not 501), 40904 (idempotency in progress), 408, timeouts and connection errors are retried
  only for calls that are safe to repeat: reads, quote, purge (idempotent by taskId), and createTask
  / retry, which always carry an Idempotency-Key (generated per call when the caller gives none and
  sent unchanged on every attempt, so a lost answer never creates a second task).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import urllib.parse
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from ._errors import (
    APIError,
    ConnectionError,
    MediaforgeError,
    TimeoutError,
    error_from_response,
    parse_retry_after,
)
from ._generated.operations import OPERATIONS
from ._version import __version__

Retry = Literal["safe", "unsafe"]

BASE_DELAY = 0.5
MAX_DELAY = 8.0


def backoff(attempt: int) -> float:
    """0.5 s, 1 s, 2 s, ... up to 8 s, with +-25 % jitter."""
    return float(min(MAX_DELAY, BASE_DELAY * 2**attempt) * (0.75 + random.random() * 0.5))


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


@dataclass
class Result:
    """The unwrapped answer of one call: the envelope's ``data``, its request id and the response."""

    data: Any
    request_id: str
    response: httpx.Response


@dataclass
class Config:
    api_key: str = field(repr=False)
    base_url: str
    max_retries: int
    timeout: float
    language: str | None
    max_retry_after: float

    def __repr__(self) -> str:
        return f"Config(base_url={self.base_url!r}, api_key='sk-…', max_retries={self.max_retries}, timeout={self.timeout})"

    @staticmethod
    def of(
        api_key: str | None,
        base_url: str | None,
        max_retries: int,
        timeout: float,
        language: str | None,
        max_retry_after: float,
    ) -> Config:
        key = api_key if api_key is not None else os.environ.get("MEDIAFORGE_API_KEY")
        url = base_url if base_url is not None else os.environ.get("MEDIAFORGE_BASE_URL")
        if not key:
            raise MediaforgeError("Mediaforge(api_key=..., base_url=...): api_key (or MEDIAFORGE_API_KEY) is required")
        if not url or not url.startswith(("http://", "https://")):
            raise MediaforgeError("Mediaforge(api_key=..., base_url=...): base_url (or MEDIAFORGE_BASE_URL) must be an http(s) URL")
        root = url.rstrip("/")
        if root.endswith("/api/v1"):
            root = root[: -len("/api/v1")]
        return Config(key, root, max_retries, timeout, language, max_retry_after)

    def headers(self) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "User-Agent": f"mediaforge-python/{__version__}",
        }
        if self.language:
            headers["Accept-Language"] = self.language
        return headers


@dataclass
class Call:
    """One operation to send: by operationId, with its path parameters, query, headers and body."""

    operation: str
    retry: Retry
    path: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    json: Any = None
    timeout: float | None = None
    max_retries: int | None = None
    deadline: float | None = None
    """time.monotonic() after which no attempt starts and no backoff sleeps (a wait's own end)."""

    def url(self, base_url: str) -> tuple[str, str]:
        method, template = OPERATIONS[self.operation]
        path = template
        for name, value in self.path.items():
            path = path.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
        return method, base_url + path


def _is_retryable(error: APIError, retry: Retry) -> bool:
    if error.status == 429:
        return True
    if retry != "safe":
        return False
    if error.code == 40904 or error.status == 408:
        return True
    return error.status >= 500 and error.status != 501


def _unwrap(response: httpx.Response) -> Result:
    # A CSV answer (statements, usage with format=csv) is its text, not an envelope.
    if response.headers.get("content-type", "").startswith("text/csv"):
        return Result(response.text, response.headers.get("x-request-id", ""), response)
    body: Any = response.json() if response.content else None
    request_id = body.get("request_id") if isinstance(body, dict) else None
    if not isinstance(request_id, str):
        request_id = response.headers.get("x-request-id", "")
    data = body["data"] if isinstance(body, dict) and "data" in body else body
    return Result(data, request_id, response)


def _error_of(response: httpx.Response) -> APIError:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return error_from_response(response.status_code, body, response.headers)


class _Policy:
    """What to do after one attempt: the shared decision of the sync and async paths."""

    def __init__(self, config: Config, call: Call):
        self.config = config
        self.call = call
        self.max_retries = call.max_retries if call.max_retries is not None else config.max_retries
        self.timeout = call.timeout if call.timeout is not None else config.timeout

    def attempt_timeout(self) -> float:
        if self.call.deadline is None:
            return self.timeout
        left = self.call.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the wait ran out of time")
        return min(self.timeout, left)

    def after_answer(self, response: httpx.Response, attempt: int) -> float:
        """The delay before the next attempt; raises when the answer is final."""
        error = _error_of(response)
        if not _is_retryable(error, self.call.retry) or attempt >= self.max_retries:
            raise error
        hint = parse_retry_after(response.headers.get("retry-after"))
        if hint is not None and hint > self.config.max_retry_after:
            raise error
        return self._bounded(hint if hint is not None else backoff(attempt), error)

    def after_failure(self, failure: httpx.TransportError, attempt: int, timeout: float) -> float:
        error: MediaforgeError = (
            TimeoutError(f"no answer within {timeout:g} s")
            if isinstance(failure, httpx.TimeoutException)
            else ConnectionError(f"connection failed: {failure}")
        )
        if self.call.retry != "safe" or attempt >= self.max_retries:
            raise error from failure
        return self._bounded(backoff(attempt), error)

    def _bounded(self, delay: float, error: MediaforgeError) -> float:
        if self.call.deadline is not None and time.monotonic() + delay >= self.call.deadline:
            raise error
        return delay


class SyncCore:
    def __init__(self, config: Config, http_client: httpx.Client | None):
        self.config = config
        self.http = http_client or httpx.Client()

    def request(self, call: Call) -> Result:
        policy = _Policy(self.config, call)
        method, url = call.url(self.config.base_url)
        headers = {**self.config.headers(), **(call.headers or {})}
        attempt = 0
        while True:
            timeout = policy.attempt_timeout()
            try:
                response = self.http.request(method, url, params=_query(call.query), headers=headers, json=call.json, timeout=timeout)
            except httpx.TransportError as failure:
                delay = policy.after_failure(failure, attempt, timeout)
            else:
                if response.is_success:
                    return _unwrap(response)
                delay = policy.after_answer(response, attempt)
            time.sleep(delay)
            attempt += 1

    def close(self) -> None:
        self.http.close()


class AsyncCore:
    def __init__(self, config: Config, http_client: httpx.AsyncClient | None):
        self.config = config
        self.http = http_client or httpx.AsyncClient(limits=httpx.Limits(max_connections=100, max_keepalive_connections=100))

    async def request(self, call: Call) -> Result:
        policy = _Policy(self.config, call)
        method, url = call.url(self.config.base_url)
        headers = {**self.config.headers(), **(call.headers or {})}
        attempt = 0
        while True:
            timeout = policy.attempt_timeout()
            try:
                response = await self.http.request(method, url, params=_query(call.query), headers=headers, json=call.json, timeout=timeout)
            except httpx.TransportError as failure:
                delay = policy.after_failure(failure, attempt, timeout)
            else:
                if response.is_success:
                    return _unwrap(response)
                delay = policy.after_answer(response, attempt)
            await asyncio.sleep(delay)
            attempt += 1

    async def close(self) -> None:
        await self.http.aclose()


def _query(query: Mapping[str, Any] | None) -> dict[str, str] | None:
    if not query:
        return None
    out: dict[str, str] = {}
    for key, value in query.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out
