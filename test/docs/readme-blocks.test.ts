/**
 * README.md's shell blocks, each run as a reader pastes it (test/support/pasted-shell.ts), in a
 * fresh folder holding the checkout's `bin/` (the blocks run `node bin/mediaforge.js` at the
 * repository root and write their logs there). Three are run elsewhere: `npm ci && npm start` and
 * `npm ci && npm test` by .ci/run itself, the first task by test/packaging/readme-first-task.test.ts.
 * A new block that none of these claims fails the first test.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from '../support/build.js';
import { pageBlocks, runPasted } from '../support/pasted-shell.js';
import { dropPostgresSchema, postgresSchemaUrl } from '../support/service.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const blocks = pageBlocks('README.md');
const folders: string[] = [];
afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder with the checkout's bin/, as the repository root is to a reader. */
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-readme-block-'));
  folders.push(dir);
  symlinkSync(join(ROOT, 'bin'), join(dir, 'bin'));
  return dir;
}

/** The one block that contains `marker`. */
function blockWith(marker: string): string {
  const found = blocks.filter((block) => block.includes(marker));
  expect(found, marker).toHaveLength(1);
  return found[0];
}

const RUN_ELSEWHERE = [
  (block: string) => block.trim() === 'npm ci && npm start',
  (block: string) => block.trim() === 'npm ci && npm test',
  (block: string) => README.includes(`<!-- first-task:start -->\n\`\`\`sh\n${block}\`\`\``),
];
const RUN_HERE = [
  'deployments check --deployments deployments.yaml',
  'serve --role worker',
  'MEDIAFORGE_METRICS_TOKEN',
];

describe("README.md's shell blocks", () => {
  it('each is run by a suite: .ci/run, the first task, or this file', () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    expect(ci).toMatch(/^npm ci /m);
    expect(ci).toMatch(/^npm test$/m);
    expect(ci).toMatch(/npm start >/);
    const unclaimed = blocks.filter(
      (block) => !RUN_ELSEWHERE.some((claimed) => claimed(block)) && !RUN_HERE.some((m) => block.includes(m)),
    );
    expect(unclaimed).toEqual([]);
    expect(blocks.length).toBe(RUN_ELSEWHERE.length + RUN_HERE.length);
  });

  it('connecting real providers: the YAML above saved as deployments.yaml, checked as serve reads it', async () => {
    const dir = folder();
    const yaml = /## Connecting real providers[\s\S]*?```yaml\n([\s\S]*?)```/.exec(README)?.[1];
    expect(yaml).toBeDefined();
    writeFileSync(join(dir, 'deployments.yaml'), yaml!);
    const run = await runPasted(blockWith(RUN_HERE[0]), { cwd: dir });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('deployments.yaml: ok (4 upstreams, 1 model routed)');
  }, 60_000);

  it('metrics: served to the holder of MEDIAFORGE_METRICS_TOKEN', async () => {
    const dir = folder();
    const run = await runPasted(blockWith(RUN_HERE[2]), {
      cwd: dir,
      env: {
        PORT: String(await freePort()),
        MEDIAFORGE_DB: `sqlite:${join(dir, 'mediaforge.db')}`,
        MEDIAFORGE_DATA_DIR: dir,
      },
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/^mediaforge_held_credits \d+$/m);
  }, 120_000);

  const pg = process.env.MEDIAFORGE_TEST_PG;
  const redis = process.env.MEDIAFORGE_TEST_REDIS;
  it.skipIf(!pg || !redis)(
    'scale-out on PostgreSQL: two API processes and a worker; a task created through one is read through the other',
    async () => {
      const dir = folder();
      const db = await postgresSchemaUrl(pg!, dir);
      try {
        const [a, b] = [await freePort(), await freePort()];
        const run = await runPasted(blockWith(RUN_HERE[1]), {
          cwd: dir,
          env: { MEDIAFORGE_DB: db, MEDIAFORGE_REDIS: redis, PORT_A: String(a), PORT_B: String(b) },
        });
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
        const record = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
        expect(record).toMatchObject({ code: 200, data: { state: 'succeeded' } });
        expect(record.data.output.assets[0].url).toContain(`127.0.0.1:${b}`);
        expect(readFileSync(join(dir, 'worker.log'), 'utf8')).not.toMatch(/error/i);
      } finally {
        await dropPostgresSchema(pg!, dir);
      }
    },
    180_000,
  );
});
