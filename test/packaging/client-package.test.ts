/**
 * @mediaforge/client as a consumer gets it: `npm pack` in client/ (its prepack builds dist/), the
 * tarball installed into a scratch project outside this repository (its two dependencies come from
 * the npm registry), then publint and arethetypeswrong on the tarball, a strict type check of a
 * consumer's code (tsc --strict --exactOptionalPropertyTypes, no skipLibCheck: a wrong field fails,
 * a right one compiles), plain `node` running it as ES module and as CommonJS against a live service,
 * and esbuild bundling the main entry for a browser with no `node:` import left (the engine-free
 * parts in the sqlite project only: engineFree below).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { png } from '../../support/media/fixtures.js';
import { ROOT, withBuildLock } from '../support/build.js';
import { startTestService, TEST_DB, type TestService } from '../support/service.js';

const run = promisify(execFile);
/**
 * What does not depend on the service's engine (the package's contents, publint and attw, the
 * consumer's type checks, the browser bundle) runs in the sqlite project only, as the Python
 * client's engine-free suites do; the postgres project packs and installs too, and runs the
 * consumer's code against its live service.
 */
const engineFree = it.skipIf(TEST_DB === 'postgres');
const BIN = (name: string) => join(ROOT, 'node_modules', '.bin', name);
const MODEL = 'vendor_d/family_d/text-to-video';

let scratch: string;
let tarball: string;
let t: TestService;

/** Every file size under a folder, summed. */
function bytesUnder(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => {
    const path = join(dir, name);
    const stat = statSync(path);
    return sum + (stat.isDirectory() ? bytesUnder(path) : stat.size);
  }, 0);
}

/** Runs tsc (this repository's) on the scratch project with one sample file; returns its diagnostics text. */
async function typeCheck(file: string, source: string): Promise<{ ok: boolean; output: string }> {
  writeFileSync(join(scratch, file), source);
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        exactOptionalPropertyTypes: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
        noEmit: true,
        skipLibCheck: false,
      },
      files: [file],
    }),
  );
  try {
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(scratch, 'tsconfig.json')],
      { cwd: scratch },
    );
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout ?? error) };
  }
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'mediaforge-consumer-'));
  const packDir = mkdtempSync(join(tmpdir(), 'mediaforge-pack-'));
  await withBuildLock(() =>
    run('npm', ['pack', '--pack-destination', packDir], { cwd: join(ROOT, 'client'), maxBuffer: 16 * 1024 * 1024 }),
  );
  tarball = join(packDir, readdirSync(packDir).find((name) => name.endsWith('.tgz'))!);
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: scratch });
  t = await startTestService();
}, 240_000);

afterAll(async () => {
  await t?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('@mediaforge/client, packed and installed', () => {
  engineFree('installs small: the package, openapi-fetch and standardwebhooks with their own few dependencies', () => {
    const top = readdirSync(join(scratch, 'node_modules')).filter((name) => !name.startsWith('.'));
    const names = top.flatMap((name) =>
      name.startsWith('@')
        ? readdirSync(join(scratch, 'node_modules', name)).map((inner) => `${name}/${inner}`)
        : [name],
    );
    expect(names).toContain('@mediaforge/client');
    expect(names).toContain('openapi-fetch');
    expect(names).toContain('standardwebhooks');
    for (const server of ['fastify', 'better-sqlite3', 'pg', 'typescript', 'ts-morph', 'tsx', 'kysely'])
      expect(names).not.toContain(server);
    expect(bytesUnder(join(scratch, 'node_modules'))).toBeLessThan(5 * 1024 * 1024);
    const manifest = JSON.parse(readFileSync(join(scratch, 'node_modules/@mediaforge/client/package.json'), 'utf8'));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['openapi-fetch', 'standardwebhooks']);
  });

  engineFree(
    'passes publint and arethetypeswrong (every entry point resolves with types under node10, node16 ESM and CJS, bundlers)',
    async () => {
      const publint = await run(BIN('publint'), ['run', tarball, '--strict'], { cwd: ROOT });
      expect(publint.stdout).toContain('All good');
      // attw exits 1 on any problem, which rejects here with its report.
      const attw = await run(BIN('attw'), [tarball, '--format', 'json'], { cwd: ROOT });
      const report = JSON.parse(attw.stdout) as {
        problems?: Record<string, unknown[]>;
        analysis: { entrypoints: Record<string, unknown> };
      };
      expect(Object.values(report.problems ?? {}).flat()).toEqual([]);
      expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(['.', './package.json', './webhooks']);
    },
  );

  engineFree(
    'type check under strict and exactOptionalPropertyTypes: a wrong field, a value outside the enum, a required field left out are compile errors, each on its line',
    async () => {
      const cases: [string, RegExp][] = [
        [`input: { prompt: 'x', seed: 7 }`, /'seed' does not exist/],
        [`input: { prompt: 'x', resolution: '1080p' }`, /"1080p"/],
        [`input: { duration_seconds: 5 }`, /'prompt' is missing/],
      ];
      const header = [
        `import { Mediaforge } from '@mediaforge/client';`,
        `const client = new Mediaforge({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });`,
      ];
      const lines = [
        ...header,
        ...cases.map(([input]) => `void client.tasks.create({ model: '${MODEL}', ${input} });`),
      ];
      const result = await typeCheck('wrong.ts', `${lines.join('\n')}\n`);
      expect(result.ok).toBe(false);
      // The errors are in the consumer's file, one or more on each wrong line, never in the package's own types.
      expect(result.output).not.toMatch(/node_modules/);
      cases.forEach(([, want], i) => {
        const line = header.length + i + 1;
        const onLine = result.output
          .split('\n')
          .filter((text) => text.startsWith(`wrong.ts(${line},`))
          .join('\n');
        expect(onLine, `line ${line}`).toMatch(want);
      });
    },
    60_000,
  );

  engineFree(
    'type check under strict and exactOptionalPropertyTypes: a right call, options with undefined, both entries and CommonJS compile clean',
    async () => {
      const esm = await typeCheck(
        'right.ts',
        `import { Mediaforge, InvalidInputError, type Task } from '@mediaforge/client';
import { verifyTaskCallback, WebhookVerificationError } from '@mediaforge/client/webhooks';
const client = new Mediaforge({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', timeoutMs: undefined });
const timeoutMs: number | undefined = undefined;
export const task: Promise<Task> = client.tasks.createAndWait({ model: '${MODEL}', input: { prompt: 'x', resolution: '2k', duration_seconds: 5 } }, { timeoutMs });
export const checks = [verifyTaskCallback, WebhookVerificationError, InvalidInputError];
`,
      );
      expect(esm.output).toBe('');
      expect(esm.ok).toBe(true);
      const cjs = await typeCheck(
        'right.cts',
        `import { Mediaforge } from '@mediaforge/client';\nimport webhooks = require('@mediaforge/client/webhooks');\nexport const client = new Mediaforge({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });\nexport const verify = webhooks.verifyTaskCallback;\n`,
      );
      expect(cjs.output).toBe('');
      expect(cjs.ok).toBe(true);
    },
    60_000,
  );

  it.each([
    [
      'ES module',
      'consumer.mjs',
      `import { Mediaforge } from '@mediaforge/client';\nimport { verifyTaskCallback, WebhookVerificationError } from '@mediaforge/client/webhooks';`,
    ],
    [
      'CommonJS',
      'consumer.cjs',
      `const { Mediaforge } = require('@mediaforge/client');\nconst { verifyTaskCallback, WebhookVerificationError } = require('@mediaforge/client/webhooks');`,
    ],
  ])(
    'runs with plain node as %s against a live service: quote, create and wait, balance, webhook verifier',
    async (_kind, file, imports) => {
      const { apiKey } = await t.account(1_000);
      writeFileSync(
        join(scratch, file),
        `${imports}
const main = async () => {
  const client = new Mediaforge({ apiKey: process.env.KEY, baseUrl: process.env.URL });
  const request = { model: '${MODEL}', input: { prompt: 'A lighthouse at dusk', duration_seconds: 5 } };
  const quote = await client.tasks.quote(request);
  const task = await client.tasks.createAndWait(request);
  const balance = await client.credit.get();
  let refused = false;
  try { verifyTaskCallback('{}', {}, 'whsec_x'); } catch (error) { refused = error instanceof WebhookVerificationError; }
  console.log(JSON.stringify({ credits: quote.estimatedCredits, state: task.state, url: task.output?.assets?.[0]?.url, available: balance.available, refused }));
};
main().catch((error) => { console.error(error); process.exit(1); });
`,
      );
      const { stdout } = await run(process.execPath, [file], {
        cwd: scratch,
        env: { ...process.env, KEY: apiKey, URL: t.url },
      });
      const result = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(result).toMatchObject({ state: 'succeeded', refused: true });
      expect(result.credits).toBeGreaterThan(0);
      expect(result.available).toBe(1_000 - result.credits);
      expect(result.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    },
    60_000,
  );

  it("docs/client.md's example runs as written from the installed package: upload, create and wait (an account with 1000 purchased credits)", async () => {
    const doc = readFileSync(join(ROOT, 'docs/client.md'), 'utf8');
    const block = /<!-- client-example:start -->\s*```ts\n([\s\S]*?)```\s*<!-- client-example:end -->/.exec(doc)?.[1];
    expect(block, 'the marked example in docs/client.md').toBeDefined();
    // TypeScript as written, compiled as a consumer's tooling would (types stripped), then plain node.
    const { code } = await esbuild.transform(block!, { loader: 'ts', format: 'esm', target: 'node20' });
    writeFileSync(join(scratch, 'client-example.mjs'), code);
    writeFileSync(join(scratch, 'cat.png'), png(512, 512, false));
    const { apiKey } = await t.account(1_000);
    const { stdout } = await run(process.execPath, ['client-example.mjs'], {
      cwd: scratch,
      env: { ...process.env, MEDIAFORGE_API_KEY: apiKey, MEDIAFORGE_URL: t.url },
    });
    expect(stdout.trim()).toMatch(/^succeeded http:\/\/127\.0\.0\.1:\d+\//);
  }, 60_000);

  engineFree('bundles the main entry for a browser with esbuild: no node: import, no Node global', async () => {
    writeFileSync(
      join(scratch, 'browser.js'),
      `import { Mediaforge, InvalidInputError } from '@mediaforge/client';\nwindow.client = new Mediaforge({ apiKey: 'k', baseUrl: location.origin });\nwindow.InvalidInputError = InvalidInputError;\n`,
    );
    const result = await esbuild.build({
      absWorkingDir: scratch,
      entryPoints: ['browser.js'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    const text = result.outputFiles[0].text;
    expect(result.errors).toEqual([]);
    expect(text).not.toMatch(/["'`]node:/);
    expect(text).not.toMatch(/\brequire\(/);
    expect(text).toContain('Authorization');
  });
});
