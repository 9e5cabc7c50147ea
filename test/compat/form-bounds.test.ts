// @store-suite: the compatible layer's form uploads go to the store (vitest.config.ts runs it on the local and the S3 store).
import { describe, expect, it } from 'vitest';
import { png } from '../../support/media/fixtures.js';
import { checkLedger } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';

/**
 * Multipart bodies of POST /v1/videos are bounded before any work: array indexes by the field's
 * maxItems (the model's schema) or a small bound for fields without one, key nesting, the number
 * of parts, fields and files, and the size of each field and of all fields together. A body past
 * a bound is refused with the compatible layer's error object naming the field (400) or 413.
 */
const MODEL = 'vendor_b/family_c-2.6/reference-to-video'; // reference_image_urls: at most 2 items
const MiB = 1024 * 1024;

type Part = [name: string, value: string | Blob];

describe('bounds of multipart bodies on /v1/videos', () => {
  const svc = serviceForSuite(1000);

  async function send(parts: Part[]) {
    const form = new FormData();
    for (const [name, value] of parts) form.append(name, value);
    const response = await fetch(`${svc.t.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.account.apiKey}` },
      body: form,
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  const base: Part[] = [
    ['model', MODEL],
    ['prompt', 'a cat'],
  ];
  const url = (i: number) => `https://example.com/${i}.png`;
  /** About 43 KB: 200 fields naming indexes far past any maxItems, as in the report. */
  const highIndexes: Part[] = Array.from({ length: 198 }, (_, i) => [
    `reference_image_urls[${9800 + i}]`,
    url(i).padEnd(190, 'x'),
  ]);

  it.each<[string, { given: Part[]; want: { status: number; code: string; param: string; rule?: string } }]>([
    [
      "an index at the field's maxItems",
      {
        given: [...base, ['reference_image_urls[2]', url(0)]],
        want: { status: 400, code: 'invalid_input', param: 'reference_image_urls[2]', rule: 'at most 2' },
      },
    ],
    [
      'a third appended item of a 2-item field',
      {
        given: [...base, ...[0, 1, 2].map((i): Part => ['reference_image_urls[]', url(i)])],
        want: { status: 400, code: 'invalid_input', param: 'reference_image_urls[]', rule: 'at most 2' },
      },
    ],
    [
      'an index past the bound of a field without maxItems',
      {
        given: [...base, ['input_reference[image_url][150]', url(0)]],
        want: { status: 400, code: 'invalid_input', param: 'input_reference[image_url][150]', rule: 'at most 100' },
      },
    ],
    [
      'a 43 KB body of indexes up to 9997',
      {
        given: [...base, ...highIndexes],
        want: { status: 400, code: 'invalid_input', param: 'reference_image_urls[9800]', rule: 'at most 2' },
      },
    ],
    [
      'a key nested 9 levels',
      {
        given: [...base, ['seed[0][0][0][0][0][0][0][0]', '1']],
        want: { status: 400, code: 'invalid_input', param: 'seed[0][0][0][0][0][0][0][0]', rule: '8 levels' },
      },
    ],
    [
      'more fields than a form may have',
      {
        given: [...base, ...Array.from({ length: 250 }, (_, i): Part => [`extra_${i}`, 'x'])],
        want: { status: 413, code: 'payload_too_large', param: 'body' },
      },
    ],
    [
      'two files',
      {
        given: [
          ...base,
          ['input_reference', new Blob([new Uint8Array(png(2, 2, false))], { type: 'image/png' })],
          ['input_reference', new Blob([new Uint8Array(png(2, 2, false))], { type: 'image/png' })],
        ],
        want: { status: 413, code: 'payload_too_large', param: 'body' },
      },
    ],
    [
      'one field past the body limit',
      {
        given: [...base, ['negative_prompt', 'x'.repeat(MiB + 1)]],
        want: { status: 413, code: 'payload_too_large', param: 'negative_prompt' },
      },
    ],
    [
      'fields together past the body limit',
      {
        given: [...base, ...[0, 1, 2].map((i): Part => [`note_${i}`, 'x'.repeat(MiB / 2)])],
        want: { status: 413, code: 'payload_too_large', param: 'body' },
      },
    ],
  ])('%s is refused', async (_name, { given, want }) => {
    const before = await svc.t.wallet(svc.account.accountId);
    const r = await send(given);
    expect(r.status).toBe(want.status);
    expect(r.body.error).toMatchObject({ code: want.code, param: want.param, type: 'invalid_request_error' });
    if (want.rule) expect(r.body.error.message).toContain(want.rule);
    expect(await svc.t.wallet(svc.account.accountId)).toEqual(before);
    await checkLedger(svc.t.service, svc.account.accountId);
  });

  it('honest forms still pass: two references by index and by append, and a file', async () => {
    const byIndex = await send([...base, ['reference_image_urls[0]', url(0)], ['reference_image_urls[1]', url(1)]]);
    expect(byIndex.status).toBe(200);
    const byAppend = await send([...base, ['reference_image_urls[]', url(0)], ['reference_image_urls[]', url(1)]]);
    expect(byAppend.status).toBe(200);
    const record = await svc.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${byAppend.body.id}`, {
      key: svc.account.apiKey,
    });
    expect(record.body.data.input.reference_image_urls).toEqual([url(0), url(1)]);
  });
});
