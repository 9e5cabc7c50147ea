import { describe, expect, it } from 'vitest';
import { checkLedger } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';

/**
 * The envelope of POST /v1/videos: the compat fields (model, seconds, size, input_reference) of a
 * JSON body or of a multipart form read into fields; every other field is the model's. A problem
 * with one answers 400 invalid_input in the compatible layer's error object, naming the field as
 * sent, in the caller's language, before anything is held.
 */
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';

const prompt = 'a cat';
const URL = 'https://example.com/a.png';

/** A 400 invalid_input naming `param`, with the first problem's message. */
const bad = (param: string, message: string): Want => ({ status: 400, code: 'invalid_input', param, message });
const MODEL_TYPE = 'model must be of type string.';
const SECONDS = bad('seconds', 'seconds is not in the expected format.');
const REFERENCE_TYPE = bad('input_reference', 'input_reference must be of type object.');
const BOTH = bad(
  'input_reference.file_id',
  'input_reference.file_id is not accepted when input_reference.image_url is given.',
);
const NEITHER = bad(
  'input_reference',
  'At least one of input_reference.image_url, input_reference.file_id must be given.',
);
const FILE_ID = bad('input_reference.file_id', 'input_reference.file_id is not in the expected format.');

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
  const svc = serviceForSuite(1000);

  async function send(given: Given) {
    const headers: Record<string, string> = given.language ? { 'accept-language': given.language } : {};
    if (given.form) {
      const form = new FormData();
      for (const [name, value] of given.form) form.append(name, value);
      return svc.t.call('POST', '/v1/videos', { key: svc.account.apiKey, form, headers });
    }
    return svc.t.call('POST', '/v1/videos', {
      key: svc.account.apiKey,
      rawBody: JSON.stringify(given.json),
      headers: { ...headers, 'content-type': 'application/json' },
    });
  }

  it.each<[string, { given: Given; want: Want }]>([
    ['json: body an array', { given: { json: [MODEL] }, want: bad('body', 'body must be of type object.') }],
    ['json: body a string', { given: { json: 'a cat' }, want: bad('body', 'body must be of type object.') }],
    ['json: model a number', { given: { json: { model: 5, prompt } }, want: bad('model', MODEL_TYPE) }],
    ['json: model empty', { given: { json: { model: '', prompt } }, want: bad('model', MODEL_TYPE) }],
    [
      'form: model a list',
      {
        given: {
          form: [
            ['model[]', MODEL],
            ['prompt', prompt],
          ],
        },
        want: bad('model', MODEL_TYPE),
      },
    ],
    [
      'form: model empty',
      {
        given: {
          form: [
            ['model', ''],
            ['prompt', prompt],
          ],
        },
        want: bad('model', MODEL_TYPE),
      },
    ],
    ['json: seconds "abc"', { given: { json: { model: MODEL, prompt, seconds: 'abc' } }, want: SECONDS }],
    ['json: seconds true', { given: { json: { model: MODEL, prompt, seconds: true } }, want: SECONDS }],
    ['json: seconds 8.5', { given: { json: { model: MODEL, prompt, seconds: 8.5 } }, want: SECONDS }],
    [
      'json: seconds past a safe integer',
      { given: { json: { model: MODEL, prompt, seconds: 2 ** 60 } }, want: SECONDS },
    ],
    [
      'form: seconds "abc"',
      {
        given: {
          form: [
            ['model', MODEL],
            ['prompt', prompt],
            ['seconds', 'abc'],
          ],
        },
        want: SECONDS,
      },
    ],
    [
      'form: seconds "true"',
      {
        given: {
          form: [
            ['model', MODEL],
            ['prompt', prompt],
            ['seconds', 'true'],
          ],
        },
        want: SECONDS,
      },
    ],
    [
      'form: seconds "8.5"',
      {
        given: {
          form: [
            ['model', MODEL],
            ['prompt', prompt],
            ['seconds', '8.5'],
          ],
        },
        want: SECONDS,
      },
    ],
    [
      'json: seconds "abc", in German',
      {
        given: { json: { model: MODEL, prompt, seconds: 'abc' }, language: 'de' },
        want: bad('seconds', 'Das Feld seconds hat nicht das erwartete Format.'),
      },
    ],
    [
      'json: size a number',
      { given: { json: { model: MODEL, prompt, size: 1280 } }, want: bad('size', 'size must be of type string.') },
    ],
    [
      'json: size an object',
      {
        given: { json: { model: MODEL, prompt, size: { width: 1280 } } },
        want: bad('size', 'size must be of type string.'),
      },
    ],
    [
      'form: size a nested field',
      {
        given: {
          form: [
            ['model', MODEL],
            ['prompt', prompt],
            ['size[width]', '1280'],
          ],
        },
        want: bad('size', 'size must be of type string.'),
      },
    ],
    [
      'json: input_reference a string',
      { given: { json: { model: MODEL, prompt, input_reference: URL } }, want: REFERENCE_TYPE },
    ],
    [
      'json: input_reference a list',
      { given: { json: { model: MODEL, prompt, input_reference: [URL] } }, want: REFERENCE_TYPE },
    ],
    [
      'form: input_reference a text field, not a file',
      {
        given: {
          form: [
            ['model', MODEL],
            ['prompt', prompt],
            ['input_reference', URL],
          ],
        },
        want: REFERENCE_TYPE,
      },
    ],
    [
      'json: input_reference with an unknown key',
      {
        given: { json: { model: MODEL, prompt, input_reference: { image_url: URL, colour: 'red' } } },
        want: bad('input_reference.colour', 'input_reference.colour is not accepted by this model.'),
      },
    ],
    [
      'form: input_reference with an unknown key',
      {
        given: {
          form: [
            ['model', MODEL],
            ['prompt', prompt],
            ['input_reference[image_url]', URL],
            ['input_reference[colour]', 'red'],
          ],
        },
        want: bad('input_reference.colour', 'input_reference.colour is not accepted by this model.'),
      },
    ],
    [
      'json: input_reference with both keys',
      { given: { json: { model: MODEL, prompt, input_reference: { image_url: URL, file_id: 'a_1' } } }, want: BOTH },
    ],
    [
      'form: input_reference with both keys',
      {
        given: {
          form: [
            ['model', MODEL],
            ['prompt', prompt],
            ['input_reference[image_url]', URL],
            ['input_reference[file_id]', 'a_1'],
          ],
        },
        want: BOTH,
      },
    ],
    [
      'json: input_reference with neither key',
      { given: { json: { model: MODEL, prompt, input_reference: {} } }, want: NEITHER },
    ],
    [
      'json: input_reference.image_url empty',
      {
        given: { json: { model: MODEL, prompt, input_reference: { image_url: '' } } },
        want: bad('input_reference.image_url', 'input_reference.image_url must be of type string.'),
      },
    ],
    [
      'json: input_reference.file_id not an asset id',
      { given: { json: { model: MODEL, prompt, input_reference: { file_id: 'a/../b' } } }, want: FILE_ID },
    ],
    [
      'json: input_reference.file_id a number',
      { given: { json: { model: MODEL, prompt, input_reference: { file_id: 42 } } }, want: FILE_ID },
    ],
    [
      'form: input_reference[file_id] not an asset id',
      {
        given: {
          form: [
            ['model', MODEL],
            ['prompt', prompt],
            ['input_reference[file_id]', 'a b'],
          ],
        },
        want: FILE_ID,
      },
    ],
  ])('%s', async (_name, { given, want }) => {
    const before = await svc.t.wallet(svc.account.accountId);
    const r = await send(given);
    expect(r.status, JSON.stringify(r.body)).toBe(want.status);
    expect(r.body).toEqual({
      error: { code: want.code, param: want.param, message: want.message, type: 'invalid_request_error' },
    });
    expect(await svc.t.wallet(svc.account.accountId)).toEqual(before);
    await checkLedger(svc.t.service, svc.account.accountId);
  });
});
