import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CODES, codeMessage, type ErrorName, type Language } from '../../generated/errors.js';
import type { RequestVector } from '../../generator/plugins/requests/vectors.js';
import { routes } from '../../generated/routes.js';
import type { HttpResult } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';

const vectors = (
  JSON.parse(readFileSync(new URL('../../generated/requests/vectors.json', import.meta.url), 'utf8')) as {
    cases: RequestVector[];
  }
).cases;

/** The parameter an error names and its business code, read from the layer's own shape. */
function refusal(r: HttpResult, layer: RequestVector['layer']): { code: string | number; param: unknown } {
  if (layer === 'compatible') return { code: r.body?.error?.code, param: r.body?.error?.param };
  return { code: r.body?.code, param: r.body?.data?.param ?? r.body?.data?.errors?.[0]?.path };
}

/**
 * generated/requests/vectors.json, sent through HTTP: for every operation and each kind of input it
 * takes, a bad value answers with the contract's code for it (invalid_parameter unless the contract
 * says otherwise, invalid_input for a body), naming the parameter, in the route's layer's shape.
 */
describe('request vectors: every operation refuses a bad value of each kind of input, naming it', () => {
  const svc = serviceForSuite(100);

  it('cover every operation of the route table and each kind of parameter it declares', () => {
    const kinds = new Map<string, Set<string>>();
    for (const v of vectors) kinds.set(v.operationId, (kinds.get(v.operationId) ?? new Set()).add(v.in));
    const doc = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
    // Parameters no value of which the contract refuses: createTask's `wait` (ignored, as the spec says), opaque
    // cursors, and getMedia's Range and conditions (a malformed one is ignored, RFC 9110).
    const unconstrained = new Set([
      'wait',
      'cursor',
      'after',
      'Range',
      'If-Range',
      'If-None-Match',
      'If-Modified-Since',
    ]);
    for (const route of routes) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      const declared = [...(doc.paths[route.path].parameters ?? []), ...(op.parameters ?? [])]
        .map((p: { $ref?: string; in: string; name: string }) =>
          p.$ref ? doc.components.parameters[p.$ref.split('/').pop()!] : p,
        )
        .filter((p: { name: string }) => !unconstrained.has(p.name));
      const expected = new Set<string>(declared.map((p: { in: string }) => p.in));
      if (op.requestBody?.content?.['application/json']) expected.add('body');
      expect([...(kinds.get(route.operationId) ?? [])].sort(), route.operationId).toEqual([...expected].sort());
    }
  });

  it.each(vectors.map((v) => [`${v.operationId}: ${v.case}`, v] as const))('%s', async (_name, v) => {
    const query = new URLSearchParams(v.query).toString();
    const r = await svc.t.call(v.method, `${v.path}${query ? `?${query}` : ''}`, {
      key: v.auth ? svc.account.apiKey : undefined,
      headers: v.headers,
      body: v.body,
    });
    const code = CODES[v.want.error as ErrorName];
    expect(r.status, JSON.stringify(r.body)).toBe(code.http);
    expect(refusal(r, v.layer)).toEqual({
      code: v.layer === 'compatible' ? v.want.error : code.code,
      param: v.want.param,
    });
  });

  it.each([['/api/v1/jobs'], ['/api/v1/assets'], ['/v1/videos']])(
    '%s?limit=1e1 is refused (a limit is a decimal integer)',
    async (path) => {
      const r = await svc.t.call('GET', `${path}?limit=1e1`, { key: svc.account.apiKey });
      expect(r.status).toBe(400);
      expect(refusal(r, path.startsWith('/v1/') ? 'compatible' : 'envelope')).toEqual({
        code: path.startsWith('/v1/') ? 'invalid_parameter' : CODES.invalid_parameter.code,
        param: 'limit',
      });
      expect((await svc.t.call('GET', `${path}?limit=10`, { key: svc.account.apiKey })).status).toBe(200);
    },
  );

  it.each([
    ['de', '/api/v1/jobs?limit=1e1', (r: HttpResult) => r.body.msg],
    ['ja', '/v1/videos?order=sideways', (r: HttpResult) => r.body.error.message],
  ])("the refusal is in the caller's language (%s), naming the parameter", async (language, path, message) => {
    const r = await svc.t.call('GET', path, { key: svc.account.apiKey, headers: { 'Accept-Language': language } });
    expect(r.status).toBe(400);
    const param = new URL(path, 'http://x').searchParams.keys().next().value!;
    expect(message(r)).toBe(codeMessage('invalid_parameter', language as Language, { param }));
    expect(message(r)).not.toBe(codeMessage('invalid_parameter', 'en', { param }));
  });
});
