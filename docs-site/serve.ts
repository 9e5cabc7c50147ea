/**
 * Serves the documentation site at /docs and the merged OpenAPI document at /openapi.json and
 * /openapi.yaml: the files `npm run build` pre-rendered into dist/docs-site/site/, read once; in a
 * development checkout without that build, rendered by docs-site/site.ts on the first request (the
 * renderer and its markdown-it and esbuild are devDependencies, imported only then).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONTENT_SECURITY_POLICY, PRERENDERED_SITE, readSite, type Site, type SiteFile } from './site-files.js';

let cached: Promise<Site> | undefined;

async function loadSite(): Promise<Site> {
  return readSite(PRERENDERED_SITE) ?? (await import('./site.js')).renderSite();
}

/** The site, read or rendered once per process. */
export function siteOnce(): Promise<Site> {
  cached ??= loadSite().catch((error) => {
    cached = undefined; // a failed render is tried again on the next request
    throw error;
  });
  return cached;
}

function send(reply: FastifyReply, file: SiteFile) {
  return reply
    .header('Content-Type', file.type)
    .header('Content-Security-Policy', `${CONTENT_SECURITY_POLICY}; frame-ancestors 'self'`)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cache-Control', 'public, max-age=300')
    .send(file.body);
}

/** Site path of a URL under /docs: `/docs/` and `/docs/api/` are their index.html. */
export function sitePath(urlPath: string): string {
  let path = urlPath.replace(/^\/docs\/?/, '');
  try {
    path = decodeURIComponent(path);
  } catch {
    return '';
  }
  if (path === '' || path.endsWith('/')) path += 'index.html';
  return path;
}

export async function registerDocs(app: FastifyInstance): Promise<void> {
  app.get('/docs', async (_request, reply) => reply.redirect('/docs/', 301));
  app.get('/docs/*', async (request, reply) => {
    const path = sitePath(request.url.split('?')[0]);
    const site = await siteOnce();
    if (!site.has(path) && site.has(`${path}/index.html`)) return reply.redirect(`/docs/${path}/`, 301);
    const file = site.get(path) ?? site.get(`${path}.html`);
    if (!file) return reply.status(404).type('text/plain; charset=utf-8').send(`not found: /docs/${path}`);
    return send(reply, file);
  });
  for (const format of ['json', 'yaml'] as const) {
    app.get(`/openapi.${format}`, async (_request, reply) => {
      const site = await siteOnce();
      return send(reply, site.get(`openapi.${format}`)!);
    });
  }
}
