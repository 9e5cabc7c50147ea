import { openTaskCount } from '../support/stored-rows.js';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../runtime/accounts/accounts.js';
import { openDb, type Db } from '../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../runtime/storage/migrate.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { startProcess } from '../support/processes.js';
import { dropTestSchema, testDbUrl } from '../support/service.js';
import { IMAGE } from '../http/helpers.js';

/**
 * maxInFlight holds across processes (issue 17): two worker processes on one PostgreSQL database
 * submit to one upstream whose cap is 3. The upstream (a loopback jobs-protocol server) counts the
 * jobs it accepted and has not yet reported ended; the test samples the database's count of tasks
 * pinned to the deployment and not ended. Neither may ever pass the cap, and the cap is reached.
 * Runs in the `postgres` vitest project only.
 */
const TASKS = 24;
const CAP = 3;
const MODEL = 'vendor_d/family_d/reference-to-video';

describe('maxInFlight across two worker processes on PostgreSQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-cap-'));
  const children: ChildProcess[] = [];
  let upstream: JobsProtocolServer;
  let db: Db;
  let api: string;
  let apiKey: string;

  beforeAll(async () => {
    upstream = await new JobsProtocolServer({ latencyMs: 400, apiKey: 'cap-key' }).start();
    const file = join(dir, 'deployments.yaml');
    // One account's tasks: its share is the whole cap (the default share, half, is tested in test/deployments/lifecycle.test.ts).
    writeFileSync(
      file,
      [
        'upstreams:',
        `  capped: { kind: jobs, baseUrl: "${upstream.baseUrl}", secretEnv: CAP_UPSTREAM_KEY, maxInFlight: ${CAP}, maxInFlightPerAccount: ${CAP} }`,
        'models:',
        `  ${MODEL}: [{ upstream: capped }]`,
      ].join('\n'),
    );
    const dbUrl = await testDbUrl(dir);
    db = await openDb(dbUrl);
    await migrateToLatest(db);
    apiKey = (await createAccount(db, { credits: 100_000, now: Date.now() })).apiKey;
    const env = {
      ...process.env,
      MEDIAFORGE_DB: dbUrl,
      MEDIAFORGE_DATA_DIR: dir,
      MEDIAFORGE_BLOB_STORE: 'database',
      MEDIAFORGE_SECRET: 'cap-test-secret',
      MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '1000000',
      MEDIAFORGE_WORKER_IDLE_MS: '50',
      MEDIAFORGE_UPSTREAM_POLL_MS: '100',
      MEDIAFORGE_DEPLOYMENTS: file,
      CAP_UPSTREAM_KEY: 'cap-key',
      // The workers fetch each task's reference whole from the run's loopback reference host (issue 37 point 3).
      MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1',
      MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1',
    };
    const started = await Promise.all([
      startProcess('api', env),
      startProcess('worker', env),
      startProcess('worker', env),
    ]);
    for (const s of started) children.push(s.child);
    api = started[0].url!;
  }, 60_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await upstream?.close();
    await db?.close();
    await dropTestSchema(dir);
    rmSync(dir, { recursive: true, force: true });
  });

  it(`never more than ${CAP} submitted and not ended, whichever process submits`, async () => {
    const ids = await Promise.all(
      Array.from({ length: TASKS }, async (_, i) => {
        const response = await fetch(`${api}/api/v1/jobs/createTask`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: MODEL,
            input: { prompt: `capped ${i}, Picture 1`, reference_image_urls: [IMAGE] },
          }),
        });
        expect(response.status).toBe(202);
        return ((await response.json()) as { data: { taskId: string } }).data.taskId;
      }),
    );
    let peak = 0;
    const deadline = Date.now() + 120_000;
    for (;;) {
      peak = Math.max(peak, await openTaskCount(db, 'capped'));
      const open = await openTaskCount(db);
      if (open === 0) break;
      if (Date.now() > deadline) throw new Error(`still open: ${open}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const tasks = await db.kysely
      .selectFrom('tasks')
      .select(['id', 'state', 'deployment'])
      .where('id', 'in', ids)
      .execute();
    expect(tasks.map((t) => [t.state, t.deployment])).toEqual(Array(TASKS).fill(['succeeded', 'capped']));
    expect(upstream.jobs.size).toBe(TASKS);
    expect(upstream.maxInFlight).toBe(CAP);
    expect(peak).toBeLessThanOrEqual(CAP);
    // Both worker processes submitted: the run items were claimed by two owners.
    const owners = await db.kysely
      .selectFrom('work_items')
      .select('lease_owner')
      .distinct()
      .where('kind', '=', 'run')
      .where('task_id', 'in', ids)
      .execute();
    expect(owners.length).toBe(2);
  }, 180_000);
});
