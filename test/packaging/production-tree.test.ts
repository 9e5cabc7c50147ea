/**
 * What production runs: after `npm run build`, a copy of the checkout (sources, dist/, and
 * node_modules hard-linked) is pruned with `npm prune --omit=dev`, which removes the compiler, tsx,
 * esbuild, markdown-it and the other build tools. In that tree `npm start` serves from dist/: the
 * API (a task to success), the landing page, the pre-rendered docs site, the pre-bundled console
 * scripts, and the CLI. SIGTERM and SIGINT sent to `npm start` (npm forwards them to its child)
 * stop the server and its worker: npm exits and the port is free, no orphan left holding it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { builtinModules } from 'node:module';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePort, ROOT } from '../support/build.js';

const run = promisify(execFile);
/** Tracked sources the build fingerprints, the built tree, and what npm start and the CLI need. */
const COPIED = [
  'package.json',
  'package-lock.json',
  'bin',
  'scripts',
  'runtime',
  'generated',
  'catalogue-core',
  'docs-site',
  'docs',
  'client',
  'dist',
];
const BUILD_TOOLS = [
  'typescript',
  'tsx',
  'esbuild',
  'markdown-it',
  'ts-morph',
  'openapi-typescript',
  'handlebars',
  'vitest',
  'swagger-ui-dist',
  'uplot',
];

/** Imported by dist/ on a path production never takes (a dynamic import behind a check), with why. */
const DEVELOPMENT_ONLY: Record<string, string> = {
  esbuild: 'console-assets.ts bundles the pages in memory only in a checkout without a build; dist/ ships them bundled',
};

let tree: string;
let data: string;

beforeAll(async () => {
  await ensureBuilt();
  // Outside the checkout: inside it, Node's module resolution would climb from the tree up to the
  // checkout's own node_modules and find the dev dependencies the prune removed (a package the
  // service imports but declares only for development then passes here and fails in production).
  tree = mkdtempSync(join(tmpdir(), 'mediaforge-production-'));
  data = join(tree, 'data');
  // cp -a keeps modification times: the build's fingerprint still matches, so npm start does not rebuild.
  await run('cp', ['-a', ...COPIED.map((name) => join(ROOT, name)), tree]);
  // Hard links where the temporary directory shares the checkout's file system; a copy elsewhere.
  await run('cp', ['-al', join(ROOT, 'node_modules'), tree]).catch(async () => {
    rmSync(join(tree, 'node_modules'), { recursive: true, force: true });
    await run('cp', ['-a', join(ROOT, 'node_modules'), tree]);
  });
  // npm prune rewrites this file: a copy, never a link to the checkout's own.
  rmSync(join(tree, 'node_modules', '.package-lock.json'), { force: true });
  if (existsSync(join(ROOT, 'node_modules', '.package-lock.json')))
    copyFileSync(join(ROOT, 'node_modules', '.package-lock.json'), join(tree, 'node_modules', '.package-lock.json'));
  await run('npm', ['prune', '--omit=dev', '--no-audit', '--no-fund'], { cwd: tree, maxBuffer: 16 * 1024 * 1024 });
}, 300_000);

afterAll(() => {
  if (tree) rmSync(tree, { recursive: true, force: true });
});

/** `npm start` in the pruned tree on a free port; resolves once /healthz answers. */
async function npmStart(): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  const child = spawn('npm', ['start'], {
    cwd: tree,
    env: {
      ...process.env,
      PORT: String(port),
      MEDIAFORGE_DB: `sqlite:${join(data, 'mediaforge.db')}`,
      MEDIAFORGE_DATA_DIR: data,
      MEDIAFORGE_SIMULATOR_LATENCY_MS: '300',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  while (
    !(await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`npm start did not serve:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { child, url, output: () => output };
}

describe('the production tree (npm run build, then npm prune --omit=dev)', () => {
  it('has no build tool left', () => {
    for (const tool of BUILD_TOOLS) expect(existsSync(join(tree, 'node_modules', tool)), tool).toBe(false);
    for (const kept of ['fastify', 'kysely', 'better-sqlite3', 'ajv'])
      expect(existsSync(join(tree, 'node_modules', kept)), kept).toBe(true);
  });

  it('declares as production dependencies every package the built service imports', () => {
    const declared = Object.keys(JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')).dependencies);
    const imported = new Set<string>();
    const visit = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) visit(path);
        else if (entry.name.endsWith('.js'))
          for (const [, , specifier] of readFileSync(path, 'utf8').matchAll(
            /(?:^\s*import\b[^'"]*?\bfrom|^\s*export\b[^'"]*?\bfrom|^\s*import|\bimport\(|\brequire\()\s*(['"])([@a-z][\w.@/-]*)\1/gm,
          )) {
            const name = specifier.startsWith('@')
              ? specifier.split('/').slice(0, 2).join('/')
              : specifier.split('/')[0];
            if (!specifier.startsWith('node:') && !builtinModules.includes(name)) imported.add(name);
          }
      }
    };
    visit(join(tree, 'dist', 'runtime'));
    visit(join(tree, 'dist', 'generated'));
    expect(imported.size).toBeGreaterThan(5);
    expect([...imported].filter((name) => !declared.includes(name) && !DEVELOPMENT_ONLY[name]).sort()).toEqual([]);
  });

  it('runs the CLI from dist/ (tsx is gone): mediaforge --help', async () => {
    const help = await run(process.execPath, ['bin/mediaforge.js', '--help'], { cwd: tree });
    expect(help.stdout).toMatch(/^usage: mediaforge <command>/);
    expect(help.stderr).toBe('');
  });

  it('npm start serves the API, the landing page, the docs site and the console scripts; a task runs to success', async () => {
    const service = await npmStart();
    try {
      // Neither a rebuild nor "dist/ is older than the sources": the prune left the build current.
      expect(service.output()).not.toMatch(/npm start:/);
      for (const [path, type] of [
        ['/', 'text/html'],
        ['/docs/', 'text/html'],
        ['/docs/api/index.html', 'text/html'],
        ['/openapi.json', 'application/json'],
        ['/playground', 'text/html'],
        ['/console/assets/playground.js', 'text/javascript'],
        ['/console/assets/console.js', 'text/javascript'],
      ]) {
        const r = await fetch(`${service.url}${path}`);
        expect(r.status, path).toBe(200);
        expect(r.headers.get('content-type'), path).toContain(type);
      }
      const { stdout } = await run(
        process.execPath,
        ['bin/mediaforge.js', 'accounts', 'create', '--credits', '500', '--json'],
        { cwd: tree, env: { ...process.env, MEDIAFORGE_DB: `sqlite:${join(data, 'mediaforge.db')}` } },
      );
      const { apiKey } = JSON.parse(stdout);
      const created = await fetch(`${service.url}/api/v1/jobs/createTask?wait=30`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'vendor_d/family_d/text-to-video', input: { prompt: 'A lighthouse at dusk' } }),
      }).then((r) => r.json());
      expect(created.data.state).toBe('succeeded');
      const media = await fetch(created.data.output.assets[0].url);
      expect(media.status).toBe(200);
      expect(media.headers.get('content-type')).toMatch(/^video\//);
    } finally {
      service.child.kill('SIGTERM');
      await new Promise((resolve) => service.child.once('exit', resolve));
    }
  }, 120_000);

  it.each([['SIGTERM'], ['SIGINT']] as const)(
    '%s to npm start stops the server and its worker: npm exits, the port is free',
    async (signal) => {
      const service = await npmStart();
      // To npm alone, as a process manager or `kill` does; npm forwards it to its child (exec: node itself).
      service.child.kill(signal);
      const code = await new Promise<number | null>((resolve) =>
        service.child.once('exit', (exitCode) => resolve(exitCode)),
      );
      expect(code).toBe(0);
      expect(service.output()).toContain(`${signal}: stopping`);
      await expect
        .poll(
          () =>
            fetch(`${service.url}/healthz`).then(
              () => 'open',
              () => 'closed',
            ),
          { timeout: 5_000 },
        )
        .toBe('closed');
    },
    120_000,
  );
});
