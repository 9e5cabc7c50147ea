/**
 * The README's first task, run as a reader pastes it: the block between the first-task markers of
 * README.md, unchanged, in bash at the repository root, with a fresh data folder and a free port
 * given through the environment the block reads (PORT, MEDIAFORGE_DB, MEDIAFORGE_DATA_DIR). It
 * starts `npm start` in the background, waits for it, creates an account with the CLI, quotes,
 * creates with a held wait, reads the task and the balance. README and test cannot drift apart.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePort, ROOT } from '../support/build.js';
import { runPasted } from '../support/pasted-shell.js';

const dir = mkdtempSync(join(tmpdir(), 'mediaforge-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The README's block between `<!-- first-task:start -->` and `<!-- first-task:end -->`. */
function firstTaskBlock(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- first-task:start -->\s*```sh\n([\s\S]*?)```\s*<!-- first-task:end -->/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no block between <!-- first-task:start --> and <!-- first-task:end -->');
  return block;
}

describe("the README's first task", () => {
  it('runs as pasted on a fresh database: account, quote, held create to success, balance down by the charge', async () => {
    const block = firstTaskBlock();
    // The block writes the service's log to mediaforge.log where it runs (gitignored); removed after, if it is ours.
    const log = join(ROOT, 'mediaforge.log');
    const hadLog = existsSync(log);
    await ensureBuilt(); // the block's `npm start` builds on a first run; one build at a time across the suites
    const port = await freePort();
    const { code, stdout, stderr } = await runPasted(block, {
      cwd: ROOT,
      env: {
        PORT: String(port),
        MEDIAFORGE_DB: `sqlite:${join(dir, 'mediaforge.db')}`,
        MEDIAFORGE_DATA_DIR: dir,
        MEDIAFORGE_SIMULATOR_LATENCY_MS: '500',
      },
    });
    expect(code, stderr).toBe(0);
    // The output is the four curl answers, one envelope per line (the block sends the service's log to a file).
    const answers = stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line));
    expect(answers.map((a) => a.code)).toEqual([200, 200, 200, 200]);
    const [quote, created, record, credit] = answers.map((a) => a.data);
    expect(quote.estimatedCredits).toBeGreaterThan(0);
    expect(created.state).toBe('succeeded');
    expect(created.output.assets[0].url).toContain(`127.0.0.1:${port}`);
    expect(record).toMatchObject({ taskId: created.taskId, state: 'succeeded', credits: created.credits });
    expect(credit).toMatchObject({ available: 500 - created.credits, held: 0 });
    expect(stderr).not.toMatch(/no such table|SyntaxError|40101/);
    const serviceLog = readFileSync(log, 'utf8');
    expect(serviceLog).toContain(`mediaforge listening on http://127.0.0.1:${port}`);
    expect(serviceLog).not.toMatch(/no such table/);
    // npm start's server got the signal: the port is free again.
    await expect
      .poll(
        async () =>
          fetch(`http://127.0.0.1:${port}/healthz`).then(
            () => 'open',
            () => 'closed',
          ),
        { timeout: 10_000 },
      )
      .toBe('closed');
    if (!hadLog) rmSync(log, { force: true });
  }, 240_000);
});
