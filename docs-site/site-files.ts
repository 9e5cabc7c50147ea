/**
 * The rendered documentation site as files: its types, its content policy, and the folder the build
 * writes it to. The server (docs-site/serve.ts) reads that folder when the build made one (dist/),
 * so a production install needs neither markdown-it nor esbuild; docs-site/site.ts renders it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SiteFile {
  body: string | Buffer;
  type: string;
}

/** The site: paths relative to its root (`index.html`, `models/v/f/m.html`, `assets/site.css`). */
export type Site = Map<string, SiteFile>;

/** Pages' policy: everything from the site's own origin; inline styles only (the API viewer sets some). */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'";

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  json: 'application/json; charset=utf-8',
  yaml: 'application/yaml; charset=utf-8',
  png: 'image/png',
};

export function contentType(path: string): string {
  return TYPES[/\.([a-z0-9]+)$/.exec(path)?.[1] ?? ''] ?? 'application/octet-stream';
}

/** Where `npm run build` puts the pre-rendered site: `site/` beside the compiled serve.js. */
export const PRERENDERED_SITE = join(dirname(fileURLToPath(import.meta.url)), 'site');

/** Writes a rendered site to `dir` (emptied first); returns the bytes written. */
export function writeSite(site: Site, dir: string): number {
  rmSync(dir, { recursive: true, force: true });
  let bytes = 0;
  for (const [path, file] of [...site].sort(([a], [b]) => a.localeCompare(b))) {
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.body);
    bytes += Buffer.byteLength(file.body);
  }
  return bytes;
}

/** Reads a site written by writeSite, or undefined when `dir` does not exist. */
export function readSite(dir: string): Site | undefined {
  if (!existsSync(dir)) return undefined;
  const site: Site = new Map();
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      const path = join(abs, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const key = relative(dir, path).split(sep).join('/');
        site.set(key, { body: readFileSync(path), type: contentType(key) });
      }
    }
  };
  walk(dir);
  return site;
}
