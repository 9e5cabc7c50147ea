import { serviceForSuite } from '../support/suite-service.js';
import { storedRows } from '../support/stored-rows.js';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostIsAllowed, isPublicAddress } from '../../runtime/net/address-policy.js';
import { attemptDelivery } from '../../runtime/webhooks/deliver.js';
import { OutboundAgents } from '../../runtime/net/kept-agents.js';
import { guardedAgent, postOnce, type Resolver } from '../../runtime/net/outbound.js';
import { startTestService } from '../support/service.js';
import { MODEL, startReceiver, type Receiver } from './support.js';

/** Every non-public range and spelling of the issue, as a callback URL host. */
const PRIVATE_HOSTS = [
  '0.0.0.0',
  '127.0.0.1',
  '127.1',
  '2130706433',
  '0x7f.1',
  '10.0.0.1',
  '172.16.0.1',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '224.0.0.1',
  '240.0.0.1',
  '[::]',
  '[::1]',
  '[fe80::1]',
  '[fc00::1]',
  '[::ffff:127.0.0.1]',
  '[::127.0.0.1]',
  '[64:ff9b::7f00:1]',
];

const REJECTED_URLS = [
  'http://example.com/hook',
  'https://example.com:8443/hook',
  'https://user:pw@example.com/hook',
  'ftp://example.com/hook',
  'not a url',
  ...PRIVATE_HOSTS.map((host) => `https://${host}/hook`),
  ...PRIVATE_HOSTS.map((host) => `https://${host}:443/hook`),
];

describe('callback URLs at createTask (no allow switches)', () => {
  const svc = serviceForSuite(1_000_000);
  let apiKey: string;
  let accountId: string;
  beforeAll(() => {
    expect(svc.t.config.webhookAllowPrivate).toBe(false);
    expect(svc.t.config.webhookAllowInsecure).toBe(false);
    ({ apiKey, accountId } = svc.account);
  });

  it.each(REJECTED_URLS)('%s is rejected with 400 / 40002 "Invalid callback URL"', async (callBackUrl) => {
    const response = await svc.t.call('POST', '/api/v1/jobs/createTask', {
      key: apiKey,
      body: { model: MODEL, input: { prompt: 'a harbour' }, callBackUrl },
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(40002);
    expect(response.body.msg).toBe('Invalid callback URL');
    expect(await svc.t.wallet(accountId)).toMatchObject({ held: 0, available: 1_000_000 });
  });

  it('creates nothing for any of them', async () => {
    const tasks = await storedRows(svc.t, 'tasks', { account_id: accountId });
    expect(tasks).toEqual([]);
  });
});

describe('isPublicAddress', () => {
  const literal = (host: string) => new URL(`https://${host}/`).hostname.replace(/^\[|\]$/g, '');

  it.each(PRIVATE_HOSTS)('refuses %s (as the URL parser spells it)', (host) => {
    expect(isPublicAddress(literal(host))).toBe(false);
  });

  it('folds the numeric spellings of loopback to 127.0.0.1 before classifying', () => {
    for (const host of ['127.1', '2130706433', '0x7f.1']) expect(literal(host)).toBe('127.0.0.1');
  });

  it.each([
    '0.0.0.0',
    '127.0.0.1',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b::808:808',
    '255.255.255.255',
    '198.18.0.1',
    '192.0.2.1',
    '2001:db8::1',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8'])(
    'accepts the public address %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it('refuses non-addresses', () => {
    for (const text of ['', 'localhost', '127.0.0.1.nip.io', '1.2.3.4.5']) expect(isPublicAddress(text)).toBe(false);
  });
});

/** The connect-time check: DNS answers are checked on the socket's own lookup, so rebinding cannot pass. */
describe('connect-time address check (guarded agent)', () => {
  let listener: Receiver;
  beforeAll(async () => {
    listener = await startReceiver();
  });
  afterAll(async () => listener?.close());

  /** http and any port allowed, private addresses not: only the address rule is under test. */
  const policy = { allowPrivate: false, allowInsecure: true };
  const answer =
    (...addresses: string[]): Resolver =>
    async () =>
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  const post = (url: string, resolver: Resolver, p = policy) =>
    postOnce(
      url,
      '{"probe":true}',
      { 'Content-Type': 'application/json' },
      { policy: { ...p, resolver }, timeoutMs: 2000 },
    );

  it('refuses a name that answered a public address at creation and 127.0.0.1 at delivery; the listener sees no connection', async () => {
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    let calls = 0;
    const rebinding: Resolver = async () => answer(...answers[Math.min(calls++, 1)])('rebind.example');
    // At creation: public only, accepted.
    expect((await rebinding('rebind.example')).every((a) => isPublicAddress(a.address))).toBe(true);
    // At delivery: the same name now points at the loopback listener.
    const result = await post(`http://rebind.example:${listener.port}/hook`, rebinding);
    expect(calls).toBe(2);
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/refused: non-public address 127\.0\.0\.1/);
    expect(listener.connections).toBe(0);
  });

  it.each([
    ['public A, loopback AAAA', ['93.184.216.34', '::1']],
    ['loopback A, public AAAA', ['127.0.0.1', '2606:4700:4700::1111']],
    ['public, then metadata', ['8.8.8.8', '169.254.169.254']],
    ['IPv4-mapped loopback', ['::ffff:127.0.0.1']],
  ])('refuses mixed answers (%s)', async (_name, addresses) => {
    const result = await post(`http://mixed.example:${listener.port}/hook`, answer(...addresses));
    expect(result.error).toMatch(/refused/);
    expect(listener.connections).toBe(0);
  });

  it('refuses literal private addresses (connected to without any lookup)', async () => {
    for (const host of ['127.0.0.1', '127.1', '2130706433', '0x7f.1', '[::ffff:127.0.0.1]', '[::1]']) {
      const result = await post(`http://${host}:${listener.port}/hook`, answer('8.8.8.8'));
      expect(result.error, host).toMatch(/refused/);
    }
    expect(listener.connections).toBe(0);
  });

  it('guards https connections and any request made with the agent directly', async () => {
    const viaHttps = await post(`https://rebind.example:${listener.port}/hook`, answer('127.0.0.1'));
    expect(viaHttps.error).toMatch(/refused/);
    const error = await new Promise<Error>((resolve) => {
      const request = http.request({
        host: 'rebind.example',
        port: listener.port,
        path: '/',
        agent: guardedAgent(false, { ...policy, resolver: answer('10.0.0.1', '127.0.0.1') }),
      });
      request.on('error', resolve);
      request.on('response', () => resolve(new Error('connected')));
      request.end();
    });
    expect(error.message).toMatch(/refused: non-public address 10\.0\.0\.1, 127\.0\.0\.1/);
    expect(listener.connections).toBe(0);
  });

  it('does not follow a 3xx', async () => {
    const redirecting = await startReceiver(() => ({
      status: 307,
      headers: { location: `http://127.0.0.1:${listener.port}/` },
    }));
    try {
      const result = await post(redirecting.url, answer('127.0.0.1'), { allowPrivate: true, allowInsecure: true });
      expect(result.status).toBe(307);
      expect(redirecting.requests).toHaveLength(1);
      expect(listener.connections).toBe(0);
    } finally {
      await redirecting.close();
    }
  });

  it('without the switches, plain http is refused before any lookup', async () => {
    let looked = false;
    const result = await post(`http://rebind.example:${listener.port}/`, async () => ((looked = true), []), {
      allowPrivate: false,
      allowInsecure: false,
    });
    expect(result.error).toMatch(/invalid URL \(scheme\)/);
    expect(looked).toBe(false);
    expect(listener.connections).toBe(0);
  });

  it('control: with allowPrivate the same resolver does reach the listener (the counter works)', async () => {
    const result = await post(`http://rebind.example:${listener.port}/hook`, answer('127.0.0.1'), {
      allowPrivate: true,
      allowInsecure: true,
    });
    expect(result.status).toBe(200);
    expect(listener.connections).toBe(1);
    listener.connections = 0;
  });

  it('a delivery whose host now resolves to loopback is a failed, recorded attempt with no connection', async () => {
    const t = await startTestService(
      { webhookAllowPrivate: false, webhookAllowInsecure: true, outboundResolver: answer('127.0.0.1') },
      { startWorker: false },
    );
    try {
      const { accountId } = await t.account(0);
      const now = t.service.ctx.clock.now();
      const id = 'dlv_rebinding_test';
      await t.service.ctx.db.kysely
        .insertInto('webhook_deliveries')
        .values({
          id,
          account_id: accountId,
          task_id: 'task_x',
          kind: 'callback',
          endpoint_id: null,
          event_type: 'task.succeeded',
          url: `http://rebind.example:${listener.port}/hook`,
          payload_version: 2,
          body: '{"data":{"taskId":"task_x"}}',
          state: 'pending',
          attempts: 0,
          round_attempts: 0,
          next_attempt_at: now,
          last_attempt_at: null,
          last_status: null,
          last_error: null,
          created_at: now,
          delivered_at: null,
        })
        .execute();
      const outcome = await attemptDelivery(t.service.ctx, id);
      expect(outcome).toEqual({ retryAt: expect.any(Number) });
      const row = await t.service.ctx.db.kysely
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ state: 'pending', attempts: 1, last_status: null });
      expect(row.last_error).toMatch(/refused: non-public address 127\.0\.0\.1/);
      expect(listener.connections).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('hostIsAllowed (the creation-time check) refuses the same literals', async () => {
    for (const host of PRIVATE_HOSTS)
      expect(
        await hostIsAllowed(new URL(`https://${host}/`).hostname, { allowPrivate: false, allowInsecure: false }),
        host,
      ).toBe(false);
    expect(await hostIsAllowed('8.8.8.8', { allowPrivate: false, allowInsecure: false })).toBe(true);
  });
});

/**
 * Deliveries keep their connections (Context.outbound): a kept connection was checked when it was
 * made, and every new one is looked up and checked again on its own socket.
 */
describe('kept connections (the delivery agents)', () => {
  const counting = (address: string) => {
    const resolver: Resolver & { calls: number } = Object.assign(
      async () => {
        resolver.calls++;
        return [{ address, family: 4 } as LookupAddress];
      },
      { calls: 0 },
    );
    return resolver;
  };

  it('two posts share one checked connection; after the receiver drops it, the next post looks the name up again', async () => {
    const sockets = new Set<Socket>();
    let connections = 0;
    const server = http.createServer((_req, res) => res.end('ok'));
    server.on('connection', (socket: Socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const resolver = counting('127.0.0.1');
    const policy = { allowPrivate: true, allowInsecure: true, resolver };
    const agents = new OutboundAgents(policy);
    const post = () => postOnce(`http://hooks.example:${port}/`, '{}', {}, { policy, timeoutMs: 5_000, agents });
    try {
      expect((await post()).status).toBe(200);
      expect((await post()).status).toBe(200);
      expect({ connections, lookups: resolver.calls }).toEqual({ connections: 1, lookups: 1 });
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await post()).status).toBe(200);
      expect({ connections, lookups: resolver.calls }).toEqual({ connections: 2, lookups: 2 });
    } finally {
      agents.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a name that answers a private address is refused on every post, none kept, no connection', async () => {
    const listener = await startReceiver();
    const resolver = counting('127.0.0.1');
    const policy = { allowPrivate: false, allowInsecure: true, resolver };
    const agents = new OutboundAgents(policy);
    try {
      for (let i = 0; i < 3; i++) {
        const result = await postOnce(
          `http://rebind.example:${listener.port}/hook`,
          '{}',
          {},
          {
            policy,
            timeoutMs: 2_000,
            agents,
          },
        );
        expect(result.error).toMatch(/refused: non-public address 127\.0\.0\.1/);
      }
      expect(resolver.calls).toBe(3);
      expect(listener.connections).toBe(0);
    } finally {
      agents.close();
      await listener.close();
    }
  });
});
