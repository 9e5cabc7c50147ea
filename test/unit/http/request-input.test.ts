import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { requestRules } from '../../../generated/requests/index.js';
import type { OperationId } from '../../../generated/routes.js';
import { ApiError } from '../../../runtime/errors.js';
import { readRequestInput } from '../../../runtime/http/request-input.js';

/**
 * runtime/http/request-input.ts: a request's path, query, headers and JSON body checked against the
 * contract's generated validators (generated/requests/), before any handler sees them.
 */

interface Given {
  op: OperationId;
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  /** As Node gives them: lower-case names; a repeated header is an array. */
  headers?: Record<string, unknown>;
  body?: unknown;
}

const read = (given: Given) =>
  readRequestInput(requestRules[given.op], {
    params: given.params ?? {},
    query: given.query ?? {},
    headers: given.headers ?? {},
    body: given.body,
  } as unknown as FastifyRequest);

function refusal(given: Given): ApiError {
  try {
    read(given);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`${given.op} was accepted`);
}

describe('readRequestInput accepts', () => {
  it.each([
    [
      'a query integer, read as a number; the default of an absent one filled in',
      { given: { op: 'listTasks', query: { limit: '5' } }, want: { query: { limit: 5 } } },
    ],
    ['no query: the default limit', { given: { op: 'listTasks' }, want: { query: { limit: 20 } } }],
    [
      'the first of a repeated query parameter',
      {
        given: { op: 'listTasks', query: { limit: ['7', '99'], state: 'queued' } },
        want: { query: { limit: 7, state: 'queued' } },
      },
    ],
    [
      'undeclared query parameters, left out',
      { given: { op: 'listTasks', query: { limit: '3', debug: '1' } }, want: { query: { limit: 3 } } },
    ],
    [
      'headers by their contract names, an integer one as a number',
      {
        // createTask's envelope is checked from the contract too: the smallest valid one.
        given: {
          op: 'createTask',
          headers: { 'idempotency-key': 'k-1', 'x-service-retention': '3600' },
          body: { model: 'any/model', input: {} },
        },
        want: { headers: { 'Idempotency-Key': 'k-1', 'X-Service-Retention': 3600 } },
      },
    ],
    [
      'a path parameter',
      {
        given: { op: 'getMedia', params: { objectKey: 'a/b.mp4' }, query: { expires: '9', sig: 's' } },
        want: { path: { objectKey: 'a/b.mp4' }, query: { expires: '9', sig: 's' } },
      },
    ],
    [
      'a valid body, as it came',
      {
        given: { op: 'createUploadTicket', body: { fileName: 'a.png', contentType: 'image/png', size: 10 } },
        want: { body: { fileName: 'a.png', contentType: 'image/png', size: 10 } },
      },
    ],
    [
      'no body where the body is optional',
      { given: { op: 'commitFile', params: { fileId: 'f1' } }, want: { body: undefined } },
    ],
  ] as [string, { given: Given; want: Record<string, unknown> }][])('%s', (_name, { given, want }) => {
    expect(read(given)).toMatchObject(want);
  });
});

describe('readRequestInput refuses', () => {
  it.each([
    [
      'an integer above its maximum',
      { given: { op: 'listTasks', query: { limit: '101' } }, want: { code: 'invalid_parameter', param: 'limit' } },
    ],
    [
      'an integer written 1e1',
      { given: { op: 'listTasks', query: { limit: '1e1' } }, want: { code: 'invalid_parameter', param: 'limit' } },
    ],
    [
      'an integer written 5.0',
      { given: { op: 'listTasks', query: { limit: '5.0' } }, want: { code: 'invalid_parameter', param: 'limit' } },
    ],
    [
      'an integer with a space',
      { given: { op: 'listTasks', query: { limit: ' 5' } }, want: { code: 'invalid_parameter', param: 'limit' } },
    ],
    [
      'a value outside an enum',
      { given: { op: 'listTasks', query: { state: 'sleeping' } }, want: { code: 'invalid_parameter', param: 'state' } },
    ],
    [
      "a header with the contract's own business code",
      {
        given: { op: 'createTask', headers: { 'idempotency-key': 'has space' } },
        want: { code: 'invalid_idempotency_key', param: 'Idempotency-Key' },
      },
    ],
    [
      'an integer header below its minimum',
      {
        given: { op: 'createTask', headers: { 'x-service-retention': '0' } },
        want: { code: 'invalid_parameter', param: 'X-Service-Retention' },
      },
    ],
    [
      'a missing required query parameter, named',
      {
        given: { op: 'getMedia', params: { objectKey: 'a' }, query: { expires: '9' } },
        want: { code: 'link_invalid', param: 'sig' },
      },
    ],
    [
      'a bad path before a bad query',
      {
        given: { op: 'getMedia', params: { objectKey: '' }, query: {} },
        want: { code: 'link_invalid', param: 'objectKey' },
      },
    ],
    [
      'a body whose contract gives another code than invalid_input: the first problem named',
      { given: { op: 'purgeTask', body: {} }, want: { code: 'invalid_parameter', param: 'taskId' } },
    ],
    [
      'a body that is no object',
      { given: { op: 'createDownloadUrl', body: [] }, want: { code: 'invalid_input', param: 'body' } },
    ],
    ['a missing required body', { given: { op: 'createDownloadUrl' }, want: { code: 'invalid_input', param: 'body' } }],
  ] as [string, { given: Given; want: { code: string; param: string } }][])('%s', (_name, { given, want }) => {
    const error = refusal(given);
    expect({ code: error.errorName, param: error.param }).toEqual(want);
  });

  it('a bad body as invalid_input with every problem, unknown fields first, one per field', () => {
    const error = refusal({
      op: 'createUploadTicket',
      body: { fileName: '', contentType: 'image/png', size: 0, extra: 1 },
    });
    expect(error.errorName).toBe('invalid_input');
    expect(error.fieldErrors.map((issue) => issue.path)).toEqual(['extra', 'fileName', 'size']);
    expect(error.fieldErrors[0].rule).toBe('unknown_field');
    expect(error.param).toBe('extra');
  });
});

describe("createVideo's envelope (the compat fields; the model's fields beside them pass)", () => {
  const both = {
    key: 'rule_forbidden_when',
    params: {
      field: 'input_reference.file_id',
      condition: { key: 'condition_present', params: { field: 'input_reference.image_url' } },
    },
  };
  it.each([
    [
      "both keys of input_reference: the contract's x-issue under then, nested params, no problem for ajv's `if`",
      {
        given: { input_reference: { image_url: 'https://example.com/a.png', file_id: 'a_1' } },
        want: [{ path: 'input_reference.file_id', rule: 'forbidden', message: both }],
      },
    ],
    [
      'neither key: the x-issue of the allOf branch',
      {
        given: { input_reference: {} },
        want: [
          {
            path: 'input_reference',
            rule: 'required',
            message: {
              key: 'rule_at_least_one',
              params: { fields: 'input_reference.image_url, input_reference.file_id', field: 'input_reference' },
            },
          },
        ],
      },
    ],
    [
      'several problems: unknown fields first, then field by field in the envelope order',
      {
        given: {
          size: 7,
          seconds: 'x',
          model: 5,
          prompt: 5,
          seed: 'abc',
          input_reference: { colour: 'red', image_url: 'u' },
        },
        want: ['input_reference.colour', 'model', 'seconds', 'size'],
      },
    ],
  ] as [string, { given: unknown; want: unknown[] }][])('%s', (_name, { given, want }) => {
    const error = refusal({ op: 'createVideo', body: given });
    expect(error.errorName).toBe('invalid_input');
    const issues = error.fieldErrors.map((issue) => (typeof want[0] === 'string' ? issue.path : issue));
    expect(issues).toEqual(want);
  });

  it('a multipart body is left to its handler (the parts are not read yet): nothing checked here', () => {
    const request = { params: {}, query: {}, headers: {}, body: undefined, isMultipart: () => true };
    expect(readRequestInput(requestRules.createVideo, request as unknown as FastifyRequest).body).toBeUndefined();
  });
});
