import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import doc from '../../../generated/openapi.json' with { type: 'json' };
import { requestRules } from '../../../generated/requests/index.js';
import * as validators from '../../../generated/requests/validators.js';
import { routes } from '../../../generated/routes.js';
import { operations } from '../../../generator/load/operations.js';
import { issueOverrides, partSchema } from '../../../generator/plugins/requests/emit.js';
import { ROOT } from '../../support/root.js';

describe('the requests plugin', () => {
  const ops = operations(doc as Record<string, unknown>);

  it('reads the layer, the body kind and the parameter errors from the contract', () => {
    const byId = new Map(ops.map((op) => [op.operationId, op]));
    expect(byId.get('createVideo')).toMatchObject({
      layer: 'compatible',
      bodyKind: 'multipart',
      body: { checkedBy: 'catalogue' },
    });
    expect(byId.get('uploadFile')).toMatchObject({ layer: 'envelope', bodyKind: 'raw', body: { checkedBy: 'none' } });
    expect(byId.get('createTask')).toMatchObject({
      layer: 'envelope',
      bodyKind: 'json',
      body: { checkedBy: 'catalogue' },
    });
    expect(byId.get('retryTask')!.body).toMatchObject({ checkedBy: 'contract', error: 'invalid_parameter' });
    // The link's three parameters, then its request headers (Range and the conditions), never refused but typed alike.
    expect(byId.get('getMedia')!.parameters.map((p) => [p.name, p.error])).toEqual(
      ['objectKey', 'expires', 'sig', 'Range', 'If-Range', 'If-None-Match', 'If-Modified-Since'].map((name) => [
        name,
        'link_invalid',
      ]),
    );
    expect(byId.get('createTask')!.parameters.find((p) => p.name === 'Idempotency-Key')!.error).toBe(
      'invalid_idempotency_key',
    );
    expect(byId.get('getModel')!.parameters[0].spansSegments).toBe(true);
    // The route table carries the same facts.
    expect(routes.find((r) => r.operationId === 'createVideo')).toMatchObject({
      layer: 'compatible',
      body: 'multipart',
    });
    expect(routes.find((r) => r.operationId === 'getModel')).toMatchObject({ spansSegments: 'model' });
  });

  it('compiles one named validator per part, with the contract defaults filled in', () => {
    expect(partSchema(ops.find((op) => op.operationId === 'listTasks')!, 'header')).toBeUndefined();
    const query: Record<string, unknown> = {};
    expect(validators.listTasksQuery(query)).toBe(true);
    expect(query).toEqual({ limit: 20 });
    expect(validators.listTasksQuery({ limit: '10' })).toBe(false);
    expect(validators.listTasksQuery.errors?.[0]).toMatchObject({ instancePath: '/limit', keyword: 'type' });
    expect(validators.getUsageQuery({ from: '2024-02-29' })).toBe(true);
    expect(validators.getUsageQuery({ from: '2026-02-29' })).toBe(false);
    // createTask's envelope is the contract's to check (issue 26); `input` is opaque here, the model's own validator checks it.
    expect(requestRules.createTask.body?.validate).toBe(validators.createTaskBody);
    expect(validators.createTaskBody({ model: 'any/model/id', input: { not_a_field: [1] } })).toBe(true);
    expect(validators.createTaskBody({ model: 'any/model/id', input: 'text' })).toBe(false);
    expect(requestRules.saveAsset.body?.validate).toBe(validators.saveAssetBody);
  });

  it("compiles createVideo's envelope from its JSON body: the compat fields checked, the model's fields beside them passed", () => {
    expect(requestRules.createVideo.body?.validate).toBe(validators.createVideoBody);
    expect(requestRules.createVideo.body?.order).toEqual(['model', 'prompt', 'seconds', 'size', 'input_reference']);
    expect(validators.createVideoBody({ seconds: 8, prompt: 5, seed: [1], input_reference: { file_id: 'a_1' } })).toBe(
      true,
    );
    expect(validators.createVideoBody({ seconds: ' 8 ', size: ' 1280X720 ' })).toBe(true);
    expect(validators.createVideoBody({ seconds: 8.5 })).toBe(false);
    expect(validators.createVideoBody({ input_reference: { image_url: 'u', file_id: 'a_1' } })).toBe(false);
  });

  it.each<[string, { given: Record<string, unknown>; want: Record<string, unknown> }]>([
    [
      'on a property',
      {
        given: { properties: { model: { type: 'string', 'x-issue': { rule: 'type', message: 'type' } } } },
        want: { '#/properties/model': { rule: 'type', key: 'type', params: {} } },
      },
    ],
    [
      'on an allOf branch and under then, with a message as a param',
      {
        // A schema's `then` given as an entry: an object literal with a `then` key reads as a thenable to the linter.
        given: Object.fromEntries([
          ['allOf', [{ minProperties: 1, 'x-issue': { rule: 'required', message: 'm', params: { fields: 'a, b' } } }]],
          [
            'then',
            {
              properties: {
                b: { not: {}, 'x-issue': { rule: 'forbidden', message: 'f', params: { c: { key: 'k', params: {} } } } },
              },
            },
          ],
        ]),
        want: {
          '#/allOf/0': { rule: 'required', key: 'm', params: { fields: 'a, b' } },
          '#/then/properties/b': { rule: 'forbidden', key: 'f', params: { c: { key: 'k', params: {} } } },
        },
      },
    ],
  ])('reads x-issue %s, by its schema path', (_name, { given, want }) => {
    expect(issueOverrides(given)).toEqual(want);
  });

  it('prints the validators through standaloneCode named exports, not edited afterwards', () => {
    const code = readFileSync(`${ROOT}/generated/requests/validators.js`, 'utf8');
    expect(code).toMatch(/export const listTasksQuery = validate\d+;/);
    expect(code).not.toContain('export default');
  });
});

describe('the HTTP layer binds the route table without naming operations', () => {
  it('runtime/http/app.ts holds no operationId as a string literal', () => {
    const app = readFileSync(`${ROOT}/runtime/http/app.ts`, 'utf8');
    const named = routes.map((r) => r.operationId).filter((id) => new RegExp(`['"\`]${id}['"\`]`).test(app));
    expect(named).toEqual([]);
  });

  it('the dead pending-operations module is gone', () => {
    expect(existsSync(`${ROOT}/runtime/http/routes/pending.ts`)).toBe(false);
  });
});
