/**
 * `/`: a small page for whoever opens the service in a browser, linking what a person can use
 * there (the docs, the playground, the console) and the machine-readable contract. Its labels
 * follow Accept-Language like the console pages (generated/ui-text.ts).
 */
import type { FastifyInstance } from 'fastify';
import { uiText } from '../../../generated/ui-text.js';
import { pickLanguage } from '../../language.js';

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

export function registerLanding(app: FastifyInstance): void {
  app.get('/', async (request, reply) => {
    const language = pickLanguage(request.headers['accept-language'], null);
    const texts = uiText(language);
    const links: [string, string, string][] = [
      ['/docs/', texts['nav.docs'], 'models, prices, errors, the API reference, guides'],
      ['/playground', texts['nav.playground'], 'try a model in the browser (30 free credits on sign-up)'],
      ['/console', texts['nav.console'], 'API keys, usage, webhooks'],
      ['/openapi.json', 'openapi.json', 'the OpenAPI document of /api/v1 (also /openapi.yaml)'],
    ];
    const html = `<!doctype html>
<html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>mediaforge</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}li{margin:.4rem 0}small{color:#5b6570}</style>
</head><body>
<h1>mediaforge</h1>
<p>An asynchronous media-generation service: quote, create and follow video tasks at <code>/api/v1</code> (and the OpenAI Videos-compatible <code>/v1</code>).</p>
<ul>
${links.map(([href, label, what]) => `<li><a href="${href}">${escapeHtml(label)}</a> <small>${escapeHtml(what)}</small></li>`).join('\n')}
</ul>
</body></html>`;
    return reply
      .header('Content-Security-Policy', CSP)
      .header('Cache-Control', 'no-store')
      .header('Vary', 'Accept-Language')
      .type('text/html; charset=utf-8')
      .send(html);
  });
}
