import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/clock.js';
import { ROOT } from '../support/root.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { requestFrom } from '../console/support.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'bin/mediaforge.js');
const INPUT = { prompt: 'a kite', reference_image_urls: ['https://example.com/a.png'] };
const MODEL = 'vendor_d/family_d/reference-to-video';

describe('health, readiness and metrics', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it('/healthz and /readyz answer 200 on a migrated, reachable database', async () => {
    expect(await t.call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await t.call('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('/metrics reports tasks by state, held credits, queue lag and request latency', async () => {
    const { apiKey } = await t.account(100);
    const created = await t.call('POST', '/api/v1/jobs/createTask', {
      key: apiKey,
      body: { model: MODEL, input: INPUT },
    });
    await waitForTerminal(t, apiKey, created.body.data.taskId);
    const response = await fetch(`${t.url}/metrics`);
    const text = await response.text();
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(text).toMatch(/^mediaforge_tasks\{state="succeeded"\} [1-9]\d*$/m);
    expect(text).toMatch(/^mediaforge_held_credits \d+$/m);
    expect(text).toMatch(/^mediaforge_queue_lag_seconds [\d.]+$/m);
    expect(text).toMatch(
      /^mediaforge_http_request_duration_seconds_count\{route="\/api\/v1\/jobs\/createTask",method="POST",status="202"\} 1$/m,
    );
  });
});

describe('migrations', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-migrate-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serve refuses an unmigrated database with a clear message; migrate --json applies and reports', async () => {
    const env = {
      ...process.env,
      MEDIAFORGE_DB: `sqlite:${join(dir, 'db.sqlite')}`,
      MEDIAFORGE_DATA_DIR: dir,
      PORT: '0',
    };
    const refused = await run(process.execPath, [CLI, 'serve'], { env }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not migrated \(pending: 0001-initial.*\); run: mediaforge migrate --db sqlite:/);
    const migrated = await run(process.execPath, [CLI, 'migrate', '--json'], { env });
    expect(JSON.parse(migrated.stdout).applied).toContain('0001-initial');
    const again = await run(process.execPath, [CLI, 'migrate', '--json'], { env });
    expect(JSON.parse(again.stdout)).toEqual({ applied: [] });
  }, 60_000);
});

describe('Idempotency-Key expiry is recurring work in the table', () => {
  it('keys older than 24 hours are deleted by the maintenance item; newer ones stay', async () => {
    const clock = new ManualClock(Date.now());
    const t = await startTestService({}, { clock, startWorker: false });
    try {
      const { apiKey } = await t.account(200);
      const headers = { 'idempotency-key': 'old-key' };
      await t.call('POST', '/api/v1/jobs/createTask', { key: apiKey, body: { model: MODEL, input: INPUT }, headers });
      clock.advance(25 * 3600 * 1000);
      await t.call('POST', '/api/v1/jobs/createTask', {
        key: apiKey,
        body: { model: MODEL, input: INPUT },
        headers: { 'idempotency-key': 'new-key' },
      });
      await t.service.worker!.runOnce();
      const keys = await t.service.ctx.db.kysely.selectFrom('idempotency_keys').select('key').execute();
      expect(keys.map((k) => k.key)).toEqual(['new-key']);
      const next = await t.service.ctx.db.kysely
        .selectFrom('work_items')
        .select('due_at')
        .where('kind', '=', 'expire-idempotency-keys')
        .where('done_at', 'is', null)
        .executeTakeFirstOrThrow();
      expect(next.due_at).toBe(clock.now() + 3600 * 1000);
    } finally {
      await t.close();
    }
  });
});

describe('Idempotency-Key expiry in small statements', () => {
  it('deletes every expired key however many there are (more than one statement takes); live keys stay', async () => {
    const clock = new ManualClock(Date.now());
    const t = await startTestService({}, { clock, startWorker: false });
    try {
      const { accountId, apiKey } = await t.account(200);
      const headers = { 'idempotency-key': 'live-key' };
      await t.call('POST', '/api/v1/jobs/createTask', { key: apiKey, body: { model: MODEL, input: INPUT }, headers });
      const live = await t.service.ctx.db.kysely.selectFrom('idempotency_keys').selectAll().executeTakeFirstOrThrow();
      // A busy hour's expired keys, as rows: making 1,234 tasks through HTTP would only slow the test.
      const expired = Array.from({ length: 1234 }, (_, i) => ({
        ...live,
        account_id: accountId,
        key: `expired-${i}`,
        created_at: clock.now() - 25 * 3600 * 1000,
        expires_at: clock.now() - 3600 * 1000 + i,
      }));
      for (let i = 0; i < expired.length; i += 100)
        await t.service.ctx.db.kysely
          .insertInto('idempotency_keys')
          .values(expired.slice(i, i + 100))
          .execute();
      await t.service.worker!.runOnce();
      const keys = await t.service.ctx.db.kysely.selectFrom('idempotency_keys').select('key').execute();
      expect(keys.map((k) => k.key)).toEqual(['live-key']);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!process.env.MEDIAFORGE_TEST_REDIS)('rate limits shared through Redis (MEDIAFORGE_TEST_REDIS)', () => {
  it('two API instances count one key together', async () => {
    const redisUrl = process.env.MEDIAFORGE_TEST_REDIS!;
    const a = await startTestService({ redisUrl, rateLimitPerMinute: 3 });
    const b = await startTestService({ redisUrl, rateLimitPerMinute: 3 });
    try {
      // Failed authentications count per client address, shared by both instances. The address is a
      // random loopback one (127.0.0.0/8), so that runs sharing the Redis server (both projects) do not meet.
      const address = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 250)}`;
      const key = `sk-service-ratelimit-${Date.now()}`;
      const call = (t: TestService) =>
        requestFrom(address, `${t.url}/api/v1/chat/credit`, { headers: { authorization: `Bearer ${key}` } });
      const statuses = [];
      for (const t of [a, b, a, b]) statuses.push((await call(t)).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      const limited = await call(b);
      expect(limited.body.code).toBe(42901);
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
