import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import type { FastifyInstance } from 'fastify';
import type { Context } from '../context.js';
import { registerConsoleApi } from './console-api.js';
import { registerPlaygroundApi } from './playground-api.js';

const WEB = join(dirname(fileURLToPath(import.meta.url)), 'web');

/**
 * The two pages' scripts (web/playground.ts, web/console.ts, with uPlot and its CSS), bundled by
 * esbuild in memory once at start (about 100 ms) and served from /console/assets/: no CDN, no build
 * step to forget, and the sources stay plain TypeScript modules.
 */
async function bundle(): Promise<Map<string, { type: string; text: string }>> {
  const result = await esbuild.build({
    entryPoints: { playground: join(WEB, 'playground.ts'), console: join(WEB, 'console.ts') },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    outdir: '/assets',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const assets = new Map<string, { type: string; text: string }>();
  for (const file of result.outputFiles) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    assets.set(name, { type: name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8', text: file.text });
  }
  return assets;
}

const CSP = "default-src 'self'; img-src 'self' data:; media-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

function page(title: string, script: string, hasCss: boolean): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · mediaforge</title>
<link rel="stylesheet" href="/console/assets/base.css">${hasCss ? `\n<link rel="stylesheet" href="/console/assets/${script}.css">` : ''}
</head><body>
<header><strong>mediaforge</strong> <nav><a href="/playground">Playground</a> <a href="/console">Console</a> <a href="/docs/">Docs</a></nav><span id="who"></span></header>
<main id="app"><p>Loading…</p></main>
<script type="module" src="/console/assets/${script}.js"></script>
</body></html>`;
}

const BASE_CSS = `body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{display:flex;gap:1.5rem;align-items:center;padding:.6rem 1.2rem;background:#1b1f24;color:#fff}header a{color:#cfe3ff;margin-right:.8rem}#who{margin-left:auto;font-size:.9em}
main{max-width:1100px;margin:1rem auto;padding:0 1rem}section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:1rem 1.2rem;margin:0 0 1rem}
h2{margin:.2rem 0 .8rem;font-size:1.15rem}label{display:block;margin:.5rem 0 .15rem;font-weight:600}small.hint{display:block;color:#5b6570;font-weight:400}
input[type=text],input[type=email],input[type=password],input[type=number],select,textarea{width:100%;box-sizing:border-box;padding:.4rem;border:1px solid #b9c0c8;border-radius:5px;font:inherit}
textarea{min-height:4.5rem}button{padding:.45rem .9rem;border-radius:5px;border:1px solid #2c5fb8;background:#2f6fde;color:#fff;font:inherit;cursor:pointer}button.secondary{background:#fff;color:#2f6fde}
.error{color:#b00020;font-size:.9em}.field-error input,.field-error select,.field-error textarea{border-color:#b00020}.secret{font-family:monospace;background:#fff8d6;padding:.4rem;word-break:break-all}
table{border-collapse:collapse;width:100%;font-size:.9em}td,th{border-bottom:1px solid #e4e7eb;padding:.3rem .4rem;text-align:left}.row{display:flex;gap:1rem;flex-wrap:wrap}.row>*{flex:1 1 280px}
.badge{display:inline-block;padding:.05rem .45rem;border-radius:9px;background:#e8eef9;font-size:.85em}video{max-width:100%;background:#000;border-radius:6px}`;

/** /playground, /console and their assets, plus both JSON APIs. Outside the API contract. */
export async function registerConsole(app: FastifyInstance, ctx: Context): Promise<void> {
  const assets = await bundle();
  assets.set('base.css', { type: 'text/css; charset=utf-8', text: BASE_CSS });
  const pages: Record<string, string> = {
    '/playground': page('Playground', 'playground', assets.has('playground.css')),
    '/console': page('Console', 'console', assets.has('console.css')),
  };
  for (const [url, html] of Object.entries(pages)) {
    app.get(url, async (_request, reply) => reply.header('Content-Security-Policy', CSP).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(html));
  }
  app.get('/console/assets/:name', async (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.status(404).type('text/plain').send('not found');
    return reply.header('Cache-Control', 'public, max-age=300').type(asset.type).send(asset.text);
  });
  registerConsoleApi(app, ctx);
  registerPlaygroundApi(app, ctx);
}
