import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/clock.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  createTask,
  deliveriesOf,
  settledDeliveriesOf,
  driveToTerminal,
  LOOPBACK,
  startReceiver,
  verifyCallback,
  type Receiver,
} from './support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Deliveries are rows written with the terminal state: a stopped server loses none, and a restarted one resumes the schedule. */
// One test starts real server processes (each loads the runtime): a generous limit for busy machines.
describe('deliveries across a restart', { timeout: 120_000 }, () => {
  let dir: string;
  let receiver: Receiver;
  const services: TestService[] = [];

  afterEach(async () => {
    for (const service of services.splice(0)) await service.close().catch(() => {});
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function boot(clock: ManualClock) {
    const t = await startTestService(LOOPBACK, { clock, startWorker: false, dir });
    services.push(t);
    return t;
  }

  it('delivers exactly once after the server stopped between the terminal state and the first attempt', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-restart-'));
    receiver = await startReceiver();
    const clock = new ManualClock();
    const first = await boot(clock);
    const { apiKey, webhookSecret } = await first.account(100_000);
    const taskId = await createTask(first, apiKey, receiver.url);
    await driveToTerminal(first, clock, taskId);
    const [written] = await deliveriesOf(first, taskId);
    expect(written).toMatchObject({ state: 'pending', attempts: 0 });
    expect(receiver.requests).toHaveLength(0);
    await first.close();

    const second = await boot(clock);
    for (let pass = 0; pass < 5; pass++) {
      await second.service.worker!.runOnce();
      clock.advance(60_000);
    }
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(JSON.parse(request.body).request_id).toBe(written.id);
    expect(verifyCallback(webhookSecret, request.headers, request.body)).toBe(true);
    expect((await deliveriesOf(second, taskId))[0]).toMatchObject({ id: written.id, state: 'delivered', attempts: 1 });
  });

  it('resumes the retry schedule where it stood', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-restart-'));
    receiver = await startReceiver((index) => (index === 0 ? 500 : 200));
    const clock = new ManualClock();
    const first = await boot(clock);
    const { apiKey } = await first.account(100_000);
    const taskId = await createTask(first, apiKey, receiver.url);
    await driveToTerminal(first, clock, taskId);
    await first.service.worker!.runOnce();
    const [failedOnce] = await deliveriesOf(first, taskId);
    expect(failedOnce).toMatchObject({ state: 'pending', attempts: 1, next_attempt_at: clock.now() + 10_000 });
    await first.close();

    const second = await boot(clock);
    clock.advance(9_999);
    await second.service.worker!.runOnce();
    expect(receiver.requests).toHaveLength(1);
    clock.advance(1);
    await second.service.worker!.runOnce();
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests.map((r) => JSON.parse(r.body).request_id)).toEqual([failedOnce.id, failedOnce.id]);
    expect((await deliveriesOf(second, taskId))[0]).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('a server killed (SIGKILL) in the middle of an attempt: the restarted server delivers, same delivery id', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-restart-'));
    // The first request is held unanswered until its sender dies; later ones are answered.
    receiver = await startReceiver((index) => (index === 0 ? 'hang' : 200));
    const setup = await startTestService(LOOPBACK, { startWorker: false, dir });
    services.push(setup);
    const { apiKey, webhookSecret } = await setup.account(100_000);
    const taskId = await createTask(setup, apiKey, receiver.url);
    await setup.close();

    const env = {
      ...process.env,
      MEDIAFORGE_DB: setup.config.dbUrl,
      MEDIAFORGE_DATA_DIR: dir,
      MEDIAFORGE_SECRET: 'test-secret',
      MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1',
      MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1',
      MEDIAFORGE_SIMULATOR_LATENCY_MS: '100',
      MEDIAFORGE_WORKER_IDLE_MS: '50',
      MEDIAFORGE_LEASE_MS: '1000',
    };
    const serve = () =>
      spawn(process.execPath, ['bin/mediaforge.js', 'serve', '--role', 'worker'], { cwd: ROOT, env, stdio: 'ignore' });
    const until = async (check: () => boolean, what: string) => {
      const deadline = Date.now() + 60_000;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };

    const kill = async (child: ReturnType<typeof serve>) => {
      const exited =
        child.exitCode !== null || child.signalCode !== null
          ? Promise.resolve()
          : new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    };

    const doomed = serve();
    try {
      await until(() => receiver.requests.length === 1, 'the first attempt');
    } finally {
      await kill(doomed);
    }
    const check = await startTestService(LOOPBACK, { startWorker: false, dir });
    services.push(check);
    const restarted = serve();
    try {
      await until(() => receiver.requests.length === 2, 'the attempt of the restarted server');
      await settledDeliveriesOf(check, taskId, 1);
    } finally {
      await kill(restarted);
    }
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[0].aborted).toBe(true);
    const [cut, delivered] = receiver.requests;
    expect(JSON.parse(delivered.body).request_id).toBe(JSON.parse(cut.body).request_id);
    expect(verifyCallback(webhookSecret, delivered.headers, delivered.body)).toBe(true);

    // The killed attempt never got an outcome, so it is not counted; the receiver dedupes on request_id.
    expect((await deliveriesOf(check, taskId))[0]).toMatchObject({
      id: JSON.parse(cut.body).request_id,
      state: 'delivered',
      attempts: 1,
    });
  });
});
