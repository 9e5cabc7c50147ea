import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger, startTestService, type TestService } from '../support/service.js';

/**
 * The envelope of POST /v1/videos: the compat fields (model, seconds, size, input_reference) of a
 * JSON body or of a multipart form read into fields; every other field is the model's. A problem
 * with one answers 400 invalid_input in the compatible layer's error object, naming the field as
 * sent, in the caller's language, before anything is held.
 */
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';

type Given =
  | { json: unknown; form?: never; language?: string }
  | { form: [string, string][]; json?: never; language?: string };
interface Want {
  status: number;
  code: string;
  param: string;
  message: string;
}

describe('POST /v1/videos: the envelope of a JSON body and of a form', () => {
  let t: TestService;
  let account: { accountId: string; apiKey: string };
  beforeAll(async () => {
    t = await startTestService();
    account = await t.account(1000);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function send(given: Given) {
    const headers: Record<string, string> = given.language ? { 'accept-language': given.language } : {};
    if (given.form) {
      const form = new FormData();
      for (const [name, value] of given.form) form.append(name, value);
      return t.call('POST', '/v1/videos', { key: account.apiKey, form, headers });
    }
    return t.call('POST', '/v1/videos', {
      key: account.apiKey,
      rawBody: JSON.stringify(given.json),
      headers: { ...headers, 'content-type': 'application/json' },
    });
  }

  it.each<[string, { given: Given; want: Want }]>([
    [
      'json: size a number',
      {
        given: { json: { model: MODEL, prompt: 'a cat', size: 1280 } },
        want: { status: 400, code: 'invalid_input', param: 'size', message: 'size must be of type string.' },
      },
    ],
    [
      'json: size an object',
      {
        given: { json: { model: MODEL, prompt: 'a cat', size: { width: 1280 } } },
        want: { status: 400, code: 'invalid_input', param: 'size', message: 'size must be of type string.' },
      },
    ],
  ])('%s', async (_name, { given, want }) => {
    const before = await t.wallet(account.accountId);
    const r = await send(given);
    expect(r.status, JSON.stringify(r.body)).toBe(want.status);
    expect(r.body).toEqual({
      error: { code: want.code, param: want.param, message: want.message, type: 'invalid_request_error' },
    });
    expect(await t.wallet(account.accountId)).toEqual(before);
    await checkLedger(t.service, account.accountId);
  });
});
