import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultResolutionHooks } from '../../runtime/service.js';
import type { ResolutionHook } from '../../runtime/tasks/resolve-task.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  createTask,
  deliveriesOf,
  LOOPBACK,
  MODEL,
  startReceiver,
  taskState,
  type Receiver,
} from '../webhooks/support.js';
import { eventually } from '../support/eventually.js';

/**
 * A service is what createService is given, not what the process imported: two services in one
 * process, each with its own resolution hooks and fault points, never see the other's.
 */
describe('two services in one process', () => {
  let first: TestService;
  let second: TestService;
  let bare: TestService;
  let receiver: Receiver;
  const resolvedBy = { first: [] as string[], second: [] as string[] };
  const faultsReached = { first: [] as string[], second: [] as string[] };
  const recording =
    (into: string[]): ResolutionHook =>
    async (_trx, task) =>
      void into.push(task.id);

  beforeAll(async () => {
    receiver = await startReceiver();
    // Each with the service's own hooks plus one that records, and its own fault points recorded instead of killing the process.
    first = await startTestService(
      { ...LOOPBACK, faultPoints: { 'create.idempotency-row': 2 } },
      {
        resolutionHooks: [...defaultResolutionHooks, recording(resolvedBy.first)],
        onFaultPoint: (name) => faultsReached.first.push(name),
      },
    );
    second = await startTestService(
      { ...LOOPBACK },
      {
        resolutionHooks: [...defaultResolutionHooks, recording(resolvedBy.second)],
        onFaultPoint: (name) => faultsReached.second.push(name),
      },
    );
    // No resolution hooks at all: nothing is written when its tasks resolve, whatever the process imported.
    bare = await startTestService({ ...LOOPBACK }, { resolutionHooks: [] });
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close(), bare?.close()]);
    await receiver?.close();
  });

  const succeeded = (t: TestService, taskId: string) =>
    eventually(async () => (await taskState(t, taskId)) === 'succeeded', `${taskId} succeeded`);

  it("runs each service's own resolution hooks, and only on its own tasks", async () => {
    const [a, b] = await Promise.all([first.account(10_000), second.account(10_000)]);
    const [onFirst, onSecond] = await Promise.all([
      createTask(first, a.apiKey, receiver.url),
      createTask(second, b.apiKey, receiver.url),
    ]);
    await Promise.all([succeeded(first, onFirst), succeeded(second, onSecond)]);
    expect(resolvedBy.first).toEqual([onFirst]);
    expect(resolvedBy.second).toEqual([onSecond]);
    // The default hooks ran as well: each service wrote its task's callback.
    expect((await deliveriesOf(first, onFirst)).map((d) => d.kind)).toEqual(['callback']);
    expect((await deliveriesOf(second, onSecond)).map((d) => d.kind)).toEqual(['callback']);
  });

  it('a service given no resolution hooks writes no deliveries (nothing was registered by importing webhooks)', async () => {
    const { apiKey } = await bare.account(10_000);
    const taskId = await createTask(bare, apiKey, receiver.url);
    await succeeded(bare, taskId);
    expect(await deliveriesOf(bare, taskId)).toEqual([]);
  });

  it("fires a fault point armed in one service's config at its armed count, and never in the other", async () => {
    expect(first.service.ctx.faults.armed()).toEqual(['create.idempotency-row']);
    expect(second.service.ctx.faults.armed()).toEqual([]);
    // The point is passed only by a create with an Idempotency-Key; the first service's is armed for its second pass.
    const [a, b] = await Promise.all([first.account(10_000), second.account(10_000)]);
    const create = async (t: TestService, apiKey: string, idempotencyKey: string) => {
      const response = await t.call('POST', '/api/v1/jobs/createTask', {
        key: apiKey,
        headers: { 'idempotency-key': idempotencyKey },
        body: { model: MODEL, input: { prompt: 'a lighthouse at dusk' } },
      });
      expect(response.status).toBe(202);
    };
    await create(second, b.apiKey, 'second-1');
    await create(second, b.apiKey, 'second-2');
    await create(first, a.apiKey, 'first-1');
    expect(faultsReached).toEqual({ first: [], second: [] });
    await create(first, a.apiKey, 'first-2');
    expect(faultsReached).toEqual({ first: ['create.idempotency-row'], second: [] });
    // Fired once: it is no longer armed.
    await create(first, a.apiKey, 'first-3');
    expect(faultsReached.first).toEqual(['create.idempotency-row']);
    expect(first.service.ctx.faults.armed()).toEqual([]);
  });
});
