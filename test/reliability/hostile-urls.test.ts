import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { expectError, MODEL_D } from '../http/helpers.js';
import { recordCounts } from './support.js';

/**
 * Issue 16 item 1: a long URL that fails its format used to cost quadratic time in every generated
 * validator (`[^\s/?#]+[^\s]*`: two overlapping repeats), so one request with a 160 KB reference URL
 * ending in a space blocked the event loop for 22 s. Now the patterns are linear and every URL has a
 * maxLength of 2,048: the same requests are refused at once, with the field named, and nothing held.
 * The service runs in this process, so a validation that blocks holds up this test too: the
 * per-test bound below then fails it.
 */
const BOUND_MS = 20_000;
const counts: Record<string, number> = { cases: 0, requests: 0, hostileBytes: 0, violations: 0 };

const LORA_MODEL = 'vendor_d/family_d-lora/reference-to-video';
const LINK_MODEL = 'vendor_b/family_c-3.0/reference-to-video';
const EXTEND_MODEL = 'vendor_d/family_d/video-extend';
const COMPAT_MODEL = 'vendor_b/family_c-2.6/reference-to-video';
const KB = 1024;

/** An https URL of `bytes` characters whose host never ends and whose last character is a space: the repro. */
const spaceEnded = (bytes: number) => `https://${'a'.repeat(bytes - 'https://'.length - 1)} `;
/** recheck's attack string for the old pattern ('https://p' + ':'.repeat(n) + '\t'), at `bytes` characters. */
const tabEnded = (bytes: number) => `https://p${':'.repeat(bytes - 'https://p'.length - 1)}\t`;

const PROMPT = 'a red fox running through snow, Picture 1 as the fox';

/** Envelope API: [name, { given: the request, want: the field paths refused for their length }]. */
const ENVELOPE: [string, { given: { path: string; body: unknown }; want: string[] }][] = [
  [
    'createTask, a 160 KB reference image URL ending in a space',
    {
      given: {
        path: '/api/v1/jobs/createTask',
        body: { model: MODEL_D, input: { prompt: PROMPT, reference_image_urls: [spaceEnded(160 * KB)] } },
      },
      want: ['input.reference_image_urls[0]'],
    },
  ],
  [
    'quote, a 160 KB reference image URL ending in a space',
    {
      given: {
        path: '/api/v1/jobs/quote',
        body: { model: MODEL_D, input: { prompt: PROMPT, reference_image_urls: [spaceEnded(160 * KB)] } },
      },
      want: ['input.reference_image_urls[0]'],
    },
  ],
  [
    'createTask, three 80 KB reference image URLs',
    {
      given: {
        path: '/api/v1/jobs/createTask',
        body: {
          model: LORA_MODEL,
          input: { prompt: PROMPT, reference_image_urls: [1, 2, 3].map(() => spaceEnded(80 * KB)) },
        },
      },
      want: ['input.reference_image_urls[0]', 'input.reference_image_urls[1]', 'input.reference_image_urls[2]'],
    },
  ],
  [
    "quote, recheck's attack string (colons, then a tab) at 160 KB",
    {
      given: {
        path: '/api/v1/jobs/quote',
        body: { model: MODEL_D, input: { prompt: PROMPT, reference_image_urls: [tabEnded(160 * KB)] } },
      },
      want: ['input.reference_image_urls[0]'],
    },
  ],
  [
    'createTask, a 160 KB LoRA path',
    {
      given: {
        path: '/api/v1/jobs/createTask',
        body: { model: LORA_MODEL, input: { prompt: PROMPT, loras: [{ path: spaceEnded(160 * KB) }] } },
      },
      want: ['input.loras[0].path'],
    },
  ],
  [
    'createTask, a 160 KB reference link (https-url)',
    {
      given: {
        path: '/api/v1/jobs/createTask',
        body: { model: LINK_MODEL, input: { prompt: PROMPT, reference_link_url: spaceEnded(160 * KB) } },
      },
      want: ['input.reference_link_url'],
    },
  ],
  [
    'createTask, a 160 KB clip to extend (source-video)',
    {
      given: {
        path: '/api/v1/jobs/createTask',
        body: { model: EXTEND_MODEL, input: { prompt: PROMPT, video_url: spaceEnded(160 * KB) } },
      },
      want: ['input.video_url'],
    },
  ],
];

/** Compatible layer: [name, { given: the /v1/videos body, want: the error's param }]. */
const COMPAT: [string, { given: Record<string, unknown>; want: string }][] = [
  [
    'input_reference.image_url of 160 KB ending in a space',
    {
      given: { model: COMPAT_MODEL, prompt: 'a lighthouse', input_reference: { image_url: spaceEnded(160 * KB) } },
      want: 'input_reference',
    },
  ],
  [
    'reference_image_urls[0] of 160 KB ending in a space',
    {
      given: { model: COMPAT_MODEL, prompt: 'a lighthouse', reference_image_urls: [spaceEnded(160 * KB)] },
      want: 'reference_image_urls[0]',
    },
  ],
];

describe('hostile URLs are refused in linear time, by their length', () => {
  let t: TestService;
  let account: { accountId: string; apiKey: string };
  const CREDITS = 100_000;
  beforeAll(async () => {
    t = await startTestService();
    account = await t.account(CREDITS);
  });
  afterAll(async () => {
    recordCounts('hostile-urls', counts);
    await t?.close();
  });

  /** Nothing held, nothing spent, no task: a refused request changes nothing. */
  async function unchanged() {
    expect(await t.wallet(account.accountId)).toMatchObject({ available: CREDITS, held: 0, spent: 0 });
    const tasks = await t.call('GET', '/api/v1/jobs', { key: account.apiKey });
    expect(tasks.body.data.items).toEqual([]);
    await t.checkLedger(account.accountId);
  }

  function send(path: string, body: unknown) {
    counts.requests++;
    counts.hostileBytes += JSON.stringify(body).length;
    return t.call('POST', path, { key: account.apiKey, body, headers: { 'idempotency-key': crypto.randomUUID() } });
  }

  it.each(ENVELOPE)(
    '%s: 400 40001 maxLength on the field',
    async (_name, { given, want }) => {
      counts.cases++;
      const r = await send(given.path, given.body);
      expectError(r, 400, 40001);
      const errors = r.body.data.errors as { path: string; rule: string; message: string }[];
      for (const path of want)
        expect(errors).toContainEqual({ path, rule: 'maxLength', message: expect.stringContaining('2048') });
      await unchanged();
    },
    BOUND_MS,
  );

  it.each(COMPAT)(
    'POST /v1/videos, %s: 400 invalid_input naming the field',
    async (_name, { given, want }) => {
      counts.cases++;
      const r = await send('/v1/videos', given);
      expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(400);
      expect(r.body.error).toEqual({
        message: expect.stringContaining('at most 2048 characters'),
        type: 'invalid_request_error',
        param: want,
        code: 'invalid_input',
      });
      await unchanged();
    },
    BOUND_MS,
  );

  it(
    'a URL of exactly 2,048 characters is still accepted',
    async () => {
      counts.cases++;
      const url = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length - '.png'.length)}.png`;
      expect(url).toHaveLength(2048);
      const r = await send('/api/v1/jobs/quote', {
        model: MODEL_D,
        input: { prompt: PROMPT, reference_image_urls: [url] },
      });
      expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(200);
      await unchanged();
    },
    BOUND_MS,
  );
});
