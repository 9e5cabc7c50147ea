"""Cursor pagination: iterating walks every record of every page (each request sends the previous
page's ``nextCursor``); ``.pages()`` walks the pages, ``.first()`` reads one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._core import Result

T = TypeVar("T")


@dataclass
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None
    """Cursor of the next page; None on the last page."""
    request_id: str


def _page(result: Result) -> Page[Any]:
    return Page(list(result.data["items"]), result.data.get("nextCursor"), result.request_id)


class Pages(Generic[T]):
    def __init__(self, fetch: Callable[[str | None], Result]):
        self._fetch = fetch

    def pages(self) -> Iterator[Page[T]]:
        cursor: str | None = None
        while True:
            page: Page[T] = _page(self._fetch(cursor))
            yield page
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page.items

    def first(self) -> Page[T]:
        return _page(self._fetch(None))


class AsyncPages(Generic[T]):
    def __init__(self, fetch: Callable[[str | None], Awaitable[Result]]):
        self._fetch = fetch

    async def pages(self) -> AsyncIterator[Page[T]]:
        cursor: str | None = None
        while True:
            page: Page[T] = _page(await self._fetch(cursor))
            yield page
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page.items:
                yield item

    async def first(self) -> Page[T]:
        return _page(await self._fetch(None))
