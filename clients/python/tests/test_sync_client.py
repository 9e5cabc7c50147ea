"""Every operation of the sync client against a real serve."""

from __future__ import annotations

import io
import os

import pytest
from conftest import INPUT, MODEL, Service

import mediaforge
from mediaforge import (
    APIError,
    BadRequestError,
    InsufficientCreditsError,
    InvalidInputError,
    Mediaforge,
    NotFoundError,
)

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f80f0000010100005a4d6b2e0000000049454e44ae426082"
)


def client_of(service: Service, credits: int = 100_000) -> tuple[Mediaforge, None, str]:
    acct = service.account(credits)
    return Mediaforge(api_key=acct.api_key, base_url=service.url), None, acct.account_id


def test_create_get_quote_and_wallet(service: Service) -> None:
    client, _, _ = client_of(service)
    quote = client.tasks.quote(model=MODEL, input=INPUT)
    assert quote["model"] == MODEL and quote["estimatedCredits"] > 0
    task = client.tasks.create(model=MODEL, input=INPUT, wait=30, quote_id=quote["quoteId"], expected_credits=quote["estimatedCredits"])
    assert task["state"] == "succeeded" and task["settled"] is True
    assert client.tasks.get(task["taskId"])["taskId"] == task["taskId"]
    credit = client.credit.get()
    assert credit == {**credit, "available": 100_000 - task["credits"], "held": 0}
    assert client.account.credit() == credit
    usage = client.usage.get()
    assert sum(day["tasks"] for day in usage["byDay"]) == 1
    assert client.account.usage() == usage


def test_list_walks_every_page(service: Service) -> None:
    client, _, _ = client_of(service)
    ids = [client.tasks.create(model=MODEL, input={**INPUT, "prompt": f"take {i}"})["taskId"] for i in range(5)]
    pages = list(client.tasks.list(limit=2).pages())
    assert [len(p.items) for p in pages] == [2, 2, 1]
    assert pages[-1].next_cursor is None and all(p.request_id.startswith("req_") for p in pages)
    assert [t["taskId"] for t in client.tasks.list(limit=3)] == list(reversed(ids))


def test_errors_by_business_code(service: Service) -> None:
    client, _, _ = client_of(service)
    with pytest.raises(InvalidInputError) as invalid:
        client.tasks.create(model=MODEL, input={**INPUT, "duration_seconds": 99})
    error = invalid.value
    assert isinstance(error, BadRequestError) and isinstance(error, APIError)
    assert (error.status, error.code, error.param) == (400, 40001, "input.duration_seconds")
    assert error.request_id and error.request_id.startswith("req_")
    assert any(f["rule"] == "maximum" for f in error.fields)
    with pytest.raises(NotFoundError) as missing:
        client.tasks.get("task_does_not_exist")
    assert (missing.value.status, missing.value.code) == (404, 40401)
    poor, _, _ = client_of(service, credits=1)
    with pytest.raises(InsufficientCreditsError) as funds:
        poor.tasks.create(model=MODEL, input=INPUT)
    assert funds.value.code == 40201 and funds.value.name == "insufficient_credits"


def test_accept_language(service: Service) -> None:
    acct = service.account()
    english = Mediaforge(api_key=acct.api_key, base_url=service.url, language="en")
    german = Mediaforge(api_key=acct.api_key, base_url=service.url, language="de")
    messages = []
    for client in (english, german):
        with pytest.raises(InvalidInputError) as caught:
            client.tasks.quote(model=MODEL, input={**INPUT, "duration_seconds": 99})
        messages.append(caught.value.msg)
    assert messages[0] != messages[1]


def test_retry_and_purge(service: Service) -> None:
    client, _, _ = client_of(service)
    failed = client.tasks.create(model=MODEL, input={**INPUT, "prompt": "PLEASE-FAIL now"}, wait=30)
    assert failed["state"] == "failed"
    again = client.tasks.retry(failed["taskId"])
    assert again["retryOf"] == failed["taskId"]
    done = client.tasks.create_and_wait(model=MODEL, input=INPUT, timeout=60)
    purged = client.tasks.purge(done["taskId"])
    assert purged["taskId"] == done["taskId"]
    assert client.tasks.get(done["taskId"])["purgedAt"] is not None


def test_models(service: Service) -> None:
    client, _, _ = client_of(service)
    ids = {m["id"] for m in client.models.list()}
    assert MODEL in ids
    assert set(ids) <= set(mediaforge.MODEL_IDS)
    one = client.models.get(MODEL)
    assert one["id"] == MODEL


def test_download_resumes_with_range(service: Service, tmp_path: os.PathLike[str]) -> None:
    client, _, _ = client_of(service)
    task = client.tasks.create_and_wait(model=MODEL, input=INPUT, timeout=60)
    whole = os.path.join(tmp_path, "whole.mp4")
    size = client.tasks.download(task, whole)
    assert size == os.path.getsize(whole) and size > 100
    data = open(whole, "rb").read()
    part = os.path.join(tmp_path, "part.mp4")
    with open(part, "wb") as out:
        out.write(data[: size // 3])  # a download cut a third of the way
    assert client.tasks.download(task["taskId"], part) == size
    assert open(part, "rb").read() == data


def test_files_and_assets(service: Service, tmp_path: os.PathLike[str]) -> None:
    client, _, _ = client_of(service)
    path = os.path.join(tmp_path, "dot.png")
    with open(path, "wb") as out:
        out.write(PNG)
    from_path = client.files.upload_asset(path, name="from a path")
    from_bytes = client.files.upload(PNG, file_name="bytes.png")
    from_file = client.files.upload(io.BytesIO(PNG), file_name="object.png")
    assert from_path["uri"].startswith("service://a/") and from_path["kind"] == "image"
    assert from_bytes.startswith("service://a/") and from_file.startswith("service://a/")
    assert client.assets.get(from_path["assetId"])["name"] == "from a path"
    assert client.assets.rename(from_path["assetId"], "renamed")["name"] == "renamed"
    assert {a["uri"] for a in client.assets.list(limit=1)} == {from_path["uri"], from_bytes, from_file}
    assert client.assets.delete(from_path["assetId"])["deleted"] is True
    assert isinstance(client.assets.entities(), list)
    assert client.assets.usage()["assetCount"] == 2
    task = client.tasks.create(model=MODEL, input={**INPUT, "reference_image_urls": [from_bytes]}, wait=30)
    assert task["state"] == "succeeded"
    saved = client.assets.save(task["taskId"], name="result")
    assert saved["kind"] == "video"
    with pytest.raises(BadRequestError):
        client.files.import_url("https://lora.invalid/style.safetensors")


def test_no_secret_in_repr(service: Service) -> None:
    acct = service.account()
    client = Mediaforge(api_key=acct.api_key, base_url=service.url)
    assert acct.api_key not in repr(client) and acct.api_key not in repr(client._core.config)


def test_environment_defaults(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    acct = service.account()
    monkeypatch.setenv("MEDIAFORGE_API_KEY", acct.api_key)
    monkeypatch.setenv("MEDIAFORGE_BASE_URL", service.url + "/api/v1")
    assert Mediaforge().credit.get()["available"] == 100_000


def test_statements_and_usage_csv(service: Service) -> None:
    acct = service.account(1000)
    key = service.cli("keys", "create", "--account", acct.account_id)
    service.cli("keys", "scope", "--key", key["keyId"], "--account-reports", "on")
    client = Mediaforge(api_key=key["apiKey"], base_url=service.url)
    task = client.tasks.create(model=MODEL, input=INPUT, wait=30)
    assert task["state"] == "succeeded"
    month = task["createdAt"][:7]
    statement = client.statements.get(month)
    assert statement["openingBalance"] + statement["purchases"]["total"] - statement["refunds"]["total"] - statement["charges"]["total"] == statement["closingBalance"]
    assert f"charges,total,{statement['charges']['total']}" in client.statements.csv(month).split("\r\n")
    usage = client.usage.get(scope="account")
    assert sum(day["tasks"] for day in usage["byDay"]) == 1
    assert client.usage.csv(scope="account").startswith("section,key,tasks,credits,cost\r\n")
    unscoped = Mediaforge(api_key=acct.api_key, base_url=service.url)
    with pytest.raises(APIError) as refused:
        unscoped.statements.get(month)
    assert refused.value.status == 403 and refused.value.code == 40301
