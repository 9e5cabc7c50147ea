/** `/` answers a small page that links the docs, the playground, the console and the OpenAPI document, each of which answers. */
import { describe, expect, it } from 'vitest';
import { UI_TEXT } from '../../generated/ui-text.js';
import { serviceForSuite } from '../support/suite-service.js';

describe('the landing page', () => {
  const svc = serviceForSuite();

  it.each([
    ['English by default', { given: undefined, want: 'en' as const }],
    ['the language Accept-Language asks', { given: 'ja', want: 'ja' as const }],
  ])(
    'GET / is an HTML page linking /docs/, /playground, /console and /openapi.json: %s',
    async (_name, { given, want }) => {
      const r = await fetch(`${svc.t.url}/`, { headers: given ? { 'accept-language': given } : {} });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await r.text();
      expect(html).toContain(`<html lang="${want}">`);
      const links = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
      expect(links).toEqual(['/docs/', '/playground', '/console', '/openapi.json']);
      for (const label of [UI_TEXT[want]['nav.docs'], UI_TEXT[want]['nav.playground'], UI_TEXT[want]['nav.console']])
        expect(html).toContain(`>${label}</a>`);
      for (const link of links) expect((await fetch(`${svc.t.url}${link}`)).status, link).toBe(200);
    },
  );
});
