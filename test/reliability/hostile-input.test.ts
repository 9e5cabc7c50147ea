import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyD } from '../http/helpers.js';
import { startTestService, type TestService } from '../support/service.js';
import { recordCounts } from './support.js';

/**
 * Client input that used to answer 500 or Fastify's own error shape: JSON nested 5,000 levels,
 * malformed multipart on /v1/videos, paths Fastify cannot route (a bad percent-encoding, a
 * 5,000-character id), requests Node's HTTP parser refuses. Each answers a 4xx in the layer's
 * own shape (the envelope under /api/v1, the compatible layer's error object under /v1), with a
 * business code, in the caller's language. Sent as raw bytes over a socket: nothing is tidied
 * up by a client library on the way.
 */
const counts: Record<string, number> = { cases: 0, requests: 0, violations: 0, fiveHundreds: 0 };

interface Raw {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Header lines sent verbatim (bytes a client library would refuse to send). */
  rawHeaderLines?: string[];
  key?: boolean;
}
interface Want {
  status: number;
  shape: 'envelope' | 'compat';
  /** The business code (envelope) or the error name (compat). */
  code: number | string;
  /** The compat error's param / the envelope's data.param, or the first field error's path (prefix). */
  param?: string;
  /** The first field problem's rule. */
  rule?: string;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** One HTTP/1.1 request as bytes over a new connection; the whole answer, read until close. */
function rawRequest(url: string, request: Raw, language: string, apiKey: string): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body);
  const lines = [
    `${request.method} ${request.path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Connection: close',
    `Accept-Language: ${language}`,
    ...(request.key ? [`Authorization: Bearer ${apiKey}`] : []),
    ...Object.entries(request.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    ...(request.rawHeaderLines ?? []),
    `Content-Length: ${body.length}`,
  ];
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(
      () => socket.destroy(new Error(`no answer within 10 s: ${request.method} ${request.path.slice(0, 80)}`)),
      10_000,
    );
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => (clearTimeout(timer), reject(error)));
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      let payload = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') payload = dechunk(payload);
      let parsed: unknown = payload;
      try {
        parsed = JSON.parse(payload);
      } catch {
        /* not JSON: kept as text, the assertions say so */
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed });
    });
    socket.write(Buffer.concat([head, body]));
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, end), 16);
    if (!size) return out;
    out += rest.slice(end + 2, end + 2 + size);
    rest = rest.slice(end + 2 + size + 2);
  }
}

/** `[[[... "x" ...]]]`, `depth` arrays deep. */
const nested = (depth: number) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;
const MODEL_D = bodyD().model;
const deepCreate = `{"model":${JSON.stringify(MODEL_D)},"input":{"prompt":${nested(5000)}}}`;
const BOUNDARY = 'mf-boundary-7MA4YWxkTrZu0gW';
const multipart = (boundary = BOUNDARY) => ({ 'Content-Type': `multipart/form-data; boundary=${boundary}` });
const part = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

const cases: [string, { given: Raw; want: Want }][] = [
  // JSON nested 5,000 levels: refused before anything walks it, naming where it went too deep.
  [
    '5,000-deep JSON on createTask',
    {
      given: {
        method: 'POST',
        path: '/api/v1/jobs/createTask',
        key: true,
        headers: { 'Content-Type': 'application/json' },
        body: deepCreate,
      },
      want: { status: 400, shape: 'envelope', code: 40001, param: 'input.prompt[0]', rule: 'max_depth' },
    },
  ],
  [
    '5,000-deep JSON on quote',
    {
      given: {
        method: 'POST',
        path: '/api/v1/jobs/quote',
        key: true,
        headers: { 'Content-Type': 'application/json' },
        body: deepCreate,
      },
      want: { status: 400, shape: 'envelope', code: 40001, param: 'input.prompt[0]', rule: 'max_depth' },
    },
  ],
  [
    '5,000-deep JSON at the top of createTask',
    {
      given: {
        method: 'POST',
        path: '/api/v1/jobs/createTask',
        key: true,
        headers: { 'Content-Type': 'application/json' },
        body: nested(5000),
      },
      want: { status: 400, shape: 'envelope', code: 40001, param: '[0]', rule: 'max_depth' },
    },
  ],
  [
    'JSON nested 500,000 levels (what a 1 MiB body holds) on createTask',
    {
      given: {
        method: 'POST',
        path: '/api/v1/jobs/createTask',
        key: true,
        headers: { 'Content-Type': 'application/json' },
        body: `{"model":${JSON.stringify(MODEL_D)},"input":{"prompt":${nested(500_000)}}}`,
      },
      want: { status: 400, shape: 'envelope', code: 40001, param: 'input.prompt[0]', rule: 'max_depth' },
    },
  ],
  [
    '5,000-deep JSON on /v1/videos',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: { 'Content-Type': 'application/json' },
        body: `{"prompt":${nested(5000)}}`,
      },
      want: { status: 400, shape: 'compat', code: 'invalid_input', param: 'prompt[0]' },
    },
  ],
  // Malformed multipart on /v1/videos.
  [
    'multipart with a truncated closing boundary',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: multipart(),
        body: `${part('prompt', 'a cat')}--${BOUNDARY.slice(0, 10)}`,
      },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'body' },
    },
  ],
  [
    'multipart cut inside a part',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: multipart(),
        body: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\na c`,
      },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'body' },
    },
  ],
  [
    'multipart without a boundary parameter',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: { 'Content-Type': 'multipart/form-data' },
        body: part('prompt', 'a cat'),
      },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'body' },
    },
  ],
  // A part without Content-Disposition is skipped by the parser: the form then lacks its prompt.
  [
    'multipart with a malformed part header',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: multipart(),
        body: `--${BOUNDARY}\r\nthis is not a header\r\n\r\nx\r\n--${BOUNDARY}--\r\n`,
      },
      want: { status: 400, shape: 'compat', code: 'invalid_input', param: 'prompt' },
    },
  ],
  [
    'multipart whose body is not multipart',
    {
      given: { method: 'POST', path: '/v1/videos', key: true, headers: multipart(), body: '{"prompt":"a cat"}' },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'body' },
    },
  ],
  // Paths the router cannot take.
  [
    '%E0%A4%A in a path under /api/v1',
    {
      given: { method: 'GET', path: '/api/v1/assets/%E0%A4%A', key: true },
      want: { status: 400, shape: 'envelope', code: 40008, param: 'path' },
    },
  ],
  [
    '%E0%A4%A in a path under /v1',
    {
      given: { method: 'GET', path: '/v1/videos/%E0%A4%A', key: true },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'path' },
    },
  ],
  [
    'a 5,000-character id under /api/v1',
    {
      given: { method: 'GET', path: `/api/v1/assets/a_${'x'.repeat(5000)}`, key: true },
      want: { status: 400, shape: 'envelope', code: 40008, param: 'path' },
    },
  ],
  [
    'a 5,000-character id under /v1',
    {
      given: { method: 'GET', path: `/v1/videos/task_${'x'.repeat(5000)}`, key: true },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'path' },
    },
  ],
  [
    'a 5,000-character id in a /v1 DELETE',
    {
      given: { method: 'DELETE', path: `/v1/videos/task_${'x'.repeat(5000)}`, key: true },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'path' },
    },
  ],
  // What Node's HTTP parser refuses never reaches a route: still the layer's shape.
  [
    'a control character in a header value under /api/v1',
    {
      given: { method: 'GET', path: '/api/v1/chat/credit', key: true, rawHeaderLines: ['X-Note: a\u0001b'] },
      want: { status: 400, shape: 'envelope', code: 40008, param: 'headers' },
    },
  ],
  [
    'a control character in a header value under /v1',
    {
      given: { method: 'GET', path: '/v1/videos', key: true, rawHeaderLines: ['X-Note: a\u0001b'] },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'headers' },
    },
  ],
  [
    'a header name with a space',
    {
      given: { method: 'GET', path: '/v1/models', key: true, rawHeaderLines: ['Bad Name: x'] },
      want: { status: 400, shape: 'compat', code: 'invalid_parameter', param: 'headers' },
    },
  ],
  [
    'a control character in the path',
    {
      given: { method: 'GET', path: '/api/v1/assets/a\u0001b', key: true },
      want: { status: 400, shape: 'envelope', code: 40008, param: 'path' },
    },
  ],
  // Fastify's body errors under /v1 too.
  [
    'bad JSON on /v1/videos',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: { 'Content-Type': 'application/json' },
        body: '{"prompt": ',
      },
      want: { status: 400, shape: 'compat', code: 'malformed_json' },
    },
  ],
  [
    'an empty JSON body on /v1/videos',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: { 'Content-Type': 'application/json' },
        body: '',
      },
      want: { status: 400, shape: 'compat', code: 'malformed_json' },
    },
  ],
  [
    'a text/plain body on /v1/videos',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: { 'Content-Type': 'text/plain' },
        body: 'prompt=a cat',
      },
      want: { status: 400, shape: 'compat', code: 'unsupported_media_type' },
    },
  ],
  [
    'a JSON body over the limit on /v1/videos',
    {
      given: {
        method: 'POST',
        path: '/v1/videos',
        key: true,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ prompt: 'x'.repeat(1024 * 1024 + 10) }),
      },
      want: { status: 413, shape: 'compat', code: 'payload_too_large' },
    },
  ],
];

/** The message the caller reads: the first field problem's where there is one, else the code's. */
function messageOf(response: RawResponse, shape: Want['shape']): string {
  if (shape === 'compat') return response.body.error.message;
  return response.body.data?.errors?.[0]?.message ?? response.body.msg;
}

describe("hostile input answers 4xx in the layer's shape, in the caller's language", () => {
  let t: TestService;
  let apiKey: string;
  beforeAll(async () => {
    t = await startTestService({ simulatorLatencyMs: 600_000 });
    ({ apiKey } = await t.account(0));
  });
  afterAll(async () => {
    recordCounts('hostile-input', counts);
    await t?.close();
  });

  it.each(cases)('%s', async (name, { given, want }) => {
    counts.cases++;
    const answers: Record<string, RawResponse> = {};
    for (const language of ['en', 'de']) {
      const r = await rawRequest(t.url, given, language, apiKey);
      counts.requests++;
      if (r.status >= 500) counts.fiveHundreds++;
      answers[language] = r;
      try {
        expect(r.status, `${name} (${language}): ${JSON.stringify(r.body).slice(0, 300)}`).toBe(want.status);
        expect(r.headers['content-type']).toMatch(/^application\/json/);
        expect(r.headers['x-request-id']).toMatch(/^req_/);
        if (want.shape === 'envelope') {
          expect(Object.keys(r.body).sort()).toEqual(['code', 'data', 'msg', 'request_id']);
          expect(r.body.code).toBe(want.code);
          expect(r.body.request_id).toBe(r.headers['x-request-id']);
          const named = want.rule ? r.body.data.errors[0].path : r.body.data?.param;
          if (want.param) expect(String(named).startsWith(want.param)).toBe(true);
          if (want.rule) expect(r.body.data.errors[0].rule).toBe(want.rule);
        } else {
          expect(Object.keys(r.body)).toEqual(['error']);
          expect(r.body.error).toMatchObject({ code: want.code, type: 'invalid_request_error' });
          if (want.param) expect(String(r.body.error.param).startsWith(want.param)).toBe(true);
        }
        expect(messageOf(r, want.shape).length).toBeGreaterThan(0);
      } catch (error) {
        counts.violations++;
        throw error;
      }
    }
    // The same code in German, with a German message.
    expect(messageOf(answers.de, want.shape)).not.toBe(messageOf(answers.en, want.shape));
  });

  it('the service still answers after all of it', async () => {
    const r = await t.call('GET', '/healthz');
    expect(r.status).toBe(200);
  });
});
