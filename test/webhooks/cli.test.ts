import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { createTask, settledDeliveriesOf, LOOPBACK, startReceiver, verifyCallback, type Receiver } from './support.js';
import { eventually } from '../support/eventually.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The console commands, run as a user runs them (`node bin/mediaforge.js`) on the database of a running service. */
// Each command is a new Node process loading the runtime (about 2 s of CPU): generous limits for busy machines.
describe('mediaforge webhooks (CLI)', { timeout: 180_000 }, () => {
  let t: TestService;
  let receiver: Receiver;
  let accountId: string;
  let apiKey: string;
  let webhookSecret: string;

  function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; json: any; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [join(ROOT, 'bin/mediaforge.js'), ...args],
        { cwd: ROOT, env: { ...process.env, MEDIAFORGE_DB: t.config.dbUrl, ...env } },
        (error, stdout, stderr) => {
          let json: unknown;
          try {
            json = JSON.parse(stdout);
          } catch {
            json = stdout;
          }
          resolve({ code: error ? Number(error.code ?? 1) : 0, json, stderr });
        },
      );
    });
  }
  const allow = { MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1', MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1' };

  beforeAll(async () => {
    t = await startTestService(LOOPBACK);
    receiver = await startReceiver();
    ({ accountId, apiKey, webhookSecret } = await t.account(100_000));
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('adds, lists, rotates and resends; deliveries verify with what the commands printed', async () => {
    /** `mediaforge webhooks add` for the account: an endpoint at `url` for `events` (comma-separated). */
    const add = (url: string, events: string, env?: Record<string, string>) =>
      cli(['webhooks', 'add', '--account', accountId, '--url', url, '--events', events, '--json'], env);
    const [bad, refused, refusedPrivate, added] = await Promise.all([
      add(receiver.url, 'task.succeeded,task.started', allow),
      // Without the switches a loopback http URL is refused, and so is a private https one.
      add(receiver.url, 'task.succeeded'),
      add('https://169.254.169.254/latest', 'task.succeeded'),
      add(receiver.url, 'task.succeeded,task.failed', allow),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.json.error).toMatch(/unknown event task\.started/);
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatch(/invalid endpoint URL/);
    expect(refusedPrivate.json.error).toMatch(/public addresses/);
    expect(added.code).toBe(0);
    expect(Object.keys(added.json).sort()).toEqual(['endpointId', 'secret']);
    expect(added.json.secret).toMatch(/^whsec_/);

    // A task announces itself to the callback and to the endpoint.
    const taskId = await createTask(t, apiKey, receiver.url);
    const [listed, requests] = await Promise.all([
      cli(['webhooks', 'list', '--account', accountId, '--json']),
      eventually(
        () =>
          receiver.requests.filter((r) => r.body.includes(taskId)).length === 2 &&
          receiver.requests.filter((r) => r.body.includes(taskId)),
        'two deliveries',
      ),
    ]);
    expect(listed.json.endpoints).toEqual([
      expect.objectContaining({
        endpointId: added.json.endpointId,
        url: receiver.url,
        events: ['task.succeeded', 'task.failed'],
        enabled: true,
        previousSecretValidUntil: null,
      }),
    ]);
    expect(JSON.stringify(listed.json)).not.toContain(added.json.secret);
    const endpointRequest = requests.find((r) => r.headers['webhook-id'])!;
    const callbackRequest = requests.find((r) => r.headers['x-webhook-signature'])!;
    expect(
      new Webhook(added.json.secret).verify(endpointRequest.body, endpointRequest.headers as Record<string, string>),
    ).toMatchObject({ type: 'task.succeeded' });
    expect(verifyCallback(webhookSecret, callbackRequest.headers, callbackRequest.body)).toBe(true);

    await settledDeliveriesOf(t, taskId, 2);
    const deliveries = await cli(['webhooks', 'deliveries', '--account', accountId, '--json']);
    expect(deliveries.json.deliveries).toHaveLength(2);
    for (const d of deliveries.json.deliveries)
      expect(d).toMatchObject({ taskId, state: 'delivered', attempts: 1, lastStatus: 200 });
    expect(deliveries.json.deliveries.map((d: any) => d.kind).sort()).toEqual(['callback', 'endpoint']);

    // Rotations, shown once; the account secret takes effect at once.
    const [rotated, endpointRotated, unknownEndpoint, unknownDelivery, usage] = await Promise.all([
      cli(['webhooks', 'rotate-secret', '--account', accountId, '--json']),
      cli(['webhooks', 'rotate-secret', '--account', accountId, '--endpoint', added.json.endpointId, '--json']),
      cli(['webhooks', 'rotate-secret', '--account', accountId, '--endpoint', 'whe_nope', '--json']),
      cli(['webhooks', 'resend', 'dlv_nope', '--json']),
      cli(['webhooks', 'frobnicate', '--json']),
    ]);
    expect(rotated.code).toBe(0);
    expect(rotated.json.webhookSecret).toMatch(/^whsec_/);
    expect(rotated.json.webhookSecret).not.toBe(webhookSecret);
    const account = await t.service.ctx.db.kysely
      .selectFrom('accounts')
      .select('webhook_secret')
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(account.webhook_secret).toBe(rotated.json.webhookSecret);
    expect(endpointRotated.json).toMatchObject({
      endpointId: added.json.endpointId,
      secret: expect.stringMatching(/^whsec_/),
      previousValidUntil: expect.any(String),
    });
    expect(unknownEndpoint.code).toBe(1);
    expect(unknownDelivery.json.error).toMatch(/no delivery/);
    expect(usage.code).toBe(2);

    // Resend by hand: the running server delivers both again with the same ids, signed with the new secrets.
    const callbackId = JSON.parse(callbackRequest.body).request_id;
    const endpointDeliveryId = String(endpointRequest.headers['webhook-id']);
    const [resent, resentEndpoint, listedAfter] = await Promise.all([
      cli(['webhooks', 'resend', callbackId, '--json']),
      cli(['webhooks', 'resend', endpointDeliveryId, '--json']),
      cli(['webhooks', 'list', '--account', accountId, '--json']),
    ]);
    expect(resent).toMatchObject({ code: 0, json: { deliveryId: callbackId, state: 'pending' } });
    expect(resentEndpoint).toMatchObject({ code: 0, json: { deliveryId: endpointDeliveryId, state: 'pending' } });
    expect(listedAfter.json.endpoints[0].previousSecretValidUntil).toBe(endpointRotated.json.previousValidUntil);
    const again = await eventually(
      () =>
        receiver.requests.filter((r) => r.body.includes(taskId)).length === 4 &&
        receiver.requests.filter((r) => r.body.includes(taskId)).slice(2),
      'the resent deliveries',
    );
    const callbackAgain = again.find((r) => r.headers['x-webhook-signature'])!;
    const endpointAgain = again.find((r) => r.headers['webhook-id'])!;
    expect(callbackAgain.body).toBe(callbackRequest.body);
    expect(verifyCallback(rotated.json.webhookSecret, callbackAgain.headers, callbackAgain.body)).toBe(true);
    expect(verifyCallback(webhookSecret, callbackAgain.headers, callbackAgain.body)).toBe(false);
    expect(endpointAgain.headers['webhook-id']).toBe(endpointDeliveryId);
    expect(String(endpointAgain.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpointRotated.json.secret, added.json.secret])
      expect(
        new Webhook(secret).verify(endpointAgain.body, endpointAgain.headers as Record<string, string>),
      ).toBeTruthy();
    await eventually(async () => {
      const rows = await t.service.ctx.db.kysely
        .selectFrom('webhook_deliveries')
        .select(['state', 'attempts'])
        .where('task_id', '=', taskId)
        .execute();
      return rows.every((row) => row.state === 'delivered' && row.attempts === 2);
    }, 'the resent deliveries recorded');
  });

  it('sets the account payload version and language; the existing commands still work', async () => {
    const [set, badVersion, created] = await Promise.all([
      cli(['accounts', 'set', '--account', accountId, '--payload-version', '1', '--language', 'de', '--json']),
      cli(['accounts', 'set', '--account', accountId, '--payload-version', '3', '--json']),
      cli(['accounts', 'create', '--credits', '5', '--json']),
    ]);
    expect(set).toMatchObject({ code: 0, json: { accountId, payloadVersion: 1, language: 'de' } });
    const row = await t.service.ctx.db.kysely
      .selectFrom('accounts')
      .select(['payload_version', 'language'])
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ payload_version: 1, language: 'de' });
    expect(badVersion.code).toBe(2); // a usage error: --payload-version must be 1 or 2
    expect(created.json).toMatchObject({
      accountId: expect.stringMatching(/^acct_/),
      apiKey: expect.stringMatching(/^sk-service-/),
      webhookSecret: expect.stringMatching(/^whsec_/),
    });
  });
});
