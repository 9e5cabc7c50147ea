import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestService } from '../support/service.js';

/** The SHA-256 and length of a generated stream, computed from the same generator. */
export async function digestOf(chunks: AsyncIterable<Buffer>): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of chunks) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** The streamed answer of a GET, hashed as it arrives. */
export async function digestOfUrl(url: string): Promise<{ status: number; sha256: string; bytes: number }> {
  const response = await fetch(url);
  if (!response.body) return { status: response.status, sha256: '', bytes: 0 };
  return { status: response.status, ...(await digestOf(response.body as unknown as AsyncIterable<Buffer>)) };
}

/** PUT a stream to an upload URL, chunked (no Content-Length), as a client streaming a file would. */
export async function putStream(
  url: string,
  headers: Record<string, string>,
  chunks: AsyncIterable<Buffer>,
): Promise<{ status: number; body: any }> {
  const iterator = chunks[Symbol.asyncIterator]();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
  const response = await fetch(url, { method: 'PUT', headers, body, duplex: 'half' } as RequestInit);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Every media object a service holds: files of the local store (temporary ones too), or database rows and chunks. */
export async function storedObjects(t: TestService): Promise<{ files: string[]; blobRows: number; chunkRows: number }> {
  const rows = async (table: 'blobs' | 'blob_chunks') =>
    Number(
      (
        await t.service.ctx.db.kysely
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const blobRows = await rows('blobs');
  const chunkRows = await rows('blob_chunks');
  return { files: listFiles(join(t.config.dataDir, 'blobs')), blobRows, chunkRows };
}

function listFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]));
}
