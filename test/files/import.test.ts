// @store-suite: imported media is streamed into the store (vitest.config.ts runs it on the local and the S3 store).
import { storedRow } from '../support/stored-rows.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReferencesBeforeRun } from '../../runtime/assets/run-check.js';
import type { TaskRow } from '../../runtime/tasks/task-record.js';
import { createTask, expectError, expectOk } from '../http/helpers.js';
import { startTestService, type TestService } from '../support/service.js';
import { png, safetensors } from '../../support/media/fixtures.js';
import { UNLOCKED, upload } from './support.js';

const LORA_MODEL = 'vendor_d/family_d-lora/reference-to-video';
const FAMILY_C3 = 'vendor_b/family_c-3.0/reference-to-video';

/** A loopback file server (the test-only allow switches let the service reach it over http). */
async function fileServer() {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const send = (status: number, body: Buffer | string, headers: Record<string, string> = {}) =>
      res.writeHead(status, headers).end(body);
    switch (new URL(req.url ?? '/', 'http://x').pathname) {
      case '/models/style.safetensors':
        return send(200, safetensors(), { 'content-type': 'application/octet-stream' });
      case '/big.safetensors':
        return send(200, Buffer.concat([safetensors(), Buffer.alloc(20_000)]));
      case '/hop.safetensors':
        return send(302, '', { location: '/models/style.safetensors' });
      case '/picture.safetensors':
        return send(200, png(40, 40, false));
      case '/small.png':
        return send(200, png(200, 200, false), { 'content-type': 'image/png' });
      case '/fine.png':
        return send(200, png(320, 240, false), { 'content-type': 'image/png' });
      default:
        return send(404, 'not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('POST /files/import through the SSRF guard, without the allow switches', () => {
  let t: TestService;
  let apiKey: string;
  let files: Awaited<ReturnType<typeof fileServer>>;
  const warnings: Record<string, unknown>[] = [];
  beforeAll(async () => {
    t = await startTestService();
    expect(t.config).toMatchObject({ webhookAllowPrivate: false, webhookAllowInsecure: false });
    ({ apiKey } = await t.account(UNLOCKED));
    files = await fileServer();
    const log = t.service.ctx.log;
    t.service.ctx.log = {
      ...log,
      info: () => {},
      error: () => {},
      warn: (obj: unknown) => void warnings.push(obj as Record<string, unknown>),
    } as typeof log;
  });
  afterAll(async () => {
    await t?.close();
    await files?.close();
  });

  it.each([
    'https://127.0.0.1/style.safetensors',
    'https://localhost/style.safetensors',
    'https://[::1]/style.safetensors',
    'https://169.254.169.254/latest.safetensors',
    'https://10.1.2.3/style.safetensors',
  ])('%s is refused before connecting: 400 40017', async (url) => {
    warnings.length = 0;
    const r = await t.call('POST', '/api/v1/files/import', { key: apiKey, body: { url } });
    expectError(r, 400, 40017);
    expect(r.body.msg).toBe('The file could not be imported from the link.');
    expect(warnings).toEqual([expect.objectContaining({ reason: 'blocked' })]);
  });

  it('a loopback server on another port is out of reach too (https on 443 only); plain http does not match the contract', async () => {
    const url = `${files.base.replace('http:', 'https:')}/models/style.safetensors`;
    expectError(await t.call('POST', '/api/v1/files/import', { key: apiKey, body: { url } }), 400, 40017);
    const plain = await t.call('POST', '/api/v1/files/import', {
      key: apiKey,
      body: { url: `${files.base}/models/style.safetensors` },
    });
    expectError(plain, 400, 40001);
    expect(plain.body.data.errors).toEqual([
      { path: 'url', rule: 'pattern', message: 'url is not in the expected format.' },
    ]);
    expect(files.requests).toEqual([]);
  });

  it('a link that is not a .safetensors file: 400 40001', async () => {
    const r = await t.call('POST', '/api/v1/files/import', {
      key: apiKey,
      body: { url: 'https://example.com/model.ckpt' },
    });
    expectError(r, 400, 40001);
  });
});

describe('POST /files/import from a loopback receiver (test-only allow switches)', () => {
  let t: TestService;
  let apiKey: string;
  let accountId: string;
  let files: Awaited<ReturnType<typeof fileServer>>;
  beforeAll(async () => {
    t = await startTestService({ webhookAllowPrivate: true, webhookAllowInsecure: true, importMaxBytes: 10_000 });
    ({ apiKey, accountId } = await t.account(UNLOCKED));
    files = await fileServer();
  });
  afterAll(async () => {
    await t?.close();
    await files?.close();
  });

  it('imports a LoRA as an asset of kind lora, usable in loras[].path', async () => {
    const r = await t.call('POST', '/api/v1/files/import', {
      key: apiKey,
      body: { url: `${files.base}/models/style.safetensors` },
    });
    expectOk(r);
    const asset = r.body.data;
    expect(asset).toMatchObject({
      kind: 'lora',
      format: 'safetensors',
      name: 'style.safetensors',
      bytes: safetensors().length,
      uri: `service://a/${asset.assetId}`,
      preview: null,
      source: 'import',
    });
    const named = await t.call('POST', '/api/v1/files/import', {
      key: apiKey,
      body: { url: `${files.base}/models/style.safetensors?v=2`, name: 'Watercolour' },
    });
    expect(named.body.data.name).toBe('Watercolour');
    const created = await createTask(t, apiKey, {
      model: LORA_MODEL,
      input: { prompt: 'a watercolour harbour', loras: [{ path: asset.uri, scale: 0.8 }] },
    });
    expectOk(created, 202);
    // Another account's LoRA, or an image where a LoRA belongs, is refused at acceptance.
    const stranger = await t.account(UNLOCKED);
    const foreign = await createTask(t, stranger.apiKey, {
      model: LORA_MODEL,
      input: { prompt: 'p', loras: [{ path: asset.uri }] },
    });
    expectError(foreign, 400, 40001);
    expect(foreign.body.data.errors).toEqual([
      {
        path: 'input.loras[0].path',
        rule: 'asset',
        message: 'input.loras[0].path names an asset that does not exist in your library.',
      },
    ]);
    const image = (await upload(t, apiKey, png(300, 300, false), 'image/png', 'x.png')).asset;
    const wrong = await createTask(t, apiKey, {
      model: LORA_MODEL,
      input: { prompt: 'p', loras: [{ path: image.uri }] },
    });
    expectError(wrong, 400, 40001);
    expect(wrong.body.data.errors[0]).toMatchObject({ path: 'input.loras[0].path', rule: 'kind' });
    await t.checkLedger(accountId);
  });

  it('a redirect is not followed; a 404, a file over the cap: 400 40017; bytes that are not safetensors: 400 40011', async () => {
    files.requests.length = 0;
    for (const path of ['/hop.safetensors', '/gone.safetensors', '/big.safetensors']) {
      const r = await t.call('POST', '/api/v1/files/import', { key: apiKey, body: { url: `${files.base}${path}` } });
      expectError(r, 400, 40017);
    }
    expect(files.requests).toEqual(['/hop.safetensors', '/gone.safetensors', '/big.safetensors']);
    const picture = await t.call('POST', '/api/v1/files/import', {
      key: apiKey,
      body: { url: `${files.base}/picture.safetensors` },
    });
    expectError(picture, 400, 40011);
  });

  it('locked storage is refused before anything is fetched: 403 40302', async () => {
    const poor = await t.account(100);
    files.requests.length = 0;
    expectError(
      await t.call('POST', '/api/v1/files/import', {
        key: poor.apiKey,
        body: { url: `${files.base}/models/style.safetensors` },
      }),
      403,
      40302,
    );
    expect(files.requests).toEqual([]);
  });

  it('during generation an external image is fetched, probed and held to the model limits', async () => {
    const key = await storedRow(t, 'api_keys', { account_id: accountId });
    const task = (urls: string[]) =>
      ({
        id: 'task_x',
        account_id: accountId,
        api_key_id: key.id,
        model: FAMILY_C3,
        input_json: JSON.stringify({ reference_image_urls: urls }),
      }) as TaskRow;
    expect(await checkReferencesBeforeRun(t.service.ctx, task([`${files.base}/fine.png`]))).toBeUndefined();
    expect(
      await checkReferencesBeforeRun(t.service.ctx, task([`${files.base}/fine.png`, `${files.base}/small.png`])),
    ).toEqual({
      code: 'reference_invalid',
      detail: 'input.reference_image_urls[1] is 200x200 px; each side must be between 240 and 8000 px.',
    });
    expect(await checkReferencesBeforeRun(t.service.ctx, task([`${files.base}/missing.png`]))).toMatchObject({
      code: 'reference_unreachable',
    });
  });
});
