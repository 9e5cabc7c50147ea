"""Mediaforge (sync) and AsyncMediaforge: the same surface, on httpx."""

from __future__ import annotations

from types import TracebackType

import httpx

from ._core import AsyncCore, Config, SyncCore
from ._resources import (
    Account,
    Assets,
    AsyncAccount,
    AsyncAssets,
    AsyncCredit,
    AsyncFiles,
    AsyncModels,
    AsyncStatements,
    AsyncUsage,
    Credit,
    Files,
    Models,
    Statements,
    Usage,
)
from ._tasks import AsyncTasks, Tasks


class Mediaforge:
    """``Mediaforge(api_key=..., base_url=...)``; both default to MEDIAFORGE_API_KEY and MEDIAFORGE_BASE_URL.

    ``base_url`` is the service root (``https://host``; a trailing ``/api/v1`` is accepted).
    ``timeout`` is per attempt, in seconds; ``language`` is sent as Accept-Language.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        language: str | None = None,
        max_retry_after: float = 60.0,
        http_client: httpx.Client | None = None,
    ):
        self._core = SyncCore(Config.of(api_key, base_url, max_retries, timeout, language, max_retry_after), http_client)
        self.tasks = Tasks(self._core)
        self.models = Models(self._core)
        self.credit = Credit(self._core)
        self.usage = Usage(self._core)
        self.statements = Statements(self._core)
        self.account = Account(self.credit, self.usage)
        self.files = Files(self._core)
        self.assets = Assets(self._core)

    @property
    def base_url(self) -> str:
        return self._core.config.base_url

    def __repr__(self) -> str:
        return f"Mediaforge(base_url={self.base_url!r})"

    def close(self) -> None:
        self._core.close()

    def __enter__(self) -> Mediaforge:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class AsyncMediaforge:
    """The async twin of Mediaforge: every call is awaited; lists are ``async for``."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        language: str | None = None,
        max_retry_after: float = 60.0,
        http_client: httpx.AsyncClient | None = None,
    ):
        self._core = AsyncCore(Config.of(api_key, base_url, max_retries, timeout, language, max_retry_after), http_client)
        self.tasks = AsyncTasks(self._core)
        self.models = AsyncModels(self._core)
        self.credit = AsyncCredit(self._core)
        self.usage = AsyncUsage(self._core)
        self.statements = AsyncStatements(self._core)
        self.account = AsyncAccount(self.credit, self.usage)
        self.files = AsyncFiles(self._core)
        self.assets = AsyncAssets(self._core)

    @property
    def base_url(self) -> str:
        return self._core.config.base_url

    def __repr__(self) -> str:
        return f"AsyncMediaforge(base_url={self.base_url!r})"

    async def close(self) -> None:
        await self._core.close()

    async def __aenter__(self) -> AsyncMediaforge:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()
