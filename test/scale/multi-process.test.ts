import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../runtime/accounts/accounts.js';
import { openDb, type Db } from '../../runtime/storage/dialect.js';
import { migrateToLatest } from '../../runtime/storage/migrate.js';
import { startProcess } from '../support/processes.js';
import { testDbUrl } from '../support/service.js';
import { IMAGE } from '../http/helpers.js';

/**
 * Scale-out on PostgreSQL: three API processes and two workers on one database, 500 tasks created
 * through all three with Idempotency-Key replays, one worker killed with SIGKILL half-way. Runs in
 * the `postgres` vitest project only.
 */
const TASKS = 500;
const MODEL = 'vendor_d/family_d/reference-to-video';
const PRICE = 28; // 5 s at 5.55 credits/s

describe('3 API processes and 2 workers on one PostgreSQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-scale-'));
  const children: ChildProcess[] = [];
  const deliveries = new Map<string, Set<string>>(); // task id -> delivery ids received
  let receiver: Server;
  let db: Db;
  let apis: string[] = [];
  let account: { accountId: string; apiKey: string };
  let workerToKill: ChildProcess;

  beforeAll(async () => {
    const dbUrl = await testDbUrl(dir);
    db = await openDb(dbUrl);
    await migrateToLatest(db);
    account = await createAccount(db, { credits: TASKS * PRICE, now: Date.now() });
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const parsed = JSON.parse(body) as { request_id: string; data: { taskId: string } };
        const ids = deliveries.get(parsed.data.taskId) ?? new Set<string>();
        ids.add(parsed.request_id);
        deliveries.set(parsed.data.taskId, ids);
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const env = {
      ...process.env,
      MEDIAFORGE_DB: dbUrl,
      MEDIAFORGE_DATA_DIR: dir,
      MEDIAFORGE_BLOB_STORE: 'database',
      MEDIAFORGE_SECRET: 'scale-test-secret',
      MEDIAFORGE_SIMULATOR_LATENCY_MS: '400',
      MEDIAFORGE_LEASE_MS: '3000',
      MEDIAFORGE_WORKER_IDLE_MS: '100',
      MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '1000000',
      MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1',
      MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1',
    };
    const started = await Promise.all([
      startProcess('api', env),
      startProcess('api', env),
      startProcess('api', env),
      startProcess('worker', env),
      startProcess('worker', env),
    ]);
    for (const s of started) children.push(s.child);
    apis = started.filter((s) => s.url).map((s) => s.url!);
    workerToKill = started[3].child;
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    receiver?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every task ends terminal once, every hold resolves once, every callback arrives with one delivery id', async () => {
    const callback = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const create = async (i: number, key: string) => {
      const response = await fetch(`${apis[i % apis.length]}/api/v1/jobs/createTask`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${account.apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body: JSON.stringify({
          model: MODEL,
          callBackUrl: callback,
          input: { prompt: `task ${key}`, reference_image_urls: [IMAGE] },
        }),
      });
      const body = (await response.json()) as { code: number; data: { taskId: string } };
      expect(response.status, JSON.stringify(body)).toBe(202);
      return body.data.taskId;
    };
    const taskByKey = new Map<string, string>();
    let killed = false;
    for (let batch = 0; batch < TASKS / 50; batch++) {
      const ids = await Promise.all(
        Array.from({ length: 50 }, (_, j) => create(batch * 50 + j, `k-${batch * 50 + j}`)),
      );
      ids.forEach((id, j) => taskByKey.set(`k-${batch * 50 + j}`, id));
      // Random replays through other API processes: the same task, never a second hold.
      const replays = await Promise.all(
        Array.from({ length: 10 }, (_, j) => {
          const key = `k-${Math.floor(Math.random() * (batch + 1) * 50)}`;
          return create(j + 1, key).then((id) => [key, id] as const);
        }),
      );
      for (const [key, id] of replays) expect(id).toBe(taskByKey.get(key));
      if (!killed && batch === 4) {
        workerToKill.kill('SIGKILL');
        killed = true;
      }
    }
    expect(taskByKey.size).toBe(TASKS);

    // Wait (bounded) until every task is terminal and every callback has arrived.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const open = await db.kysely
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('state', 'in', ['queued', 'running'])
        .executeTakeFirstOrThrow();
      if (Number(open.n) === 0 && deliveries.size === TASKS) break;
      if (Date.now() > deadline) throw new Error(`still open: ${open.n}, callbacks received: ${deliveries.size}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    const tasks = await db.kysely.selectFrom('tasks').selectAll().execute();
    expect(tasks).toHaveLength(TASKS);
    expect(tasks.every((t) => t.state === 'succeeded' && t.settled === 1 && t.charged_credits === PRICE)).toBe(true);
    const holds = await db.kysely.selectFrom('holds').selectAll().execute();
    expect(holds).toHaveLength(TASKS);
    expect(holds.every((h) => h.state === 'settled' && h.charged === PRICE)).toBe(true);
    const resolutions = await db.kysely
      .selectFrom('ledger_entries')
      .select(['task_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('kind', 'in', ['settle', 'release'])
      .groupBy('task_id')
      .execute();
    expect(resolutions.every((r) => Number(r.n) === 1)).toBe(true);
    expect(resolutions).toHaveLength(TASKS);
    for (const task of tasks) expect(deliveries.get(task.id)?.size, task.id).toBe(1);
    const wallet = await db.kysely
      .selectFrom('wallets')
      .selectAll()
      .where('account_id', '=', account.accountId)
      .executeTakeFirstOrThrow();
    expect(wallet.held + wallet.spent + wallet.available).toBe(wallet.purchased);
    expect(wallet).toMatchObject({ held: 0, spent: TASKS * PRICE, available: 0, purchased: TASKS * PRICE });
  }, 300_000);
});
