import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { png } from '../../support/media/fixtures.js';
import { checkLedger, startTestService, waitForTerminal, type TestService } from '../support/service.js';

/**
 * The reference image uploaded with POST /v1/videos (a file part, or a data: URL in JSON) lives
 * exactly as long as the video it was sent for: a refused request keeps nothing, a replay keeps
 * nothing more, and deleting or purging the video removes it (its signed link then answers 404),
 * without touching another video made from the same image. On the local blob directory and on the
 * database blob store.
 */
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';
/** Model inputs take https links only: the service is "published" at an https address; links are fetched from the local listener. */
const PUBLIC = 'https://media.mediaforge.test';

type Fields = Record<string, string>;
type Upload = { as: 'file' | 'data-url'; image?: Buffer };

/** A createVideo request carrying an image: multipart with a file part, or JSON with a data: URL. */
function videoRequest(
  fields: Fields,
  upload: Upload = { as: 'file' },
): { body: FormData | string; headers: Record<string, string> } {
  const image = upload.image ?? png(2, 2, false);
  if (upload.as === 'data-url') {
    const body = JSON.stringify({
      ...fields,
      input_reference: { image_url: `data:image/png;base64,${image.toString('base64')}` },
    });
    return { body, headers: { 'content-type': 'application/json' } };
  }
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('input_reference', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'ref.png');
  return { body: form, headers: {} };
}

for (const blobStore of ['local', 'database'] as const) {
  describe(`uploaded references of /v1/videos (${blobStore} blob store)`, () => {
    let t: TestService;
    beforeAll(async () => {
      t = await startTestService({ blobStore });
      t.config.publicUrl = PUBLIC;
    });
    afterAll(async () => {
      await t?.close();
    });

    /** Stored upload objects: files under the blob directory's uploads/, or rows of the blobs table. */
    async function storedUploads(): Promise<number> {
      if (blobStore === 'local') {
        const dir = join(t.config.dataDir, 'blobs', 'uploads');
        return existsSync(dir) ? readdirSync(dir).length : 0;
      }
      const rows = await t.service.ctx.db.kysely
        .selectFrom('blobs')
        .select('key')
        .where('key', 'like', 'uploads/%')
        .execute();
      return rows.length;
    }

    async function create(apiKey: string, fields: Fields, upload?: Upload, headers: Record<string, string> = {}) {
      const request = videoRequest({ model: MODEL, ...fields }, upload);
      const response = await fetch(`${t.url}/v1/videos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, ...request.headers, ...headers },
        body: request.body,
      });
      return { status: response.status, body: (await response.json()) as any };
    }

    /** The signed link the task's input holds for its uploaded reference, as a local path. */
    async function referenceLink(apiKey: string, videoId: string): Promise<string> {
      const record = await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${videoId}`, { key: apiKey });
      const [link] = record.body.data.input.reference_image_urls as string[];
      expect(link.startsWith(`${PUBLIC}/api/v1/media/uploads%2F`)).toBe(true);
      return link.slice(PUBLIC.length);
    }
    const linkStatus = async (path: string) => (await fetch(`${t.url}${path}`)).status;

    it.each<
      [
        string,
        {
          given: { credits: number; fields: Fields; upload: Upload; idempotencyKey?: string; first?: Fields };
          want: { status: number; param: string | null };
        },
      ]
    >([
      [
        'seconds outside the model range (file)',
        {
          given: { credits: 1000, fields: { prompt: 'a cat', seconds: '99' }, upload: { as: 'file' } },
          want: { status: 400, param: 'seconds' },
        },
      ],
      [
        'seconds outside the model range (data: URL)',
        {
          given: { credits: 1000, fields: { prompt: 'a cat', seconds: '99' }, upload: { as: 'data-url' } },
          want: { status: 400, param: 'seconds' },
        },
      ],
      [
        'a size the model does not make',
        {
          given: { credits: 1000, fields: { prompt: 'a cat', size: '1234x567' }, upload: { as: 'file' } },
          want: { status: 400, param: 'size' },
        },
      ],
      [
        'an unknown model field',
        {
          given: { credits: 1000, fields: { prompt: 'a cat', colour: 'red' }, upload: { as: 'file' } },
          want: { status: 400, param: 'colour' },
        },
      ],
      [
        'no credits (file)',
        {
          given: { credits: 0, fields: { prompt: 'a cat' }, upload: { as: 'file' } },
          want: { status: 402, param: null },
        },
      ],
      [
        'no credits (data: URL)',
        {
          given: { credits: 0, fields: { prompt: 'a cat' }, upload: { as: 'data-url' } },
          want: { status: 402, param: null },
        },
      ],
      [
        'an Idempotency-Key reused for another request',
        {
          given: {
            credits: 1000,
            fields: { prompt: 'a dog' },
            upload: { as: 'file', image: png(3, 3, false) },
            idempotencyKey: 'reused-1',
            first: { prompt: 'a cat' },
          },
          want: { status: 409, param: 'Idempotency-Key' },
        },
      ],
    ])('a refused request keeps nothing: %s', async (_name, { given, want }) => {
      const { accountId, apiKey } = await t.account(given.credits);
      const headers: Record<string, string> = given.idempotencyKey ? { 'idempotency-key': given.idempotencyKey } : {};
      if (given.first) {
        const first = await create(apiKey, given.first, { as: 'file' }, headers);
        expect(first.status).toBe(200);
        // Settled before the snapshot: the first video ending mid-test would move the wallet itself.
        await waitForTerminal(t, apiKey, first.body.id);
      }
      const objects = await storedUploads();
      const wallet = await t.wallet(accountId);

      const refused = await create(apiKey, given.fields, given.upload, headers);
      expect(refused.status).toBe(want.status);
      expect(refused.body.error).toMatchObject({ param: want.param });
      expect(await storedUploads()).toBe(objects);
      expect(await t.wallet(accountId)).toEqual(wallet);
      await checkLedger(t.service, accountId);
    });

    it('an idempotent replay answers the first video and stores nothing more', async () => {
      const { apiKey } = await t.account(1000);
      const headers = { 'idempotency-key': 'replay-1' };
      const first = await create(apiKey, { prompt: 'a cat' }, { as: 'file' }, headers);
      expect(first.status).toBe(200);
      const objects = await storedUploads();
      const replay = await create(apiKey, { prompt: 'a cat' }, { as: 'file' }, headers);
      expect(replay.status).toBe(200);
      expect(replay.body.id).toBe(first.body.id);
      expect(await storedUploads()).toBe(objects);
      expect(await linkStatus(await referenceLink(apiKey, first.body.id))).toBe(200);
    });

    it.each([
      [
        'DELETE /v1/videos/{id}',
        (t: TestService, key: string, id: string) => t.call('DELETE', `/v1/videos/${id}`, { key }),
      ],
      [
        'POST /api/v1/jobs/purge',
        (t: TestService, key: string, id: string) =>
          t.call('POST', '/api/v1/jobs/purge', { key, body: { taskId: id } }),
      ],
    ])("%s removes the video's reference; another video of the same image keeps its own", async (_name, destroy) => {
      const { apiKey } = await t.account(1000);
      const image = png(4, 4, false);
      const a = await create(apiKey, { prompt: 'a cat' }, { as: 'file', image });
      const b = await create(apiKey, { prompt: 'a cat, again' }, { as: 'file', image });
      expect([a.status, b.status]).toEqual([200, 200]);
      const [linkA, linkB] = [await referenceLink(apiKey, a.body.id), await referenceLink(apiKey, b.body.id)];
      expect(await linkStatus(linkA)).toBe(200);
      expect(await linkStatus(linkB)).toBe(200);
      await waitForTerminal(t, apiKey, a.body.id);
      const objects = await storedUploads();

      expect((await destroy(t, apiKey, a.body.id)).status).toBe(200);
      expect(await linkStatus(linkA)).toBe(404);
      expect(await storedUploads()).toBe(objects - 1);
      expect(await linkStatus(linkB)).toBe(200);
    });

    it('the retention purge removes the reference too', async () => {
      const { apiKey } = await t.account(1000);
      const video = await create(
        apiKey,
        { prompt: 'a cat' },
        { as: 'file', image: png(5, 5, false) },
        { 'x-service-retention': '1' },
      );
      expect(video.status).toBe(200);
      const link = await referenceLink(apiKey, video.body.id);
      expect(await linkStatus(link)).toBe(200);
      const objects = await storedUploads();
      await waitForTerminal(t, apiKey, video.body.id);
      // The worker purges one second after the task ended; a hang fails at the bound.
      const until = Date.now() + 15_000;
      while (
        (await t.call('GET', `/api/v1/jobs/recordInfo?taskId=${video.body.id}`, { key: apiKey })).body.data.purgedAt ==
        null
      ) {
        if (Date.now() > until) throw new Error('not purged within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await linkStatus(link)).toBe(404);
      expect(await storedUploads()).toBe(objects - 1);
    });
  });
}
