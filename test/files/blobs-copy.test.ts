/**
 * `mediaforge blobs copy --to STORE` (issue 29, item 5): every object of the current store into
 * another, sizes verified, resumable (an interrupted copy run again copies only what is missing
 * or short). Local -> S3 -> database, through the CLI for the first leg.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseBlobStore, LocalBlobStore } from '../../runtime/blobs/blob-store.js';
import { copyBlobs } from '../../runtime/blobs/copy-blobs.js';
import { S3BlobStore } from '../../runtime/blobs/s3-blob-store.js';
import { openDb } from '../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../runtime/storage/migrate.js';
import { ROOT } from '../support/build.js';
import { startTestS3Server, type TestS3Server } from '../support/s3-server.js';

const run = promisify(execFile);

async function text(store: { read(key: string): Promise<{ stream: NodeJS.ReadableStream } | undefined> }, key: string) {
  const got = await store.read(key);
  const parts: Buffer[] = [];
  for await (const chunk of got!.stream as AsyncIterable<Buffer>) parts.push(chunk);
  return Buffer.concat(parts);
}

const OBJECTS: Record<string, Buffer> = {
  'outputs/t1/0.mp4': Buffer.alloc(9 * 1024 * 1024 + 3, 7),
  'library/f_1.png': Buffer.from('png bytes'),
  'library/a_2.wav': Buffer.from('wav bytes, a few more'),
};

describe('blobs copy', () => {
  let s3: TestS3Server;
  let dir: string;
  beforeAll(async () => {
    s3 = await startTestS3Server();
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-copy-'));
  });
  afterAll(async () => {
    await s3?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('copies a local store to S3 (CLI), resumes, then S3 to the database with every size checked', async () => {
    const local = new LocalBlobStore(join(dir, 'blobs'));
    for (const [key, bytes] of Object.entries(OBJECTS)) await local.put(key, bytes);
    const env = {
      ...process.env,
      MEDIAFORGE_DB: `sqlite:${join(dir, 'db.sqlite')}`,
      MEDIAFORGE_DATA_DIR: dir,
      ...s3.environment('copy/'),
    };
    // The current store is local for the first leg, the S3 one (env's) for the second: each leg lists its source through the CLI.
    const cli = (args: string[], store = 'local') =>
      run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'blobs', 'copy', ...args, '--json'], {
        cwd: ROOT,
        env: { ...env, MEDIAFORGE_BLOB_STORE: store },
      });
    const first = JSON.parse((await cli(['--to', 's3://mediaforge-test/copy'])).stdout);
    expect(first).toEqual({ copied: 3, skipped: 0, bytes: Object.values(OBJECTS).reduce((a, b) => a + b.length, 0) });

    const s3Store = new S3BlobStore(s3.settings('copy/'));
    for (const [key, bytes] of Object.entries(OBJECTS)) expect((await text(s3Store, key)).equals(bytes)).toBe(true);
    // An interrupted copy: one object missing, one short. Running again copies those two only.
    await s3Store.delete('library/f_1.png');
    await s3Store.put('library/a_2.wav', Buffer.from('short'));
    const again = JSON.parse((await cli(['--to', 's3://mediaforge-test/copy'])).stdout);
    expect(again).toMatchObject({ copied: 2, skipped: 1 });
    expect((await text(s3Store, 'library/a_2.wav')).equals(OBJECTS['library/a_2.wav'])).toBe(true);

    const fromS3 = JSON.parse((await cli(['--to', 'database'], s3.environment('copy/').MEDIAFORGE_BLOB_STORE)).stdout);
    expect(fromS3).toMatchObject({ copied: 3, skipped: 0 });
    const db = await openDb(`sqlite:${join(dir, 'db.sqlite')}`);
    await migrateToLatest(db);
    const database = new DatabaseBlobStore(db.kysely, () => Date.now());
    for (const [key, bytes] of Object.entries(OBJECTS)) expect((await text(database, key)).equals(bytes)).toBe(true);
    expect(await copyBlobs(s3Store, database)).toMatchObject({ copied: 0, skipped: 3 });
    s3Store.close();
    await db.close();
  }, 90_000);

  it('refuses a target that names no store, in one line', async () => {
    const failed = await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'blobs', 'copy', '--to', 'ftp://x'], {
      cwd: ROOT,
      env: { ...process.env, MEDIAFORGE_DB: `sqlite:${join(dir, 'db2.sqlite')}` },
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain('mediaforge: --to must be local, database or s3://BUCKET[/PREFIX] (got ftp://x)');
  }, 60_000);
});
