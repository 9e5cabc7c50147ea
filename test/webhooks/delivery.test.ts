import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { addEndpoint, setAccountWebhookSettings } from '../../runtime/webhooks/admin.js';
import {
  createTask,
  deliveriesOf,
  settledDeliveriesOf,
  verifyCallback,
  withoutLinks,
  serviceAndReceiverForSuite,
} from './support.js';
import { eventually } from '../support/eventually.js';

/** Real clock, background worker, loopback receivers: what a receiver sees end to end. */
describe('webhook deliveries', () => {
  const suite = serviceAndReceiverForSuite({ simulatorFailWhenPromptContains: 'PLEASE-FAIL' });

  const requestsFor = (taskId: string) => suite.receiver.requests.filter((r) => r.body.includes(taskId));
  const policy = { allowPrivate: true, allowInsecure: true };

  it('posts the task callback once, signed, with exactly the recordInfo body and the delivery id as request_id', async () => {
    const { apiKey, webhookSecret, accountId } = await suite.t.account(100_000);
    const taskId = await createTask(suite.t, apiKey, suite.receiver.url);
    const [request] = await eventually(() => requestsFor(taskId).length > 0 && requestsFor(taskId), 'the callback');

    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks/mediaforge?source=test');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('Service-Webhook/1');
    expect(request.headers['x-webhook-payload-version']).toBe('2');
    expect(request.headers['x-webhook-timestamp']).toMatch(/^\d+$/);
    expect(verifyCallback(webhookSecret, request.headers, request.body)).toBe(true);
    // Any change to the bytes breaks the signature: it is over the received bytes.
    expect(verifyCallback(webhookSecret, request.headers, request.body.replace('"succeeded"', '"succeeded" '))).toBe(
      false,
    );
    expect(
      verifyCallback(
        webhookSecret.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
        request.headers,
        request.body,
      ),
    ).toBe(false);

    const body = JSON.parse(request.body);
    const [delivery] = await settledDeliveriesOf(suite.t, taskId, 1);
    expect(delivery).toMatchObject({
      kind: 'callback',
      account_id: accountId,
      state: 'delivered',
      attempts: 1,
      last_status: 200,
      event_type: 'task.succeeded',
    });
    expect(body.request_id).toBe(delivery.id);
    expect(delivery.id).toMatch(/^dlv_/);

    const record = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    expect(record.status).toBe(200);
    expect(Object.keys(body)).toEqual(Object.keys(record.body));
    expect(withoutLinks({ ...body, request_id: null })).toEqual(withoutLinks({ ...record.body, request_id: null }));
    expect(body.data.state).toBe('succeeded');
    expect(body.data.output.assets[0].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);

    // Nothing more arrives for this task: one POST per terminal state.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(requestsFor(taskId)).toHaveLength(1);
  });

  it('announces a failed task with code 200 and data.state failed', async () => {
    const { apiKey, webhookSecret } = await suite.t.account(100_000);
    const taskId = await createTask(suite.t, apiKey, suite.receiver.url, 'PLEASE-FAIL a storm');
    const [request] = await eventually(() => requestsFor(taskId).length > 0 && requestsFor(taskId), 'the callback');
    expect(verifyCallback(webhookSecret, request.headers, request.body)).toBe(true);
    const body = JSON.parse(request.body);
    expect(body.code).toBe(200);
    expect(body.msg).toBe('success');
    expect(body.data.state).toBe('failed');
    expect(body.data.errorCode).toBe('generation_failed');
    const record = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    expect({ ...body, request_id: null }).toEqual({ ...record.body, request_id: null });
  });

  it('sends payload version 1 (task id at top-level task_id) to an account set to it', async () => {
    const { apiKey, webhookSecret, accountId } = await suite.t.account(100_000);
    await setAccountWebhookSettings(suite.t.service.ctx.db, accountId, { payloadVersion: 1 });
    const taskId = await createTask(suite.t, apiKey, suite.receiver.url);
    const [request] = await eventually(() => requestsFor(taskId).length > 0 && requestsFor(taskId), 'the callback');
    expect(request.headers['x-webhook-payload-version']).toBe('1');
    const body = JSON.parse(request.body);
    const [delivery] = await settledDeliveriesOf(suite.t, taskId, 1);
    expect(body).toMatchObject({ task_id: taskId, state: 'succeeded', request_id: delivery.id });
    expect(body.code).toBeUndefined();
    expect(body.data.taskId).toBe(taskId);
    expect(verifyCallback(webhookSecret, request.headers, request.body)).toBe(true);
  });

  it('delivers account endpoint events in Standard Webhooks format, verified by the standardwebhooks package', async () => {
    const { apiKey, accountId } = await suite.t.account(100_000);
    const now = Date.now();
    /** An endpoint of the account on the receiver, told apart by `name` in its URL. */
    const endpointFor = (name: string, events: string) =>
      addEndpoint(suite.t.service.ctx.db, {
        accountId,
        url: `${suite.receiver.url}&endpoint=${name}`,
        events,
        policy,
        now,
      });
    const succeeded = await endpointFor('succeeded', 'task.succeeded,task.failed');
    const completed = await endpointFor('completed', 'task.completed');
    const failedOnly = await endpointFor('failed', 'task.failed,task.expired');
    expect(succeeded.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const taskId = await createTask(suite.t, apiKey);
    const requests = await eventually(
      () => requestsFor(taskId).length >= 2 && requestsFor(taskId),
      'two endpoint events',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(requestsFor(taskId)).toHaveLength(2);
    const bySource = Object.fromEntries(
      requests.map((r) => [new URL(r.path, 'http://x').searchParams.get('endpoint'), r]),
    );
    expect(Object.keys(bySource).sort()).toEqual(['completed', 'succeeded']);

    const record = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey });
    const deliveries = await settledDeliveriesOf(suite.t, taskId, 2);
    expect(deliveries.map((d) => d.kind)).toEqual(['endpoint', 'endpoint']);
    for (const [name, endpoint, type] of [
      ['succeeded', succeeded, 'task.succeeded'],
      ['completed', completed, 'task.completed'],
    ] as const) {
      const request = bySource[name];
      expect(request.headers['user-agent']).toBe('Service-Webhook/1');
      expect(request.headers['content-type']).toBe('application/json');
      const payload = new Webhook(endpoint.secret).verify(
        request.body,
        request.headers as Record<string, string>,
      ) as any;
      expect(payload.type).toBe(type);
      expect(Date.parse(payload.timestamp)).not.toBeNaN();
      expect(withoutLinks(payload.data.object)).toEqual(withoutLinks(record.body.data));
      // The other endpoint's secret does not verify it.
      const other = name === 'succeeded' ? completed : succeeded;
      expect(() => new Webhook(other.secret).verify(request.body, request.headers as Record<string, string>)).toThrow();
      const delivery = deliveries.find((d) => d.endpoint_id === endpoint.endpointId)!;
      expect(request.headers['webhook-id']).toBe(delivery.id);
      expect(delivery).toMatchObject({ state: 'delivered', attempts: 1, event_type: type });
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    expect(deliveries.some((d) => d.endpoint_id === failedOnly.endpointId)).toBe(false);
  });

  it('the ten lines of docs/webhooks.md verify a real callback', async () => {
    const docs = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
    const section = docs.slice(docs.indexOf('## Verifying a callback'));
    const source = /```ts\n([\s\S]*?)```/.exec(section)![1];
    expect(source.trim().split('\n').length).toBeLessThanOrEqual(12);
    const js = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const { verifyCallback: documented } = await import(
      `data:text/javascript;base64,${Buffer.from(js).toString('base64')}`
    );

    const { apiKey, webhookSecret, accountId } = await suite.t.account(100_000);
    const taskId = await createTask(suite.t, apiKey, suite.receiver.url);
    const [request] = await eventually(() => requestsFor(taskId).length > 0 && requestsFor(taskId), 'the callback');
    const headers = request.headers as Record<string, string>;
    expect(documented(webhookSecret, headers, Buffer.from(request.body))).toBe(true);
    expect(documented(webhookSecret, headers, Buffer.from(request.body.replace('}', ' }')))).toBe(false);
    expect(
      documented(
        webhookSecret,
        { ...headers, 'x-webhook-timestamp': String(Number(headers['x-webhook-timestamp']) - 301) },
        Buffer.from(request.body),
      ),
    ).toBe(false);

    await setAccountWebhookSettings(suite.t.service.ctx.db, accountId, { payloadVersion: 1 });
    const legacyTask = await createTask(suite.t, apiKey, suite.receiver.url);
    const [legacy] = await eventually(
      () => requestsFor(legacyTask).length > 0 && requestsFor(legacyTask),
      'the version 1 callback',
    );
    expect(legacy.headers['x-webhook-payload-version']).toBe('1');
    expect(documented(webhookSecret, legacy.headers as Record<string, string>, Buffer.from(legacy.body))).toBe(true);
  });

  it('writes no delivery for a task without callBackUrl on an account without endpoints', async () => {
    const { apiKey } = await suite.t.account(100_000);
    const taskId = await createTask(suite.t, apiKey);
    await eventually(
      async () =>
        (await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { key: apiKey })).body.data.state ===
        'succeeded',
      'the task',
    );
    expect(await deliveriesOf(suite.t, taskId)).toEqual([]);
  });
});
