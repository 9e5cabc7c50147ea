import { storedRow } from '../support/stored-rows.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkReferencesBeforeRun } from '../../runtime/assets/run-check.js';
import type { TaskRow } from '../../runtime/tasks/task-record.js';
import { createTask, expectError, MODEL_D } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { UNLOCKED } from '../files/support.js';
import { installTripwire, stubDns, type ConnectAttempt, type Tripwire } from './egress-guard.js';
import { recordCounts } from './support.js';

/**
 * SSRF, item 7 of issue 12: the address matrix of test/webhooks/ssrf.test.ts, run through every
 * way the service fetches or posts to a URL a caller gave it: LoRA import (POST /files/import),
 * external reference files fetched while a task starts, and task callbacks. Production policy (no
 * allow switches): https on 443 only. DNS is a stub (config.outboundResolver) and a tripwire on the
 * TCP binding refuses every non-loopback connect, so nothing leaves the machine even when the code
 * under test decides to connect to a "public" address.
 *
 * want:
 * - blocked: refused on the address check; no TCP connection is attempted at all;
 * - unresolvable: the name has no answer; no connection;
 * - rebinding: the name answers public first, then loopback. A fetch does one lookup per
 *   connection and connects to exactly the address it checked (pinned): the only attempt is to
 *   the public address (stopped by the tripwire), never to loopback. A callback is checked at
 *   creation (public: accepted) and again on the socket at delivery (loopback: refused, no connection).
 */
type Want = 'blocked' | 'unresolvable' | 'rebinding';
interface Given {
  host: string;
  /** Successive DNS answers of the host when it is a name. */
  dns?: string[][];
}
type Row = [string, { given: Given; want: Want }];

/** A public address the stub hands out; the tripwire guarantees it is never actually reached. */
const PUBLIC = '93.184.216.34';
const literal = (host: string): { given: Given; want: Want } => ({ given: { host }, want: 'blocked' });
const named = (host: string, ...dns: string[][]): { given: Given; want: Want } => ({
  given: { host, dns },
  want: 'blocked',
});

const ROWS: Row[] = [
  // IPv4: loopback, unspecified, RFC 1918, link-local and cloud metadata, CGNAT, benchmark, multicast, broadcast
  ['IPv4 loopback', literal('127.0.0.1')],
  ['IPv4 loopback, top of 127/8', literal('127.255.255.254')],
  ['IPv4 unspecified', literal('0.0.0.0')],
  ['RFC 1918 10/8', literal('10.0.0.1')],
  ['RFC 1918 172.16/12', literal('172.31.255.255')],
  ['RFC 1918 192.168/16', literal('192.168.1.1')],
  ['link-local metadata (AWS, GCP, Azure)', literal('169.254.169.254')],
  ['CGNAT 100.64/10 (Alibaba metadata)', literal('100.100.100.200')],
  ['IETF 192.0.0/24', literal('192.0.0.192')],
  ['benchmark 198.18/15', literal('198.18.0.1')],
  ['multicast', literal('224.0.0.1')],
  ['broadcast', literal('255.255.255.255')],
  // IPv6
  ['IPv6 loopback', literal('[::1]')],
  ['IPv6 unspecified', literal('[::]')],
  ['IPv6 link-local', literal('[fe80::1]')],
  ['IPv6 unique local', literal('[fc00::1]')],
  ['IPv6 metadata (AWS fd00:ec2::254)', literal('[fd00:ec2::254]')],
  ['IPv6 multicast', literal('[ff02::1]')],
  ['IPv6 documentation', literal('[2001:db8::1]')],
  // IPv4 inside IPv6
  ['IPv4-mapped loopback', literal('[::ffff:127.0.0.1]')],
  ['IPv4-mapped loopback, hex', literal('[::ffff:7f00:1]')],
  ['IPv4-mapped metadata', literal('[::ffff:169.254.169.254]')],
  ['IPv4-mapped RFC 1918', literal('[::ffff:10.0.0.1]')],
  ['IPv4-compatible loopback (deprecated ::a.b.c.d)', literal('[::127.0.0.1]')],
  ['NAT64 of metadata', literal('[64:ff9b::a9fe:a9fe]')],
  ['6to4 of loopback', literal('[2002:7f00:1::1]')],
  ['Teredo', literal('[2001::7f00:1]')],
  // Other spellings the URL parser folds to an address
  ['short loopback 127.1', literal('127.1')],
  ['short loopback 127.0.1', literal('127.0.1')],
  ['decimal loopback', literal('2130706433')],
  ['hex loopback', literal('0x7f000001')],
  ['hex dotted loopback', literal('0x7f.0.0.1')],
  ['octal loopback', literal('0177.0.0.1')],
  ['octal whole loopback', literal('017700000001')],
  ['decimal metadata', literal('2852039166')],
  ['hex metadata', literal('0xa9fea9fe')],
  ['octal dotted metadata', literal('0251.0376.0251.0376')],
  ['mixed metadata 169.254.43518', literal('169.254.43518')],
  // DNS names resolving to private addresses (the stub answers; no query leaves)
  ['name -> loopback', named('localhost', ['127.0.0.1', '::1'])],
  ['name -> RFC 1918', named('intranet.example', ['10.0.0.5'])],
  ['name -> metadata', named('metadata.example', ['169.254.169.254'])],
  ['name -> IPv6 loopback', named('six.example', ['::1'])],
  ['name -> IPv4-mapped loopback', named('mapped.example', ['::ffff:127.0.0.1'])],
  ['name -> public and private (one private refuses all)', named('mixed.example', [PUBLIC, '10.0.0.1'])],
  ['name -> public A, unique-local AAAA', named('mixed6.example', [PUBLIC, 'fd00::1'])],
  ['name -> no address', named('empty.example', [])],
  ['name -> private first, public later (no retry lets it through)', named('flip.example', ['127.0.0.1'], [PUBLIC])],
  ['unknown name (NXDOMAIN)', { given: { host: 'nxdomain.example' }, want: 'unresolvable' }],
  // DNS rebinding: public when checked, loopback afterwards
  [
    'DNS rebinding: public, then loopback',
    { given: { host: 'rebind.example', dns: [[PUBLIC], ['127.0.0.1']] }, want: 'rebinding' },
  ],
  [
    'DNS rebinding: public, then metadata',
    { given: { host: 'rebind-meta.example', dns: [[PUBLIC], ['169.254.169.254']] }, want: 'rebinding' },
  ],
];

const counts = { cases: 0, blockedBeforeConnect: 0, pinnedConnects: 0, redirectsRefused: 0, violations: 0 };
const hostname = (host: string) => host.replace(/^\[|\]$/g, '');
const FAMILY_C3 = 'vendor_b/family_c-3.0/reference-to-video';

let tripwire: Tripwire;
beforeAll(() => {
  tripwire = installTripwire();
});
afterAll(() => {
  tripwire?.uninstall();
  recordCounts('ssrf', counts);
});

describe('SSRF matrix through the service (stub DNS, tripwire on every TCP connect)', () => {
  let t: TestService;
  const dns = stubDns();
  let apiKey: string;
  let accountId: string;
  const warnings: { reason?: string; detail?: string }[] = [];
  let mark = 0;
  beforeAll(async () => {
    t = await startTestService({ outboundResolver: dns.resolver });
    expect(t.config).toMatchObject({ webhookAllowPrivate: false, webhookAllowInsecure: false });
    ({ apiKey, accountId } = await t.account(UNLOCKED));
    const log = t.service.ctx.log;
    t.service.ctx.log = {
      ...log,
      info: () => {},
      warn: (obj: unknown) => void warnings.push(obj as never),
    } as typeof log;
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    dns.reset();
    warnings.length = 0;
    mark = tripwire.attempts.length;
  });
  /** TCP attempts since the row began, other than the test's own calls to the service (and its database). */
  const outbound = (): ConnectAttempt[] => tripwire.attempts.slice(mark).filter((a) => a.refused || a.port === 443);
  const stage = (given: Given) => {
    if (given.dns) dns.set(hostname(given.host), given.dns);
  };
  /** The connection checks shared by every surface: what may have been attempted for this row. */
  const expectConnections = (want: Want, given: Given) => {
    counts.cases++;
    const attempts = outbound();
    if (want === 'rebinding') {
      // Pinned: one lookup, and the connect goes to exactly the answer that was checked.
      expect(attempts).toEqual([{ address: given.dns![0][0], port: 443, refused: true }]);
      counts.pinnedConnects++;
    } else {
      expect(attempts).toEqual([]);
      counts.blockedBeforeConnect++;
    }
  };

  it.each(ROWS)('LoRA import, %s: 400 40017, nothing stored', async (_name, { given, want }) => {
    stage(given);
    const before = await t.service.ctx.db.kysely.selectFrom('assets').select('id').execute();
    const r = await t.call('POST', '/api/v1/files/import', {
      key: apiKey,
      body: { url: `https://${given.host}/models/style.safetensors` },
    });
    expectError(r, 400, 40017);
    expect(warnings.map((w) => w.reason)).toEqual([want === 'blocked' ? 'blocked' : 'network']);
    if (given.dns) expect(dns.calls.get(hostname(given.host))).toBe(1);
    expectConnections(want, given);
    expect(await t.service.ctx.db.kysely.selectFrom('assets').select('id').execute()).toEqual(before);
  });

  it.each(ROWS)(
    'reference image fetched while a task starts, %s: the task fails reference_unreachable, hold released',
    async (_name, { given, want }) => {
      stage(given);
      const r = await createTask(t, apiKey, {
        model: FAMILY_C3,
        input: { prompt: 'the picture comes alive', reference_image_urls: [`https://${given.host}/ref.png`] },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      const done = await waitForTerminal(t, apiKey, r.body.data.taskId);
      expect(done).toMatchObject({ state: 'failed', errorCode: 'reference_unreachable', credits: 0 });
      const row = await t.service.ctx.db.kysely
        .selectFrom('tasks')
        .select('error_message')
        .where('id', '=', done.taskId)
        .executeTakeFirstOrThrow();
      expect(row.error_message).toBe(`input.reference_image_urls[0]: ${want === 'blocked' ? 'blocked' : 'network'}`);
      if (given.dns) expect(dns.calls.get(hostname(given.host))).toBe(1);
      expectConnections(want, given);
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
      await t.checkLedger(accountId);
    },
  );

  it.each(ROWS)('task callback, %s', async (_name, { given, want }) => {
    stage(given);
    const callBackUrl = `https://${given.host}/hook`;
    const r = await createTask(t, apiKey, {
      model: MODEL_D,
      input: { prompt: 'a red fox, Picture 1 as the fox', reference_image_urls: ['https://example.com/a.png'] },
      callBackUrl,
    });
    if (want !== 'rebinding') {
      // Refused at creation (the check of the specification's callback rules), nothing held.
      expectError(r, 400, 40002);
      expect(r.body.msg).toBe('Invalid callback URL');
      expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
      expectConnections(want, given);
      return;
    }
    // Public at creation: accepted. At delivery the socket's own lookup answers loopback: refused, no connection.
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await waitForTerminal(t, apiKey, r.body.data.taskId);
    const delivery = await eventuallyAttempted(t, r.body.data.taskId);
    expect(delivery).toMatchObject({ state: 'pending', attempts: 1, last_status: null });
    expect(delivery.last_error).toMatch(
      new RegExp(`refused: non-public address ${given.dns![1][0].replace(/\./g, '\\.')}`),
    );
    expect(dns.calls.get(hostname(given.host))).toBe(2);
    counts.cases++;
    counts.blockedBeforeConnect++;
    expect(outbound()).toEqual([]);
    await t.service.ctx.db.kysely
      .updateTable('webhook_deliveries')
      .set({ state: 'failed', next_attempt_at: null })
      .where('id', '=', delivery.id)
      .execute();
    await t.checkLedger(accountId);
  });
});

async function eventuallyAttempted(t: TestService, taskId: string) {
  const until = Date.now() + 10_000;
  for (;;) {
    const row = await t.service.ctx.db.kysely
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('task_id', '=', taskId)
      .executeTakeFirst();
    if (row && row.attempts > 0) return row;
    if (Date.now() > until) throw new Error(`no delivery attempt for ${taskId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Redirects to private addresses. The redirector has to be reachable, so this service runs with
 * the test-only allow switches (loopback, http): with every address allowed, a redirect that were
 * followed would reach its target. It must not be followed at all.
 */
describe('redirects to private addresses are never followed (import, reference fetch)', () => {
  let t: TestService;
  const dns = stubDns();
  let target: Server;
  let targetConnections = 0;
  let redirector: Server;
  let redirectorRequests = 0;
  let location = '';
  let status = 302;
  let apiKey: string;
  let accountId: string;
  let keyId: string;
  beforeAll(async () => {
    target = createServer((_req, res) => res.end('secret'));
    target.on('connection', () => targetConnections++);
    redirector = createServer((req, res) => {
      redirectorRequests++;
      req.resume();
      res.writeHead(status, { location }).end();
    });
    await Promise.all(
      [target, redirector].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))),
    );
    dns.set('internal.example', [['127.0.0.1']]);
    t = await startTestService({
      webhookAllowPrivate: true,
      webhookAllowInsecure: true,
      outboundResolver: dns.resolver,
    });
    ({ apiKey, accountId } = await t.account(UNLOCKED));
    keyId = (await storedRow(t, 'api_keys', { account_id: accountId })).id;
  });
  afterAll(async () => {
    await t?.close();
    for (const s of [target, redirector]) s?.closeAllConnections();
    await Promise.all([target, redirector].map((s) => new Promise((resolve) => s?.close(resolve))));
  });

  const targetPort = () => (target.address() as AddressInfo).port;
  const redirectorBase = () => `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
  const LOCATIONS: [string, () => string][] = [
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
    ['a loopback listener', () => `http://127.0.0.1:${targetPort()}/models/style.safetensors`],
    ['a loopback listener over IPv6-mapped', () => `http://[::ffff:127.0.0.1]:${targetPort()}/x.safetensors`],
    ['a name resolving to loopback', () => `http://internal.example:${targetPort()}/x.safetensors`],
    ['a relative path on the same host', () => '/models/other.safetensors'],
  ];
  const ROWS_REDIRECT: [string, { given: { status: number; location: () => string } }][] = [
    301, 302, 303, 307, 308,
  ].flatMap((code) =>
    LOCATIONS.map(([name, to]): [string, { given: { status: number; location: () => string } }] => [
      `${code} to ${name}`,
      { given: { status: code, location: to } },
    ]),
  );

  it('control: the redirector and the target are reachable under these switches (the counters work)', async () => {
    status = 200;
    const r = await fetch(`http://127.0.0.1:${targetPort()}/`);
    expect(await r.text()).toBe('secret');
    expect(targetConnections).toBe(1);
    targetConnections = 0;
  });

  it.each(ROWS_REDIRECT)('%s: one request to the redirector, none anywhere else', async (_name, { given }) => {
    status = given.status;
    location = given.location();
    const mark = tripwire.attempts.length;
    const requestsBefore = redirectorRequests;
    const redirectorPort = (redirector.address() as AddressInfo).port;

    const imported = await t.call('POST', '/api/v1/files/import', {
      key: apiKey,
      body: { url: `${redirectorBase()}/models/style.safetensors` },
    });
    expectError(imported, 400, 40017);
    // References must be https at acceptance, and a loopback TLS receiver would fail verification before
    // any redirect: the worker's check (the same fetch a task start makes) is called on a task row directly.
    const problem = await checkReferencesBeforeRun(t.service.ctx, {
      id: 'task_redirect',
      account_id: accountId,
      api_key_id: keyId,
      model: FAMILY_C3,
      input_json: JSON.stringify({ reference_image_urls: [`${redirectorBase()}/ref.png`] }),
    } as TaskRow);
    expect(problem).toEqual({ code: 'reference_unreachable', detail: 'input.reference_image_urls[0]: redirect' });

    expect(redirectorRequests - requestsBefore).toBe(2); // the import's GET and the reference's GET, nothing more
    expect(targetConnections).toBe(0);
    expect(dns.calls.get('internal.example') ?? 0).toBe(0);
    // Apart from the test's calls to the service, the only connections went to the redirector.
    const servicePort = Number(new URL(t.url).port);
    const elsewhere = tripwire.attempts
      .slice(mark)
      .filter((a) => a.port !== servicePort && a.port !== redirectorPort && a.port !== 5432);
    expect(elsewhere).toEqual([]);
    counts.redirectsRefused += 2;
    expect(await t.wallet(accountId)).toMatchObject({ held: 0, spent: 0 });
    await t.checkLedger(accountId);
  });
});
