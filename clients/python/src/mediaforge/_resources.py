"""files, assets, models, credit, usage (and account, the two together), statements: sync and async."""

from __future__ import annotations

import builtins
import io
import mimetypes
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import IO, Any, Union

from ._core import AsyncCore, Call, Result, SyncCore, _error_of
from ._errors import MediaforgeError
from ._generated.schemas import Asset, AssetUsage, CreditBalance, Entity, ModelSummary, Statement, UploadTicket, UsageReport
from ._pagination import AsyncPages, Pages

UploadSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]
"""A path on this machine, bytes, or a binary file object (read in chunks, never whole)."""

CHUNK = 1 << 20


@dataclass
class _Source:
    file_name: str
    size: int
    chunks: Iterator[bytes]
    head: bytes


def _open_source(source: UploadSource, file_name: str | None) -> _Source:
    """The bytes to send as chunks of at most 1 MiB, with their size: a path is opened, never read whole."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        size = os.path.getsize(path)
        handle = open(path, "rb")  # noqa: SIM115 - closed by the generator below
        head = handle.read(16)
        handle.seek(0)
        return _Source(file_name or os.path.basename(path) or "upload", size, _read_closing(handle), head)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return _Source(file_name or "upload", len(data), iter([data[i : i + CHUNK] for i in range(0, len(data), CHUNK)] or [b""]), data[:16])
    if hasattr(source, "read"):
        name = file_name or os.path.basename(str(getattr(source, "name", "") or "")) or "upload"
        try:
            start = source.tell()
            size = source.seek(0, io.SEEK_END) - start
            source.seek(start)
        except (OSError, AttributeError, ValueError) as error:
            raise MediaforgeError("files.upload: a file object must be seekable (its size is sent first)") from error
        head = source.read(16)
        source.seek(start)
        return _Source(name, size, _read(source), head)
    raise MediaforgeError("files.upload: pass a path, bytes or a binary file object")


def _read(handle: IO[bytes]) -> Iterator[bytes]:
    while chunk := handle.read(CHUNK):
        yield chunk


def _read_closing(handle: IO[bytes]) -> Iterator[bytes]:
    with handle:
        yield from _read(handle)


_SIGNATURES: list[tuple[bytes, int, str]] = [
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"ftyp", 4, "video/mp4"),
    (b"%PDF-", 0, "application/pdf"),
    (b"ID3", 0, "audio/mpeg"),
]


def guess_content_type(file_name: str, head: bytes) -> str:
    """The media type of a file by its name, then by its first bytes."""
    if file_name.lower().endswith(".safetensors"):
        return "application/octet-stream"
    guessed, _ = mimetypes.guess_type(file_name)
    if guessed:
        return guessed
    for magic, offset, mime in _SIGNATURES:
        if head[offset : offset + len(magic)] == magic:
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


def _ticket_body(src: _Source, content_type: str | None) -> tuple[dict[str, Any], str]:
    mime = content_type or guess_content_type(src.file_name, src.head)
    return {"fileName": src.file_name, "contentType": mime, "size": src.size}, mime


def _put_headers(ticket: UploadTicket, mime: str, size: int) -> dict[str, str]:
    # Content-Length given: the body is streamed as it is, not chunked (the store wants its length).
    return {"Content-Type": mime, **ticket.get("headers", {}), "Content-Length": str(size)}


def _absolute(url: str, base_url: str) -> str:
    return url if url.startswith(("http://", "https://")) else base_url + url


def _data(result: Result) -> Any:
    return result.data


class Files:
    def __init__(self, core: SyncCore):
        self._core = core

    def upload(self, source: UploadSource, *, file_name: str | None = None, content_type: str | None = None, name: str | None = None) -> str:
        """Uploads a file for use as a reference; returns its ``service://`` URI."""
        return self.upload_asset(source, file_name=file_name, content_type=content_type, name=name)["uri"]

    def upload_asset(self, source: UploadSource, *, file_name: str | None = None, content_type: str | None = None, name: str | None = None) -> Asset:
        """A ticket (POST /common/upload-url), the bytes streamed to its signed URL, the commit (POST /files/{fileId}/commit)."""
        src = _open_source(source, file_name)
        body, mime = _ticket_body(src, content_type)
        ticket: UploadTicket = _data(self._core.request(Call("createUploadTicket", "unsafe", json=body)))
        response = self._core.http.request(
            ticket.get("method", "PUT"),
            _absolute(ticket["uploadUrl"], self._core.config.base_url),
            content=src.chunks,
            headers=_put_headers(ticket, mime, src.size),
            timeout=self._core.config.timeout,
        )
        if not response.is_success:
            raise _error_of(response)
        return self.commit(ticket["fileId"], name=name)

    def commit(self, file_id: str, *, name: str | None = None) -> Asset:
        data: Asset = _data(self._core.request(Call("commitFile", "unsafe", path={"fileId": file_id}, json={"name": name} if name else {})))
        return data

    def import_url(self, url: str, *, name: str | None = None) -> Asset:
        """Imports a LoRA file from a direct HTTPS ``.safetensors`` link (POST /files/import)."""
        data: Asset = _data(self._core.request(Call("importFile", "unsafe", json={"url": url, **({"name": name} if name else {})})))
        return data


class AsyncFiles:
    def __init__(self, core: AsyncCore):
        self._core = core

    async def upload(self, source: UploadSource, *, file_name: str | None = None, content_type: str | None = None, name: str | None = None) -> str:
        return (await self.upload_asset(source, file_name=file_name, content_type=content_type, name=name))["uri"]

    async def upload_asset(self, source: UploadSource, *, file_name: str | None = None, content_type: str | None = None, name: str | None = None) -> Asset:
        src = _open_source(source, file_name)
        body, mime = _ticket_body(src, content_type)
        ticket: UploadTicket = _data(await self._core.request(Call("createUploadTicket", "unsafe", json=body)))

        async def chunks() -> AsyncIterator[bytes]:
            for chunk in src.chunks:
                yield chunk

        response = await self._core.http.request(
            ticket.get("method", "PUT"),
            _absolute(ticket["uploadUrl"], self._core.config.base_url),
            content=chunks(),
            headers=_put_headers(ticket, mime, src.size),
            timeout=self._core.config.timeout,
        )
        if not response.is_success:
            raise _error_of(response)
        return await self.commit(ticket["fileId"], name=name)

    async def commit(self, file_id: str, *, name: str | None = None) -> Asset:
        data: Asset = _data(await self._core.request(Call("commitFile", "unsafe", path={"fileId": file_id}, json={"name": name} if name else {})))
        return data

    async def import_url(self, url: str, *, name: str | None = None) -> Asset:
        data: Asset = _data(await self._core.request(Call("importFile", "unsafe", json={"url": url, **({"name": name} if name else {})})))
        return data


class Assets:
    """The private, long-term asset library of the workspace the key reaches."""

    def __init__(self, core: SyncCore):
        self._core = core

    def list(self, *, kind: str | None = None, limit: int | None = None) -> Pages[Asset]:
        return Pages(lambda cursor: self._core.request(Call("listAssets", "safe", query={"kind": kind, "limit": limit, "cursor": cursor})))

    def save(self, task_id: str, *, name: str | None = None) -> Asset:
        """Saves a succeeded task's output into the library (POST /assets)."""
        data: Asset = _data(self._core.request(Call("saveAsset", "unsafe", json={"taskId": task_id, **({"name": name} if name else {})})))
        return data

    def get(self, asset_id: str) -> Asset:
        data: Asset = _data(self._core.request(Call("getAsset", "safe", path={"assetId": asset_id})))
        return data

    def rename(self, asset_id: str, name: str) -> Asset:
        data: Asset = _data(self._core.request(Call("renameAsset", "safe", path={"assetId": asset_id}, json={"name": name})))
        return data

    def delete(self, asset_id: str) -> dict[str, Any]:
        data: dict[str, Any] = _data(self._core.request(Call("deleteAsset", "unsafe", path={"assetId": asset_id})))
        return data

    def entities(self) -> builtins.list[Entity]:
        data: builtins.list[Entity] = _data(self._core.request(Call("listEntities", "safe")))["items"]
        return data

    def usage(self) -> AssetUsage:
        data: AssetUsage = _data(self._core.request(Call("getAssetUsage", "safe")))
        return data


class AsyncAssets:
    def __init__(self, core: AsyncCore):
        self._core = core

    def list(self, *, kind: str | None = None, limit: int | None = None) -> AsyncPages[Asset]:
        async def page(cursor: str | None) -> Result:
            return await self._core.request(Call("listAssets", "safe", query={"kind": kind, "limit": limit, "cursor": cursor}))

        return AsyncPages(page)

    async def save(self, task_id: str, *, name: str | None = None) -> Asset:
        data: Asset = _data(await self._core.request(Call("saveAsset", "unsafe", json={"taskId": task_id, **({"name": name} if name else {})})))
        return data

    async def get(self, asset_id: str) -> Asset:
        data: Asset = _data(await self._core.request(Call("getAsset", "safe", path={"assetId": asset_id})))
        return data

    async def rename(self, asset_id: str, name: str) -> Asset:
        data: Asset = _data(await self._core.request(Call("renameAsset", "safe", path={"assetId": asset_id}, json={"name": name})))
        return data

    async def delete(self, asset_id: str) -> dict[str, Any]:
        data: dict[str, Any] = _data(await self._core.request(Call("deleteAsset", "unsafe", path={"assetId": asset_id})))
        return data

    async def entities(self) -> builtins.list[Entity]:
        data: builtins.list[Entity] = _data(await self._core.request(Call("listEntities", "safe")))["items"]
        return data

    async def usage(self) -> AssetUsage:
        data: AssetUsage = _data(await self._core.request(Call("getAssetUsage", "safe")))
        return data


class Models:
    def __init__(self, core: SyncCore):
        self._core = core

    def list(self, *, include_schema: bool = False) -> list[ModelSummary]:
        """Every callable model with its prices (GET /models)."""
        data: list[ModelSummary] = _data(self._core.request(Call("listModels", "safe", query={"includeSchema": "1"} if include_schema else None)))["items"]
        return data

    def get(self, model: str) -> ModelSummary:
        """One model with its input schema (GET /models/{model})."""
        data: ModelSummary = _data(self._core.request(Call("getModel", "safe", path={"model": model})))
        return data


class AsyncModels:
    def __init__(self, core: AsyncCore):
        self._core = core

    async def list(self, *, include_schema: bool = False) -> list[ModelSummary]:
        data: list[ModelSummary] = _data(await self._core.request(Call("listModels", "safe", query={"includeSchema": "1"} if include_schema else None)))["items"]
        return data

    async def get(self, model: str) -> ModelSummary:
        data: ModelSummary = _data(await self._core.request(Call("getModel", "safe", path={"model": model})))
        return data


class Credit:
    def __init__(self, core: SyncCore):
        self._core = core

    def get(self) -> CreditBalance:
        """The wallet: available, held and total credits, with USD strings (GET /chat/credit)."""
        data: CreditBalance = _data(self._core.request(Call("getCredit", "safe")))
        return data


class Usage:
    def __init__(self, core: SyncCore):
        self._core = core

    def get(self, *, from_: str | None = None, to: str | None = None, scope: str | None = None) -> UsageReport:
        """Usage by day and by model (GET /usage); days are UTC, YYYY-MM-DD. ``scope="account"``: every
        key of the account (the key needs the account-reports scope)."""
        data: UsageReport = _data(self._core.request(Call("getUsage", "safe", query={"from": from_, "to": to, "scope": scope})))
        return data

    def csv(self, *, from_: str | None = None, to: str | None = None, scope: str | None = None) -> str:
        """The same report as CSV text (``section,key,tasks,credits,cost``)."""
        text: str = self._core.request(Call("getUsage", "safe", query={"from": from_, "to": to, "scope": scope, "format": "csv"})).data
        return text


class Statements:
    """The account's monthly statements (the key needs the account-reports scope, off by default)."""

    def __init__(self, core: SyncCore):
        self._core = core

    def get(self, month: str) -> Statement:
        """The statement of a calendar month in UTC, ``YYYY-MM`` (GET /statements/{month})."""
        data: Statement = _data(self._core.request(Call("getStatement", "safe", path={"month": month})))
        return data

    def csv(self, month: str) -> str:
        """The same statement as CSV text (``section,item,credits``)."""
        text: str = self._core.request(Call("getStatement", "safe", path={"month": month}, query={"format": "csv"})).data
        return text


class AsyncCredit:
    def __init__(self, core: AsyncCore):
        self._core = core

    async def get(self) -> CreditBalance:
        data: CreditBalance = _data(await self._core.request(Call("getCredit", "safe")))
        return data


class AsyncUsage:
    def __init__(self, core: AsyncCore):
        self._core = core

    async def get(self, *, from_: str | None = None, to: str | None = None, scope: str | None = None) -> UsageReport:
        data: UsageReport = _data(await self._core.request(Call("getUsage", "safe", query={"from": from_, "to": to, "scope": scope})))
        return data

    async def csv(self, *, from_: str | None = None, to: str | None = None, scope: str | None = None) -> str:
        text: str = (await self._core.request(Call("getUsage", "safe", query={"from": from_, "to": to, "scope": scope, "format": "csv"}))).data
        return text


class AsyncStatements:
    def __init__(self, core: AsyncCore):
        self._core = core

    async def get(self, month: str) -> Statement:
        data: Statement = _data(await self._core.request(Call("getStatement", "safe", path={"month": month})))
        return data

    async def csv(self, month: str) -> str:
        text: str = (await self._core.request(Call("getStatement", "safe", path={"month": month}, query={"format": "csv"}))).data
        return text


class Account:
    """The balance and the usage together: ``client.account.credit()``, ``client.account.usage()``."""

    def __init__(self, credit: Credit, usage: Usage):
        self.credit = credit.get
        self.usage = usage.get


class AsyncAccount:
    def __init__(self, credit: AsyncCredit, usage: AsyncUsage):
        self.credit = credit.get
        self.usage = usage.get


