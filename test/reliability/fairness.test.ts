import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resendDelivery } from '../../runtime/webhooks/admin.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { createTask, deliveriesOf, LOOPBACK, startReceiver, type Receiver } from '../webhooks/support.js';
import { eventually } from '../support/eventually.js';
import { stubDns } from './egress-guard.js';
import { recordCounts } from './support.js';

/**
 * Item 3 of issue 16: one account cannot starve the others. Account A floods the worker with work
 * that holds its slot until a timeout (external references on a host that never answers: 20 s per
 * fetch; callbacks to a receiver that never answers: 15 s per attempt), more items than the old
 * single pool had slots (32). Account B then creates one ordinary task. B's task must succeed, and
 * its callback arrive, while every one of A's slow items is still open: none of A's tasks has
 * ended, none of A's hanging attempts has been recorded. Before the worker had lanes and a cap per
 * account, B's task waited in the one pool behind A's items until their timeouts: by the time it
 * succeeded, 32 of A's items had timed out.
 *
 * Then the slow host goes away (its connections are cut, new ones refused) and everything of A
 * ends: the tasks fail reference_unreachable with their holds released, the attempts are recorded.
 */
const FAMILY_C3 = 'vendor_b/family_c-3.0/reference-to-video';
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';
/** A's reference host: the stub DNS sends it to the never-answering loopback listener. */
const SLOW_HOST = 'refs.example';
const CREDITS = 10_000_000;
/** Bounds on the waits (a hang fails the test); generous, since the machine is shared. */
const WAIT_MS = 60_000;

const counts = {
  cases: 0,
  slowItems: 0,
  slowItemsOpenWhenOtherSucceeded: 0,
  slowItemsEndedBeforeOther: 0,
  tasksEnded: 0,
  violations: 0,
};

/** A TCP listener on loopback that accepts connections and never sends a byte (no TLS answer, no HTTP answer). */
interface SilentHost {
  port: number;
  connections: number;
  /** Cuts every open connection and stops listening: later connections are refused. */
  goAway(): Promise<void>;
}

async function startSilentHost(): Promise<SilentHost> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    host.connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  const host: SilentHost = {
    port: 0,
    connections: 0,
    async goAway() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host.port = (server.address() as AddressInfo).port;
  return host;
}

/** A's slow work, as each row starts it: how to see it is still open, and how it ends. */
interface SlowWork {
  /** How many of A's slow items have ended (a task no longer queued or running, a recorded attempt). */
  ended(): Promise<number>;
  /** The slow host goes away; resolves once all of A's items have ended, after checking how. */
  finish(): Promise<void>;
}

type Row = [
  string,
  {
    given: {
      slowItems: number;
      start: (t: TestService, a: { apiKey: string; accountId: string }, slowItems: number) => Promise<SlowWork>;
    };
  },
];

const ROWS: Row[] = [
  [
    'external references on a host that never answers',
    {
      given: {
        slowItems: 40,
        start: async (t, a, slowItems) => {
          const host = await startSilentHost();
          const taskIds: string[] = [];
          for (let i = 0; i < slowItems; i++) {
            const r = await t.call('POST', '/api/v1/jobs/createTask', {
              key: a.apiKey,
              body: {
                model: FAMILY_C3,
                input: { reference_image_urls: [`https://${SLOW_HOST}:${host.port}/a-${i}.png`] },
              },
            });
            expect(r.status).toBe(202);
            taskIds.push(r.body.data.taskId);
          }
          // The reference checks are in flight: the host holds their connections open.
          await eventually(() => host.connections >= 4, 'reference fetches to reach the silent host', WAIT_MS);
          const states = async () =>
            (
              await t.service.ctx.db.kysely.selectFrom('tasks').select('state').where('id', 'in', taskIds).execute()
            ).map((row) => row.state);
          return {
            // Still pending: queued (waiting for, or in, its reference check) or running.
            ended: async () => (await states()).filter((state) => state !== 'queued' && state !== 'running').length,
            async finish() {
              await host.goAway();
              for (const id of taskIds) {
                const done = await waitForTerminal(t, a.apiKey, id, WAIT_MS);
                expect(done).toMatchObject({
                  state: 'failed',
                  errorCode: 'reference_unreachable',
                  credits: 0,
                  settled: true,
                });
                counts.tasksEnded++;
              }
              expect(await t.wallet(a.accountId)).toMatchObject({ held: 0, spent: 0 });
            },
          };
        },
      },
    },
  ],
  [
    'callbacks to a receiver that never answers',
    {
      given: {
        slowItems: 36,
        start: async (t, a, slowItems) => {
          // A's tasks run and are delivered first; then the receiver stops answering and all of A's
          // deliveries are sent again at once (`mediaforge webhooks resend`): every one of them hangs.
          let hang = false;
          const receiver: Receiver = await startReceiver(() => (hang ? 'hang' : 200));
          const taskIds: string[] = [];
          for (let i = 0; i < slowItems; i++) taskIds.push(await createTask(t, a.apiKey, receiver.url));
          for (const id of taskIds) expect((await waitForTerminal(t, a.apiKey, id, WAIT_MS)).state).toBe('succeeded');
          const deliveries = async () => (await Promise.all(taskIds.map((id) => deliveriesOf(t, id)))).flat();
          await eventually(
            async () => (await deliveries()).filter((d) => d.state === 'delivered').length === slowItems,
            "A's first deliveries",
            WAIT_MS,
          );
          hang = true;
          const firstRequests = receiver.requests.length;
          for (const d of await deliveries()) await resendDelivery(t.service.ctx.db, d.id, Date.now());
          t.service.ctx.wakeWorkers();
          await eventually(
            () => receiver.requests.length >= firstRequests + 4,
            'resent deliveries to reach the silent receiver',
            WAIT_MS,
          );
          return {
            // Each delivery had one recorded attempt (delivered) before the resend.
            ended: async () => (await deliveries()).filter((d) => d.state !== 'pending' || d.attempts > 1).length,
            async finish() {
              await receiver.close();
              await eventually(
                async () => (await deliveries()).every((d) => d.attempts >= 2),
                "every resent attempt of A's recorded",
                WAIT_MS,
              );
              for (const d of await deliveries()) expect(d).toMatchObject({ state: 'pending', last_status: null });
              counts.tasksEnded += taskIds.length;
            },
          };
        },
      },
    },
  ],
];

describe("one account's slow work does not hold up another account's task (background worker)", () => {
  let t: TestService;
  let healthy: Receiver;
  beforeAll(async () => {
    const dns = stubDns();
    dns.set(SLOW_HOST, [['127.0.0.1']]);
    t = await startTestService({ ...LOOPBACK, outboundResolver: dns.resolver, simulatorLatencyMs: 100 });
    healthy = await startReceiver();
  });
  afterAll(async () => {
    await healthy?.close();
    await t?.close();
    recordCounts('fairness', counts);
  });

  it.each(ROWS)(
    "%s: B's task and its callback finish while all of A's slow items are still open",
    async (_name, { given }) => {
      counts.cases++;
      const a = await t.account(CREDITS);
      const b = await t.account(CREDITS);
      const slow = await given.start(t, a, given.slowItems);
      counts.slowItems += given.slowItems;

      const bTask = await createTask(t, b.apiKey, healthy.url);
      expect((await waitForTerminal(t, b.apiKey, bTask, WAIT_MS)).state).toBe('succeeded');
      await eventually(() => healthy.requests.some((r) => r.body.includes(bTask)), "B's callback", WAIT_MS);
      const endedBeforeB = await slow.ended();
      counts.slowItemsOpenWhenOtherSucceeded += given.slowItems - endedBeforeB;
      counts.slowItemsEndedBeforeOther += endedBeforeB;
      if (endedBeforeB > 0) counts.violations++;
      expect(
        endedBeforeB,
        `${endedBeforeB} of A's ${given.slowItems} slow items ended before B's task and callback were through`,
      ).toBe(0);

      await slow.finish();
      await t.checkLedger(a.accountId);
      await t.checkLedger(b.accountId);
    },
    4 * WAIT_MS,
  );
});
