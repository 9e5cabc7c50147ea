"""tasks: quote, create, get, retry, purge, list, wait / wait_for, create_and_wait, download.

Waiting: for a task this client created within the last hour, ``wait_for`` replays the createTask
call with its Idempotency-Key and ``wait`` (the server holds the call open; a replay returns the
same task and holds nothing twice); otherwise it polls recordInfo, as long as Retry-After says,
else backing off from 0.5 s to 10 s. It always ends by its timeout: a TimeoutError then.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ._core import AsyncCore, Call, Result, SyncCore, _error_of, new_idempotency_key
from ._errors import MediaforgeError, TimeoutError, parse_retry_after
from ._generated.async_tasks import AsyncTypedTasks
from ._generated.schemas import DownloadUrls, PurgeResult, Quote, TaskRecord
from ._generated.tasks import TypedTasks
from ._pagination import AsyncPages, Pages

TERMINAL_STATES = ("succeeded", "failed", "canceled", "expired")
MAX_POLL = 10.0
DEFAULT_WAIT_TIMEOUT = 600.0
LONG_WAIT_WINDOW = 3600.0
REMEMBERED = 256


def is_terminal(state: str) -> bool:
    return state in TERMINAL_STATES


@dataclass
class Created:
    """The created task and how it was created."""

    task: TaskRecord
    idempotency_key: str
    """The key sent (given or generated): repeat the call with it to get the same task."""
    replayed: bool
    """True when the server answered with an existing task for this key (Idempotent-Replayed)."""
    retry_after: float | None
    request_id: str


@dataclass
class _Remembered:
    body: dict[str, Any]
    idempotency_key: str
    at: float


def _body(model: str, input: Any, callback_url: str | None, quote_id: str | None, expected_credits: int | None, expected_cost: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "input": input}
    if callback_url is not None:
        body["callBackUrl"] = callback_url
    if quote_id is not None:
        body["quoteId"] = quote_id
    if expected_credits is not None:
        body["expectedCredits"] = expected_credits
    if expected_cost is not None:
        body["expectedCost"] = expected_cost
    return body


def _wait_seconds(wait: int | bool | None) -> int | None:
    if wait is True:
        return 60
    if wait is None or wait is False or wait <= 0:
        return None
    return min(60, int(wait))


def _create_call(body: dict[str, Any], key: str, wait: int | None, retention: int | None, timeout: float | None, default_timeout: float, deadline: float | None = None) -> Call:
    headers = {"Idempotency-Key": key}
    if retention is not None:
        headers["X-Service-Retention"] = str(retention)
    if timeout is None and wait is not None:
        timeout = max(default_timeout, wait + 30.0)
    return Call("createTask", "safe", query={"wait": wait} if wait else None, headers=headers, json=body, timeout=timeout, deadline=deadline)


def _created(result: Result, key: str) -> Created:
    return Created(
        task=result.data,
        idempotency_key=key,
        replayed=result.response.headers.get("idempotent-replayed") == "true",
        retry_after=parse_retry_after(result.response.headers.get("retry-after")),
        request_id=result.request_id,
    )


def _task_id(task: str | Mapping[str, Any]) -> str:
    if isinstance(task, str):
        return task
    task_id = task.get("taskId")
    if not isinstance(task_id, str):
        raise MediaforgeError("pass a task id or a task record")
    return task_id


class _Memory:
    """Tasks this client created recently: their body and key, for the long wait of wait_for."""

    def __init__(self) -> None:
        self.created: OrderedDict[str, _Remembered] = OrderedDict()

    def remember(self, task_id: str, body: dict[str, Any], key: str) -> None:
        self.created.pop(task_id, None)
        self.created[task_id] = _Remembered(body, key, time.monotonic())
        while len(self.created) > REMEMBERED:
            self.created.popitem(last=False)

    def recent(self, task_id: str) -> _Remembered | None:
        known = self.created.get(task_id)
        return known if known and time.monotonic() - known.at < LONG_WAIT_WINDOW else None


class Tasks(TypedTasks):
    def __init__(self, core: SyncCore):
        self._core = core
        self._memory = _Memory()

    def create_detailed(self, *, model: str, input: Any, wait: int | bool | None = None, idempotency_key: str | None = None, callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None, retention_seconds: int | None = None, timeout: float | None = None) -> Created:
        """As ``create``, with the Idempotency-Key used, the replay flag and the polling hint."""
        key = idempotency_key or new_idempotency_key()
        body = _body(model, input, callback_url, quote_id, expected_credits, expected_cost)
        result = self._core.request(_create_call(body, key, _wait_seconds(wait), retention_seconds, timeout, self._core.config.timeout))
        created = _created(result, key)
        if not is_terminal(created.task["state"]):
            self._memory.remember(created.task["taskId"], body, key)
        return created

    def _create(self, *, model: str, input: Any, callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None, wait: int | bool | None = None, idempotency_key: str | None = None, retention_seconds: int | None = None, timeout: float | None = None) -> TaskRecord:
        return self.create_detailed(model=model, input=input, wait=wait, idempotency_key=idempotency_key, callback_url=callback_url, quote_id=quote_id, expected_credits=expected_credits, expected_cost=expected_cost, retention_seconds=retention_seconds, timeout=timeout).task

    def _quote(self, *, model: str, input: Any, callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None, timeout: float | None = None) -> Quote:
        body = _body(model, input, callback_url, quote_id, expected_credits, expected_cost)
        data: Quote = self._core.request(Call("quoteTask", "safe", json=body, timeout=timeout)).data
        return data

    def _create_and_wait(self, *, model: str, input: Any, callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None, idempotency_key: str | None = None, retention_seconds: int | None = None, timeout: float | None = None) -> TaskRecord:
        limit = DEFAULT_WAIT_TIMEOUT if timeout is None else timeout
        deadline = time.monotonic() + limit
        created = self.create_detailed(model=model, input=input, wait=max(1, min(60, int(limit))), idempotency_key=idempotency_key, callback_url=callback_url, quote_id=quote_id, expected_credits=expected_credits, expected_cost=expected_cost, retention_seconds=retention_seconds)
        if is_terminal(created.task["state"]):
            return created.task
        return self.wait_for(created.task["taskId"], timeout=max(0.0, deadline - time.monotonic()))

    def get(self, task_id: str, *, timeout: float | None = None) -> TaskRecord:
        """Reads a task (GET /jobs/recordInfo); any state."""
        data: TaskRecord = self._core.request(Call("getTaskRecord", "safe", query={"taskId": task_id}, timeout=timeout)).data
        return data

    def wait_for(self, task: str | Mapping[str, Any], *, timeout: float = DEFAULT_WAIT_TIMEOUT, poll_interval: float = 0.5) -> TaskRecord:
        """Returns the task once terminal (check ``state``); TimeoutError when ``timeout`` seconds run out."""
        task_id = _task_id(task)
        try:
            return self._wait_for(task_id, timeout, poll_interval)
        except TimeoutError as error:
            raise TimeoutError(f"task {task_id} not finished after {timeout:g} s") from error

    def _wait_for(self, task_id: str, timeout: float, poll_interval: float) -> TaskRecord:
        deadline = time.monotonic() + timeout
        known = self._memory.recent(task_id)
        while known is not None:
            seconds = int(deadline - time.monotonic())
            if seconds < 1:
                break
            result = self._core.request(_create_call(known.body, known.idempotency_key, min(60, seconds), None, None, self._core.config.timeout, deadline))
            record: TaskRecord = result.data
            if record["taskId"] != task_id:
                break  # never expected inside the window; fall back to reading the task
            if is_terminal(record["state"]):
                self._memory.created.pop(task_id, None)
                return record
        delay = poll_interval
        while True:
            result = self._core.request(Call("getTaskRecord", "safe", query={"taskId": task_id}, deadline=deadline))
            record = result.data
            if is_terminal(record["state"]):
                self._memory.created.pop(task_id, None)
                return record
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"task {task_id} still {record['state']}")
            hint = parse_retry_after(result.response.headers.get("retry-after"))
            time.sleep(min(hint if hint is not None else delay, left))
            delay = min(MAX_POLL, delay * 1.5)

    def wait(self, task: str | Mapping[str, Any], *, timeout: float = DEFAULT_WAIT_TIMEOUT) -> TaskRecord:
        """``wait_for`` under the issue's name: the server-held wait, ending by ``timeout`` (TimeoutError)."""
        return self.wait_for(task, timeout=timeout)

    def list(self, *, state: str | None = None, model: str | None = None, limit: int | None = None) -> Pages[TaskRecord]:
        """The calling key's tasks, newest first; iterate for every task across pages (``.pages()`` for pages)."""
        query = {"state": state, "model": model, "limit": limit}
        return Pages(lambda cursor: self._core.request(Call("listTasks", "safe", query={**query, "cursor": cursor})))

    def retry(self, task_id: str, *, idempotency_key: str | None = None, timeout: float | None = None) -> TaskRecord:
        """Retries a failed or expired task as a new task (POST /jobs/retry), with an Idempotency-Key."""
        key = idempotency_key or new_idempotency_key()
        data: TaskRecord = self._core.request(Call("retryTask", "safe", headers={"Idempotency-Key": key}, json={"taskId": task_id}, timeout=timeout)).data
        return data

    def purge(self, task_id: str, *, timeout: float | None = None) -> PurgeResult:
        """Destroys a finished task's content, keeping billing evidence (POST /jobs/purge); idempotent."""
        data: PurgeResult = self._core.request(Call("purgeTask", "safe", json={"taskId": task_id}, timeout=timeout)).data
        return data

    def download_urls(self, task_id: str) -> DownloadUrls:
        """Fresh signed links to a task's output (POST /common/download-url)."""
        data: DownloadUrls = self._core.request(Call("createDownloadUrl", "safe", json={"taskId": task_id})).data
        return data

    def download(self, task: str | Mapping[str, Any], path: str | os.PathLike[str], *, index: int = 0, chunk_size: int = 1 << 20) -> int:
        """Writes a task's output file ``index`` to ``path``, resuming a partial file with Range; returns its size."""
        task_id = _task_id(task)
        attempt = 0
        while True:
            url = _asset_url(self.download_urls(task_id), index, self._core.config.base_url)
            have = os.path.getsize(path) if os.path.exists(path) else 0
            try:
                with self._core.http.stream("GET", url, headers=_range(have), timeout=self._core.config.timeout) as response:
                    if response.status_code == 416:
                        return have
                    if response.status_code not in (200, 206):
                        response.read()
                        raise _error_of(response)
                    with open(path, "ab" if response.status_code == 206 else "wb") as out:
                        for chunk in response.iter_bytes(chunk_size):
                            out.write(chunk)
                return os.path.getsize(path)
            except httpx.TransportError as failure:
                attempt += 1
                if attempt > self._core.config.max_retries:
                    raise MediaforgeError(f"download cut: {failure}") from failure


class AsyncTasks(AsyncTypedTasks):
    def __init__(self, core: AsyncCore):
        self._core = core
        self._memory = _Memory()

    async def create_detailed(self, *, model: str, input: Any, wait: int | bool | None = None, idempotency_key: str | None = None, callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None, retention_seconds: int | None = None, timeout: float | None = None) -> Created:
        key = idempotency_key or new_idempotency_key()
        body = _body(model, input, callback_url, quote_id, expected_credits, expected_cost)
        result = await self._core.request(_create_call(body, key, _wait_seconds(wait), retention_seconds, timeout, self._core.config.timeout))
        created = _created(result, key)
        if not is_terminal(created.task["state"]):
            self._memory.remember(created.task["taskId"], body, key)
        return created

    async def _create(self, *, model: str, input: Any, callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None, wait: int | bool | None = None, idempotency_key: str | None = None, retention_seconds: int | None = None, timeout: float | None = None) -> TaskRecord:
        return (await self.create_detailed(model=model, input=input, wait=wait, idempotency_key=idempotency_key, callback_url=callback_url, quote_id=quote_id, expected_credits=expected_credits, expected_cost=expected_cost, retention_seconds=retention_seconds, timeout=timeout)).task

    async def _quote(self, *, model: str, input: Any, callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None, timeout: float | None = None) -> Quote:
        body = _body(model, input, callback_url, quote_id, expected_credits, expected_cost)
        data: Quote = (await self._core.request(Call("quoteTask", "safe", json=body, timeout=timeout))).data
        return data

    async def _create_and_wait(self, *, model: str, input: Any, callback_url: str | None = None, quote_id: str | None = None, expected_credits: int | None = None, expected_cost: str | None = None, idempotency_key: str | None = None, retention_seconds: int | None = None, timeout: float | None = None) -> TaskRecord:
        limit = DEFAULT_WAIT_TIMEOUT if timeout is None else timeout
        deadline = time.monotonic() + limit
        created = await self.create_detailed(model=model, input=input, wait=max(1, min(60, int(limit))), idempotency_key=idempotency_key, callback_url=callback_url, quote_id=quote_id, expected_credits=expected_credits, expected_cost=expected_cost, retention_seconds=retention_seconds)
        if is_terminal(created.task["state"]):
            return created.task
        return await self.wait_for(created.task["taskId"], timeout=max(0.0, deadline - time.monotonic()))

    async def get(self, task_id: str, *, timeout: float | None = None) -> TaskRecord:
        data: TaskRecord = (await self._core.request(Call("getTaskRecord", "safe", query={"taskId": task_id}, timeout=timeout))).data
        return data

    async def wait_for(self, task: str | Mapping[str, Any], *, timeout: float = DEFAULT_WAIT_TIMEOUT, poll_interval: float = 0.5) -> TaskRecord:
        task_id = _task_id(task)
        try:
            return await self._wait_for(task_id, timeout, poll_interval)
        except TimeoutError as error:
            raise TimeoutError(f"task {task_id} not finished after {timeout:g} s") from error

    async def _wait_for(self, task_id: str, timeout: float, poll_interval: float) -> TaskRecord:
        deadline = time.monotonic() + timeout
        known = self._memory.recent(task_id)
        while known is not None:
            seconds = int(deadline - time.monotonic())
            if seconds < 1:
                break
            result = await self._core.request(_create_call(known.body, known.idempotency_key, min(60, seconds), None, None, self._core.config.timeout, deadline))
            record: TaskRecord = result.data
            if record["taskId"] != task_id:
                break
            if is_terminal(record["state"]):
                self._memory.created.pop(task_id, None)
                return record
        delay = poll_interval
        while True:
            result = await self._core.request(Call("getTaskRecord", "safe", query={"taskId": task_id}, deadline=deadline))
            record = result.data
            if is_terminal(record["state"]):
                self._memory.created.pop(task_id, None)
                return record
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"task {task_id} still {record['state']}")
            hint = parse_retry_after(result.response.headers.get("retry-after"))
            await asyncio.sleep(min(hint if hint is not None else delay, left))
            delay = min(MAX_POLL, delay * 1.5)

    async def wait(self, task: str | Mapping[str, Any], *, timeout: float = DEFAULT_WAIT_TIMEOUT) -> TaskRecord:
        return await self.wait_for(task, timeout=timeout)

    def list(self, *, state: str | None = None, model: str | None = None, limit: int | None = None) -> AsyncPages[TaskRecord]:
        query = {"state": state, "model": model, "limit": limit}

        async def page(cursor: str | None) -> Result:
            return await self._core.request(Call("listTasks", "safe", query={**query, "cursor": cursor}))

        return AsyncPages(page)

    async def retry(self, task_id: str, *, idempotency_key: str | None = None, timeout: float | None = None) -> TaskRecord:
        key = idempotency_key or new_idempotency_key()
        data: TaskRecord = (await self._core.request(Call("retryTask", "safe", headers={"Idempotency-Key": key}, json={"taskId": task_id}, timeout=timeout))).data
        return data

    async def purge(self, task_id: str, *, timeout: float | None = None) -> PurgeResult:
        data: PurgeResult = (await self._core.request(Call("purgeTask", "safe", json={"taskId": task_id}, timeout=timeout))).data
        return data

    async def download_urls(self, task_id: str) -> DownloadUrls:
        data: DownloadUrls = (await self._core.request(Call("createDownloadUrl", "safe", json={"taskId": task_id}))).data
        return data

    async def download(self, task: str | Mapping[str, Any], path: str | os.PathLike[str], *, index: int = 0, chunk_size: int = 1 << 20) -> int:
        task_id = _task_id(task)
        attempt = 0
        while True:
            url = _asset_url(await self.download_urls(task_id), index, self._core.config.base_url)
            have = os.path.getsize(path) if os.path.exists(path) else 0
            try:
                async with self._core.http.stream("GET", url, headers=_range(have), timeout=self._core.config.timeout) as response:
                    if response.status_code == 416:
                        return have
                    if response.status_code not in (200, 206):
                        await response.aread()
                        raise _error_of(response)
                    with open(path, "ab" if response.status_code == 206 else "wb") as out:
                        async for chunk in response.aiter_bytes(chunk_size):
                            out.write(chunk)
                return os.path.getsize(path)
            except httpx.TransportError as failure:
                attempt += 1
                if attempt > self._core.config.max_retries:
                    raise MediaforgeError(f"download cut: {failure}") from failure


def _range(have: int) -> dict[str, str]:
    return {"Range": f"bytes={have}-"} if have > 0 else {}


def _asset_url(urls: DownloadUrls, index: int, base_url: str) -> str:
    assets = urls["assets"]
    if not 0 <= index < len(assets):
        raise MediaforgeError(f"the task has {len(assets)} output file(s); there is no index {index}")
    url = assets[index]["url"]
    return url if url.startswith(("http://", "https://")) else base_url + url

