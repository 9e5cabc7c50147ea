import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatMessage } from '../../generated/errors.js';
import { ManualClock } from '../../runtime/clock.js';
import { configFromEnv } from '../../runtime/config.js';
import {
  addEndpoint,
  listDeliveries,
  resendDelivery,
  rotateAccountSecret,
  rotateEndpointSecret,
  setAccountWebhookSettings,
} from '../../runtime/webhooks/admin.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../runtime/webhooks/deliver.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  createTask,
  deliveriesOf,
  driveToTerminal,
  LOOPBACK,
  startReceiver,
  verifyCallback,
  withoutLinks,
  type Answer,
  type Receiver,
} from './support.js';

/**
 * The retry schedule on a manual clock: the worker runs only when the test says so
 * (`worker.runOnce()`), and the clock moves only when the test moves it.
 */
describe('delivery schedule (manual clock)', () => {
  let t: TestService;
  let receiver: Receiver;
  let clock: ManualClock;

  async function start(answer: (index: number) => Answer, overrides: Parameters<typeof startTestService>[0] = {}) {
    clock = new ManualClock();
    t = await startTestService({ ...LOOPBACK, ...overrides }, { clock, startWorker: false });
    receiver = await startReceiver(answer);
  }
  afterEach(async () => {
    vi.restoreAllMocks();
    await receiver?.close();
    await t?.close();
  });

  const runOnce = () => t.service.worker!.runOnce();
  const delivery = async (taskId: string) => (await deliveriesOf(t, taskId))[0];
  /** standardwebhooks checks the timestamp against the wall clock; on a manual clock it has to read that clock. */
  const verifyAt = (secret: string, body: string, headers: Record<string, any>) => {
    const spy = vi.spyOn(Date, 'now').mockReturnValue(clock.now());
    try {
      return new Webhook(secret).verify(body, headers);
    } finally {
      spy.mockRestore();
    }
  };

  it('delivers the fourth attempt with the same id to a receiver down for three, exactly 10 s, 30 s and 2 min apart', async () => {
    await start((index) => (index < 3 ? 500 : 200));
    const { apiKey, webhookSecret } = await t.account(100_000);
    const taskId = await createTask(t, apiKey, receiver.url);
    await driveToTerminal(t, clock, taskId);
    expect(receiver.requests).toHaveLength(0);
    const pending = await delivery(taskId);
    expect(pending).toMatchObject({ state: 'pending', attempts: 0, next_attempt_at: clock.now() });

    await runOnce();
    expect(receiver.requests).toHaveLength(1);
    const gaps = [10_000, 30_000, 120_000];
    for (const [index, gap] of gaps.entries()) {
      const row = await delivery(taskId);
      expect(row).toMatchObject({
        state: 'pending',
        attempts: index + 1,
        last_status: 500,
        next_attempt_at: clock.now() + gap,
      });
      clock.advance(gap - 1);
      await runOnce();
      expect(receiver.requests).toHaveLength(index + 1); // not a millisecond early
      clock.advance(1);
      await runOnce();
      expect(receiver.requests).toHaveLength(index + 2);
    }
    const done = await delivery(taskId);
    expect(done).toMatchObject({
      state: 'delivered',
      attempts: 4,
      last_status: 200,
      next_attempt_at: null,
      delivered_at: clock.now(),
    });

    const ids = receiver.requests.map((r) => JSON.parse(r.body).request_id);
    expect(new Set(ids)).toEqual(new Set([done.id]));
    expect(new Set(receiver.requests.map((r) => r.body)).size).toBe(1); // the same bytes every time
    const stamps = receiver.requests.map((r) => Number(r.headers['x-webhook-timestamp']));
    expect(stamps.slice(1).map((s, i) => s - stamps[i])).toEqual([10, 30, 120]); // signed again, fresh timestamp
    for (const request of receiver.requests)
      expect(verifyCallback(webhookSecret, request.headers, request.body)).toBe(true);

    clock.advance(24 * 3600 * 1000);
    await runOnce();
    expect(receiver.requests).toHaveLength(4);
  });

  it('cuts a receiver that never answers at the timeout and retries it', async () => {
    expect(configFromEnv({}).webhookTimeoutMs).toBe(15_000);
    await start((index) => (index === 0 ? 'hang' : 200), { webhookTimeoutMs: 300 });
    const { apiKey } = await t.account(100_000);
    const taskId = await createTask(t, apiKey, receiver.url);
    await driveToTerminal(t, clock, taskId);
    await runOnce();
    expect(receiver.requests).toHaveLength(1);
    const cut = await delivery(taskId);
    expect(cut).toMatchObject({
      state: 'pending',
      attempts: 1,
      last_status: null,
      next_attempt_at: clock.now() + 10_000,
    });
    expect(cut.last_error).toMatch(/timeout after 300 ms/);
    await vi.waitFor(() => expect(receiver.requests[0].aborted).toBe(true));
    clock.advance(10_000);
    await runOnce();
    expect(receiver.requests).toHaveLength(2);
    expect(JSON.parse(receiver.requests[1].body).request_id).toBe(cut.id);
    expect(await delivery(taskId)).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('treats a 3xx as a failed attempt and never follows it', async () => {
    const elsewhere = await startReceiver();
    try {
      await start((index) => (index === 0 ? { status: 302, headers: { location: elsewhere.url } } : 204));
      const { apiKey } = await t.account(100_000);
      const taskId = await createTask(t, apiKey, receiver.url);
      await driveToTerminal(t, clock, taskId);
      await runOnce();
      const row = await delivery(taskId);
      expect(row).toMatchObject({
        state: 'pending',
        attempts: 1,
        last_status: 302,
        next_attempt_at: clock.now() + 10_000,
      });
      expect(row.last_error).toMatch(/redirect not followed/);
      expect(elsewhere.connections).toBe(0);
      clock.advance(10_000);
      await runOnce();
      expect(await delivery(taskId)).toMatchObject({ state: 'delivered', attempts: 2, last_status: 204 });
      expect(elsewhere.connections).toBe(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('marks a delivery failed after the eighth attempt; a resend delivers it with the same id', async () => {
    let up = false;
    await start(() => (up ? 200 : 503));
    const { apiKey, accountId, webhookSecret } = await t.account(100_000);
    const taskId = await createTask(t, apiKey, receiver.url);
    await driveToTerminal(t, clock, taskId);
    await runOnce();
    expect(MAX_ATTEMPTS).toBe(8);
    expect(RETRY_DELAYS_MS).toEqual([10_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000]);
    for (const wait of RETRY_DELAYS_MS) {
      clock.advance(wait);
      await runOnce();
    }
    expect(receiver.requests).toHaveLength(8);
    const failed = await delivery(taskId);
    expect(failed).toMatchObject({ state: 'failed', attempts: 8, last_status: 503, next_attempt_at: null });
    clock.advance(48 * 3600 * 1000);
    await runOnce();
    expect(receiver.requests).toHaveLength(8);
    const [listed] = await listDeliveries(t.service.ctx.db, accountId);
    expect(listed).toMatchObject({
      deliveryId: failed.id,
      taskId,
      kind: 'callback',
      state: 'failed',
      attempts: 8,
      lastStatus: 503,
    });

    up = true;
    await resendDelivery(t.service.ctx.db, failed.id, clock.now());
    await expect(resendDelivery(t.service.ctx.db, failed.id, clock.now())).rejects.toThrow(/still pending/);
    await runOnce();
    expect(receiver.requests).toHaveLength(9);
    const last = receiver.requests[8];
    expect(JSON.parse(last.body).request_id).toBe(failed.id);
    expect(last.body).toBe(receiver.requests[0].body);
    expect(verifyCallback(webhookSecret, last.headers, last.body)).toBe(true);
    expect(await delivery(taskId)).toMatchObject({ id: failed.id, state: 'delivered', attempts: 9 });
  });

  it('signs a retry with the account secret current at send time (rotation takes effect at once)', async () => {
    await start((index) => (index === 0 ? 500 : 200));
    const { apiKey, accountId, webhookSecret: before } = await t.account(100_000);
    const taskId = await createTask(t, apiKey, receiver.url);
    await driveToTerminal(t, clock, taskId);
    await runOnce();
    const after = await rotateAccountSecret(t.service.ctx.db, accountId);
    clock.advance(10_000);
    await runOnce();
    const [first, second] = receiver.requests;
    expect(verifyCallback(before, first.headers, first.body)).toBe(true);
    expect(verifyCallback(after, second.headers, second.body)).toBe(true);
    expect(verifyCallback(before, second.headers, second.body)).toBe(false);
  });

  it('sends both endpoint signatures during the 24 h after a rotation, then only the new one', async () => {
    await start(() => 200);
    const { apiKey, accountId } = await t.account(100_000);
    const policy = { allowPrivate: true, allowInsecure: true };
    const { endpointId, secret: oldSecret } = await addEndpoint(t.service.ctx.db, {
      accountId,
      url: receiver.url,
      events: 'task.completed',
      policy,
      now: clock.now(),
    });
    const rotated = await rotateEndpointSecret(t.service.ctx.db, accountId, endpointId, clock.now());
    expect(rotated.previousValidUntil).toBe(new Date(clock.now() + 24 * 3600 * 1000).toISOString());

    const taskId = await createTask(t, apiKey);
    await driveToTerminal(t, clock, taskId);
    await runOnce();
    const [during] = receiver.requests;
    const signatures = String(during.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    for (const secret of [rotated.secret, oldSecret])
      expect(verifyAt(secret, during.body, during.headers)).toMatchObject({ type: 'task.completed' });
    // Current first: each signature on its own verifies with its own secret.
    expect(
      verifyAt(rotated.secret, during.body, { ...during.headers, 'webhook-signature': signatures[0] }),
    ).toBeTruthy();
    expect(verifyAt(oldSecret, during.body, { ...during.headers, 'webhook-signature': signatures[1] })).toBeTruthy();
    expect(() => verifyAt(oldSecret, during.body, { ...during.headers, 'webhook-signature': signatures[0] })).toThrow();

    clock.advance(24 * 3600 * 1000 + 1);
    const [row] = await deliveriesOf(t, taskId);
    await resendDelivery(t.service.ctx.db, row.id, clock.now());
    await runOnce();
    const after = receiver.requests[1];
    expect(after.headers['webhook-id']).toBe(row.id);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyAt(rotated.secret, after.body, after.headers)).toBeTruthy();
    expect(() => verifyAt(oldSecret, after.body, after.headers)).toThrow();
  });

  it('writes webhook texts in the account language (an expired task in German)', async () => {
    // The simulator would take ten hours: the deadline (30 min) comes first.
    await start(() => 200, { simulatorLatencyMs: 10 * 3600 * 1000 });
    const { apiKey, accountId, webhookSecret } = await t.account(100_000);
    await setAccountWebhookSettings(t.service.ctx.db, accountId, { language: 'de' });
    const taskId = await createTask(t, apiKey, receiver.url);
    await t.service.worker!.runOnce(); // queued -> running
    clock.advance(t.config.taskDeadlineMs);
    await runOnce(); // the deadline: expired, deliveries written
    expect((await deliveriesOf(t, taskId))[0]).toMatchObject({ state: 'pending', event_type: 'task.expired' });
    await runOnce();
    const [request] = receiver.requests;
    expect(verifyCallback(webhookSecret, request.headers, request.body)).toBe(true);
    const body = JSON.parse(request.body);
    expect(body.data).toMatchObject({ state: 'expired', errorCode: 'deadline_exceeded' });
    expect(body.data.errorMessage).toBe(formatMessage({ key: 'deadline_exceeded', params: { detail: '' } }, 'de'));
    expect(body.data.errorMessage).not.toBe(formatMessage({ key: 'deadline_exceeded', params: { detail: '' } }, 'en'));
    const record = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    expect(withoutLinks({ ...body, request_id: null })).toEqual(withoutLinks({ ...record.body, request_id: null }));
  });
});
