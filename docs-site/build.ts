/**
 * npm run docs:build [-- --out DIR]: writes the documentation site (docs-site/site.ts, the renderer
 * the server uses for /docs) as static files, by default to generated-site/ (gitignored; not
 * generated/, which is drift-checked). Serve the folder from any static host, at any path: every
 * link is relative and nothing is loaded from another host.
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { renderSite, ROOT } from './site.js';
import { writeSite } from './site-files.js';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = resolve(values.out ?? join(ROOT, 'generated-site'));
if (out === ROOT || out === join(ROOT, 'generated')) throw new Error(`refusing to write the site into ${out}`);

const started = Date.now();
const site = await renderSite();
const bytes = writeSite(site, out);
console.log(
  `docs: ${site.size} files, ${(bytes / 1024 / 1024).toFixed(1)} MiB, written to ${out} in ${Date.now() - started} ms`,
);
