import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { recordCounts } from './support.js';

/**
 * Bad input: bodies generated from the merged OpenAPI schemas (generated/openapi.json), then
 * mutated. Every answer is a 4xx envelope with a business code and a message, never a 5xx or a
 * hang, and the ledger does not move. The account holds fewer credits than any task costs, so
 * even a body that happens to be valid can only be refused (402).
 */
type Schema = Record<string, any>;
const doc = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
const schemas: Record<string, Schema> = doc.components.schemas;
const resolve = (s: Schema): Schema => (s.$ref ? resolve(schemas[s.$ref.split('/').pop()!]) : s);

/** A small, bounded arbitrary for the values a JSON Schema describes (valid-looking, not exhaustive). */
function fromSchema(raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(raw);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const options = s.oneOf ?? s.anyOf;
  if (options) return fc.oneof(...options.map((o: Schema) => fromSchema(o, depth + 1)));
  switch (s.type) {
    case 'string':
      return s.pattern
        ? fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length < 300)
        : fc.string({ minLength: s.minLength ?? 0, maxLength: 40 });
    case 'integer':
      return fc.integer({ min: s.minimum ?? -5, max: s.maximum ?? 1000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -5, max: s.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(fromSchema(s.items ?? {}, depth + 1), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 3, 3),
      });
    case 'object': {
      if (depth > 4) return fc.constant({});
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, value] of Object.entries<Schema>(s.properties ?? {})) record[key] = fromSchema(value, depth + 1);
      return fc.record(record, { requiredKeys: s.required ?? [] });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

const createVariants: Schema[] = schemas.CreateTaskRequest.oneOf;
const validish = fc.oneof(...createVariants.map((variant) => fromSchema(variant))) as fc.Arbitrary<Record<string, any>>;

interface Raw {
  label: string;
  body: string | Buffer;
  contentType?: string;
}
const json = (label: string, value: unknown): Raw => ({ label, body: JSON.stringify(value) });
const nest = (depth: number, leaf: unknown): unknown =>
  depth === 0 ? leaf : depth % 2 ? [nest(depth - 1, leaf)] : { a: nest(depth - 1, leaf) };
const setAt = (body: Record<string, any>, key: string, value: unknown) => ({
  ...body,
  input: { ...(body.input ?? {}), [key]: value },
});
const TOKENS = ['9007199254740993', '1e309', '-1e309', '-0', '1e-400', '123456789012345678901234567890'];

/** Mutations of a valid-looking body, as raw request text (so duplicate keys, bad bytes and bad tokens are possible). */
const mutated: fc.Arbitrary<Raw> = fc
  .tuple(
    validish,
    fc.nat(),
    fc.anything({ maxDepth: 3 }),
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.integer({ min: 1, max: 100_000 }),
  )
  .chain(([body, n, anything, unicode, size]) => {
    const keys = Object.keys(body.input ?? {});
    const key = keys.length ? keys[n % keys.length] : 'prompt';
    const text = JSON.stringify(body);
    return fc.constantFrom<Raw>(
      json('valid-looking', body),
      json('wrong type in input', setAt(body, key, anything)),
      json('wrong type at top', {
        ...body,
        [['model', 'input', 'callBackUrl', 'quoteId', 'expectedCredits'][n % 5]]: anything,
      }),
      json('huge string', setAt(body, 'prompt', 'x'.repeat(size))),
      json('deep nesting in input', setAt(body, key, nest(100, 1))),
      json('deep nesting at top', nest(100, body)),
      json('unicode values', setAt(body, 'prompt', unicode)),
      json('unicode keys', { ...body, input: { ...(body.input ?? {}), [unicode || '\u0000']: 1 } }),
      {
        label: 'prototype pollution',
        body: text.replace(/^\{/, `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},`),
      },
      {
        label: 'prototype pollution in input',
        body: JSON.stringify(setAt(body, 'x', 1)).replace(
          '"x":1',
          '"__proto__":{"polluted":true},"prototype":{"polluted":true}',
        ),
      },
      {
        label: 'numbers past 2^53',
        body: JSON.stringify(setAt(body, 'duration_seconds', 0)).replace(
          '"duration_seconds":0',
          `"duration_seconds":${TOKENS[n % TOKENS.length]}`,
        ),
      },
      json(
        'NaN spellings as strings',
        setAt(body, 'duration_seconds', ['NaN', 'Infinity', '-Infinity', 'nan', '1e999'][n % 5]),
      ),
      {
        label: 'NaN tokens',
        body: JSON.stringify(setAt(body, 'duration_seconds', 0)).replace(
          '"duration_seconds":0',
          `"duration_seconds":${['NaN', 'Infinity', '-Infinity', 'undefined'][n % 4]}`,
        ),
      },
      {
        label: 'duplicate keys',
        body: text.replace(/^\{/, `{"model":${JSON.stringify(anything ?? null)},"input":{"prompt":5},`),
      },
      {
        label: 'invalid UTF-8',
        body: Buffer.concat([
          Buffer.from(text.slice(0, Math.max(1, text.length - 2))),
          Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]),
          Buffer.from('"}'),
        ]),
      },
      {
        label: 'invalid UTF-8 in a string',
        body: Buffer.concat([
          Buffer.from('{"model":"'),
          Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xf0, 0x28, 0x8c, 0xbc]),
          Buffer.from('","input":{}}'),
        ]),
      },
      { label: 'truncated JSON', body: text.slice(0, n % Math.max(1, text.length)) },
      {
        label: 'wrong content type',
        body: text,
        contentType: [
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data',
          'application/xml',
          'application/json; charset=latin1',
          'application/octet-stream',
        ][n % 6],
      },
    );
  });

const counts: Record<string, number> = { cases: 0, requests: 0, violations: 0, fiveHundreds: 0 };

describe('bad input fuzzing', () => {
  let t: TestService;
  let account: { accountId: string; apiKey: string };
  let compatAnswers = false;
  beforeAll(async () => {
    t = await startTestService({ simulatorLatencyMs: 600_000 });
    account = await t.account(3);
    const probe = await t.call('POST', '/v1/videos', { key: account.apiKey, body: {} });
    compatAnswers = probe.status !== 501 && probe.status !== 404;
  });
  afterAll(async () => {
    recordCounts('fuzz', counts);
    await t?.close();
  });

  async function send(path: string, raw: Raw): Promise<{ status: number; text: string }> {
    counts.requests++;
    const headers: Record<string, string> = { authorization: `Bearer ${account.apiKey}` };
    if (raw.contentType !== 'none') headers['content-type'] = raw.contentType ?? 'application/json';
    const response = await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers,
      body: typeof raw.body === 'string' ? raw.body : new Uint8Array(raw.body),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, text: await response.text() };
  }

  async function expectRefused(path: string, raw: Raw, shape: 'envelope' | 'compat') {
    const before = await t.wallet(account.accountId);
    const r = await send(path, raw);
    counts.cases++;
    const where = `${raw.label} -> ${r.status} ${r.text.slice(0, 300)}`;
    if (r.status >= 500) counts.fiveHundreds++;
    if (r.status < 400 || r.status >= 500) counts.violations++;
    expect(r.status, where).toBeGreaterThanOrEqual(400);
    expect(r.status, where).toBeLessThan(500);
    const body = JSON.parse(r.text);
    if (shape === 'envelope') {
      expect(body, where).toMatchObject({
        code: expect.any(Number),
        msg: expect.any(String),
        request_id: expect.any(String),
      });
      expect(Math.floor(body.code / 100), where).toBe(r.status);
      expect(body.msg.length, where).toBeGreaterThan(0);
    } else {
      expect(body.error, where).toMatchObject({ message: expect.any(String), type: expect.any(String) });
      expect('param' in body.error && 'code' in body.error, where).toBe(true);
    }
    expect(({} as any).polluted, where).toBeUndefined();
    expect(await t.wallet(account.accountId)).toEqual(before);
    await t.checkLedger(account.accountId);
  }

  it.each(['/api/v1/jobs/createTask', '/api/v1/jobs/quote'])(
    '%s: mutated bodies are refused with a 4xx envelope; the ledger does not move',
    async (path) => {
      await fc.assert(
        fc.asyncProperty(mutated, (raw) => expectRefused(path, raw, 'envelope')),
        { numRuns: Number(process.env.FUZZ_RUNS ?? 100) },
      );
      const tasks = await t.service.ctx.db.kysely
        .selectFrom('tasks')
        .select('id')
        .where('account_id', '=', account.accountId)
        .execute();
      expect(tasks).toEqual([]);
    },
    120_000,
  );

  it('a 10 MB body, an empty body and no content type are refused the same way', async () => {
    await expectRefused(
      '/api/v1/jobs/createTask',
      { label: '10 MB', body: `{"model":"${'a'.repeat(10 * 1024 * 1024)}"}` },
      'envelope',
    );
    await expectRefused('/api/v1/jobs/createTask', { label: 'empty', body: '' }, 'envelope');
    await expectRefused(
      '/api/v1/jobs/createTask',
      { label: 'no content type', body: '{}', contentType: 'none' },
      'envelope',
    );
    await expectRefused(
      '/api/v1/jobs/retry',
      { label: 'retry with garbage', body: '{"taskId":{"$gt":""}}' },
      'envelope',
    );
    await expectRefused('/api/v1/jobs/purge', { label: 'purge truncated', body: '{"taskId":' }, 'envelope');
  });

  it('POST /v1/videos: the compatible layer refuses with its own error shape', async (testCtx) => {
    if (!compatAnswers) return testCtx.skip('POST /v1/videos answers 501/404: the compatible layer is not finished');
    const compat = fc
      .tuple(fc.nat(), fc.anything({ maxDepth: 3 }), fc.integer({ min: 1, max: 100_000 }))
      .chain(([n, anything, size]) =>
        fc.constantFrom<Raw>(
          json('compat wrong types', { model: anything, prompt: anything, seconds: anything }),
          json('compat bad seconds', { prompt: 'a fox', seconds: ['NaN', '-5', '9007199254740993', '1e3'][n % 4] }),
          json('compat huge prompt with bad size', { prompt: 'x'.repeat(size), size: 'huge' }),
          json('compat deep nesting', { prompt: 'a fox', input_reference: nest(100, 1) }),
          { label: 'compat truncated', body: '{"prompt":"a fox","seconds":' },
          { label: 'compat prototype pollution', body: '{"__proto__":{"polluted":true},"model":5}' },
          { label: 'compat invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) },
          { label: 'compat wrong content type', body: 'prompt=a', contentType: 'text/plain' },
        ),
      );
    await fc.assert(
      fc.asyncProperty(compat, (raw) => expectRefused('/v1/videos', raw, 'compat')),
      { numRuns: 60 },
    );
  }, 120_000);
});
