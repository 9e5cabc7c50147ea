/**
 * A real Chromium (test/support/system-browser.ts) plays a finished task's video from its signed
 * link in a `<video>` element and seeks to the middle. The page and the link are served through a
 * loopback proxy of the test's own, which records every media answer: the player asks for ranges
 * and gets 206s (Chromium, like Safari, relies on them to seek without downloading again: with the
 * media links of before, which ignored Range, the same seek left the video at 0 s).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, expectOk } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { launchBrowser } from '../support/browser.js';

const MODEL = 'vendor_d/family_d/text-to-video';

interface Seen {
  range: string | undefined;
  status: number;
  contentRange: string | undefined;
}

/** Serves /player.html (a `<video>` of `src`) and forwards every other request to `target`, recording the media answers. */
async function recordingProxy(target: string, player: () => string) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/player.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(player());
    }
    const upstream = http.request(
      `${target}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (answer) => {
        if (req.url?.startsWith('/api/v1/media/'))
          seen.push({
            range: req.headers.range,
            status: answer.statusCode ?? 0,
            contentRange: answer.headers['content-range'],
          });
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    seen,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a finished video plays and seeks in a browser through its signed link', () => {
  let t: TestService;
  let browser: Browser;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let mediaPath = '';

  beforeAll(async () => {
    t = await startTestService();
    proxy = await recordingProxy(
      t.url,
      () => `<!doctype html><video id="v" muted playsinline preload="auto" src="${mediaPath}"></video>`,
    );
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await t?.close();
  });

  it('loads with a range request answered 206 and seeks to the middle', async () => {
    const { apiKey } = await t.account(1_000);
    const created = await createTask(t, apiKey, {
      model: MODEL,
      input: { prompt: 'a lighthouse at dusk, waves rolling in', duration_seconds: 5 },
    });
    expectOk(created, 202);
    const done = await waitForTerminal(t, apiKey, created.body.data.taskId, 20_000);
    expect(done.state).toBe('succeeded');
    const link = new URL(done.output.assets[0].url);
    mediaPath = `${link.pathname}${link.search}`;

    const page = await browser.newPage();
    try {
      await page.goto(`${proxy.base}/player.html`);
      const played = await page.locator('#v').evaluate(async (el: HTMLVideoElement) => {
        const once = (event: string) => new Promise((resolve) => el.addEventListener(event, resolve, { once: true }));
        if (el.readyState < 1) await once('loadedmetadata');
        const middle = el.duration / 2;
        const seeked = once('seeked');
        el.currentTime = middle;
        await seeked;
        if (el.readyState < 2) await once('loadeddata');
        await el.play();
        // Chromium treats a source whose server does not answer ranges as a stream: seekable to 0 only.
        const seekableEnd = el.seekable.length ? el.seekable.end(el.seekable.length - 1) : 0;
        return {
          duration: el.duration,
          middle,
          at: el.currentTime,
          readyState: el.readyState,
          seekableEnd,
          error: el.error?.code,
        };
      });
      expect(played.error).toBeUndefined();
      expect(played.duration).toBe(5);
      expect(played.at).toBeGreaterThanOrEqual(played.middle);
      expect(played.readyState).toBeGreaterThanOrEqual(2);
      expect(played.seekableEnd).toBe(5);
    } finally {
      await page.close();
    }

    // The player asked for ranges and every media answer was a 206 with its Content-Range.
    const size = (await t.call('HEAD', mediaPath)).headers.get('content-length');
    expect(proxy.seen.length).toBeGreaterThan(0);
    for (const answer of proxy.seen) {
      expect(answer.range).toMatch(/^bytes=\d+-\d*$/);
      expect(answer.status).toBe(206);
      expect(answer.contentRange).toMatch(new RegExp(`^bytes \\d+-\\d+/${size}$`));
    }
  }, 60_000);
});
