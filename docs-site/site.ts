/**
 * The documentation site: one renderer, two uses. `renderSite()` turns generated/docs/*.md (the
 * model pages, the index, the errors page), the client and webhook guides and the merged OpenAPI
 * document into a map of files. `npm run build` writes it to dist/docs-site/site/, which the server
 * serves at /docs (docs-site/serve.ts); a development checkout without that build renders it once,
 * on the first request. `npm run docs:build` writes it to generated-site/.
 *
 * Every link in the site is relative, and every script, style and font comes from the site itself
 * (no CDN, no remote fonts): the pages carry a Content-Security-Policy that says so.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import markdownIt, { type MarkdownIt } from 'markdown-it';
import { catalogue } from '../generated/catalogue.js';
import { calculatorConfig, calculatorHtml } from './calculator/config.js';
import { CONTENT_SECURITY_POLICY, contentType, type Site } from './site-files.js';

export type { Site, SiteFile } from './site-files.js';
export { CONTENT_SECURITY_POLICY, contentType } from './site-files.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const GENERATED_DOCS = join(ROOT, 'generated', 'docs');
const HERE = join(ROOT, 'docs-site');

const GUIDES: { source: string; path: string; title: string }[] = [
  { source: join(ROOT, 'docs', 'client.md'), path: 'guides/client.html', title: 'TypeScript client' },
  { source: join(ROOT, 'clients', 'python', 'README.md'), path: 'guides/python-client.html', title: 'Python client' },
  { source: join(ROOT, 'docs', 'webhooks.md'), path: 'guides/webhooks.html', title: 'Webhooks' },
];

// ---- markdown ----------------------------------------------------------------------------------

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'section'
  );
}

/** markdown-it, configured once: no raw HTML, heading anchors, .md links turned into .html, tables wrapped. */
function createMarkdown(): MarkdownIt {
  const md = new markdownIt({ html: false, linkify: false, typographer: false });
  md.core.ruler.push('heading_ids', (state) => {
    const seen = new Map<string, number>();
    state.tokens.forEach((token, i) => {
      if (token.type !== 'heading_open') return;
      const base = slug(state.tokens[i + 1]?.content ?? '');
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      token.attrSet('id', n === 0 ? base : `${base}-${n}`);
    });
  });
  const defaultLink =
    md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const href = String(tokens[idx].attrGet('href') ?? '');
    if (!/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('#'))
      tokens[idx].attrSet('href', href.replace(/\.md(#|$)/, '.html$1'));
    else if (/^https?:/i.test(href)) tokens[idx].attrSet('rel', 'noopener noreferrer');
    return defaultLink(tokens, idx, options, env, self);
  };
  md.renderer.rules.table_open = () => '<div class="table-wrap"><table>\n';
  md.renderer.rules.table_close = () => '</table></div>\n';
  return md;
}

let markdown: MarkdownIt | undefined;

/** Markdown to HTML; the generator's header comment is dropped (raw HTML is not passed through). */
export function renderMarkdown(text: string): string {
  markdown ??= createMarkdown();
  return markdown.render(text.replace(/<!--[\s\S]*?-->\s*/g, ''));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

// ---- layout ------------------------------------------------------------------------------------

interface NavModel {
  id: string;
  path: string;
}

/** The prefix that leads from a page back to the site root (`../../../` for models/v/f/m.html). */
function rootOf(path: string): string {
  return '../'.repeat(path.split('/').length - 1);
}

function layout(options: {
  path: string;
  title: string;
  body: string;
  nav: NavModel[];
  head?: string;
  wide?: boolean;
}): string {
  const base = rootOf(options.path);
  const link = (target: string, text: string) =>
    `<a href="${base}${target}"${target === options.path ? ' aria-current="page"' : ''}>${escapeHtml(text)}</a>`;
  const vendors = new Map<string, NavModel[]>();
  for (const model of options.nav)
    vendors.set(model.id.split('/')[0], [...(vendors.get(model.id.split('/')[0]) ?? []), model]);
  const modelNav = [...vendors]
    .map(
      ([vendor, models]) =>
        `<details${models.some((m) => m.path === options.path) ? ' open' : ''}><summary>${escapeHtml(vendor)}</summary><ul>${models.map((m) => `<li>${link(m.path, m.id.slice(vendor.length + 1))}</li>`).join('')}</ul></details>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">
<title>${escapeHtml(options.title)} · mediaforge docs</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}assets/site.css">
${options.head ?? ''}
</head>
<body${options.wide ? ' class="wide"' : ''}>
<header class="top"><a class="brand" href="${base}index.html">mediaforge</a><nav>${link('index.html', 'Models')} ${link('api/index.html', 'API reference')} ${link('errors.html', 'Errors')} ${link('guides/client.html', 'Client')} ${link('guides/webhooks.html', 'Webhooks')} <a href="${base}openapi.json">openapi.json</a> <a href="${base}openapi.yaml">openapi.yaml</a></nav></header>
<div class="page">
<aside class="side"><h2>Models</h2>${modelNav}</aside>
<main${options.wide ? '' : ' class="prose"'}>
${options.body}
</main>
</div>
</body>
</html>
`;
}

/** Inserts the calculator at the end of the page's Price section (before the next h2), or at the end. */
function withCalculator(html: string, calculator: string): string {
  const price = html.search(/<h2 id="price"/);
  if (price === -1) return `${html}\n${calculator}`;
  const next = html.indexOf('<h2', price + 4);
  return next === -1 ? `${html}\n${calculator}` : `${html.slice(0, next)}${calculator}\n${html.slice(next)}`;
}

function firstHeading(markdownText: string, fallback: string): string {
  return /^#\s+(.+)$/m.exec(markdownText)?.[1]?.trim() ?? fallback;
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    )
    .sort();
}

// ---- assets ------------------------------------------------------------------------------------

const require = createRequire(import.meta.url);

function swaggerUiDir(): string {
  return dirname(require.resolve('swagger-ui-dist/package.json'));
}

/** The calculator script: docs-site/calculator/browser.ts with generated/prices.ts and support.ts, bundled as one ES module. */
export async function bundleCalculator(): Promise<string> {
  const result = await esbuild.build({
    entryPoints: [join(HERE, 'calculator', 'browser.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

function apiReferencePage(nav: NavModel[]): string {
  const path = 'api/index.html';
  return layout({
    path,
    title: 'API reference',
    nav,
    wide: true,
    head: `<link rel="stylesheet" href="../assets/swagger-ui.css">`,
    body: `<h1 id="api-reference">API reference</h1>
<p>Rendered from the merged OpenAPI document (<a href="../openapi.json">openapi.json</a>, <a href="../openapi.yaml">openapi.yaml</a>) by a Swagger UI bundled with the site.</p>
<div id="swagger-ui" data-spec="../openapi.json"></div>
<script src="../assets/swagger-ui-bundle.js"></script>
<script src="../assets/api-reference.js"></script>`,
  });
}

// ---- the site ----------------------------------------------------------------------------------

/** Renders the whole site in memory. */
export async function renderSite(): Promise<Site> {
  const site: Site = new Map();
  const put = (path: string, body: string | Buffer) => site.set(path, { body, type: contentType(path) });

  const pages = walk(GENERATED_DOCS).map((file) => relative(GENERATED_DOCS, file).split(sep).join('/'));
  const modelPages = pages.filter((p) => p.startsWith('models/'));
  const nav: NavModel[] = modelPages.map((p) => ({
    id: p.slice('models/'.length, -'.md'.length),
    path: p.replace(/\.md$/, '.html'),
  }));

  for (const page of pages) {
    const text = readFileSync(join(GENERATED_DOCS, page), 'utf8');
    const path = page.replace(/\.md$/, '.html');
    let body = renderMarkdown(text);
    if (page.startsWith('models/')) {
      const info = catalogue.get(page.slice('models/'.length, -'.md'.length))?.info;
      if (info)
        body = withCalculator(body, calculatorHtml(calculatorConfig(info), `${rootOf(path)}assets/calculator.js`));
    }
    put(path, layout({ path, title: firstHeading(text, path), body, nav }));
  }
  for (const guide of GUIDES) {
    if (!existsSync(guide.source)) continue;
    const text = readFileSync(guide.source, 'utf8');
    put(
      guide.path,
      layout({ path: guide.path, title: firstHeading(text, guide.title), body: renderMarkdown(text), nav }),
    );
  }
  put('api/index.html', apiReferencePage(nav));

  put('openapi.json', readFileSync(join(ROOT, 'generated', 'openapi.json')));
  put('openapi.yaml', readFileSync(join(ROOT, 'generated', 'openapi.yaml')));
  put('assets/site.css', readFileSync(join(HERE, 'static', 'site.css')));
  put('assets/api-reference.js', readFileSync(join(HERE, 'static', 'api-reference.js')));
  put('assets/calculator.js', await bundleCalculator());
  const swagger = swaggerUiDir();
  // The source-map comments are dropped: the maps are not shipped.
  put(
    'assets/swagger-ui-bundle.js',
    readFileSync(join(swagger, 'swagger-ui-bundle.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n'),
  );
  put(
    'assets/swagger-ui.css',
    readFileSync(join(swagger, 'swagger-ui.css'), 'utf8').replace(/\/\*# sourceMappingURL=.*\*\/\s*$/, ''),
  );
  return site;
}
