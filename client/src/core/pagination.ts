/**
 * Cursor pagination: `for await (const page of client.tasks.list())` walks every page (each
 * request sends the previous page's `nextCursor`); `.items()` walks the records one by one.
 */

export interface Page<T> {
  items: T[];
  /** Cursor of the next page; null on the last page. */
  nextCursor: string | null;
  requestId: string;
}

export class PageIterator<T> implements AsyncIterable<Page<T>> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  async *[Symbol.asyncIterator](): AsyncIterator<Page<T>> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  /** Every record of every page, in order. */
  async *items(): AsyncGenerator<T> {
    for await (const page of this) yield* page.items;
  }

  /** The first page only. */
  first(): Promise<Page<T>> {
    return this.fetchPage(undefined);
  }

  /** Every record of every page, collected (mind the size). */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this.items()) all.push(item);
    return all;
  }
}
