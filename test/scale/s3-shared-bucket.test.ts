import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../runtime/accounts/accounts.js';
import { S3BlobStore } from '../../runtime/blobs/s3-blob-store.js';
import { openDb, type Db } from '../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../runtime/storage/migrate.js';
import { bodyD } from '../http/helpers.js';
import { startProcess } from '../support/processes.js';
import { startTestS3Server, type TestS3Server } from '../support/s3-server.js';
import { testDbUrl } from '../support/service.js';

/**
 * Scale-out with the S3 store (issue 29, item 6): two API processes and a worker on PostgreSQL
 * sharing one bucket. A task created through one is read, downloaded with a range and purged
 * through the other; nothing of the media is written to PostgreSQL or to local disk. Runs in the
 * `postgres` vitest project only (test/scale/).
 */
describe('2 API processes and a worker on PostgreSQL, media in one bucket', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-s3-scale-'));
  const children: ChildProcess[] = [];
  let s3: TestS3Server;
  let db: Db;
  let apis: string[] = [];
  let apiKey: string;

  beforeAll(async () => {
    s3 = await startTestS3Server();
    const dbUrl = await testDbUrl(dir);
    db = await openDb(dbUrl);
    await migrateToLatest(db);
    apiKey = (await createAccount(db, { credits: 10_000, now: Date.now() })).apiKey;
    const env = {
      ...process.env,
      ...s3.environment('scale/'),
      MEDIAFORGE_DB: dbUrl,
      MEDIAFORGE_DATA_DIR: dir,
      MEDIAFORGE_SECRET: 'scale-test-secret',
      MEDIAFORGE_SIMULATOR_LATENCY_MS: '200',
      MEDIAFORGE_WORKER_IDLE_MS: '100',
    };
    // One after another: each process's start check writes and deletes a probe object, and s3rver
    // removes a folder a delete has emptied while another PUT has just made it (its write stream has
    // no error listener: an uncaught ENOENT in this process). S3 has no folders; the race is s3rver's.
    const started = [];
    for (const role of ['api', 'api', 'worker'] as const) started.push(await startProcess(role, env));
    for (const s of started) children.push(s.child);
    apis = started.filter((s) => s.url).map((s) => s.url!);
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await db?.close();
    await s3?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (api: string, method: string, path: string, body?: unknown) =>
    fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('creates through one, reads, ranges and purges through the other; no media in PostgreSQL or on disk', async () => {
    expect(apis.length).toBe(2);
    const [a, b] = apis;
    const created = await call(a, 'POST', '/api/v1/jobs/createTask', bodyD('a lighthouse, Picture 1 as the keeper'));
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const taskId = created.body.data.taskId;
    let record: any;
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
      record = (await call(b, 'GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`)).body.data;
      if (['succeeded', 'failed'].includes(record.state)) break;
    }
    expect(record.state).toBe('succeeded');
    const link = new URL(record.output.assets[0].url);
    const throughB = `${b}${link.pathname}${link.search}`;
    const part = await fetch(throughB, { headers: { range: 'bytes=0-99' } });
    expect(part.status).toBe(206);
    expect(part.url.startsWith(s3.endpoint)).toBe(true); // redirected to the store
    expect((await part.arrayBuffer()).byteLength).toBe(100);

    const key = decodeURIComponent(link.pathname.replace('/api/v1/media/', ''));
    const store = new S3BlobStore(s3.settings('scale/'));
    expect((await store.stat(key))?.size).toBeGreaterThan(100);
    const rows = await db.kysely.selectFrom('blobs').select(db.kysely.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(0);
    expect(existsSync(join(dir, 'blobs')) ? readdirSync(join(dir, 'blobs')) : []).toEqual([]);

    expect((await call(b, 'POST', '/api/v1/jobs/purge', { taskId })).status).toBe(200);
    expect(await store.stat(key)).toBeUndefined();
    expect((await fetch(throughB, { redirect: 'manual' })).status).toBe(404);
    store.close();
  }, 120_000);
});
