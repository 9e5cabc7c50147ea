import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/clock.js';
import { createTask, expectError, expectOk } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';
import { driveToTerminal } from '../webhooks/support.js';
import { png } from '../../support/media/fixtures.js';
import { UNLOCKED, upload, withoutRequestId } from './support.js';

const FAMILY_C3 = 'vendor_b/family_c-3.0/reference-to-video';
const PROMPT = 'SECRET-PROMPT the first image as a lighthouse keeper at dawn';

/** Every file under a directory, relative to it. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path).map((f) => `${name}/${f}`) : [name];
  });
}

/** Every row of every table the service writes, as text: where a prompt could hide. */
async function databaseText(t: TestService): Promise<string> {
  const db = t.service.ctx.db.kysely;
  const tables = [
    'accounts',
    'api_keys',
    'wallets',
    'ledger_entries',
    'holds',
    'tasks',
    'idempotency_keys',
    'work_items',
    'webhook_deliveries',
    'assets',
    'uploads',
    'entities',
    'blobs',
  ] as const;
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await db.selectFrom(table).selectAll().execute();
    parts.push(
      JSON.stringify(rows, (_key, value) =>
        value instanceof Uint8Array || (value && value.type === 'Buffer')
          ? Buffer.from(value.data ?? value).toString('latin1')
          : value,
      ),
    );
  }
  return parts.join('\n');
}

describe.each(['local', 'database'] as const)(
  'purge with the %s blob store: no prompt, no media, billing kept, the library untouched',
  (blobStore) => {
    const svc = serviceForSuite(UNLOCKED, { blobStore });

    it('purges the task and keeps the asset saved from it', async () => {
      const image = (await upload(svc.t, svc.account.apiKey, png(320, 240, false), 'image/png', 'keeper.png')).asset;
      const created = await createTask(svc.t, svc.account.apiKey, {
        model: FAMILY_C3,
        input: { prompt: PROMPT, reference_image_urls: [image.uri] },
      });
      expectOk(created, 202);
      const done = await waitForTerminal(svc.t, svc.account.apiKey, created.body.data.taskId);
      expect(done.state).toBe('succeeded');
      const outputKey = decodeURIComponent(new URL(done.output.assets[0].url).pathname.split('/').pop()!);
      const outputBytes = Buffer.from(await (await fetch(done.output.assets[0].url)).arrayBuffer());

      // The output saved into the library: a copy of its own.
      const saved = await svc.t.call('POST', '/api/v1/assets', {
        key: svc.account.apiKey,
        body: { taskId: done.taskId, name: 'Lighthouse' },
      });
      expectOk(saved);
      expect(saved.body.data).toMatchObject({
        kind: 'video',
        mime: 'video/mp4',
        name: 'Lighthouse',
        durationSeconds: 5,
        source: 'task',
      });
      expect(await databaseText(svc.t)).toContain('SECRET-PROMPT');

      const purged = await svc.t.call('POST', '/api/v1/jobs/purge', {
        key: svc.account.apiKey,
        body: { taskId: done.taskId },
      });
      expectOk(purged);
      expect(purged.body.data).toMatchObject({ taskId: done.taskId, billingRetained: true });

      // The database: the task row keeps billing evidence only; the prompt is nowhere.
      const row = await svc.t.service.ctx.db.kysely
        .selectFrom('tasks')
        .selectAll()
        .where('id', '=', done.taskId)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        input_json: null,
        output_json: null,
        callback_url: null,
        warnings_json: '[]',
        state: 'succeeded',
        model: FAMILY_C3,
        charged_credits: done.credits,
        settled: 1,
      });
      expect(row.request_id).toBe(done.requestId);
      expect(row.purged_at).toEqual(expect.any(Number));
      expect(await databaseText(svc.t)).not.toContain('SECRET-PROMPT');

      // The blobs: the task's output object is gone; the library copy is not.
      const assetKey = `library/${saved.body.data.assetId}.mp4`;
      if (blobStore === 'local') {
        const stored = files(join(svc.t.config.dataDir, 'blobs'));
        expect(stored).not.toContain(outputKey);
        expect(stored.filter((f) => f.startsWith(`outputs/${done.taskId}`))).toEqual([]);
        expect(stored).toContain(assetKey);
        expect(readFileSync(join(svc.t.config.dataDir, 'blobs', assetKey)).equals(outputBytes)).toBe(true);
      } else {
        const keys = (await svc.t.service.ctx.db.kysely.selectFrom('blobs').select('key').execute()).map((b) => b.key);
        expect(keys).not.toContain(outputKey);
        expect(keys).toContain(assetKey);
      }
      expect((await fetch(done.output.assets[0].url)).status).toBe(404);
      const record = (
        await svc.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${done.taskId}`, { key: svc.account.apiKey })
      ).body.data;
      expect(record).toMatchObject({
        input: null,
        output: null,
        credits: done.credits,
        state: 'succeeded',
        model: FAMILY_C3,
      });
      expectError(
        await svc.t.call('POST', '/api/v1/common/download-url', {
          key: svc.account.apiKey,
          body: { taskId: done.taskId },
        }),
        400,
        40008,
      );

      // The asset is the user's: still listed, still served, still usable.
      const asset = await svc.t.call('GET', `/api/v1/assets/${saved.body.data.assetId}`, { key: svc.account.apiKey });
      expectOk(asset);
      expect(Buffer.from(await (await fetch(asset.body.data.preview)).arrayBuffer()).equals(outputBytes)).toBe(true);

      // The ledger balances: the charge stands, nothing held.
      expect(await svc.t.wallet(svc.account.accountId)).toEqual({
        available: UNLOCKED - done.credits,
        held: 0,
        spent: done.credits,
        purchased: UNLOCKED,
      });
      await svc.t.checkLedger(svc.account.accountId);
    });
  },
);

describe('output links, saved outputs and retention on a manual clock', () => {
  let t: TestService;
  let apiKey: string;
  let accountId: string;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    t = await startTestService({}, { clock, startWorker: false });
    ({ apiKey, accountId } = await t.account(UNLOCKED));
  });
  afterAll(async () => t?.close());

  const run = async (headers: Record<string, string> = {}) => {
    const created = await createTask(
      t,
      apiKey,
      { model: FAMILY_C3, input: { prompt: PROMPT, reference_link_url: 'https://example.com/page' } },
      { headers },
    );
    expectOk(created, 202);
    expect(await driveToTerminal(t, clock, created.body.data.taskId)).toBe('succeeded');
    return (await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${created.body.data.taskId}`, { key: apiKey })).body
      .data;
  };

  it('an output link expires after about 20 minutes (403); download-url gives a fresh one, for the creating key only', async () => {
    const done = await run();
    const url = done.output.assets[0].url;
    expect((await fetch(url)).status).toBe(200);
    clock.advance(20 * 60_000 + 1000);
    expect((await fetch(url)).status).toBe(403);
    const fresh = await t.call('POST', '/api/v1/common/download-url', { key: apiKey, body: { taskId: done.taskId } });
    expectOk(fresh);
    expect(fresh.body.data.taskId).toBe(done.taskId);
    expect(fresh.body.data.assets).toEqual([
      {
        url: expect.stringMatching(/sig=/),
        mime: 'video/mp4',
        durationSeconds: 5,
        expiresAt: new Date(clock.now() + 20 * 60_000).toISOString(),
      },
    ]);
    expect((await fetch(fresh.body.data.assets[0].url)).status).toBe(200);
    const sibling = await t.siblingKey(accountId);
    const stranger = await t.account(10);
    const unknown = withoutRequestId(
      await t.call('POST', '/api/v1/common/download-url', { key: apiKey, body: { taskId: 'task_unknown' } }),
    );
    expect(unknown).toMatchObject({ status: 404, code: 40401 });
    for (const key of [sibling, stranger.apiKey])
      expect(
        withoutRequestId(await t.call('POST', '/api/v1/common/download-url', { key, body: { taskId: done.taskId } })),
      ).toEqual(unknown);
    expectError(await t.call('POST', '/api/v1/common/download-url', { key: apiKey, body: {} }), 400, 40001);
  });

  it('an asset preview is a private link of about 5 minutes (then 403)', async () => {
    const asset = (await upload(t, apiKey, png(300, 300, false), 'image/png', 'p.png')).asset;
    expect((await fetch(asset.preview)).status).toBe(200);
    clock.advance(5 * 60_000 + 1000);
    expect((await fetch(asset.preview)).status).toBe(403);
    const again = await t.call('GET', `/api/v1/assets/${asset.assetId}`, { key: apiKey });
    expect((await fetch(again.body.data.preview)).status).toBe(200);
  });

  it('saving an unfinished, failed or unknown task: 400 40008 / 404 40401; a locked library 403 40302', async () => {
    const queued = await createTask(t, apiKey, {
      model: FAMILY_C3,
      input: { prompt: 'not yet', reference_link_url: 'https://example.com/page' },
    });
    expectError(
      await t.call('POST', '/api/v1/assets', { key: apiKey, body: { taskId: queued.body.data.taskId } }),
      400,
      40008,
    );
    expectError(await t.call('POST', '/api/v1/assets', { key: apiKey, body: { taskId: 'task_unknown' } }), 404, 40401);
    expectError(await t.call('POST', '/api/v1/assets', { key: apiKey, body: { name: 'x' } }), 400, 40001);
    await driveToTerminal(t, clock, queued.body.data.taskId);
    const poor = await t.account(500);
    const created = await createTask(t, poor.apiKey, {
      model: FAMILY_C3,
      input: { prompt: 'p', reference_link_url: 'https://example.com/page' },
    });
    await driveToTerminal(t, clock, created.body.data.taskId);
    expectError(
      await t.call('POST', '/api/v1/assets', { key: poor.apiKey, body: { taskId: created.body.data.taskId } }),
      403,
      40302,
    );
  });

  it('X-Service-Retention: the worker purges the content when it runs out; the saved asset stays', async () => {
    const done = await run({ 'x-service-retention': '60' });
    const saved = await t.call('POST', '/api/v1/assets', { key: apiKey, body: { taskId: done.taskId } });
    expectOk(saved);
    const item = await t.service.ctx.db.kysely
      .selectFrom('work_items')
      .selectAll()
      .where('task_id', '=', done.taskId)
      .where('kind', '=', 'purge')
      .executeTakeFirstOrThrow();
    expect(item.due_at).toBe(Date.parse(done.finishedAt) + 60_000);
    clock.advance(59_000 - (clock.now() - Date.parse(done.finishedAt)));
    await t.service.worker!.runOnce();
    expect(
      (
        await t.service.ctx.db.kysely
          .selectFrom('tasks')
          .select('purged_at')
          .where('id', '=', done.taskId)
          .executeTakeFirstOrThrow()
      ).purged_at,
    ).toBeNull();
    clock.advance(2_000);
    await t.service.worker!.runOnce();
    const row = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', done.taskId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ input_json: null, output_json: null, purged_at: clock.now(), state: 'succeeded' });
    expect(files(join(t.config.dataDir, 'blobs')).filter((f) => f.startsWith(`outputs/${done.taskId}`))).toEqual([]);
    expectOk(await t.call('GET', `/api/v1/assets/${saved.body.data.assetId}`, { key: apiKey }));
    expect(files(join(t.config.dataDir, 'blobs'))).toContain(`library/${saved.body.data.assetId}.mp4`);
    await t.checkLedger(accountId);
  });
});
