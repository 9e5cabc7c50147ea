import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '../../../generated/routes.js';
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
