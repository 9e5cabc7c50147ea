// @store-suite: the README's OpenAI example downloads from the store (vitest.config.ts runs it on the local and the S3 store).
/**
 * The README's openai snippet, run as pasted: the block between the openai-snippet markers of
 * README.md, unchanged, as an ES module through tsx, against a real service (its URL and a key
 * through the variables the block reads). It must create, wait, download, write the file and say
 * so: the issue 28 complaint was a snippet that printed nothing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/build.js';
import { startTestService, type TestService } from '../support/service.js';

const run = promisify(execFile);

function snippet(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- openai-snippet:start -->\s*```ts\n([\s\S]*?)```\s*<!-- openai-snippet:end -->/.exec(readme)?.[1];
  if (!block)
    throw new Error('README.md has no block between <!-- openai-snippet:start --> and <!-- openai-snippet:end -->');
  return block;
}

describe("the README's openai snippet", () => {
  let t: TestService;
  // Inside the checkout, so that `import OpenAI from 'openai'` resolves as in a reader's project.
  const dir = mkdtempSync(join(ROOT, '.readme-openai-'));
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs as pasted: the video created, waited for, written to lighthouse.mp4, and said so', async () => {
    const { apiKey } = await t.account(100_000);
    writeFileSync(join(dir, 'lighthouse.mts'), snippet());
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'lighthouse.mts'], {
      cwd: dir,
      env: { ...process.env, MEDIAFORGE_API_KEY: apiKey, MEDIAFORGE_URL: t.url },
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^task_\S+: queued$/);
    const id = lines[0].split(':')[0];
    const size = statSync(join(dir, 'lighthouse.mp4')).size;
    expect(size).toBeGreaterThan(1000);
    expect(lines.at(-1)).toBe(`${id}: completed, 8 s at 1280x720, ${size} bytes in lighthouse.mp4`);
  }, 90_000);
});
