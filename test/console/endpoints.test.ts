/**
 * Account endpoints from the console's JSON API: disabled endpoints get nothing, enabled ones get
 * signed events again, a rotated secret signs beside the old one, deleted endpoints are gone while
 * their deliveries stay in the log; another user's endpoint is a 404; CSRF as everywhere.
 */
import { storedRow } from '../support/stored-rows.js';
import { serviceForSuite } from '../support/suite-service.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { waitForTerminal } from '../support/service.js';
import { LOOPBACK, startReceiver, type Receiver } from '../webhooks/support.js';
import { eventually } from '../support/eventually.js';
import { signUp, type ConsoleUser } from './support.js';

const MODEL = 'vendor_d/family_d/text-to-video';

describe('account endpoints in the console', () => {
  const svc = serviceForSuite(undefined, { ...LOOPBACK });
  let receiver: Receiver;
  let user: ConsoleUser;
  let apiKey: string;
  let endpoint: { endpointId: string; secret: string };

  beforeAll(async () => {
    receiver = await startReceiver();
    user = await signUp(svc.t, 'hooks@example.com');
    const { account_id } = await storedRow(svc.t, 'users', { email: 'hooks@example.com' });
    await addCredits(svc.t.service.ctx.db, account_id, 1000, Date.now());
    apiKey = (await user.call('POST', '/console/api/keys', {})).body.data.apiKey;
    const added = await user.call('POST', '/console/api/endpoints', {
      url: `${receiver.url}/events`,
      events: ['task.completed'],
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    endpoint = added.body.data;
  });
  afterAll(async () => {
    await receiver?.close();
  });

  async function finishedTask(): Promise<string> {
    const created = await svc.t.call('POST', '/api/v1/jobs/createTask', {
      key: apiKey,
      body: { model: MODEL, input: { prompt: 'a quiet harbour' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    await waitForTerminal(svc.t, apiKey, created.body.data.taskId);
    return created.body.data.taskId;
  }

  const endpointDeliveries = async (taskId: string) =>
    (await user.call('GET', '/console/api/deliveries')).body.data.filter(
      (d: { taskId: string; kind: string }) => d.taskId === taskId && d.kind === 'endpoint',
    );
  const listed = async () =>
    (await user.call('GET', '/console/api/endpoints')).body.data as {
      endpointId: string;
      enabled: boolean;
      previousSecretValidUntil: string | null;
    }[];

  it("needs the CSRF token, and reaches only the user's own endpoints (404 otherwise)", async () => {
    expect(
      (await user.call('POST', `/console/api/endpoints/${endpoint.endpointId}/disable`, {}, { csrf: null })).status,
    ).toBe(403);
    const other = await signUp(svc.t, 'stranger@example.com');
    for (const action of ['disable', 'enable', 'rotate-secret', 'delete']) {
      const r = await other.call('POST', `/console/api/endpoints/${endpoint.endpointId}/${action}`);
      expect([action, r.status, r.body.data.reason]).toEqual([action, 404, 'not_found']);
    }
    expect((await listed())[0].enabled).toBe(true);
  });

  it('a disabled endpoint gets no events; enabled again it gets the next one, signed with its secret', async () => {
    expect((await user.call('POST', `/console/api/endpoints/${endpoint.endpointId}/disable`)).body.data).toEqual({
      disabled: true,
    });
    expect((await listed())[0].enabled).toBe(false);
    const quiet = await finishedTask();
    expect(await endpointDeliveries(quiet)).toEqual([]);

    expect((await user.call('POST', `/console/api/endpoints/${endpoint.endpointId}/enable`)).body.data).toEqual({
      enabled: true,
    });
    expect((await listed())[0].enabled).toBe(true);
    const heard = await finishedTask();
    const received = await eventually(
      () => receiver.requests.find((r) => r.body.includes(heard)),
      'the endpoint event',
    );
    expect(() =>
      new Webhook(endpoint.secret).verify(received.body, received.headers as Record<string, string>),
    ).not.toThrow();
    expect(receiver.requests).toHaveLength(1);
  });

  it('rotates the endpoint secret (shown once): a resend is signed with the new and, for a day, the old one', async () => {
    const rotated = await user.call('POST', `/console/api/endpoints/${endpoint.endpointId}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(endpoint.secret);
    expect((await listed())[0].previousSecretValidUntil).toBe(rotated.body.data.previousValidUntil);
    const [delivery] = (await user.call('GET', '/console/api/deliveries')).body.data.filter(
      (d: { kind: string }) => d.kind === 'endpoint',
    );
    expect((await user.call('POST', `/console/api/deliveries/${delivery.deliveryId}/resend`)).status).toBe(200);
    const resent = await eventually(() => receiver.requests[1], 'the resent event');
    const headers = resent.headers as Record<string, string>;
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(rotated.body.data.secret).verify(resent.body, headers)).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(resent.body, headers)).not.toThrow();
  });

  it('deletes the endpoint: gone from the list, its deliveries kept in the log', async () => {
    const before = (await user.call('GET', '/console/api/deliveries')).body.data.filter(
      (d: { kind: string }) => d.kind === 'endpoint',
    );
    expect((await user.call('POST', `/console/api/endpoints/${endpoint.endpointId}/delete`)).body.data).toEqual({
      deleted: true,
    });
    expect(await listed()).toEqual([]);
    expect(
      (await user.call('GET', '/console/api/deliveries')).body.data.filter(
        (d: { kind: string }) => d.kind === 'endpoint',
      ),
    ).toHaveLength(before.length);
    expect((await user.call('POST', `/console/api/endpoints/${endpoint.endpointId}/delete`)).status).toBe(404);
    const after = await finishedTask();
    expect(await endpointDeliveries(after)).toEqual([]);
  });

  it('reports a bad endpoint URL with a translated message and the English detail', async () => {
    await user.call('POST', '/console/api/settings', { language: 'fr' });
    const r = await user.call('POST', '/console/api/endpoints', {
      url: 'ftp://example.com/x',
      events: ['task.completed'],
    });
    expect(r.status).toBe(400);
    expect(r.body.data.reason).toBe('invalid_url');
    expect(r.body.msg).toMatch(/^URL de point de terminaison non valide/);
    expect(r.body.data.detail).toMatch(/^invalid endpoint URL/);
  });
});
