import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/clock.js';
import { addEndpoint, disableEndpoint } from '../../runtime/webhooks/admin.js';
import { MAX_RESPONSE_BYTES, postOnce } from '../../runtime/net/outbound.js';
import { startTestService, type TestService } from '../support/service.js';
import { createTask, deliveriesOf, driveToTerminal, LOOPBACK, startReceiver, type Receiver } from './support.js';

const loopback = { allowPrivate: true, allowInsecure: true };

describe('one outbound attempt', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  /** A receiver that answers `status` and then streams its body forever. */
  async function endless(status: number): Promise<{ url: string; sent: () => number }> {
    let sent = 0;
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) sent += chunk.length;
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, sent: () => sent };
  }

  it('reads at most 64 KiB of an answer, then hangs up', async () => {
    const { url } = await endless(500);
    const result = await postOnce(
      url,
      '{}',
      { 'Content-Type': 'application/json' },
      { policy: loopback, timeoutMs: 10_000 },
    );
    expect(result.status).toBe(500);
    expect(result.error).toBeNull();
    expect(Buffer.byteLength(result.responseExcerpt)).toBe(MAX_RESPONSE_BYTES);
    expect(MAX_RESPONSE_BYTES).toBe(64 * 1024);
  });

  it('a 2xx status counts even when the body never ends', async () => {
    const { url } = await endless(200);
    const result = await postOnce(url, '{}', {}, { policy: loopback, timeoutMs: 10_000, maxResponseBytes: 1024 });
    expect(result.status).toBe(200);
    expect(result.responseExcerpt).toHaveLength(1024);
  });

  it('a refused connection is a failed attempt with its reason', async () => {
    const { url } = await endless(200);
    const port = new URL(url).port;
    server!.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    const result = await postOnce(`http://127.0.0.1:${port}/`, '{}', {}, { policy: loopback, timeoutMs: 5_000 });
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/ECONNREFUSED/);
  });
});

describe('endpoints that are disabled', () => {
  let t: TestService;
  let receiver: Receiver;
  afterEach(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('get no new deliveries, and a pending one fails at its next attempt without a connection', async () => {
    const clock = new ManualClock();
    t = await startTestService(LOOPBACK, { clock, startWorker: false });
    receiver = await startReceiver(() => 500);
    const { apiKey, accountId } = await t.account(100_000);
    const db = t.service.ctx.db;
    const { endpointId } = await addEndpoint(db, {
      accountId,
      url: receiver.url,
      events: 'task.completed',
      policy: loopback,
      now: clock.now(),
    });
    const first = await createTask(t, apiKey);
    await driveToTerminal(t, clock, first);
    await t.service.worker!.runOnce();
    expect(receiver.requests).toHaveLength(1);
    expect(await disableEndpoint(db, accountId, endpointId, clock.now())).toBe(true);
    clock.advance(10_000);
    await t.service.worker!.runOnce();
    expect(receiver.requests).toHaveLength(1);
    expect((await deliveriesOf(t, first))[0]).toMatchObject({
      state: 'failed',
      attempts: 2,
      last_error: 'endpoint disabled',
    });

    const second = await createTask(t, apiKey);
    await driveToTerminal(t, clock, second);
    expect(await deliveriesOf(t, second)).toEqual([]);
  });
});
