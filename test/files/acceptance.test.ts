// @store-suite: accepted uploads are read back from the store (vitest.config.ts runs it on the local and the S3 store).
import { storedRows } from '../support/stored-rows.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, expectError, expectOk } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';
import { jpg, mp4, png, wav } from '../../support/media/fixtures.js';
import { UNLOCKED, upload, taskLedger } from './support.js';

/** Tests may name models; the runtime may not (the rules come from the model YAML). */
const FAMILY_B = 'vendor_b/family_b-1.1/reference-to-video';
const FAMILY_C3 = 'vendor_b/family_c-3.0/reference-to-video';
const FAMILY_C26 = 'vendor_b/family_c-2.6/reference-to-video';
const Q4 = 'vendor_e/q4-preview/reference-to-video';
const MINI = 'vendor_a/family_a-2.0-mini/reference-to-video';

describe('service:// references are checked at acceptance from stored metadata', () => {
  let t: TestService;
  let apiKey: string;
  let accountId: string;
  const uri: Record<string, string> = {};
  beforeAll(async () => {
    t = await startTestService();
    ({ apiKey, accountId } = await t.account(UNLOCKED));
    const files: [string, Buffer, string, string][] = [
      ['jpeg300', jpg(300, 300), 'image/jpeg', 'small.jpg'],
      ['png400x600', png(400, 600, false), 'image/png', 'tall.png'],
      ['alpha', png(320, 240, true), 'image/png', 'alpha.png'],
      ['opaque', png(320, 240, false), 'image/png', 'opaque.png'],
      ['tinyAlpha', png(200, 200, true), 'image/png', 'tiny.png'],
      ['wav', wav(1.5), 'audio/wav', 'tone.wav'],
      ['clip', mp4(), 'video/mp4', 'clip.mp4'],
    ];
    for (const [name, bytes, type, file] of files) uri[name] = (await upload(t, apiKey, bytes, type, file)).asset.uri;
  });
  afterAll(async () => t?.close());

  /** Nothing held, nothing spent, no task: the rejection happened before anything was charged. */
  const untouched = async () => {
    expect(await t.wallet(accountId)).toMatchObject({ available: UNLOCKED - (await spentSoFar()), held: 0 });
    await t.checkLedger(accountId);
  };
  const spentSoFar = async () => (await t.wallet(accountId)).spent;

  it('family_b-1.1: an image whose shortest side is 300 px is refused (400 40001), at quote and at createTask', async () => {
    const taskIds = async () => (await storedRows(t, 'tasks', { account_id: accountId })).map((task) => task.id);
    const tasksBefore = await taskIds();
    const body = {
      model: FAMILY_B,
      input: { prompt: 'the first image walks on a beach', reference_image_urls: [uri.png400x600, uri.jpeg300] },
    };
    for (const path of ['/api/v1/jobs/quote', '/api/v1/jobs/createTask']) {
      const r = await t.call('POST', path, { key: apiKey, body });
      expectError(r, 400, 40001);
      expect(r.body.msg).toBe('The request input is invalid.');
      expect(r.body.data.errors).toEqual([
        {
          path: 'input.reference_image_urls[1]',
          rule: 'shortSidePx',
          message: 'input.reference_image_urls[1] is 300x300 px; the shortest side must be at least 400 px.',
        },
      ]);
    }
    await untouched();
    expect(await taskIds()).toEqual(tasksBefore);
  });

  it('family_b-1.1: a 400 x 600 image is accepted and runs', async () => {
    const r = await createTask(t, apiKey, {
      model: FAMILY_B,
      input: { prompt: 'the first image walks on a beach', reference_image_urls: [uri.png400x600] },
    });
    expectOk(r, 202);
    expect(r.body.data.maxCredits).toBe(105);
    const done = await waitForTerminal(t, apiKey, r.body.data.taskId);
    expect(done.state).toBe('succeeded');
    await t.checkLedger(accountId);
  });

  it('family_c-3.0: a PNG with transparency is refused; the same picture without is accepted', async () => {
    const refused = await createTask(t, apiKey, { model: FAMILY_C3, input: { reference_image_urls: [uri.alpha] } });
    expectError(refused, 400, 40001);
    expect(refused.body.data.errors).toEqual([
      {
        path: 'input.reference_image_urls[0]',
        rule: 'opaque',
        message: 'input.reference_image_urls[0] has transparency; only opaque images are accepted.',
      },
    ]);
    await untouched();
    const accepted = await createTask(t, apiKey, { model: FAMILY_C3, input: { reference_image_urls: [uri.opaque] } });
    expectOk(accepted, 202);
    expect((await waitForTerminal(t, apiKey, accepted.body.data.taskId)).state).toBe('succeeded');
  });

  // [name, { given: the createTask body, from the uploaded assets' URIs; want: every error listed, in order }]
  it.each<
    [
      string,
      { given: (uri: Record<string, string>) => unknown; want: { path: string; rule: string; message: string }[] },
    ]
  >([
    [
      'family_c-3.0: every problem of every reference is listed, each at its path with its rule',
      {
        given: (uri) => ({
          model: FAMILY_C3,
          input: { reference_image_urls: [uri.opaque, uri.tinyAlpha, 'service://a/a_doesnotexist'] },
        }),
        want: [
          {
            path: 'input.reference_image_urls[2]',
            rule: 'asset',
            message: 'input.reference_image_urls[2] names an asset that does not exist in your library.',
          },
          {
            path: 'input.reference_image_urls[1]',
            rule: 'opaque',
            message: 'input.reference_image_urls[1] has transparency; only opaque images are accepted.',
          },
          {
            path: 'input.reference_image_urls[1]',
            rule: 'sidePx',
            message: 'input.reference_image_urls[1] is 200x200 px; each side must be between 240 and 8000 px.',
          },
        ],
      },
    ],
    [
      'q4-preview: an audio reference must be MP3 of 3 to 12 s (a 1.5 s WAV breaks both rules)',
      {
        given: (uri) => ({
          model: Q4,
          input: {
            prompt: 'the first image sings',
            reference_image_urls: [uri.opaque],
            reference_audio_urls: [uri.wav],
          },
        }),
        want: [
          {
            path: 'input.reference_audio_urls[0]',
            rule: 'formats',
            message: 'input.reference_audio_urls[0] has format wav; accepted formats: mp3.',
          },
          {
            path: 'input.reference_audio_urls[0]',
            rule: 'clipSeconds',
            message: 'input.reference_audio_urls[0] is 1.5 s long; it must be between 3 and 12 s.',
          },
        ],
      },
    ],
    [
      'a file of the wrong kind in a reference field is refused even where the model has no limits',
      {
        given: (uri) => ({ model: MINI, input: { prompt: 'image 1 dances', reference_image_urls: [uri.wav] } }),
        want: [
          {
            path: 'input.reference_image_urls[0]',
            rule: 'kind',
            message: 'input.reference_image_urls[0] has format wav (audio); accepted formats: image files.',
          },
        ],
      },
    ],
  ])('%s', async (_name, { given, want }) => {
    const r = await createTask(t, apiKey, given(uri));
    expectError(r, 400, 40001);
    expect(r.body.data.errors).toEqual(want);
    await untouched();
  });

  it('messages follow Accept-Language; paths and rules do not', async () => {
    const r = await t.call('POST', '/api/v1/jobs/createTask', {
      key: apiKey,
      body: { model: FAMILY_C3, input: { reference_image_urls: [uri.alpha] } },
      headers: { 'accept-language': 'de-DE' },
    });
    expectError(r, 400, 40001);
    expect(r.body.data.errors).toEqual([
      {
        path: 'input.reference_image_urls[0]',
        rule: 'opaque',
        message:
          'Das Bild in input.reference_image_urls[0] enthält Transparenz; es werden nur deckende Bilder akzeptiert.',
      },
    ]);
  });

  it('family_c-2.6 billing: measured clip lengths set the hold when every clip is an asset (5 s + 2 s), else 5 s are assumed', async () => {
    const input = (clips: string[]) => ({
      model: FAMILY_C26,
      input: { prompt: 'character1 runs', reference_video_urls: clips },
    });
    const quote = await t.call('POST', '/api/v1/jobs/quote', { key: apiKey, body: input([uri.clip]) });
    expectOk(quote);
    expect(quote.body.data).toMatchObject({ maxCredits: 69, estimatedCredits: 69, breakdown: { billableSeconds: 7 } });
    const external = await t.call('POST', '/api/v1/jobs/quote', {
      key: apiKey,
      body: input([uri.clip, 'https://example.com/c.mp4']),
    });
    expect(external.body.data).toMatchObject({ maxCredits: 98, breakdown: { billableSeconds: 10 } });
    const before = await t.wallet(accountId);
    const created = await createTask(t, apiKey, {
      ...input([uri.clip]),
      quoteId: quote.body.data.quoteId,
      expectedCredits: 69,
    });
    expectOk(created, 202);
    expect(created.body.data.maxCredits).toBe(69);
    const done = await waitForTerminal(t, apiKey, created.body.data.taskId);
    expect(done).toMatchObject({ state: 'succeeded', credits: 69, settled: true });
    expect(await t.wallet(accountId)).toMatchObject({
      available: before.available - 69,
      held: 0,
      spent: before.spent + 69,
    });
    await t.checkLedger(accountId);
  });
});

describe('limits checked during generation fail the task with a clear errorCode, and the hold is released', () => {
  const svc = serviceForSuite(UNLOCKED);
  /** The hold came back whole: the balance is what the account was given, and the ledger adds up. */
  const holdReleased = async () => {
    expect(await svc.t.wallet(svc.account.accountId)).toEqual({
      available: UNLOCKED,
      held: 0,
      spent: 0,
      purchased: UNLOCKED,
    });
    await svc.t.checkLedger(svc.account.accountId);
  };

  it('family_c-3.0: a 4 fps clip is accepted (video limits are for generation) and then fails reference_invalid', async () => {
    const clip = (await upload(svc.t, svc.account.apiKey, mp4(), 'video/mp4', 'clip.mp4')).asset.uri;
    const image = (await upload(svc.t, svc.account.apiKey, png(320, 240, false), 'image/png', 'opaque.png')).asset.uri;
    const r = await createTask(svc.t, svc.account.apiKey, {
      model: FAMILY_C3,
      input: {
        prompt: 'the first image moves like the clip',
        reference_image_urls: [image],
        reference_video_urls: [clip],
      },
    });
    expectOk(r, 202);
    const done = await waitForTerminal(svc.t, svc.account.apiKey, r.body.data.taskId);
    expect(done).toMatchObject({ state: 'failed', errorCode: 'reference_invalid', credits: 0, settled: true });
    const entries = await taskLedger(svc.t, done.taskId);
    expect(entries).toEqual([
      { kind: 'hold', amount: r.body.data.maxCredits },
      { kind: 'release', amount: r.body.data.maxCredits },
    ]);
    expect(done.errorMessage).toBe(
      "A reference file does not meet the model's limits: input.reference_video_urls[0] has 4 frames per second; at least 16 are required.",
    );
    await holdReleased();
  });

  it('an external reference is fetched through the SSRF guard: a private address fails reference_unreachable, hold released', async () => {
    const r = await createTask(svc.t, svc.account.apiKey, {
      model: FAMILY_C3,
      input: { reference_video_urls: ['https://127.0.0.1/clip.mp4'] },
    });
    expectOk(r, 202);
    const done = await waitForTerminal(svc.t, svc.account.apiKey, r.body.data.taskId);
    expect(done).toMatchObject({
      state: 'failed',
      errorCode: 'reference_unreachable',
      errorMessage: 'A reference file could not be fetched.',
    });
    await holdReleased();
  });

  it('an asset deleted after acceptance fails reference_unreachable before the model runs', async () => {
    const slow = await startTestService({ simulatorLatencyMs: 150 }, { startWorker: false });
    try {
      const owner = await slow.account(UNLOCKED);
      const image = (await upload(slow, owner.apiKey, png(320, 240, false), 'image/png', 'opaque.png')).asset;
      const r = await createTask(slow, owner.apiKey, {
        model: FAMILY_C3,
        input: { reference_image_urls: [image.uri] },
      });
      expectOk(r, 202);
      expectOk(await slow.call('DELETE', `/api/v1/assets/${image.assetId}`, { key: owner.apiKey }));
      await slow.service.worker!.runOnce();
      const row = await slow.service.ctx.db.kysely
        .selectFrom('tasks')
        .selectAll()
        .where('id', '=', r.body.data.taskId)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ state: 'failed', error_code: 'reference_unreachable' });
      await slow.checkLedger(owner.accountId);
      expect(await slow.wallet(owner.accountId)).toMatchObject({ held: 0, spent: 0 });
    } finally {
      await slow.close();
    }
  });
});
