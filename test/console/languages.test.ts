/**
 * The language of the pages and of the console's own messages: Accept-Language before sign-in, the
 * account's setting after it (the setting wins over the header here), texts from spec/ui-text.yaml.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeMessage } from '../../generated/errors.js';
import { UI_TEXT } from '../../generated/ui-text.js';
import { startTestService, type TestService } from '../support/service.js';
import { signUp } from './support.js';

describe('page and console message languages', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t?.close());

  async function pageOf(path: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${t.url}${path}`, { headers });
    const html = await response.text();
    const block = /<script type="application\/json" id="ui-text">(.*?)<\/script>/s.exec(html)?.[1] ?? '{}';
    return {
      response,
      html,
      lang: /<html lang="([^"]+)">/.exec(html)?.[1],
      texts: JSON.parse(block) as Record<string, string>,
    };
  }

  it.each([
    ['de-DE,de;q=0.9,en;q=0.8', 'de'],
    ['ja', 'ja'],
    ['zh-Hant', 'zh-TW'],
    ['pt', 'pt-BR'],
    ['xx, *', 'en'],
  ])('before sign-in, Accept-Language %s serves the pages in %s', async (header, language) => {
    for (const path of ['/console', '/playground']) {
      const page = await pageOf(path, { 'accept-language': header });
      expect(page.lang).toBe(language);
      expect(page.texts).toEqual(UI_TEXT[language as keyof typeof UI_TEXT]);
      expect(page.html).toContain(`<a href="/console">${UI_TEXT[language as keyof typeof UI_TEXT]['nav.console']}</a>`);
      expect(page.response.headers.get('vary')).toMatch(/Accept-Language/);
    }
  });

  it('after sign-in the account setting decides, over the browser header', async () => {
    const user = await signUp(t, 'lingua@example.com');
    expect((await user.call('POST', '/console/api/settings', { language: 'pl' })).status).toBe(200);
    const page = await pageOf('/console', { cookie: user.cookie, 'accept-language': 'de' });
    expect(page.lang).toBe('pl');
    expect(page.html).toContain('<title>Konsola · mediaforge</title>');
    const session = await fetch(`${t.url}/console/api/session`, {
      headers: { cookie: user.cookie, 'accept-language': 'de' },
    });
    expect(((await session.json()) as { data: { uiLanguage: string } }).data.uiLanguage).toBe('pl');
    // No setting: the header again.
    await user.call('POST', '/console/api/settings', { language: '' });
    expect((await pageOf('/console', { cookie: user.cookie, 'accept-language': 'ko' })).lang).toBe('ko');
  });

  it("translates the console's own messages and keeps the stable reason and the English detail", async () => {
    const r = await fetch(`${t.url}/console/api/signin`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-requested-with': 'mediaforge-console',
        'accept-language': 'ru',
      },
      body: JSON.stringify({ email: 'nobody@example.com', password: 'not the password' }),
    });
    expect(r.status).toBe(401);
    const body = (await r.json()) as { msg: string; data: { reason: string; detail: string } };
    expect(body).toMatchObject({
      msg: codeMessage('console_wrong_credentials', 'ru'),
      data: { reason: 'wrong_credentials', detail: 'wrong email or password' },
    });
    const anonymous = await fetch(`${t.url}/console/api/session`, { headers: { 'accept-language': 'it' } });
    expect(((await anonymous.json()) as { msg: string }).msg).toBe(codeMessage('console_no_session', 'it'));
  });
});
