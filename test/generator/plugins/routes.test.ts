import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import consoleDoc from '../../../generated/console/openapi.json' with { type: 'json' };
import { routes as consoleRoutes } from '../../../generated/console/routes.js';
import { routes } from '../../../generated/routes.js';
import { boundOperations } from '../../../generator/load/operations.js';
import { ROOT } from '../../support/root.js';

interface Operation {
  operationId: string;
  security?: unknown[];
}
const doc = JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((m) => ({ path, method: m.toUpperCase(), operation: item[m] })),
);
const byId = (a: { operationId: string }, b: { operationId: string }) => (a.operationId < b.operationId ? -1 : 1);

describe('routes plugin (generated/routes.ts)', () => {
  it('has one route per operation of the merged document, with its method, path and Fastify path', () => {
    const want = operations.map(({ path, method, operation }) => ({
      operationId: operation.operationId,
      method,
      path,
      fastifyPath: path.replace(/\{(\w+)\}/g, ':$1'),
    }));
    const got = routes.map(({ operationId, method, path, fastifyPath }) => ({
      operationId,
      method,
      path,
      fastifyPath,
    }));
    expect([...got].sort(byId)).toEqual([...want].sort(byId));
  });

  it('asks for a key on every operation but those the document marks `security: []`', () => {
    const open = operations
      .filter(({ operation }) => Array.isArray(operation.security) && operation.security.length === 0)
      .map(({ operation }) => operation.operationId);
    expect(open.length).toBeGreaterThan(0);
    expect(
      routes
        .filter((r) => !r.auth)
        .map((r) => r.operationId)
        .sort(),
    ).toEqual(open.sort());
  });

  it('declares a handler per operation in the Handlers interface', () => {
    const text = readFileSync(join(ROOT, 'generated/routes.ts'), 'utf8');
    const handlers = text.slice(text.indexOf('export interface Handlers'));
    for (const { operation } of operations) expect(handlers).toMatch(new RegExp(`\\n\\s+${operation.operationId}\\(`));
  });
});

/** A one-operation document: `extra` is spread into the operation. */
const docWith = (extra: Record<string, unknown>) => ({
  openapi: '3.1.0',
  paths: { '/hook': { post: { operationId: 'hook', responses: { '200': { description: 'ok' } }, ...extra } } },
  components: {},
});

describe('x-bound-by: an operation the contract describes and a scope of its own binds', () => {
  const rows: [string, { given: Record<string, unknown>; want: string[] | RegExp }][] = [
    ['an operation without it is bound by the route table', { given: {}, want: ['hook'] }],
    [
      'an operation bound by its own module is left out of the table',
      { given: { 'x-bound-by': 'runtime/http/routes/payments-webhook.ts' }, want: [] },
    ],
    [
      'a value that is not a handler module is refused',
      { given: { 'x-bound-by': true }, want: /x-bound-by must name/ },
    ],
    [
      'a module outside runtime/http/routes/ is refused',
      { given: { 'x-bound-by': 'runtime/payments/payments.ts' }, want: /x-bound-by must name/ },
    ],
  ];
  it.each(rows)('%s', (_name, { given, want }) => {
    const bound = () => boundOperations(docWith(given)).map((op) => op.operationId);
    if (want instanceof RegExp) expect(bound).toThrow(want);
    else expect(bound()).toEqual(want);
  });

  it('keeps the payments webhook in the internal document and out of both route tables', () => {
    const hook = consoleDoc.paths['/payments/stripe/webhook' as keyof typeof consoleDoc.paths] as unknown as {
      post: { operationId: string; 'x-bound-by': string };
    };
    expect(hook.post).toMatchObject({
      operationId: 'receiveStripeEvent',
      'x-bound-by': 'runtime/http/routes/payments-webhook.ts',
    });
    expect([...routes, ...consoleRoutes].filter((r) => r.path === '/payments/stripe/webhook')).toEqual([]);
    expect(Object.keys(doc.paths)).not.toContain('/payments/stripe/webhook');
  });
});
