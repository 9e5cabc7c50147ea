/**
 * Media links on the S3 store (issue 29, item 2). The service's signed link stays the contract;
 * `redirect` (the S3 default) answers 302 to a presigned GET on the store that expires no later
 * than the link, `proxy` streams the bytes through the service. Either way the openai SDK's
 * downloadContent, @mediaforge/client's links and `curl -L` get the same bytes.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Mediaforge } from '@mediaforge/client';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../http/helpers.js';
import { startTestS3Server, type TestS3Server } from '../support/s3-server.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';

const run = promisify(execFile);
const MODEL = 'vendor_b/family_c-2.6/reference-to-video';

let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startTestS3Server();
});
afterAll(async () => s3?.close());

describe.each(['redirect', 'proxy'] as const)('media links on the S3 store, %s', (mediaLinks) => {
  let t: TestService;
  let apiKey: string;
  let videoId: string;
  let link: string;
  beforeAll(async () => {
    t = await startTestService({ ...s3.serviceOverrides(), mediaLinks });
    apiKey = (await t.account(100_000)).apiKey;
    const openai = new OpenAI({ apiKey, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const created = await openai.videos.create({
      model: MODEL,
      prompt: 'a lighthouse',
      seconds: '4',
      size: '1280x720',
    } as never);
    videoId = created.id;
    const record = await waitForTerminal(t, apiKey, videoId);
    expect(record.state).toBe('succeeded');
    link = record.output.assets[0].url;
  });
  afterAll(async () => t?.close());

  it(
    mediaLinks === 'redirect'
      ? 'answers 302 to the store, expiring no later than the link'
      : 'answers the bytes itself',
    async () => {
      const answer = await fetch(link, { redirect: 'manual' });
      const linkExpires = Number(new URL(link).searchParams.get('expires'));
      if (mediaLinks === 'redirect') {
        expect(answer.status).toBe(302);
        const location = new URL(answer.headers.get('location')!);
        expect(location.origin).toBe(s3.endpoint);
        const signedAt = Date.parse(
          location.searchParams
            .get('X-Amz-Date')!
            .replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'),
        );
        const storeExpires = signedAt / 1000 + Number(location.searchParams.get('X-Amz-Expires'));
        expect(storeExpires).toBeLessThanOrEqual(linkExpires);
        expect(storeExpires).toBeGreaterThan(linkExpires - 5);
        const fromStore = await fetch(location, { headers: { range: 'bytes=0-7' } });
        expect(fromStore.status).toBe(206);
        expect(fromStore.headers.get('content-type')).toBe('video/mp4');
      } else {
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-type')).toBe('video/mp4');
        const part = await fetch(link, { headers: { range: 'bytes=4-11' } });
        expect(part.status).toBe(206);
        const bytes = Buffer.from(await part.arrayBuffer());
        expect([bytes.length, bytes.subarray(0, 4).toString('latin1')]).toEqual([8, 'ftyp']);
      }
    },
  );

  it('gives the same bytes to fetch, curl -L, the openai SDK and @mediaforge/client', async () => {
    const viaFetch = Buffer.from(await (await fetch(link)).arrayBuffer());
    expect(viaFetch.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const curl = await run('curl', ['-sSfL', link], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
    expect(Buffer.compare(curl.stdout as Buffer, viaFetch)).toBe(0);
    const openai = new OpenAI({ apiKey, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const content = Buffer.from(await (await openai.videos.downloadContent(videoId)).arrayBuffer());
    expect(Buffer.compare(content, viaFetch)).toBe(0);
    const client = new Mediaforge({ apiKey, baseUrl: t.url });
    const urls = await client.files.downloadUrls(videoId);
    const fresh = JSON.stringify(urls).match(/https?:[^"]+\/api\/v1\/media\/[^"]+/)![0];
    expect(Buffer.compare(Buffer.from(await (await fetch(fresh)).arrayBuffer()), viaFetch)).toBe(0);
  });

  it('keeps the link contract: an altered link is 403 40305 and a purged task 404, the store never reached', async () => {
    const altered = link.replace(/sig=[^&]+/, 'sig=AAAA');
    const refused = await fetch(altered, { redirect: 'manual' });
    expect(refused.status).toBe(403);
    expect((await refused.json()).code).toBe(40305);
    expectOk(await t.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId: videoId } }));
    const gone = await fetch(link, { redirect: 'manual' });
    expect(gone.status).toBe(404);
  });
});
