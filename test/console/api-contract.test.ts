/**
 * The console's JSON API against its description (the x-internal part of spec/openapi.yaml,
 * generated/console/openapi.json): every documented operation is served, every console route is
 * documented, the public document holds none of it, and a signed-in user's answers match the
 * documented schemas.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import consoleDoc from '../../generated/console/openapi.json' with { type: 'json' };
import { routes as consoleRoutes } from '../../generated/console/routes.js';
import publicDoc from '../../generated/openapi.json' with { type: 'json' };
import { CLI_OPERATOR, setRole } from '../../runtime/operator/operator-actions.js';
import { ROOT } from '../support/root.js';
import { startTestService, type TestService } from '../support/service.js';
import { signUp, type ConsoleUser } from './support.js';
import { deliver, event, startPaymentsWorld, type PaymentsWorld } from '../payments/support.js';

type Operation = {
  security?: unknown[];
  'x-bound-by'?: string;
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }>;
};
const paths = consoleDoc.paths as unknown as Record<string, Record<string, Operation>>;
const documented = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);
/** The operations the console's route table binds, behind the session. */
const operations = documented.filter(({ op }) => !op['x-bound-by']);
/** The operations bound by a scope of their own (x-bound-by: the payments webhook), answered by the module named. */
const ownScope = documented.filter(({ op }) => op['x-bound-by']);

/**
 * The console routes the service binds: the console's route table (runtime/http/app.ts binds every
 * row through the one binder; the generated Handlers type makes a missing handler a compile error),
 * and any /console/api, /playground/api or /payments/ route registered by hand anywhere in runtime/
 * (its path a literal, or a constant of the same file).
 */
function registeredRoutes(): string[] {
  const out = consoleRoutes.map((route) => `${route.method} ${route.fastifyPath}`);
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(`${dir}/${entry.name}`) : entry.name.endsWith('.ts') ? [`${dir}/${entry.name}`] : [],
    );
  for (const file of files('runtime')) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const constants = new Map([...text.matchAll(/\bconst ([A-Z_]+) = '([^']*)'/g)].map((m) => [m[1], m[2]]));
    for (const m of text.matchAll(/\.(get|post|put|patch|delete)\(\s*(?:'([^']*)'|([A-Z_]+)\b)/g)) {
      const path = m[2] ?? constants.get(m[3]) ?? '';
      if (/^\/(?:(?:console|playground)\/api|payments)\//.test(path)) out.push(`${m[1].toUpperCase()} ${path}`);
    }
  }
  return out.map((route) => route.replace(/:(\w+)/g, '{$1}')).sort();
}

describe('the console API in the contract', () => {
  let t: TestService;
  let user: ConsoleUser;

  beforeAll(async () => {
    t = await startTestService();
    user = await signUp(t, 'contract@example.com');
    // An operator, so that the operator's reads are answered and checked too (their refusals: operator.test.ts).
    await setRole(t.service.ctx.db, CLI_OPERATOR, 'contract@example.com', 'operator', Date.now());
  });
  afterAll(async () => {
    await t?.close();
  });

  it('documents exactly the routes the console registers, each marked internal', () => {
    expect(documented.map((o) => `${o.method} ${o.path}`).sort()).toEqual(registeredRoutes());
    expect(registeredRoutes().length).toBeGreaterThan(20);
    for (const { op } of documented) expect((op as { 'x-internal'?: boolean })['x-internal']).toBe(true);
  });

  it('binds an operation marked x-bound-by in the module it names, and nowhere else', () => {
    expect(ownScope.map((o) => `${o.method} ${o.path}`)).toEqual(['POST /payments/stripe/webhook']);
    for (const { path, op } of ownScope) {
      const text = readFileSync(join(ROOT, op['x-bound-by']!), 'utf8');
      expect(text).toContain(`'${path}'`);
      expect(consoleRoutes.map((r) => r.path)).not.toContain(path);
    }
  });

  it('keeps the public document free of it', () => {
    const text = JSON.stringify(publicDoc);
    expect(text).not.toContain('x-internal');
    expect(Object.keys(publicDoc.paths).filter((p) => p.startsWith('/console') || p.startsWith('/playground'))).toEqual(
      [],
    );
  });

  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))(
    'serves %s (no session: 401 no_session; sign-in without its header: 403 csrf)',
    async (_name, { path, method, op }) => {
      const url = path.replace(/\{(\w+)\}/g, 'x');
      const r = await fetch(`${t.url}${url}`, {
        method,
        headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
        body: method === 'POST' ? '{}' : undefined,
      });
      const body = (await r.json()) as { data: { reason: string } };
      const open = Array.isArray(op.security) && op.security.length === 0;
      expect([r.status, body.data.reason]).toEqual(open ? [403, 'csrf'] : [401, 'no_session']);
    },
  );

  it('answers a signed-in user as the document says', async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema({ ...consoleDoc, $id: 'console.json' });
    const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    const reads = operations.filter((o) => o.method === 'GET' && !o.path.includes('{'));
    expect(reads.length).toBeGreaterThan(8);
    for (const { path } of reads) {
      const validate = ajv.compile({
        $ref: `console.json#/${pointer('paths', path, 'get', 'responses', '200', 'content', 'application/json', 'schema')}`,
      });
      const r = await user.call('GET', path);
      expect(r.status, path).toBe(200);
      expect([path, validate(r.body) ? [] : validate.errors]).toEqual([path, []]);
    }
  });
});

describe('the payments webhook in the contract (x-bound-by: its own scope, a raw body)', () => {
  let world: PaymentsWorld;
  const hook = paths['/payments/stripe/webhook'].post;
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ ...consoleDoc, $id: 'console.json' });
  /** The documented schema of one of the webhook's answers. */
  const answer = (status: string) => {
    const response = hook.responses[status];
    const at = response.$ref
      ? `#/${response.$ref.slice(2)}/content/application~1json/schema`
      : `#/paths/~1payments~1stripe~1webhook/post/responses/${status}/content/application~1json/schema`;
    return ajv.compile({ $ref: `console.json${at}` });
  };

  beforeAll(async () => {
    // A low per-address limit, so that the fourth call or so meets the documented 429.
    world = await startPaymentsWorld({ rateLimitPerMinute: 4 });
  });
  afterAll(async () => {
    await world?.close();
  });

  it('answers as documented: 200 for a verified event, 400 40042, 413 41301, 429', async () => {
    const checked = async (status: number, delivery: { body: string; signature?: string }) => {
      const r = await deliver(world.t, delivery);
      const validate = answer(String(status));
      expect([r.status, validate(r.body) ? [] : validate.errors]).toEqual([status, []]);
      return r;
    };
    const ok = await checked(200, event('customer.created', { id: 'cus_1', object: 'customer' }));
    expect(ok.body).toEqual({ received: true, outcome: 'ignored' });
    expect((await checked(400, { body: '{}' })).body.code).toBe(40042);
    const huge = event('customer.created', { id: 'cus_2', pad: 'x'.repeat(600 * 1024) });
    expect((await checked(413, huge)).body.code).toBe(41301);
    let last = 0;
    for (let i = 0; i < 10 && last !== 429; i++) last = (await deliver(world.t, { body: '{}' })).status;
    expect(last).toBe(429);
    for (const status of Object.keys(hook.responses)) expect(['200', '400', '413', '429', '500']).toContain(status);
  });
});
