import { serviceForSuite } from '../support/suite-service.js';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { png } from '../../support/media/fixtures.js';
import { UNLOCKED, upload } from '../files/support.js';
import { spawnServer, type ServerProcess } from '../reliability/support.js';
import {
  dropTestSchema,
  startTestService,
  TEST_DB,
  testDbUrl,
  waitForTerminal,
  type TestService,
} from '../support/service.js';

const MODEL = 'vendor_d/family_d/reference-to-video';
const INPUT = { prompt: 'a kite', reference_image_urls: ['https://example.com/a.png'] };
const TOKEN = 'ops-token-for-the-test';

/** What a careful operator expects of a service that faces the internet (issue 16, item 11). */
describe('security headers on every kind of answer', () => {
  const svc = serviceForSuite(100);
  let mediaPath: string;
  beforeAll(async () => {
    const created = await svc.t.call('POST', '/api/v1/jobs/createTask', {
      key: svc.account.apiKey,
      body: { model: MODEL, input: INPUT },
    });
    const done = await waitForTerminal(svc.t, svc.account.apiKey, created.body.data.taskId);
    mediaPath = new URL(done.output.assets[0].url).pathname + new URL(done.output.assets[0].url).search;
  });

  // [name, { given: request, want: status and the policy the answer must carry }]
  const NONE = "default-src 'none';frame-ancestors 'none'";
  const rows: [
    string,
    { given: () => [string, string, string?]; want: { status: number; csp: RegExp; corp: string } },
  ][] = [
    [
      'an API answer',
      {
        given: () => ['GET', '/api/v1/chat/credit', svc.account.apiKey],
        want: { status: 200, csp: new RegExp(`^${NONE}$`), corp: 'same-origin' },
      },
    ],
    [
      'an API error (no key)',
      {
        given: () => ['GET', '/api/v1/chat/credit'],
        want: { status: 401, csp: new RegExp(`^${NONE}$`), corp: 'same-origin' },
      },
    ],
    [
      'a compatible-layer answer',
      {
        given: () => ['GET', '/v1/models', svc.account.apiKey],
        want: { status: 200, csp: new RegExp(`^${NONE}$`), corp: 'same-origin' },
      },
    ],
    [
      'an unknown route',
      {
        given: () => ['GET', '/no/such/route'],
        want: { status: 404, csp: new RegExp(`^${NONE}$`), corp: 'same-origin' },
      },
    ],
    [
      '/healthz',
      { given: () => ['GET', '/healthz'], want: { status: 200, csp: new RegExp(`^${NONE}$`), corp: 'same-origin' } },
    ],
    [
      'a console page keeps its own policy',
      {
        given: () => ['GET', '/playground'],
        want: { status: 200, csp: /^default-src 'self'; .*frame-ancestors 'none'$/, corp: 'same-origin' },
      },
    ],
    [
      'a docs page keeps its own policy',
      {
        given: () => ['GET', '/docs/'],
        want: { status: 200, csp: /script-src 'self'.*frame-ancestors 'self'$/, corp: 'same-origin' },
      },
    ],
    [
      "a signed media link may be embedded by the client's pages",
      { given: () => ['GET', mediaPath], want: { status: 200, csp: new RegExp(`^${NONE}$`), corp: 'cross-origin' } },
    ],
  ];
  it.each(rows)('%s', async (_name, { given, want }) => {
    const [method, path, key] = given();
    const r = await svc.t.call(method, path, key ? { key } : {});
    expect(r.status).toBe(want.status);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(r.headers.get('content-security-policy')).toMatch(want.csp);
    expect(r.headers.get('cross-origin-resource-policy')).toBe(want.corp);
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    // Plain HTTP here: a Strict-Transport-Security header would be meaningless.
    expect(r.headers.get('strict-transport-security')).toBeNull();
  });

  it('a rate-limited answer carries them too', async () => {
    const limited = await startTestService({ rateLimitPerMinute: 1 });
    try {
      const { apiKey: key } = await limited.account(10);
      await limited.call('GET', '/api/v1/chat/credit', { key });
      const r = await limited.call('GET', '/api/v1/chat/credit', { key });
      expect(r.status).toBe(429);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    } finally {
      await limited.close();
    }
  });
});

describe('MEDIAFORGE_METRICS_TOKEN guards /metrics and the detail of /readyz', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ metricsToken: TOKEN });
  });
  afterAll(() => t.close());

  const rows: [string, { given: Record<string, string>; want: number }][] = [
    ['no credentials', { given: {}, want: 401 }],
    ['a wrong token', { given: { authorization: 'Bearer not-the-token' }, want: 401 }],
    ['the token as Basic', { given: { authorization: `Basic ${TOKEN}` }, want: 401 }],
    [
      'an API key of an account',
      { given: { authorization: 'Bearer sk-service-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' }, want: 401 },
    ],
    ['the token', { given: { authorization: `Bearer ${TOKEN}` }, want: 200 }],
    ['the token, scheme in lower case', { given: { authorization: `bearer ${TOKEN}` }, want: 200 }],
  ];
  it.each(rows)('/metrics with %s', async (_name, { given, want }) => {
    const r = await t.call('GET', '/metrics', { headers: given });
    expect(r.status).toBe(want);
    if (want === 200) expect(r.body).toMatch(/^mediaforge_held_credits \d+$/m);
    else expect(r.body).toMatchObject({ code: 40101, data: null });
  });

  it('/healthz and the bare status of /readyz stay open', async () => {
    expect(await t.call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await t.call('GET', '/readyz')).body).toEqual({ status: 'ready' });
  });

  it('a database that is not ready is detailed to the operator only', async () => {
    const behind = await startTestService({ metricsToken: TOKEN });
    try {
      // As after a deploy of newer code before `mediaforge migrate`: the last migration is not recorded.
      await sql`DELETE FROM kysely_migration WHERE name = '0008-worker-lanes'`.execute(behind.service.ctx.db.kysely);
      const anonymous = await behind.call('GET', '/readyz');
      expect(anonymous.status).toBe(503);
      expect(anonymous.body).toEqual({ status: 'not ready' });
      const operator = await behind.call('GET', '/readyz', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(operator.status).toBe(503);
      expect(operator.body).toEqual({ status: 'not ready', pendingMigrations: ['0008-worker-lanes'] });
    } finally {
      await behind.close();
    }
  });
});

/**
 * Without MEDIAFORGE_METRICS_TOKEN the operator's detail (revenue, upstream cost, failure texts)
 * is for loopback callers only (issue 25, N9). Tests reach the service on loopback alone, so a
 * caller from elsewhere is made as it reaches a real deployment: through a reverse proxy. The
 * service is told the proxy's address (MEDIAFORGE_TRUSTED_PROXIES=127.0.0.1), and the proxy's
 * X-Forwarded-For names a public client (203.0.113.0/24, TEST-NET-3, never contacted); without
 * trusted proxies, a proxy on the same machine is recognised by the forwarding header it adds.
 */
describe('without MEDIAFORGE_METRICS_TOKEN, /metrics and the detail of /readyz are for loopback callers', () => {
  const PUBLIC_CLIENT = '203.0.113.7';
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-loopback-'));
  let server: ServerProcess;
  beforeAll(async () => {
    server = await spawnServer({
      MEDIAFORGE_DB: await testDbUrl(dir),
      MEDIAFORGE_DATA_DIR: dir,
      MEDIAFORGE_TRUSTED_PROXIES: '127.0.0.1',
      MEDIAFORGE_METRICS_TOKEN: '',
    });
  }, 60_000);
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    await dropTestSchema(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}${path}`, { headers });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) };
  };

  it('serve says so in one line of its log', async () => {
    const said = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('MEDIAFORGE_METRICS_TOKEN is not set'));
    // The log (pino) writes asynchronously: its line may reach the pipe after "listening", which console.log wrote at once.
    for (const until = Date.now() + 5000; said().length === 0 && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    const lines = said();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('/metrics and the detail of /readyz answer loopback callers only');
  });

  it('a loopback caller reads /metrics and the detail of /readyz', async () => {
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^mediaforge_held_credits \d+$/m);
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json()).toMatchObject({
      status: 'ready',
      deployments: [expect.objectContaining({ name: 'simulator' })],
    });
  });

  it('a client relayed by the trusted proxy gets 401 at /metrics and the bare status at /readyz', async () => {
    const headers = { 'x-forwarded-for': PUBLIC_CLIENT };
    const metrics = await get('/metrics', headers);
    expect(metrics.status).toBe(401);
    expect(metrics.json()).toMatchObject({ code: 40101, data: null });
    expect(metrics.text).not.toContain('mediaforge_');
    const ready = await get('/readyz', headers);
    expect(ready.status).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });

  it('a client cannot pass for loopback by naming 127.0.0.1 itself: the proxy appends the address it saw', async () => {
    const headers = { 'x-forwarded-for': `127.0.0.1, ${PUBLIC_CLIENT}` };
    expect((await get('/metrics', headers)).status).toBe(401);
    expect((await get('/readyz', headers)).json()).toEqual({ status: 'ready' });
  });

  it('without trusted proxies, a loopback connection carrying a forwarding header is a local proxy relaying someone', async () => {
    const t = await startTestService();
    try {
      const relayed: Record<string, string>[] = [
        { 'x-forwarded-for': PUBLIC_CLIENT },
        { forwarded: `for=${PUBLIC_CLIENT}` },
        { 'x-real-ip': PUBLIC_CLIENT },
      ];
      for (const headers of relayed) {
        expect(await t.call('GET', '/metrics', { headers })).toMatchObject({ status: 401, body: { code: 40101 } });
        expect((await t.call('GET', '/readyz', { headers })).body).toEqual({ status: 'ready' });
      }
      expect((await t.call('GET', '/metrics')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(TEST_DB !== 'sqlite')("files the service creates are its owner's only", () => {
  const root = mkdtempSync(join(tmpdir(), 'mediaforge-modes-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('database file and its WAL 0600, data and database folders 0700', async () => {
    const dataDir = join(root, 'data');
    const dbDir = join(root, 'db');
    const t = await startTestService({ dataDir, dbUrl: `sqlite:${join(dbDir, 'mediaforge.db')}` }, { dir: root });
    try {
      const { apiKey } = await t.account(10);
      await t.call('GET', '/api/v1/chat/credit', { key: apiKey }); // a write has made the -wal file
      const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
      expect(mode(dataDir)).toBe('700');
      expect(mode(dbDir)).toBe('700');
      expect(mode(join(dbDir, 'mediaforge.db'))).toBe('600');
      expect(mode(join(dbDir, 'mediaforge.db-wal'))).toBe('600');
    } finally {
      await t.close();
    }
  });
  it('stored media (an output, an upload) 0600, every folder of the store 0700 (issue 25, N12)', async () => {
    const dataDir = join(root, 'media');
    const t = await startTestService(
      { dataDir, dbUrl: `sqlite:${join(root, 'media-db', 'mediaforge.db')}` },
      { dir: root },
    );
    try {
      const { apiKey } = await t.account(UNLOCKED);
      const created = await t.call('POST', '/api/v1/jobs/createTask', {
        key: apiKey,
        body: { model: MODEL, input: INPUT },
      });
      const done = await waitForTerminal(t, apiKey, created.body.data.taskId);
      expect(done.state).toBe('succeeded');
      await upload(t, apiKey, png(64, 64, false), 'image/png', 'kept.png');
      const files: string[] = [];
      const folders: string[] = [];
      const walk = (dir: string) => {
        folders.push(dir);
        for (const entry of readdirSync(dir, { withFileTypes: true }))
          (entry.isDirectory() ? walk : (path: string) => files.push(path))(join(dir, entry.name));
      };
      walk(dataDir);
      const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
      // The output and the upload are both there: the check below is not over an empty store.
      expect(files.some((path) => path.includes(join('outputs', done.taskId)))).toBe(true);
      expect(files.some((path) => !path.includes('outputs'))).toBe(true);
      expect(Object.fromEntries(files.map((path) => [path, mode(path)]))).toEqual(
        Object.fromEntries(files.map((path) => [path, '600'])),
      );
      expect(Object.fromEntries(folders.map((path) => [path, mode(path)]))).toEqual(
        Object.fromEntries(folders.map((path) => [path, '700'])),
      );
    } finally {
      await t.close();
    }
  });
});
