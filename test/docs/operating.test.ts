/**
 * docs/operating.md runs as pasted: its shell blocks, unchanged and in order, in one bash at the
 * repository root, on a fresh database and data folder and a free port given through the
 * environment the blocks read (PORT, MEDIAFORGE_DB, MEDIAFORGE_DATA_DIR), as the README's first
 * task is run (test/packaging/readme-first-task.test.ts). The runbook and the CLI cannot drift apart.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from '../support/build.js';
import { pageBlocks, runPasted, shellBlocks } from '../support/pasted-shell.js';

const dir = mkdtempSync(join(tmpdir(), 'mediaforge-operating-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/operating.md', () => {
  it('finds the blocks it runs (the extraction is not vacuous)', () => {
    expect(shellBlocks('text\n```sh\necho a\n```\n```yaml\nx: 1\n```\n```sh\necho b\n```\n')).toEqual([
      'echo a\n',
      'echo b\n',
    ]);
    expect(pageBlocks('docs/operating.md').length).toBe(5);
  });

  it('runs as pasted: start, health, promote, find a user and add credits, rotate an upstream key', async () => {
    const script = pageBlocks('docs/operating.md').join('\n');
    const port = await freePort();
    const { code, stdout, stderr } = await runPasted(script, {
      cwd: ROOT,
      env: { PORT: String(port), MEDIAFORGE_DB: `sqlite:${join(dir, 'mediaforge.db')}`, MEDIAFORGE_DATA_DIR: dir },
    });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    // The database the status read, then the simulator: a fresh database holds nothing of it yet.
    expect(stdout).toContain(`database ${join(dir, 'mediaforge.db')}`);
    expect(stdout).toMatch(/simulator \(simulator\) no record in flight 0/);
    expect(stdout).toContain('ops@example.com is now an operator');
    expect(stdout).toMatch(/ops@example\.com operator user user_\S+ account acct_/);
    expect(stdout).toMatch(/added 1000 credits to acct_/);
    expect(stdout).toMatch(/balance: available 1000, held 0, spent 0, purchased 1000/);
    expect(stdout).toMatch(/cli credits\.add acct_\S+ \{"credits":1000,"note":"first-day test credits"\}/);
    expect(stdout).toMatch(/cli user\.promote user_/);
    // The start-up probe found relay.invalid unreachable: down before any task went there (issue 37).
    expect(stdout).toMatch(/relay \(jobs\) down in flight 0/);
    // `check --probe` of section 5: relay.invalid does not resolve, so its probe fails and says why.
    expect(stdout).toMatch(/upstream relay \(jobs\): unreachable \(.*\): check baseUrl/);
    expect(stdout).toContain('a probe failed (above)');
    expect(stdout).not.toContain('the-new-key');
    const log = readFileSync(join(dir, 'mediaforge.log'), 'utf8');
    expect(log).toContain(`mediaforge listening on http://127.0.0.1:${port}`);
    expect(log).not.toContain('the-new-key');
  }, 600_000);
});
