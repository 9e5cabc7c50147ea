"""The careful client: a wait that ends, retries that create one task, bounded uploads, webhooks,
and the async client under 200 concurrent creates."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
from typing import Any

import httpx
import pytest
from conftest import INPUT, MODEL, Service

import mediaforge
from mediaforge import AsyncMediaforge, Mediaforge, TimeoutError


def test_wait_ends_at_its_timeout_against_a_task_that_never_finishes(api_only: Service) -> None:
    acct = api_only.account()
    seen: list[httpx.Request] = []
    http = httpx.Client(event_hooks={"request": [seen.append]})
    client = Mediaforge(api_key=acct.api_key, base_url=api_only.url, http_client=http)
    task = client.tasks.create(model=MODEL, input=INPUT)
    assert task["state"] == "queued"
    with pytest.raises(TimeoutError) as waited:
        client.tasks.wait(task, timeout=3)
    assert isinstance(waited.value, mediaforge.MediaforgeError) and task["taskId"] in str(waited.value)
    # The server-held wait: createTask replayed with the same key and ?wait, never a second task.
    creates = [r for r in seen if r.url.path.endswith("/jobs/createTask")]
    assert len(creates) >= 2 and {r.headers["idempotency-key"] for r in creates} == {creates[0].headers["idempotency-key"]}
    assert all(r.url.params.get("wait") for r in creates[1:])
    assert [t["taskId"] for t in client.tasks.list()] == [task["taskId"]]
    # A task the client did not create is polled until the same end.
    other = Mediaforge(api_key=acct.api_key, base_url=api_only.url)
    with pytest.raises(TimeoutError):
        other.tasks.wait_for(task["taskId"], timeout=2)


class DropFirstAnswer(httpx.HTTPTransport):
    """The server does the work; the client never sees the first createTask's answer."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.url.path.endswith("/jobs/createTask"):
            self.keys.append(request.headers["idempotency-key"])
            if len(self.keys) == 1:
                response.read()
                response.close()
                raise httpx.ReadError("connection reset by peer (simulated)", request=request)
        return response


def test_retries_reuse_the_idempotency_key(service: Service) -> None:
    acct = service.account()
    transport = DropFirstAnswer()
    client = Mediaforge(api_key=acct.api_key, base_url=service.url, http_client=httpx.Client(transport=transport))
    created = client.tasks.create_detailed(model=MODEL, input={**INPUT, "resolution": "2k", "duration_seconds": 6})
    assert len(transport.keys) == 2 and transport.keys[0] == transport.keys[1] == created.idempotency_key
    assert created.replayed is True
    assert [t["taskId"] for t in client.tasks.list()] == [created.task["taskId"]]  # the server saw one task
    credit = client.credit.get()
    assert credit["available"] == 100_000 - created.task["credits"]  # held once


def test_a_client_error_is_not_repeated(service: Service) -> None:
    acct = service.account(1)
    seen: list[httpx.Request] = []
    client = Mediaforge(api_key=acct.api_key, base_url=service.url, http_client=httpx.Client(event_hooks={"request": [seen.append]}))
    with pytest.raises(mediaforge.InsufficientCreditsError):
        client.tasks.create(model=MODEL, input=INPUT)
    assert len(seen) == 1


UPLOADER = """
import os, resource, sys
sys.path.insert(0, sys.argv[4])
from mediaforge import Mediaforge
client = Mediaforge(api_key=sys.argv[1], base_url=sys.argv[2], timeout=600)
asset = client.files.upload_asset(sys.argv[3])
print(asset["bytes"], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def test_a_300_mb_upload_in_bounded_memory(service: Service, tmp_path: Any) -> None:
    size = 300 * 1024 * 1024
    header = json.dumps({"w": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}}).encode()
    data_bytes = size - 8 - len(header)
    header = json.dumps({"w": {"dtype": "U8", "shape": [data_bytes], "data_offsets": [0, data_bytes]}}).encode()
    header += b" " * (size - 8 - len(header) - data_bytes)
    path = os.path.join(tmp_path, "big.safetensors")
    with open(path, "wb") as out:
        out.write(len(header).to_bytes(8, "little") + header)
        out.truncate(size)  # the tensor's bytes: zeros, without writing them
    acct = service.account()
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    done = subprocess.run([sys.executable, "-c", UPLOADER, acct.api_key, service.url, path, src], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    uploaded, peak = (int(v) for v in done.stdout.split())
    assert uploaded == size
    print(f"300 MB upload: peak RSS {peak // 1024} KiB")
    assert peak < 100 * 1024 * 1024, f"peak RSS {peak} bytes for a {size}-byte upload"


class Receiver(http.server.BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]] = []
    arrived = threading.Event()

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        Receiver.received.append(({k: v for k, v in self.headers.items()}, body))
        Receiver.arrived.set()
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_a_webhook_verified_from_a_real_delivery(service: Service) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        acct = service.account()
        client = Mediaforge(api_key=acct.api_key, base_url=service.url)
        task = client.tasks.create(model=MODEL, input=INPUT, callback_url=f"http://127.0.0.1:{server.server_address[1]}/hook", wait=30)
        assert Receiver.arrived.wait(60), "no callback delivered"
        headers, body = Receiver.received[0]
        event = mediaforge.webhooks.verify(body, headers, acct.webhook_secret)
        assert "data" in event and event["data"]["taskId"] == task["taskId"]
        assert event["data"]["state"] == "succeeded"
        with pytest.raises(mediaforge.WebhookVerificationError):
            mediaforge.webhooks.verify(body.replace(b"succeeded", b"failed"), headers, acct.webhook_secret)
        with pytest.raises(mediaforge.WebhookVerificationError):
            mediaforge.webhooks.verify(body, headers, acct.webhook_secret + "x")
        with pytest.raises(mediaforge.WebhookVerificationError):
            stale = int(headers.get("X-Webhook-Timestamp") or headers["x-webhook-timestamp"]) + 3600
            mediaforge.webhooks.verify(body, headers, acct.webhook_secret, now=stale)
    finally:
        server.shutdown()


def test_an_account_endpoint_delivery_verified_standard_webhooks(service: Service) -> None:
    received: list[tuple[dict[str, str], bytes]] = []
    arrived = threading.Event()

    class Endpoint(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            received.append((dict(self.headers.items()), self.rfile.read(int(self.headers["content-length"]))))
            arrived.set()
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        acct = service.account()
        url = f"http://127.0.0.1:{server.server_address[1]}/events"
        added = service.cli("webhooks", "add", "--account", acct.account_id, "--url", url, "--events", "task.succeeded")
        client = Mediaforge(api_key=acct.api_key, base_url=service.url)
        task = client.tasks.create(model=MODEL, input=INPUT, wait=30)
        assert arrived.wait(60), "no account event delivered"
        headers, body = received[0]
        event = mediaforge.webhooks.verify(body, headers, added["secret"])
        assert "type" in event and event["type"] == "task.succeeded"
        assert event["data"]["object"]["taskId"] == task["taskId"]
        with pytest.raises(mediaforge.WebhookVerificationError):
            mediaforge.webhooks.verify(body + b" ", headers, added["secret"])
    finally:
        server.shutdown()


def test_the_async_client_under_200_concurrent_creates(service: Service) -> None:
    acct = service.account()

    async def run() -> tuple[list[mediaforge.TaskRecord], list[mediaforge.TaskRecord], list[mediaforge.TaskRecord], mediaforge.CreditBalance]:
        async with AsyncMediaforge(api_key=acct.api_key, base_url=service.url, timeout=120) as client:
            created = await asyncio.gather(*(client.tasks.create(model=MODEL, input={**INPUT, "prompt": f"take {i}"}) for i in range(200)))
            listed = [task async for task in client.tasks.list(limit=50)]
            finished = await asyncio.gather(*(client.tasks.wait_for(t, timeout=600) for t in created))
            return created, listed, finished, await client.credit.get()

    created, listed, finished, credit = asyncio.run(run())
    assert len({t["taskId"] for t in created}) == 200
    assert {t["taskId"] for t in listed} == {t["taskId"] for t in created}
    assert {t["state"] for t in finished} == {"succeeded"}
    # Every hold resolved once: nothing held, and the wallet paid exactly what the tasks were charged.
    assert credit["held"] == 0
    assert 100_000 - credit["available"] == sum(t["credits"] for t in finished)


def test_a_rate_limit_longer_than_the_client_waits_is_a_typed_error(limited: Service) -> None:
    acct = limited.account()
    seen: list[httpx.Request] = []
    client = Mediaforge(api_key=acct.api_key, base_url=limited.url, max_retry_after=0.5, http_client=httpx.Client(event_hooks={"request": [seen.append]}))
    with pytest.raises(mediaforge.RateLimitError) as limited_error:
        for _ in range(3):
            client.credit.get()
    error = limited_error.value
    assert (error.status, error.code) == (429, 42901)
    assert error.retry_after is not None and error.retry_after > 0.5  # the server's Retry-After, read
    assert len(seen) == 3  # not repeated: the server asked for longer than the client waits


def test_the_async_client_has_the_same_surface(service: Service, tmp_path: Any) -> None:
    from test_sync_client import PNG

    acct = service.account()

    async def run() -> None:
        async with AsyncMediaforge(api_key=acct.api_key, base_url=service.url) as client:
            image = await client.files.upload(PNG, file_name="dot.png")
            quote = await client.tasks.quote(model=MODEL, input={**INPUT, "reference_image_urls": [image]})
            task = await client.tasks.create_and_wait(model=MODEL, input={**INPUT, "reference_image_urls": [image]}, timeout=120)
            assert task["state"] == "succeeded" and task["estimatedCredits"] == quote["estimatedCredits"]
            path = os.path.join(tmp_path, "clip.mp4")
            assert await client.tasks.download(task, path) == os.path.getsize(path) > 100
            assert [a["uri"] async for a in client.assets.list()] == [image]
            assert MODEL in {m["id"] for m in await client.models.list()}
            assert (await client.models.get(MODEL))["id"] == MODEL
            assert (await client.account.credit())["available"] == 100_000 - task["credits"]
            assert sum(d["tasks"] for d in (await client.usage.get())["byDay"]) == 1
            assert (await client.tasks.purge(task["taskId"]))["taskId"] == task["taskId"]
            with pytest.raises(mediaforge.NotFoundError):
                await client.tasks.get("task_does_not_exist")

    asyncio.run(run())
