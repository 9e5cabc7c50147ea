// @store-suite: the compatible layer's uploads and downloads go through the store (vitest.config.ts runs it on the local and the S3 store).
import { png } from '../../support/media/fixtures.js';
import OpenAI, {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  RateLimitError,
  toFile,
} from 'openai';
import { describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { probeBytes } from '../../runtime/files/probe.js';
import { checkLedger, startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { failingAndSlowServicesForSuite } from '../support/suite-service.js';

/**
 * The compatible layer under /v1, driven by the official openai package (6.x) against the real
 * server: the protocol as users will meet it, with the SDK's own request encoding, pagination and
 * error classes.
 */

/** A model that needs nothing but a prompt; 1280x720 is its 16:9 at 720p; 2 to 10 seconds. */
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';
const FAIL = 'FAIL-THIS-PROMPT';

/** A valid 2x2 opaque RGB PNG (a real image file for the uploads). */
const tinyPng = () => png(2, 2, false);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function clientFor(t: TestService, apiKey: string, options: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) {
  return new OpenAI({ apiKey, baseURL: `${t.url}/v1`, maxRetries: 0, ...options });
}

async function untilFinished(client: OpenAI, id: string, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const video = await client.videos.retrieve(id);
    if (video.status === 'completed' || video.status === 'failed') return video;
    if (Date.now() > until) throw new Error(`video ${id} not finished: ${JSON.stringify(video)}`);
    await sleep(50);
  }
}

/** The SDK call must fail; returns what it threw. */
async function failure(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(APIError);
    return error as APIError;
  }
  throw new Error('expected the call to fail');
}

function holds(t: TestService, accountId: string) {
  return t.service.ctx.db.kysely
    .selectFrom('holds')
    .select(['task_id', 'amount', 'charged', 'state'])
    .where('account_id', '=', accountId)
    .execute();
}

describe('the compatible layer with the official openai SDK', () => {
  const suite = failingAndSlowServicesForSuite(FAIL);

  it('exposes client.videos (the 6.x line)', () => {
    const client = clientFor(suite.t, 'sk-service-x');
    expect(typeof client.videos.create).toBe('function');
    expect(typeof client.videos.downloadContent).toBe('function');
  });

  it('creates from a JSON body, polls to completed, downloads the simulator bytes and deletes', async () => {
    const { accountId, apiKey } = await suite.t.account(1000);
    const client = clientFor(suite.t, apiKey);
    // videos.create always sends multipart; the SDK's generic post sends the same fields as JSON.
    const created = await client.post<OpenAI.Videos.Video>('/videos', {
      body: { model: MODEL, prompt: 'a lighthouse at dusk', seconds: '8', size: '1280x720' },
    });
    expect(created).toMatchObject({
      object: 'video',
      model: MODEL,
      status: 'queued',
      progress: 0,
      seconds: '8',
      size: '1280x720',
      prompt: 'a lighthouse at dusk',
      error: null,
      remixed_from_video_id: null,
      completed_at: null,
      expires_at: null,
    });
    expect(created.id).toMatch(/^task_/);
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(3600);

    // The same task through the main API: the mapping reached the model's input.
    const record = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${created.id}`, { key: apiKey });
    expect(record.body.data.input).toMatchObject({
      prompt: 'a lighthouse at dusk',
      duration_seconds: 8,
      aspect_ratio: '16:9',
      resolution: '720p',
    });

    const done = await untilFinished(client, created.id);
    expect(done).toMatchObject({
      id: created.id,
      status: 'completed',
      progress: 100,
      seconds: '8',
      size: '1280x720',
      error: null,
    });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    // Retention (30 days by default) destroys the content then.
    expect(done.expires_at).toBeGreaterThan(done.completed_at!);

    const { data: retrieved, response } = await client.videos.retrieve(created.id).withResponse();
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(retrieved.id).toBe(created.id);

    const content = await client.videos.downloadContent(created.id);
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(bytes.includes(Buffer.from('ftyp'))).toBe(true);
    // The same bytes as the task's output asset on the main API: a 1280x720 clip of 8 s.
    const [asset] = (await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${created.id}`, { key: apiKey })).body
      .data.output.assets;
    expect(bytes.equals(Buffer.from(await (await fetch(asset.url)).arrayBuffer()))).toBe(true);
    expect(await probeBytes(bytes)).toMatchObject({
      kind: 'video',
      mime: 'video/mp4',
      width: 1280,
      height: 720,
      durationSeconds: 8,
    });
    const redirect = await suite.t.call('GET', `/v1/videos/${created.id}/content?variant=video`, { key: apiKey });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toMatch(new RegExp(`^${suite.t.url}/api/v1/media/`));
    await expect(client.videos.downloadContent(created.id, { variant: 'thumbnail' })).rejects.toBeInstanceOf(
      NotFoundError,
    );

    const before = await suite.t.wallet(accountId);
    const deleted = await client.videos.delete(created.id);
    expect(deleted).toEqual({ id: created.id, object: 'video.deleted', deleted: true });
    const after = await client.videos.retrieve(created.id);
    expect(after).toMatchObject({ id: created.id, status: 'completed', prompt: null, expires_at: null });
    await expect(client.videos.downloadContent(created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await client.videos.delete(created.id)).toEqual(deleted);
    expect(await suite.t.wallet(accountId)).toEqual(before);
    await checkLedger(suite.t.service, accountId);
  });

  it('creates from multipart with a real PNG as input_reference (the default model)', async () => {
    const { apiKey } = await suite.t.account(5000);
    const client = clientFor(suite.t, apiKey);
    const defaultModel = [...catalogue.values()].find((m) => m.info.mode === 'reference-to-video')!.info.id;
    expect(suite.t.config.compatDefaultModel).toBe(defaultModel);
    const png = tinyPng();
    // Model inputs accept https links only: this service is "published" at an https address for the upload.
    const localUrl = suite.t.config.publicUrl;
    suite.t.config.publicUrl = 'https://media.mediaforge.test';
    let created: OpenAI.Videos.Video;
    try {
      created = await client.videos.create({
        prompt: 'the cat of @Image1 jumps',
        seconds: '4',
        size: '1280x720',
        input_reference: await toFile(png, 'cat.png', { type: 'image/png' }),
      });
    } finally {
      suite.t.config.publicUrl = localUrl;
    }
    expect(created).toMatchObject({
      object: 'video',
      model: defaultModel,
      status: 'queued',
      seconds: '4',
      size: '1280x720',
    });
    const record = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${created.id}`, { key: apiKey });
    const [link] = record.body.data.input.reference_image_urls as string[];
    expect(link).toMatch(
      /^https:\/\/media\.mediaforge\.test\/api\/v1\/media\/uploads%2F[A-Za-z0-9_-]+\.png\?expires=\d+&sig=/,
    );
    // The signed link serves the uploaded bytes.
    const served = await fetch(`${suite.t.url}${link.slice('https://media.mediaforge.test'.length)}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
    expect((await untilFinished(client, created.id)).status).toBe('completed');

    // Not an image: refused before anything is held.
    const notImage = await failure(
      client.videos.create({
        prompt: 'x',
        input_reference: await toFile(Buffer.from('hello'), 'a.png', { type: 'image/png' }),
      }),
    );
    expect(notImage).toBeInstanceOf(BadRequestError);
    expect(notImage.param).toBe('input_reference');
  });

  it('maps input_reference[image_url] and [file_id] from multipart and passes other fields through, typed', async () => {
    const { apiKey } = await suite.t.account(5000);
    const client = clientFor(suite.t, apiKey);
    const byUrl = await client.videos.create({
      model: MODEL,
      prompt: 'character1 walks in the rain',
      seconds: '5' as never,
      size: '1080x1920' as never,
      input_reference: { image_url: 'https://example.com/a.png' },
      // Fields of the model's input beyond the protocol's: sent as form strings, typed by the model's schema.
      negative_prompt: 'blur',
      seed: 42,
      shot_type: 'single',
    } as OpenAI.Videos.VideoCreateParams);
    expect(byUrl).toMatchObject({ model: MODEL, seconds: '5', size: '1080x1920' });
    const first = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${byUrl.id}`, { key: apiKey });
    expect(first.body.data.input).toMatchObject({
      reference_image_urls: ['https://example.com/a.png'],
      negative_prompt: 'blur',
      seed: 42,
      shot_type: 'single',
      duration_seconds: 5,
      aspect_ratio: '9:16',
      resolution: '1080p',
    });

    // file_id names an asset of the caller's library (uploaded through the main API's files flow).
    const png = tinyPng();
    const ticket = await suite.t.call('POST', '/api/v1/common/upload-url', {
      key: apiKey,
      body: { fileName: 'portrait.png', contentType: 'image/png', size: png.length },
    });
    expect(ticket.status).toBe(200);
    const put = await fetch(ticket.body.data.uploadUrl, {
      method: 'PUT',
      headers: ticket.body.data.headers,
      body: new Uint8Array(png),
    });
    expect(put.status).toBe(200);
    const committed = await suite.t.call('POST', `/api/v1/files/${ticket.body.data.fileId}/commit`, {
      key: apiKey,
      body: {},
    });
    expect(committed.status).toBe(200);
    const assetId: string = committed.body.data.assetId;
    const byFile = await client.videos.create({
      model: MODEL,
      prompt: 'character1 waves',
      input_reference: { file_id: assetId },
    } as OpenAI.Videos.VideoCreateParams);
    const second = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${byFile.id}`, { key: apiKey });
    expect(second.body.data.input.reference_image_urls).toEqual([`service://a/${assetId}`]);
    // An asset that is not in the library: reported on input_reference, before anything is held.
    const missing = await failure(
      client.videos.create({
        model: MODEL,
        prompt: 'character1 waves',
        input_reference: { file_id: 'a_notmine01' },
      } as OpenAI.Videos.VideoCreateParams),
    );
    expect(missing).toMatchObject({ status: 400, param: 'input_reference', code: 'invalid_input' });
    expect(missing.message).toBe('400 input_reference names an asset that does not exist in your library.');
    // Defaults of the model fill what was not sent, and show in the Video.
    expect(byFile).toMatchObject({ seconds: '5', size: '1280x720' });
  });

  const IMAGE_MODEL = MODEL.replace('/reference-to-video', '/image-to-video');
  it.runIf(catalogue.get(IMAGE_MODEL)?.info.inputSchema.properties.image_url)(
    'maps input_reference to image_url on an image-to-video model',
    async () => {
      const { apiKey } = await suite.t.account(5000);
      const client = clientFor(suite.t, apiKey);
      const video = await client.videos.create({
        model: IMAGE_MODEL,
        prompt: 'the photo comes alive',
        seconds: '5',
        input_reference: { image_url: 'https://example.com/photo.png' },
      } as unknown as OpenAI.Videos.VideoCreateParams);
      const record = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${video.id}`, { key: apiKey });
      expect(record.body.data.input).toMatchObject({ image_url: 'https://example.com/photo.png', duration_seconds: 5 });
      expect(record.body.data.input.reference_image_urls).toBeUndefined();
      const twice = await failure(
        client.post('/videos', {
          body: {
            model: IMAGE_MODEL,
            prompt: 'x',
            input_reference: { image_url: 'https://example.com/a.png' },
            image_url: 'https://example.com/b.png',
          },
        }),
      );
      expect(twice).toMatchObject({ status: 400, param: 'image_url' });
      if (!catalogue.get(IMAGE_MODEL)!.info.outputSizes) {
        // The frame follows the image: no size table, so no size.
        const sized = await failure(
          client.post('/videos', {
            body: {
              model: IMAGE_MODEL,
              prompt: 'x',
              size: '1280x720',
              input_reference: { image_url: 'https://example.com/a.png' },
            },
          }),
        );
        expect(sized).toMatchObject({ status: 400, param: 'size' });
      }
    },
  );

  it('JSON input_reference: a data URL is stored like an upload, a given reference list follows it', async () => {
    const { apiKey } = await suite.t.account(5000);
    const client = clientFor(suite.t, apiKey);
    const png = tinyPng();
    const localUrl = suite.t.config.publicUrl;
    suite.t.config.publicUrl = 'https://media.mediaforge.test';
    let video: OpenAI.Videos.Video;
    try {
      video = await client.post<OpenAI.Videos.Video>('/videos', {
        body: {
          model: MODEL,
          prompt: 'character1 meets character2',
          input_reference: { image_url: `data:image/png;base64,${png.toString('base64')}` },
          reference_image_urls: ['https://example.com/b.png'],
        },
      });
    } finally {
      suite.t.config.publicUrl = localUrl;
    }
    const record = await suite.t.call('GET', `/api/v1/jobs/recordInfo?taskId=${video.id}`, { key: apiKey });
    const [uploaded, given] = record.body.data.input.reference_image_urls as string[];
    expect(uploaded).toMatch(/^https:\/\/media\.mediaforge\.test\/api\/v1\/media\/uploads%2F[A-Za-z0-9_-]+\.png\?/);
    expect(given).toBe('https://example.com/b.png');

    // The caller's own items keep their own index in error params, behind input_reference.
    const bad = await failure(
      client.post('/videos', {
        body: {
          model: MODEL,
          prompt: 'x',
          input_reference: { image_url: 'https://example.com/a.png' },
          reference_image_urls: ['ftp://example.com/b.png'],
        },
      }),
    );
    expect(bad).toMatchObject({ status: 400, param: 'reference_image_urls[0]' });
    const insecure = await failure(
      client.post('/videos', {
        body: { model: MODEL, prompt: 'x', input_reference: { image_url: 'http://example.com/a.png' } },
      }),
    );
    expect(insecure).toMatchObject({ status: 400, param: 'input_reference' });
    // The default model needs an image or a clip: the whole-input rule is reported on input_reference.
    const none = await failure(client.videos.create({ prompt: 'no references' }));
    expect(none).toMatchObject({ status: 400, param: 'input_reference', code: 'invalid_input' });
  });

  it('lists with the SDK auto-pagination: every video once, newest first; asc on request', async () => {
    const { accountId, apiKey } = await suite.t.account(5000);
    const client = clientFor(suite.t, apiKey);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const video = await client.videos.create({ model: MODEL, prompt: `scene ${i}`, seconds: '2' as never });
      ids.push(video.id);
      // Distinct creation milliseconds, so "newest first" is one order.
      const sent = Date.now();
      while (Date.now() === sent) await sleep(1);
    }
    const seen: string[] = [];
    for await (const video of client.videos.list({ limit: 2 })) seen.push(video.id);
    expect(seen).toEqual([...ids].reverse());

    const firstPage = await client.videos.list({ limit: 2 });
    expect(firstPage.data.map((v) => v.id)).toEqual([ids[4], ids[3]]);
    expect(firstPage.has_more).toBe(true);
    let pages = 0;
    for await (const page of firstPage.iterPages()) {
      pages++;
      expect(page.data.length).toBeLessThanOrEqual(2);
    }
    expect(pages).toBe(3);

    const ascending: string[] = [];
    for await (const video of client.videos.list({ limit: 2, order: 'asc' })) ascending.push(video.id);
    expect(ascending).toEqual(ids);

    const raw = await suite.t.call('GET', `/v1/videos?limit=2&after=${ids[4]}`, { key: apiKey });
    expect(raw.status).toBe(200);
    expect(raw.body).toMatchObject({ object: 'list', first_id: ids[3], last_id: ids[2], has_more: true });
    const tail = await suite.t.call('GET', `/v1/videos?limit=100&after=${ids[1]}`, { key: apiKey });
    expect(tail.body).toEqual({
      object: 'list',
      data: [expect.objectContaining({ id: ids[0] })],
      first_id: ids[0],
      last_id: ids[0],
      has_more: false,
    });

    // Another key of the same account sees none of them.
    const sibling = await suite.t.siblingKey(accountId);
    const empty = await clientFor(suite.t, sibling).videos.list();
    expect(empty.data).toEqual([]);
    expect(empty.has_more).toBe(false);
  });

  it('lists the models in the OpenAI shape', async () => {
    const { apiKey } = await suite.t.account(0);
    const models = [];
    for await (const model of clientFor(suite.t, apiKey).models.list()) models.push(model);
    expect(models.map((m) => m.id).sort()).toEqual([...catalogue.keys()].sort());
    for (const model of models) {
      expect(model).toEqual({
        id: model.id,
        object: 'model',
        created: 0,
        owned_by: catalogue.get(model.id)!.info.vendor,
      });
    }
  });

  it('reports a failed generation as status failed with error {code, message}', async () => {
    const { accountId, apiKey } = await suite.t.account(1000);
    const client = clientFor(suite.t, apiKey);
    const created = await client.videos.create({ model: MODEL, prompt: `a storm ${FAIL}` });
    const done = await untilFinished(client, created.id);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('generation_failed');
    expect(done.error?.message).toMatch(/^Content policy violation/);
    await expect(client.videos.downloadContent(created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await suite.t.wallet(accountId)).available).toBe(1000);
  });

  describe('errors as the SDK classes them', () => {
    it('400 BadRequestError names the field: size, seconds, pass-through fields, model', async () => {
      const { accountId, apiKey } = await suite.t.account(1000);
      const client = clientFor(suite.t, apiKey);

      const size = await failure(client.videos.create({ model: MODEL, prompt: 'x', size: '1234x567' as never }));
      expect(size).toBeInstanceOf(BadRequestError);
      expect(size).toMatchObject({ status: 400, param: 'size', code: 'invalid_input', type: 'invalid_request_error' });
      expect(size.message).toContain('1280x720');
      expect(size.requestID).toMatch(/^req_/);

      // Not a whole number, and out of the model's range: both named by the field sent, `seconds`.
      const word = await failure(client.videos.create({ model: MODEL, prompt: 'x', seconds: 'eight' as never }));
      expect(word).toBeInstanceOf(BadRequestError);
      expect(word.param).toBe('seconds');
      const range = await failure(client.videos.create({ model: MODEL, prompt: 'x', seconds: '12' }));
      expect(range).toBeInstanceOf(BadRequestError);
      expect(range.param).toBe('seconds');
      expect(range.message).toBe('400 seconds must be at most 10.');
      const json = await failure(client.post('/videos', { body: { model: MODEL, prompt: 'x', seconds: '99' } }));
      expect(json).toMatchObject({ status: 400, param: 'seconds' });

      const seed = await failure(
        client.videos.create({ model: MODEL, prompt: 'x', seed: 'abc' } as OpenAI.Videos.VideoCreateParams),
      );
      expect(seed).toMatchObject({ status: 400, param: 'seed' });
      const unknown = await failure(
        client.videos.create({ model: MODEL, prompt: 'x', colour: 'red' } as OpenAI.Videos.VideoCreateParams),
      );
      expect(unknown).toMatchObject({ status: 400, param: 'colour' });
      const both = await failure(
        client.videos.create({
          model: MODEL,
          prompt: 'x',
          seconds: '5',
          duration_seconds: 5,
        } as unknown as OpenAI.Videos.VideoCreateParams),
      );
      expect(both).toMatchObject({ status: 400, param: 'duration_seconds' });
      const model = await failure(client.videos.create({ model: 'no/such-model/reference-to-video', prompt: 'x' }));
      expect(model).toMatchObject({ status: 400, param: 'model', code: 'unknown_model' });

      // The language rules of the main API; codes never change.
      const german = await failure(
        client.videos.create(
          { model: MODEL, prompt: 'x', size: '1234x567' as never },
          { headers: { 'Accept-Language': 'de-DE' } },
        ),
      );
      expect(german).toMatchObject({ status: 400, param: 'size', code: 'invalid_input' });
      expect(german.message).toContain('Größe');

      expect(await suite.t.wallet(accountId)).toMatchObject({ available: 1000, held: 0 });
    });

    it('401 AuthenticationError for a bad key and for a key in the query string', async () => {
      const { apiKey } = await suite.t.account(10);
      const bad = await failure(clientFor(suite.t, 'sk-service-not-a-real-key').videos.list());
      expect(bad).toBeInstanceOf(AuthenticationError);
      expect(bad.code).toBe('unauthorized');
      const inQuery = await failure(clientFor(suite.t, apiKey).models.list({ query: { api_key: apiKey } }));
      expect(inQuery).toBeInstanceOf(AuthenticationError);
      expect(inQuery.code).toBe('key_in_query');
    });

    it("404 NotFoundError for an unknown id and for another key's video", async () => {
      const owner = await suite.t.account(1000);
      const stranger = await suite.t.account(1000);
      const video = await clientFor(suite.t, owner.apiKey).videos.create({ model: MODEL, prompt: 'mine' });
      const client = clientFor(suite.t, stranger.apiKey);
      // Made one at a time: a promise created early could reject before anything awaits it.
      const calls = [
        () => client.videos.retrieve('task_doesnotexist'),
        () => client.videos.retrieve(video.id),
        () => client.videos.delete(video.id),
        () => client.videos.downloadContent(video.id),
      ];
      for (const call of calls) {
        const error = await failure(call());
        expect(error).toBeInstanceOf(NotFoundError);
        expect(error.param).toBe('video_id');
      }
      const sibling = await suite.t.siblingKey(owner.accountId);
      expect(await failure(clientFor(suite.t, sibling).videos.retrieve(video.id))).toBeInstanceOf(NotFoundError);
    });

    it('402 is an APIError with status 402 (the SDK has no subclass for it)', async () => {
      const { apiKey } = await suite.t.account(1);
      const error = await failure(clientFor(suite.t, apiKey).videos.create({ model: MODEL, prompt: 'too expensive' }));
      expect(error.constructor).toBe(APIError);
      expect(error).toMatchObject({ status: 402, code: 'insufficient_credits', type: 'insufficient_quota' });
    });

    it('400 for an unfinished video: delete; 404 for its content', async () => {
      const { apiKey } = await suite.slow.account(1000);
      const client = clientFor(suite.slow, apiKey);
      const video = await client.videos.create({ model: MODEL, prompt: 'slow' });
      expect(['queued', 'in_progress']).toContain((await client.videos.retrieve(video.id)).status);
      const deletion = await failure(client.videos.delete(video.id));
      expect(deletion).toBeInstanceOf(BadRequestError);
      expect(deletion).toMatchObject({ code: 'task_not_finished', param: 'video_id' });
      expect(await failure(client.videos.downloadContent(video.id))).toBeInstanceOf(NotFoundError);
    });

    it('429 RateLimitError past the rate limit', async () => {
      const limited = await startTestService({ rateLimitPerMinute: 2 });
      try {
        const { apiKey } = await limited.account(0);
        const client = clientFor(limited, apiKey);
        await client.models.list();
        await client.models.list();
        const error = await failure(client.models.list());
        expect(error).toBeInstanceOf(RateLimitError);
        expect(error.headers?.get('retry-after')).toMatch(/^\d+$/);
      } finally {
        await limited.close();
      }
    });
  });

  describe('billing and Idempotency-Key, as on createTask', () => {
    it('moves the balance identically through /v1/videos and /api/v1/jobs/createTask', async () => {
      const viaCompat = await suite.t.account(1000);
      const viaMain = await suite.t.account(1000);
      const video = await clientFor(suite.t, viaCompat.apiKey).videos.create({
        model: MODEL,
        prompt: 'a harbour at dawn',
        seconds: '8',
        size: '1280x720',
      });
      const task = await suite.t.call('POST', '/api/v1/jobs/createTask', {
        key: viaMain.apiKey,
        body: {
          model: MODEL,
          input: { prompt: 'a harbour at dawn', duration_seconds: 8, aspect_ratio: '16:9', resolution: '720p' },
        },
      });
      expect(task.status).toBe(202);
      const compatRecord = await waitForTerminal(suite.t, viaCompat.apiKey, video.id);
      const mainRecord = await waitForTerminal(suite.t, viaMain.apiKey, task.body.data.taskId);
      for (const field of ['state', 'credits', 'cost', 'estimatedCredits', 'maxCredits', 'settled', 'input'])
        expect(compatRecord[field]).toEqual(mainRecord[field]);

      const [compatHold] = await holds(suite.t, viaCompat.accountId);
      const [mainHold] = await holds(suite.t, viaMain.accountId);
      expect(compatHold.amount).toBe(mainHold.amount);
      expect(compatHold.amount).toBeGreaterThan(0);
      expect(compatHold.charged).toBe(mainHold.charged);
      expect(compatHold.state).toBe('settled');
      const compatWallet = await suite.t.wallet(viaCompat.accountId);
      expect(compatWallet).toEqual(await suite.t.wallet(viaMain.accountId));
      expect(compatWallet.available).toBe(1000 - compatHold.charged!);
      await checkLedger(suite.t.service, viaCompat.accountId);
      await checkLedger(suite.t.service, viaMain.accountId);
    });

    it('replays the same video for the same key, holding once, in the same key space as createTask', async () => {
      const { accountId, apiKey } = await suite.slow.account(1000);
      const client = clientFor(suite.slow, apiKey);
      const params = {
        model: MODEL,
        prompt: 'a kite over the dunes',
        seconds: '6',
        size: '1280x720',
      } as unknown as OpenAI.Videos.VideoCreateParams;
      const first = await client.videos.create(params, { headers: { 'Idempotency-Key': 'order-7' } });
      const { data: again, response } = await client.videos
        .create(params, { headers: { 'Idempotency-Key': 'order-7' } })
        .withResponse();
      expect(again.id).toBe(first.id);
      expect(response.headers.get('idempotent-replayed')).toBe('true');
      // The same key and request through the main API is the same task too.
      const main = await suite.slow.call('POST', '/api/v1/jobs/createTask', {
        key: apiKey,
        headers: { 'Idempotency-Key': 'order-7' },
        body: {
          model: MODEL,
          input: { prompt: 'a kite over the dunes', duration_seconds: 6, aspect_ratio: '16:9', resolution: '720p' },
        },
      });
      expect(main.body.data.taskId).toBe(first.id);
      const held = await holds(suite.slow, accountId);
      expect(held).toHaveLength(1);
      expect(await suite.slow.wallet(accountId)).toMatchObject({
        held: held[0].amount,
        available: 1000 - held[0].amount,
      });

      // The same key for another request: 409, and the SDK is told not to retry it.
      const conflict = await failure(
        client.videos.create({ ...params, prompt: 'something else' }, { headers: { 'Idempotency-Key': 'order-7' } }),
      );
      expect(conflict).toBeInstanceOf(ConflictError);
      expect(conflict.code).toBe('idempotency_mismatch');
      expect(conflict.headers?.get('x-should-retry')).toBe('false');

      // An uploaded file gets a fresh signed link per request; the replay still matches.
      const localUrl = suite.slow.config.publicUrl;
      suite.slow.config.publicUrl = 'https://media.mediaforge.test';
      try {
        const file = async () => toFile(tinyPng(), 'ref.png', { type: 'image/png' });
        const upload1 = await client.videos.create(
          { model: MODEL, prompt: 'character1 smiles', input_reference: await file() },
          { headers: { 'Idempotency-Key': 'upload-1' } },
        );
        // A later link expiry, so the second request's link differs for sure.
        suite.slow.config.taskDeadlineMs += 3_600_000;
        const upload2 = await client.videos.create(
          { model: MODEL, prompt: 'character1 smiles', input_reference: await file() },
          { headers: { 'Idempotency-Key': 'upload-1' } },
        );
        expect(upload2.id).toBe(upload1.id);
      } finally {
        suite.slow.config.publicUrl = localUrl;
        suite.slow.config.taskDeadlineMs -= 3_600_000;
      }
      expect(await holds(suite.slow, accountId)).toHaveLength(2);
      await checkLedger(suite.slow.service, accountId);
    });
  });
});
