import type { FastifyInstance } from 'fastify';
import { loadConsoleAssets } from '../../console/console-assets.js';
import { BASE_CSS, page, PAGE_CSP } from '../../console/pages.js';
import { consoleLanguage, readCookie, SESSION_COOKIE } from '../../console/session-http.js';
import { findSession } from '../../console/users.js';
import type { Context } from '../../context.js';

/**
 * /playground, /console and their scripts and styles (/console/assets/NAME). Outside the API
 * contract; the pages call the console's operations (generated/console/routes.ts), which the one
 * binder serves (runtime/http/app.ts). A page is in the signed-in account's language, then the
 * browser's.
 */
export async function registerConsolePages(app: FastifyInstance, ctx: Context): Promise<void> {
  const assets = await loadConsoleAssets();
  assets.set('base.css', { type: 'text/css; charset=utf-8', text: BASE_CSS });
  for (const kind of ['playground', 'console'] as const) {
    app.get(`/${kind}`, async (request, reply) => {
      const cookie = readCookie(request, SESSION_COOKIE);
      const user = cookie ? await findSession(ctx.db, cookie, ctx.clock.now()) : undefined;
      const html = page(consoleLanguage(request, user), kind, assets.has(`${kind}.css`));
      return reply
        .header('Content-Security-Policy', PAGE_CSP)
        .header('Cache-Control', 'no-store')
        .header('Vary', 'Accept-Language, Cookie')
        .type('text/html; charset=utf-8')
        .send(html);
    });
  }
  app.get('/console/assets/:name', async (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.status(404).type('text/plain').send('not found');
    return reply.header('Cache-Control', 'public, max-age=300').type(asset.type).send(asset.text);
  });
}
