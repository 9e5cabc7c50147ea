import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../runtime/accounts/accounts.js';
import { openDb, type Db } from '../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../runtime/storage/migrate.js';
import { startProcess } from '../support/processes.js';
import { dropTestSchema, testDbUrl } from '../support/service.js';

/**
 * The wake-ups between processes on PostgreSQL (runtime/storage/notify.ts), in bursts: an API
 * process and a worker process; every createTask of a burst holds `wait`. The worker only polls
 * every 10 minutes here, so it runs a burst's tasks because the API's NOTIFY woke it; each held
 * `wait` answers because the worker's NOTIFY of that task's resolution reached the API process
 * (a wait that is not woken holds for its full 120 s, past this test's bound). Notices told while
 * one is on its way go out together: a burst is where one could be lost. Runs in the `postgres`
 * vitest project only.
 */
const BURST = 40;
const MODEL = 'vendor_d/family_d/text-to-video';
const NOT_WOKEN_MS = 30_000;

describe('wake-ups across processes on PostgreSQL, in bursts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-wake-'));
  const children: ChildProcess[] = [];
  let db: Db;
  let api: string;
  let apiKey: string;

  beforeAll(async () => {
    const dbUrl = await testDbUrl(dir);
    db = await openDb(dbUrl);
    await migrateToLatest(db);
    ({ apiKey } = await createAccount(db, { credits: 1_000_000, now: Date.now() }));
    const env = {
      ...process.env,
      MEDIAFORGE_DB: dbUrl,
      MEDIAFORGE_DATA_DIR: dir,
      MEDIAFORGE_BLOB_STORE: 'database',
      MEDIAFORGE_SECRET: 'wake-test-secret',
      MEDIAFORGE_SIMULATOR_LATENCY_MS: '300',
      MEDIAFORGE_WORKER_IDLE_MS: '600000',
      MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '1000000',
    };
    const started = await Promise.all([startProcess('api', env), startProcess('worker', env)]);
    for (const s of started) children.push(s.child);
    api = started[0].url!;
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await db?.close();
    await dropTestSchema(dir);
    rmSync(dir, { recursive: true, force: true });
  });

  const burst = async (round: number) =>
    Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        const response = await fetch(`${api}/api/v1/jobs/createTask?wait=120`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ model: MODEL, input: { prompt: `round ${round} task ${i}` } }),
          signal: AbortSignal.timeout(NOT_WOKEN_MS),
        }).catch((error: Error) => {
          throw new Error(`round ${round} task ${i}: no answer within ${NOT_WOKEN_MS} ms (${error.name}): not woken`);
        });
        const body = (await response.json()) as { data: { state: string } };
        return { status: response.status, state: body.data.state };
      }),
    );

  it('runs every task of a burst and answers every held wait, burst after burst', async () => {
    for (const round of [1, 2, 3]) {
      const answers = await burst(round);
      expect(answers).toEqual(Array.from({ length: BURST }, () => ({ status: 200, state: 'succeeded' })));
    }
  }, 150_000);
});
