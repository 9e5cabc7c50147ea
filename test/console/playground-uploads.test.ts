// @store-suite: the playground's uploads are streamed to the store (vitest.config.ts runs it on the local and the S3 store).
/**
 * POST /playground/api/uploads over real HTTP: session and CSRF, the field's kind, the size cap,
 * types from the declared header and from the bytes, the storage plan of the user's purchases (with
 * the playground's allowance for a user who bought nothing), and
 * the service:// reference the playground (and only the playground) can then use.
 */
import { storedRows } from '../support/stored-rows.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORAGE_UNLOCK_CREDITS } from '../../generated/storage-plans.js';
import { codeMessage } from '../../generated/errors.js';
import { addCredits } from '../../runtime/accounts/accounts.js';
import { png, wav } from '../../support/media/fixtures.js';
import { UNLOCKED } from '../files/support.js';
import { startTestService, type TestService } from '../support/service.js';
import { signUp, type ConsoleUser } from './support.js';

const MODEL = 'vendor_d/family_d/reference-to-video';
const CAP = 1_000_000;

describe('playground uploads', () => {
  let t: TestService;
  let user: ConsoleUser;
  let ids: { account_id: string; playground_account_id: string };

  beforeAll(async () => {
    t = await startTestService({ uploadMaxBytes: CAP });
    user = await signUp(t, 'uploader@example.com');
    ids = await t.service.ctx.db.kysely
      .selectFrom('users')
      .select(['account_id', 'playground_account_id'])
      .where('email', '=', 'uploader@example.com')
      .executeTakeFirstOrThrow();
    // The user's own purchases (on the API account) unlock the playground library's plan.
    await addCredits(t.service.ctx.db, ids.account_id, UNLOCKED, Date.now());
  });
  afterAll(async () => t?.close());

  async function upload(
    who: ConsoleUser | undefined,
    bytes: Uint8Array,
    options: { type?: string; name?: string; field?: string; csrf?: string | null } = {},
  ) {
    const headers: Record<string, string> = {
      'content-type': options.type ?? 'image/png',
      'x-file-name': encodeURIComponent(options.name ?? 'ref.png'),
    };
    if (who) headers.cookie = who.cookie;
    const csrf = options.csrf === undefined ? who?.csrf : options.csrf;
    if (csrf) headers['x-csrf-token'] = csrf;
    const query = new URLSearchParams({ model: MODEL, field: options.field ?? 'reference_image_urls' });
    const response = await fetch(`${t.url}/playground/api/uploads?${query}`, {
      method: 'POST',
      headers,
      body: new Uint8Array(bytes),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  const uploadRows = () => storedRows(t, 'uploads', { account_id: ids.playground_account_id });
  const assetRows = () => storedRows(t, 'assets', { account_id: ids.playground_account_id });

  it('refuses without a session (401) and without the right X-CSRF-Token (403); nothing is stored', async () => {
    expect((await upload(undefined, png(400, 600, false))).status).toBe(401);
    const missing = await upload(user, png(400, 600, false), { csrf: null });
    expect(missing.status).toBe(403);
    expect(missing.body.data.reason).toBe('csrf');
    expect((await upload(user, png(400, 600, false), { csrf: 'not-the-token' })).status).toBe(403);
    expect(await uploadRows()).toEqual([]);
  });

  it('refuses a file above the size cap before taking it: 400 40001 on size', async () => {
    const big = Buffer.concat([png(64, 64, false), Buffer.alloc(CAP)]);
    const r = await upload(user, big);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(40001);
    expect(r.body.data.errors[0]).toMatchObject({ path: 'size', rule: 'maximum' });
    expect(await uploadRows()).toEqual([]);
  });

  it('refuses the wrong type: not an accepted type, another kind than the field takes, or bytes that are not what they claim (40011)', async () => {
    const zip = await upload(user, Buffer.from('PK\u0003\u0004 not really a zip'), {
      type: 'application/zip',
      name: 'a.zip',
    });
    expect([zip.status, zip.body.code]).toEqual([400, 40011]);
    const audioIntoImages = await upload(user, wav(1), { type: 'audio/wav', name: 'voice.wav' });
    expect([audioIntoImages.status, audioIntoImages.body.code]).toEqual([400, 40011]);
    expect(await uploadRows()).toEqual([]); // refused before a ticket was made
    const lying = await upload(user, Buffer.from('just some text, not a picture'), {
      type: 'image/png',
      name: 'fake.png',
    });
    expect([lying.status, lying.body.code]).toEqual([400, 40011]);
    expect((await uploadRows()).map((u) => u.state)).toEqual(['failed']);
    expect(await assetRows()).toEqual([]);
    const unknownField = await upload(user, png(400, 600, false), { field: 'prompt' });
    expect([unknownField.status, unknownField.body.code, unknownField.body.data.param]).toEqual([400, 40008, 'field']);
  });

  it('stores a PNG in the playground library; its service:// reference quotes and runs in the playground only', async () => {
    const r = await upload(user, png(400, 600, false), { name: 'Fox, front.png' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({
      kind: 'image',
      format: 'png',
      width: 400,
      height: 600,
      name: 'Fox, front.png',
      source: 'upload',
    });
    const uri = r.body.data.uri as string;
    expect(uri).toMatch(/^service:\/\/a\/a_/);
    expect(await assetRows()).toHaveLength(1);
    const input = { prompt: 'Picture 1 walks along a beach', reference_image_urls: [uri] };
    const quote = await user.call('POST', '/playground/api/quote', { model: MODEL, input });
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    const task = await user.call('POST', '/playground/api/tasks', { model: MODEL, input });
    expect(task.status, JSON.stringify(task.body)).toBe(200);
    // The user's API keys reach the API account's library, not the playground's.
    const key = (await user.call('POST', '/console/api/keys', {})).body.data.apiKey as string;
    const viaApi = await t.call('POST', '/api/v1/jobs/quote', { key, body: { model: MODEL, input } });
    expect(viaApi.status).toBe(400);
    expect(viaApi.body.data.errors[0]).toMatchObject({ path: 'input.reference_image_urls[0]', rule: 'asset' });
  });

  it('a user without purchases uploads into the playground allowance; the API library stays locked (403 40302, in the account language)', async () => {
    const poor = await signUp(t, 'poor@example.com');
    expect((await poor.call('POST', '/console/api/settings', { language: 'de' })).status).toBe(200);
    const r = await upload(poor, png(400, 600, false));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.uri).toMatch(/^service:\/\/a\/a_/);
    // The allowance is the playground's only: the same user's API key meets the plan of their purchases.
    const key = (await poor.call('POST', '/console/api/keys', {})).body.data.apiKey as string;
    const ticket = await t.call('POST', '/api/v1/common/upload-url', {
      key,
      body: { fileName: 'ref.png', contentType: 'image/png', size: 1000 },
    });
    expect(ticket.status).toBe(403);
    expect(ticket.body.code).toBe(40302);
    // The 30 free credits are a grant, not a purchase: nothing purchased so far.
    expect(ticket.body.msg).toBe(
      codeMessage('storage_locked', 'de', { threshold: STORAGE_UNLOCK_CREDITS, purchased: 0 }),
    );
    expect(ticket.body.msg).toContain(`${STORAGE_UNLOCK_CREDITS} Credits`);
  });
});
