import { describe, expect, it } from 'vitest';
import { addEndpoint } from '../../runtime/webhooks/admin.js';
import { createTask, settledDeliveriesOf, serviceAndReceiverForSuite } from './support.js';
import { eventually } from '../support/eventually.js';

/** Purge destroys the request text everywhere, stored webhook bodies included; billing fields stay. */
describe('purge and stored webhook bodies', () => {
  const suite = serviceAndReceiverForSuite();

  it('scrubs the prompt and the output from callback and endpoint delivery rows', async () => {
    const { apiKey, accountId } = await suite.t.account(100_000);
    await addEndpoint(suite.t.service.ctx.db, {
      accountId,
      url: suite.receiver.url,
      events: 'task.completed',
      policy: { allowPrivate: true, allowInsecure: true },
      now: Date.now(),
    });
    const prompt = 'a secret prompt about a purple giraffe';
    const taskId = await createTask(suite.t, apiKey, suite.receiver.url, prompt);
    const delivered = await settledDeliveriesOf(suite.t, taskId, 2);
    expect(delivered.every((d) => d.body.includes(prompt))).toBe(true);

    const purge = await suite.t.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId } });
    expect(purge.status).toBe(200);

    const rows = await eventually(async () => {
      const r = await suite.t.service.ctx.db.kysely
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('task_id', '=', taskId)
        .execute();
      return r.length === 2 && r;
    }, 'the delivery rows');
    for (const row of rows) {
      expect(row.body).not.toContain(prompt);
      expect(row.body).not.toContain('/api/v1/media/');
      const body = JSON.parse(row.body);
      const record = body.data.object ?? body.data;
      expect(record).toMatchObject({
        taskId,
        state: 'succeeded',
        input: null,
        output: null,
        purgedAt: purge.body.data.purgedAt,
      });
      expect(record.credits).toBeGreaterThan(0);
    }
  });
});
