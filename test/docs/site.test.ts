/**
 * The documentation site without a browser: what `npm run docs:build` writes (the same renderer the
 * server uses), its links, its self-containment, and the server's /docs routes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { renderSite, type Site } from '../../docs-site/site.js';
import { serviceForSuite } from '../support/suite-service.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('the documentation site', () => {
  let site: Site;
  beforeAll(async () => {
    site = await renderSite();
  }, 60_000);

  const pages = () =>
    [...site].filter(([path]) => path.endsWith('.html')).map(([path, file]) => [path, String(file.body)] as const);

  it('has a page per generated Markdown page, the API reference and the guides', () => {
    const paths = [...site.keys()];
    for (const path of [
      'index.html',
      'errors.html',
      'api/index.html',
      'guides/client.html',
      'guides/webhooks.html',
      'openapi.json',
      'openapi.yaml',
      'assets/calculator.js',
      'assets/swagger-ui-bundle.js',
    ])
      expect(paths).toContain(path);
    const modelPages = paths.filter((p) => p.startsWith('models/') && p.endsWith('.html'));
    expect(modelPages.length).toBeGreaterThan(0);
    for (const id of catalogue.keys())
      if (existsSync(join(ROOT, 'generated/docs/models', `${id}.md`))) expect(paths).toContain(`models/${id}.html`);
  });

  it('gives every model page with prices a calculator wired to the generated price function', () => {
    for (const [path, html] of pages().filter(([p]) => p.startsWith('models/'))) {
      const id = path.slice('models/'.length, -'.html'.length);
      if (!catalogue.has(id)) continue;
      expect(html, path).toContain('id="price-calculator"');
      const config = JSON.parse(/<script type="application\/json" id="calc-config">(.*?)<\/script>/s.exec(html)![1]);
      expect(config.model).toBe(id);
      expect(html).toContain(`src="${'../'.repeat(path.split('/').length - 1)}assets/calculator.js"`);
    }
    const calculator = String(site.get('assets/calculator.js')!.body);
    expect(calculator).toContain('no rate row matches'); // the generated rate tables are in the bundle
    expect(calculator).not.toMatch(/\bimport\s*[^(]/); // one self-contained module
  });

  it('loads nothing from another host, and every relative link resolves inside the site', () => {
    const broken: string[] = [];
    for (const [path, html] of pages()) {
      expect(html, path).toContain('<meta http-equiv="Content-Security-Policy" content="default-src \'self\';');
      // Anything the page loads (scripts, styles, images, icons) is relative.
      for (const [, tag, url] of html.matchAll(/<(script|link|img|iframe|source)\b[^>]*?(?:src|href)="([^"]*)"/g)) {
        expect(`${path}: <${tag}> ${url}`).not.toMatch(/ (https?:)?\/\//);
      }
      for (const [, url] of html.matchAll(/(?:href|src)="([^"#]+)(?:#[^"]*)?"/g)) {
        if (/^(https?:|mailto:|data:)/.test(url)) continue;
        const target = posix.normalize(posix.join(posix.dirname(path), url));
        if (!site.has(target) && !site.has(posix.join(target, 'index.html'))) broken.push(`${path} -> ${url}`);
      }
    }
    expect(broken).toEqual([]);
    for (const [path, file] of site) {
      if (!/\.(js|css|html)$/.test(path)) continue;
      expect(String(file.body), path).not.toMatch(/fonts\.googleapis|fonts\.gstatic|cdn\.jsdelivr|unpkg\.com|cdnjs/);
    }
  });

  it('npm run docs:build writes the site as static files', () => {
    const out = mkdtempSync(join(tmpdir(), 'mediaforge-site-'));
    try {
      const printed = execFileSync(
        process.execPath,
        [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'docs-site/build.ts'), '--out', out],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect(printed).toMatch(/docs: \d+ files/);
      const written = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? written(join(dir, e.name)).map((p) => `${e.name}/${p}`) : [e.name],
        );
      expect(written(out).sort()).toEqual([...site.keys()].sort());
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  describe('served by the server', () => {
    const svc = serviceForSuite();

    it('serves /docs with a content security policy, redirects folders, 404s unknown pages', async () => {
      const redirect = await fetch(`${svc.t.url}/docs`, { redirect: 'manual' });
      expect(redirect.status).toBe(301);
      expect(redirect.headers.get('location')).toBe('/docs/');
      const index = await fetch(`${svc.t.url}/docs/`);
      expect(index.status).toBe(200);
      expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(index.headers.get('content-security-policy')).toMatch(/^default-src 'self'; script-src 'self';/);
      expect(await index.text()).toContain('<h1 id="mediaforge-models">mediaforge models</h1>');
      const api = await fetch(`${svc.t.url}/docs/api`, { redirect: 'manual' });
      expect(api.headers.get('location')).toBe('/docs/api/');
      const script = await fetch(`${svc.t.url}/docs/assets/calculator.js`);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect((await fetch(`${svc.t.url}/docs/nothing-here.html`)).status).toBe(404);
      expect((await fetch(`${svc.t.url}/docs/../package.json`)).status).toBe(404);
      expect((await fetch(`${svc.t.url}/docs/%2e%2e/package.json`)).status).toBe(404);
    }, 60_000);
  });
});
